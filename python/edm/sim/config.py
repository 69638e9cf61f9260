"""Simulation configuration: defaults, validation with clear errors, TOML loading.

A configuration is a flat dict (the same keys as ``edm simulate`` flags and a
TOML file's top level); :func:`resolve` fills defaults and checks every field.
Time constants default to the protocol spec (Table 1): see docs/simulator.md.
"""

from __future__ import annotations

import numbers
from pathlib import Path
from typing import Any

import numpy as np

from edm import _core, protocol
from edm.tomlfile import read_toml

WORKLOADS = ("micro", "hadoop", "spark", "sparksql", "graphlab", "memcached")
PROTOCOLS = ("edm", "edm-paper", "dctcp", "ird", "pfabric", "pfc_dcqcn", "cxl", "fastpass")
# EDM's two protocols run on one engine: "edm" with EDM's own scheduling rules
# (the defaults below), "edm-paper" with the paper's (PAPER_RULES, fixed).
EDM_PROTOCOLS = ("edm", "edm-paper")

DEFAULTS: dict[str, Any] = {
    "protocol": "edm",
    "nodes": 144,
    "memory_nodes": 0,  # 0: every node is compute and memory (all-to-all)
    "link_gbps": 100,
    "workload": "micro",
    "load": 0.5,
    "write_ratio": 0.5,
    "message_bytes": 64,  # micro workload
    "messages": 100_000,
    "seed": 1,
    "warmup_fraction": 0.0,
    # EDM
    "chunk_bytes": protocol.DEFAULT_CHUNK_BYTES,
    "max_active_notifs": protocol.DEFAULT_MAX_ACTIVE_NOTIFS,
    "priority": "srpt",
    "max_iterations": 0,
    # EDM's scheduling levers: their defaults are EDM's own rules, taken from
    # the Rust core (EdmConfig::edm_rules, defined there once); below.
    #   priority_hold: 0 the paper's PIM; k: wait for a k-times shorter message's busy source
    #   egress_feedback: 0 the paper's release times; 1: late circuits hold their port's release back
    #   zero_queue: 0 the paper's; 1: /G/, /N/ and requests only in gaps of booked data (no switch queueing)
    #   start_delay: 0 off; 1 (zero_queue only): grants carry a start delay of up to 63 blocks
    #   memory_order: pair (per-pair FIFO, the paper); address (only overlapping messages keep their order)
    #   pipelined_matching: 0 one 3-cycle PIM iteration at a time (the paper); 1: a new one every cycle
    #   batch_bytes: 0 off (the paper's evaluation); B: fold a pair's waiting writes into one /N/ of <= B bytes
    **_core.edm_rules(),
    "address_space_bytes": 1 << 30,
    "early_grant_ps": -1,  # zero-queue rules: -1 the rule's (a circuit lag, half with start delays); else ps  # bytes per memory node that messages' addresses are drawn from
    "background_load": 0.0,  # Ethernet frames on every link, fraction of its rate (EDM only)
    "background_frame_bytes": 1500,
    "background_preemption": 1,  # 1: EDM preempts frames between blocks; 0: memory waits for the frame
    # Baselines: overrides of their defaults (docs/simulator.md); 0 keeps the default
    "switch_buffer_bytes": 0,  # dctcp, pfabric, pfc_dcqcn: per-egress buffer
    "dctcp_k_bytes": 0,  # ECN threshold K
    "dctcp_init_cwnd": 0,  # packets
    "dctcp_ack_every": 0,  # delayed ACKs: one per this many packets
    "pfabric_window_packets": 0,
    "dcqcn_kmin_bytes": 0,
    "dcqcn_kmax_bytes": 0,
    "dcqcn_pmax": 0.0,
    "pfc_xoff_bytes": 0,  # Xon is two MTUs below
    "cxl_credits": 0,  # flit credits per switch ingress
    "ird_window_bytes": 0,  # granted-not-received bytes per receiver
    # Fabric timing (ps)
    "prop_ps": protocol.PROP_PS,
    "phy_ps": protocol.PMA_PMD_XCVR_PS,
    "cycle_ps": protocol.CYCLE_PS,
    "scheduler_cycle_ps": protocol.CYCLE_PS,
    "dram_ps": 0,
}

BASELINE_KEYS = ("switch_buffer_bytes", "dctcp_k_bytes", "dctcp_init_cwnd", "dctcp_ack_every",
                 "pfabric_window_packets", "dcqcn_kmin_bytes", "dcqcn_kmax_bytes", "dcqcn_pmax",
                 "pfc_xoff_bytes", "cxl_credits", "ird_window_bytes")
# The paper's values of EDM's scheduling levers: protocol "edm-paper" runs with
# exactly these (docs/simulator.md, "EDM's rules and the paper's").
PAPER_RULES: dict[str, Any] = _core.paper_rules()
_TYPES: dict[str, type | tuple[type, ...]] = {
    k: (int, float) if isinstance(v, float) else type(v) for k, v in DEFAULTS.items()
}


class ConfigError(ValueError):
    """A configuration that cannot run; the message names the source and field."""


def load_toml(path: str | Path) -> dict[str, Any]:
    doc = read_toml(path, ConfigError, "config file")
    unknown = sorted(set(doc) - set(DEFAULTS))
    if unknown:
        raise ConfigError(f"{path}: unknown field(s) {unknown}; known: {sorted(DEFAULTS)}")
    return doc


def resolve(config: dict[str, Any], source: str = "config") -> dict[str, Any]:
    """Defaults filled in and every field checked; raises ConfigError naming the field."""
    unknown = sorted(set(config) - set(DEFAULTS))
    if unknown:
        raise ConfigError(f"{source}: unknown field(s) {unknown}; known: {sorted(DEFAULTS)}")
    name = config.get("protocol", DEFAULTS["protocol"])
    if name != "edm":
        # The paper's rules are fixed for edm-paper; for the baselines EDM's
        # levers do not apply and are recorded as off.
        changed = sorted(k for k, v in PAPER_RULES.items() if k in config and config[k] != v)
        if changed and name == "edm-paper":
            raise ConfigError(f"{source}: field(s) {changed} cannot be changed with protocol 'edm-paper' (the paper's "
                              f"rules: {PAPER_RULES}); use protocol 'edm' to vary them")
        if changed:
            raise ConfigError(f"{source}: field(s) {changed} apply to EDM only, not {name!r}")
        config = {**config, **PAPER_RULES}
    out = {**DEFAULTS, **config}
    if "start_delay" not in config and not out["zero_queue"]:
        out["start_delay"] = 0  # a part of the zero-queue rules: off with them
    for key, value in out.items():
        expected = _TYPES[key]
        value = out[key] = _plain(value)
        if isinstance(value, bool) or not isinstance(value, expected):
            raise ConfigError(f"{source}: field {key!r} = {value!r} should be {_type_name(expected)}")

    def check(ok: bool, key: str, why: str) -> None:
        if not ok:
            raise ConfigError(f"{source}: field {key!r} = {out[key]!r} {why}")

    check(out["protocol"] in PROTOCOLS, "protocol", f"is not one of {PROTOCOLS}")
    check(2 <= out["nodes"] <= protocol.MAX_PORTS, "nodes", f"is not in 2..{protocol.MAX_PORTS}")
    check(0 <= out["memory_nodes"] < out["nodes"], "memory_nodes", "is not in 0..nodes-1")
    check(out["link_gbps"] in (10, 25, 100, 400), "link_gbps", "is not 10, 25, 100 or 400")
    wl = out["workload"]
    check(wl in WORKLOADS or Path(wl).is_file(), "workload", f"is not one of {WORKLOADS} or an existing trace file")
    check(0 < out["load"] <= 1.5, "load", "is not in (0, 1.5]")
    check(0 <= out["write_ratio"] <= 1, "write_ratio", "is not in [0, 1]")
    check(1 <= out["message_bytes"] <= protocol.MAX_MESSAGE_BYTES, "message_bytes", "is out of range")
    check(1 <= out["messages"] <= _core.MAX_MESSAGES, "messages", f"is not in 1..{_core.MAX_MESSAGES}")
    check(out["seed"] >= 0, "seed", "must be non-negative")
    check(0 <= out["warmup_fraction"] < 1, "warmup_fraction", "is not in [0, 1)")
    check(1 <= out["chunk_bytes"] <= protocol.MAX_MESSAGE_BYTES, "chunk_bytes", "is out of range")
    check(1 <= out["max_active_notifs"] <= 255, "max_active_notifs", "is not in 1..255")
    check(out["priority"] in ("srpt", "fcfs"), "priority", "is not srpt or fcfs")
    check(out["max_iterations"] >= 0, "max_iterations", "must be non-negative")
    check(0 <= out["priority_hold"] <= 1_000_000, "priority_hold", "is not in 0..1000000 (0: off)")
    check(out["egress_feedback"] in (0, 1), "egress_feedback", "is not 0 or 1")
    check(out["zero_queue"] in (0, 1), "zero_queue", "is not 0 or 1")
    check(not (out["zero_queue"] and out["egress_feedback"]), "egress_feedback",
          "has nothing to do with zero_queue = 1 (no circuit is late there); set one of them")
    check(not (out["zero_queue"] and out["background_load"] and not out["background_preemption"]), "zero_queue",
          "needs background_preemption = 1 when background_load > 0 (a frame on the wire would delay memory data)")
    check(out["memory_order"] in ("pair", "address"), "memory_order", "is not pair or address")
    check(out["pipelined_matching"] in (0, 1), "pipelined_matching", "is not 0 or 1")
    check(out["start_delay"] in (0, 1), "start_delay", "is not 0 or 1")
    check(-1 <= out["early_grant_ps"] <= 10**7, "early_grant_ps", "is not -1 (the rule's) or in 0..10**7 ps")
    check(out["start_delay"] == 0 or out["zero_queue"] == 1, "start_delay", "applies with zero_queue = 1 only")
    check(out["batch_bytes"] == 0 or 64 <= out["batch_bytes"] <= 1 << 24, "batch_bytes",
          "is neither 0 (off) nor in 64..16777216")
    check(64 <= out["address_space_bytes"] <= 1 << 62, "address_space_bytes", "is not in 64..2**62")
    check(0 <= out["background_load"] < 1, "background_load", "is not in [0, 1)")
    check(out["background_load"] == 0 or out["protocol"] in EDM_PROTOCOLS, "background_load",
          f"is only modelled for EDM, not {out['protocol']!r}")
    check(64 <= out["background_frame_bytes"] <= 9216, "background_frame_bytes", "is not in 64..9216")
    check(out["background_preemption"] in (0, 1), "background_preemption", "is not 0 or 1")
    for key in BASELINE_KEYS:
        check(out[key] >= 0, key, "must be non-negative (0 keeps the protocol's default)")
    check(out["dcqcn_pmax"] <= 1, "dcqcn_pmax", "is not in [0, 1]")
    check(out["dcqcn_kmin_bytes"] <= out["dcqcn_kmax_bytes"] or not out["dcqcn_kmax_bytes"], "dcqcn_kmin_bytes",
          f"exceeds dcqcn_kmax_bytes = {out['dcqcn_kmax_bytes']}")
    for key in ("prop_ps", "phy_ps", "dram_ps"):
        check(out[key] >= 0, key, "must be non-negative")
    for key in ("cycle_ps", "scheduler_cycle_ps"):
        check(out[key] > 0, key, "must be positive")
    return out


def _plain(value: Any) -> Any:
    """numpy's (and any other numbers-registered) integers and reals as Python's
    own int and float, so sweeps may pass them; bools (numpy's too) and
    everything else unchanged, for the type check to refuse."""
    if isinstance(value, (bool, np.bool_)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)  # np.float64 is a float subclass: made plain too
    return value


def _type_name(t: type | tuple[type, ...]) -> str:
    return "a number" if isinstance(t, tuple) else {int: "an integer", str: "a string"}.get(t, t.__name__)
