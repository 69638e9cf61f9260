"""What ``edm reproduce`` simulates: the curves, the ablation variants and the sweeps of a plan.

Every experiment is a list of simulator configurations stored by
:mod:`edm.sweep` (one JSON file per point, keyed by its full configuration and
the simulator's code), so a run resumes where it stopped and a finished one
re-renders without simulating. A point's *curve* (the line or bar it belongs
to) and *variant* (its row in the ablation table) are computed from its
configuration, never stored beside it.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edm import protocol
from edm.sim import timing
from edm.sim.config import DEFAULTS, PAPER_RULES, PROTOCOLS, WORKLOADS
from edm.sweep import Sweep

# The runner of every point: the simulator's summary (see run_point below).
RUNNER = "edm.reproduce.plan:run_point"
APPS = [w for w in WORKLOADS if w != "micro"]
RATIOS = {"write-only": 1.0, "read-only": 0.0, "mixed": 0.5}
ASIC_CYCLE_PS = 333  # the paper's 3 GHz ASIC scheduler estimate (§4.1)
BG_MEMORY_LOAD = 0.3  # memory load of the background-frames experiment (below EDM's saturation)
BG_LOADS = (0.3, 0.6)
BG_FRAMES = (1500, 9000)
EDM_CURVES = ["edm", "edm-paper"]
# pFabric's Ideal (central preemptive SRPT, no control; docs/simulator.md): the
# reference every curve's "distance from ideal" divides by, not a competitor.
IDEAL = "ideal-srpt"
BASELINES = [p for p in PROTOCOLS if p not in EDM_CURVES and p != IDEAL]
ASIC_CURVES = [f"{p}-3GHz" for p in EDM_CURVES]
CURVES = [*EDM_CURVES, *ASIC_CURVES, *BASELINES, IDEAL]  # Figure 8a
# EDM's two protocols with our RTL's pipeline steps (`--timing rtl`), beside Figure 8.
RTL_CURVES = [f"{p}-rtl" for p in EDM_CURVES]
RTL_LATENCY_FILE = "rtl_latency.json"  # `edm reproduce`'s stored `edm rtl latency`
APP_CURVES = [*EDM_CURVES, *BASELINES, IDEAL]  # Figure 8b
# Delivered by the last issue (of all bytes issued) that an application run
# needs for its means not to depend on the run's length.
RUN_LENGTH_TARGET = 0.95

# EDM's scheduling levers that differ between EDM's rules and the paper's, in
# the order of the ablation table; batching is off in both.
LEVERS = ("memory_order", "pipelined_matching", "priority_hold", "zero_queue", "start_delay")
EDM_RULES = {k: DEFAULTS[k] for k in PAPER_RULES}
BATCH_BYTES = 1024  # "edm with batching"
LEVER_NAMES = {"memory_order": "address order", "pipelined_matching": "pipelined matching",
               "priority_hold": "priority hold", "zero_queue": "zero queue", "start_delay": "start delay"}
# Start delays are a part of the zero-queue rules: "paper + start delay" also
# turns those on, and "edm without zero queue" turns both off.
_NEEDS = {"start_delay": {"zero_queue": 1}}


def _settings(levers: dict[str, Any]) -> str:
    return ", ".join(f"{k} = {v}" for k, v in levers.items())


def ablation_variants() -> list[tuple[str, dict[str, Any], str]]:
    """(name, configuration keys, what it sets) of every row of the ablation table, in order.

    "edm without X": EDM's rules with lever X at the paper's value; "paper + X":
    the paper's rules with X at EDM's value (run as protocol "edm" with the
    other levers set to the paper's values)."""
    out = [("edm", {"protocol": "edm"}, "EDM's rules")]
    for lever in LEVERS:
        out.append((f"edm without {LEVER_NAMES[lever]}", {"protocol": "edm", lever: PAPER_RULES[lever]},
                    _settings({lever: PAPER_RULES[lever]})))
    out.append(("edm with batching", {"protocol": "edm", "batch_bytes": BATCH_BYTES},
                _settings({"batch_bytes": BATCH_BYTES})))
    for lever in LEVERS:
        rest = {k: PAPER_RULES[k] for k in LEVERS if k != lever}
        needs = _NEEDS.get(lever, {})
        name = " + ".join(["paper", *(LEVER_NAMES[k] for k in needs), LEVER_NAMES[lever]])
        out.append((name, {"protocol": "edm", **rest, **needs},
                    _settings({**needs, lever: EDM_RULES[lever]})))
    out.append(("edm-paper", {"protocol": "edm-paper"}, "the paper's rules"))
    return out


ABLATION = [name for name, _, _ in ablation_variants()]


def variant(config: dict[str, Any]) -> str | None:
    """The ablation row of a point of an EDM protocol (None for the baselines)."""
    if config["protocol"] not in EDM_CURVES:
        return None
    for name, keys, _ in ablation_variants():
        if all(config.get(k, DEFAULTS[k]) == v for k, v in keys.items()) and all(
                config.get(k, DEFAULTS[k]) == DEFAULTS[k] for k in EDM_RULES if k not in keys):
            return name
    return None


def curve(config: dict[str, Any]) -> str:
    """The curve a point belongs to: its protocol, EDM's split by scheduler clock."""
    if config["protocol"] in EDM_CURVES and config.get("scheduler_cycle_ps") == ASIC_CYCLE_PS:
        return f"{config['protocol']}-3GHz"
    if config["protocol"] in EDM_CURVES and any(config.get(k, DEFAULTS[k]) != DEFAULTS[k]
                                                for k in timing.STEP_FIELDS):
        return f"{config['protocol']}-rtl"
    return config["protocol"]



def rtl_steps(out: Path) -> dict[str, int] | None:
    """Our RTL's step cycles from the `edm rtl latency` stored in `out` (None without one,
    or when it does not map; said on stderr)."""
    path = out / RTL_LATENCY_FILE
    if not path.exists():
        return None
    try:
        return timing.steps_from_latency(json.loads(path.read_text()), str(path))
    except (ValueError, timing.TimingError) as e:
        print(f"edm reproduce: Figure 8 on our RTL's timing left out: {e}", file=sys.stderr)
        return None


def run_point(config: dict[str, Any]) -> dict[str, Any]:
    """One point's summary (``edm.sim.run``), with ``delivered_by_last_issue``: of all
    bytes issued, the fraction delivered by the last issue time. Taken from the
    simulator's summary where it has the field; computed the same way otherwise."""
    import numpy as np  # noqa: PLC0415

    from edm import sim  # noqa: PLC0415

    result = sim.run(config)
    summary = result.summary
    if "delivered_by_last_issue" not in summary:
        df = result.messages
        complete, sizes = df["complete_ps"].to_numpy(np.int64), df["size"].to_numpy(np.float64)
        last_issue = int(df["issue_ps"].to_numpy(np.int64).max())
        summary["delivered_by_last_issue"] = float(
            sizes[(complete >= 0) & (complete <= last_issue)].sum() / sizes.sum())
    return summary


# Relative cost of one message per protocol (measured, one core): the slow
# points are submitted first so that no long point is left alone at the end.
# (ideal-srpt is cheap but for saturated mixed 64 B traffic, the slowest micro
# points there are: 17.7 s at load 0.9 on 144 nodes.)
_COST = {"edm": 5.0, "cxl": 8.0, "pfabric": 1.6, "dctcp": 1.5, "ird": 1.0, "edm-paper": 1.0,
         "pfc_dcqcn": 0.6, "fastpass": 0.8, IDEAL: 5.0}


def _cost(config: dict[str, Any]) -> float:
    per_message = _COST.get(config["protocol"], 1.0) * (50.0 if config["workload"] != "micro" else 1.0)
    return per_message * config["messages"]


@dataclass
class Points(Sweep):
    """A sweep given as a list of points (not a grid), most costly first."""

    configs: list[dict[str, Any]] | None = None

    def points(self) -> list[dict[str, Any]]:
        configs = self.configs if self.configs is not None else super().points()
        return sorted(configs, key=_cost, reverse=True)


@dataclass(frozen=True)
class Plan:
    """Sizes of a reproduction run."""

    nodes: int
    micro_messages: int
    app_messages: int
    loads: tuple[float, ...]
    app_load: float
    seeds: tuple[int, ...]
    warmup_fraction: float
    ablation_loads: tuple[float, ...]
    ablation_app_seeds: tuple[int, ...]  # a subset of seeds (the ablation's reference rows are Figure 8b's)
    # Shorter application runs for protocols that are saturated at app_load
    # (no run length delivers 95 % by the last issue; their queues, and the
    # cost of simulating them, grow with the run): (protocol, messages).
    short_app_runs: tuple[tuple[str, int], ...] = ()
    # Figure 8b at the paper's switch scale (§2: 512 ports at 100 Gb/s): one
    # workload, the first seed, every protocol; (protocol, messages) as above.
    scale_nodes: int = 512
    scale_workload: str = "hadoop"
    scale_messages: int = 20_000
    short_scale_runs: tuple[tuple[str, int], ...] = ()

    def app_messages_of(self, protocol: str) -> int:
        return dict(self.short_app_runs).get(protocol, self.app_messages)

    @staticmethod
    def full() -> Plan:
        return Plan(nodes=144, micro_messages=100_000, app_messages=60_000,
                    loads=(0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 0.9), app_load=0.5, seeds=(1, 2, 3), warmup_fraction=0.1,
                    ablation_loads=(0.3, 0.5, 0.55, 0.6), ablation_app_seeds=(1,), short_app_runs=(("cxl", 20_000),),
                    short_scale_runs=(("cxl", 5_000),))

    @staticmethod
    def quick() -> Plan:
        return Plan(nodes=16, micro_messages=600, app_messages=60,
                    loads=(0.3, 0.8), app_load=0.5, seeds=(1,), warmup_fraction=0.1,
                    ablation_loads=(0.3, 0.6), ablation_app_seeds=(1,), short_app_runs=(("cxl", 40),),
                    scale_nodes=64, scale_messages=200, short_scale_runs=(("cxl", 100),))

    def sweeps(self, out: Path) -> dict[str, Sweep]:
        assert set(self.ablation_app_seeds) <= set(self.seeds), "ablation seeds must be Figure 8b seeds"
        common = {"nodes": self.nodes, "warmup_fraction": self.warmup_fraction}
        micro = {**common, "workload": "micro", "message_bytes": 64, "messages": self.micro_messages}
        apps = {**common, "load": self.app_load, "write_ratio": 0.5, "messages": self.app_messages,
                "priority": "srpt"}
        seeds = list(self.seeds)

        def grid(name: str, base: dict[str, Any], **axes: list[Any]) -> Points:
            return Points(name=name, runner=RUNNER, out=out / name, base=base, grid=axes)

        def listed(name: str, configs: list[dict[str, Any]]) -> Points:
            return Points(name=name, runner=RUNNER, out=out / name, base={}, grid={}, configs=configs)

        fig8a = grid("fig8a", micro, protocol=list(PROTOCOLS), write_ratio=list(RATIOS.values()),
                     load=list(self.loads), seed=seeds)
        # EDM's two protocols with the paper's 3 GHz ASIC scheduler (§4.1)
        # instead of the FPGA clock of Table 1.
        fig8a_asic = grid("fig8a_asic", {**micro, "scheduler_cycle_ps": ASIC_CYCLE_PS}, protocol=EDM_CURVES,
                          write_ratio=list(RATIOS.values()), load=list(self.loads), seed=seeds)
        # Figure 8a's mixed traffic again with 802.3's RS-FEC on every link, as a
        # 100 Gbps deployment pays it (the paper's testbed has none).
        fig8a_fec = grid("fig8a_fec", {**micro, "fec_ps": protocol.RS_FEC_100G_PS, "write_ratio": 0.5},
                         protocol=list(PROTOCOLS), load=list(self.loads), seed=seeds)
        fig8b = listed("fig8b", [{**apps, "protocol": p, "workload": w, "seed": s, "messages": self.app_messages_of(p)}
                                 for p in PROTOCOLS for w in APPS for s in seeds])
        # The ablation: each variant (EDM's two protocols are its first and last
        # rows) on the applications, and on 64 B mixed traffic at loads around
        # EDM's saturation. Its application reference rows are Figure 8b's points.
        variants = [keys for name, keys, _ in ablation_variants() if name not in EDM_CURVES]
        ablation_apps = listed("ablation_apps", [{**apps, **keys, "workload": w, "seed": s} for keys in variants
                                                 for w in APPS for s in self.ablation_app_seeds])
        ablation_micro = listed("ablation_micro", [{**micro, **keys, "write_ratio": 0.5, "load": ld, "seed": s}
                                                   for _, keys, _ in ablation_variants()
                                                   for ld in self.ablation_loads for s in seeds])
        # The paper's EDM with Ethernet frames on every link (§3.2.3).
        bg_base = {**micro, "protocol": "edm-paper", "write_ratio": 0.5, "load": BG_MEMORY_LOAD}
        background = grid("background", bg_base, background_load=list(BG_LOADS),
                          background_frame_bytes=list(BG_FRAMES), background_preemption=[1, 0], seed=seeds)
        quiet = grid("background_quiet", bg_base, seed=seeds)
        fig8b_scale = listed("fig8b_scale", [
            {**apps, "nodes": self.scale_nodes, "protocol": p, "workload": self.scale_workload, "seed": seeds[0],
             "messages": dict(self.short_scale_runs).get(p, self.scale_messages)} for p in PROTOCOLS])
        sweeps = [fig8a, fig8a_asic, fig8a_fec, fig8b, fig8b_scale, ablation_apps, ablation_micro, background, quiet]
        # Figure 8 again with our RTL's pipeline steps, when `edm rtl latency` is stored
        # in `out` (the full run measures it first): mixed traffic, one seed for the apps.
        steps = rtl_steps(out)
        if steps is not None:
            sweeps.append(grid("fig8a_rtl", {**micro, **steps, "write_ratio": 0.5}, protocol=EDM_CURVES,
                               load=list(self.loads), seed=seeds))
            sweeps.append(listed("fig8b_rtl", [{**apps, **steps, "protocol": p, "workload": w, "seed": s}
                                               for p in EDM_CURVES for w in APPS for s in self.seeds[:1]]))
        return {s.name: s for s in sweeps}
