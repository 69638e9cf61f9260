"""Pipeline timing for the simulator: the paper's (the default) or our RTL's.

``edm simulate --timing rtl`` (or :func:`rtl_steps`) reads the per-step cycles
that ``edm rtl latency`` measured on the whole RTL fabric and sets the
simulator's step fields (``gen_req_cycles``, ``sw_notify_cycles``, ...;
docs/config.md) to them, so the simulator speaks for our hardware rather than
for the paper's budget.

How the RTL's measured rows map onto the model's steps (the model has fewer
steps than the RTL has rows, and the RTL has no PMA/PMD: its links are delay
lines, which the model's ``phy_ps``/``prop_ps`` stand for):

- a PHY hop toward the switch (encoder, scrambler, descrambler, decoder) is
  ``2 x pcs_pass_cycles``; the hop toward a host takes the switch's TX
  multiplexer too, which the model counts in the switch's outgoing steps
  (``sw_gen_grant_cycles``, ``sw_forward_cycles``);
- "switch: /N/ in -> /G/ out" is ``sw_notify + PIM iteration + sw_gen_grant``
  (the iteration is the scheduler's 3 cycles; the grant keeps the paper's one
  cycle, the rest is the notification's); an RREQ's forward takes
  ``sw_request_extra_cycles`` more;
- "compute node: /G/ in -> WREQ /MS/ out" is ``grant_to_data_cycles``; the
  memory node's "RREQ /MS/ in -> RRES /MS/ out" is the forwarded request's
  remaining blocks, ``grant_to_data`` and ``rreq_extra_cycles``;
- the receivers' last-block-to-done rows are ``proc_response_cycles`` (compute
  node) and ``proc_write_cycles`` (memory node).

``tests/test_timing.py`` checks the mapping in closed form: with the RTL's
timing and its link delay, the simulator's alone latency of a 64 B read and
write equals the RTL's simulated end-to-end cycles.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from edm import _core, protocol

# Where `edm rtl latency` writes its result, and where `edm reproduce` keeps its own.
DEFAULT_RTL_LATENCY = Path("results/rtl/latency.json")
TIMINGS = ("paper", "rtl")
# The configuration fields a timing sets (docs/config.md).
STEP_FIELDS = ("pcs_pass_cycles", "gen_req_cycles", "sw_notify_cycles", "sw_request_extra_cycles",
               "sw_gen_grant_cycles", "sw_forward_cycles", "grant_to_data_cycles", "rreq_extra_cycles",
               "proc_response_cycles", "proc_write_cycles")

# The rows of `edm rtl latency` the mapping reads, by the start of their names.
_ROWS = {
    "read": ["compute node: request", "PHY hop to the switch", "switch: RREQ in", "PHY hop to the host",
             "memory node: RREQ", "PHY hop to the switch", "switch: RRES block", "PHY hop to the host",
             "RRES serialization", "compute node: RRES"],
    "write": ["compute node: request", "PHY hop to the switch", "switch: /N/ in", "PHY hop to the host",
              "compute node: /G/ in", "PHY hop to the switch", "switch: WREQ block", "PHY hop to the host",
              "WREQ serialization", "memory node: WREQ"],
}


class TimingError(ValueError):
    """The stored RTL latency cannot be read or does not fit the model's steps."""


def _breakdown(doc: dict[str, Any]) -> dict[str, Any]:
    """The `edm rtl latency` breakdown, from its own JSON or from `edm reproduce`'s copy."""
    return doc["breakdown"] if "breakdown" in doc else doc


def _rows(doc: dict[str, Any], source: str) -> dict[str, list[int]]:
    try:
        cases = _breakdown(doc)["cases"]["unloaded"]
    except (KeyError, TypeError) as e:
        raise TimingError(f"{source}: no 'breakdown.cases.unloaded' (not an `edm rtl latency` result)") from e
    out = {}
    for kind, names in _ROWS.items():
        try:
            rows = cases[kind]["rows"]
        except (KeyError, TypeError) as e:
            raise TimingError(f"{source}: no rows for the {kind}") from e
        if len(rows) != len(names):
            raise TimingError(f"{source}: the {kind} has {len(rows)} rows, the mapping expects {len(names)}")
        for i, (row, want) in enumerate(zip(rows, names)):
            if not (isinstance(row, list) and len(row) == 3 and str(row[0]).startswith(want)
                    and isinstance(row[1], int) and row[1] >= 0):
                raise TimingError(f"{source}: {kind} row {i} is {row!r}; expected '{want} ...' with its cycles")
        out[kind] = [row[1] for row in rows]
    return out


def steps_from_latency(doc: dict[str, Any], source: str = "the RTL latency") -> dict[str, int]:
    """The simulator's step fields from an `edm rtl latency` result (see the module doc)."""
    rows = _rows(doc, source)
    r, w = rows["read"], rows["write"]
    up, down = r[1], r[3]
    if r[1] != w[1] or r[3] != w[3] or r[5] != up or r[7] != down or up % 2:
        raise TimingError(f"{source}: PHY hops differ between steps ({r[1::2][:4]}, {w[1::2][:4]}) "
                          "or are odd; the model has one PCS pass per link end")
    mux = down - up  # the switch's TX multiplexer, on every hop toward a host
    if r[0] != w[0] or r[6] != w[6]:
        raise TimingError(f"{source}: request generation ({r[0]}, {w[0]}) or circuit forwarding "
                          f"({r[6]}, {w[6]}) differs between the read and the write; the model has one of each")
    sw_gen_grant = protocol.SW_GEN_GRANT_CYCLES
    sw_notify = w[2] - protocol.SW_PIM_ITER_CYCLES - sw_gen_grant
    request_blocks = _core.message_blocks("RREQ", 64)
    rreq_extra = r[4] - (request_blocks - 1) - w[4]
    steps = {
        "pcs_pass_cycles": up // 2,
        "gen_req_cycles": r[0],
        "sw_notify_cycles": sw_notify,
        "sw_request_extra_cycles": r[2] - w[2],
        "sw_gen_grant_cycles": sw_gen_grant + mux,
        "sw_forward_cycles": r[6] + mux,
        "grant_to_data_cycles": w[4],
        "rreq_extra_cycles": rreq_extra,
        "proc_response_cycles": r[9],
        "proc_write_cycles": w[9],
    }
    assert tuple(steps) == STEP_FIELDS
    # rreq_extra counts from the request's last block, so a memory node that
    # starts on its first block (cut-through) has a negative one.
    negative = {k: v for k, v in steps.items() if v < 0 and k != "rreq_extra_cycles"}
    if w[4] + rreq_extra < 0:
        negative["rreq_extra_cycles"] = rreq_extra
    if negative:
        raise TimingError(f"{source}: the RTL is faster than the model's structure allows for {negative} "
                          "(a step the model keeps apart overlaps another in the RTL)")
    return steps


def rtl_steps(path: str | Path = DEFAULT_RTL_LATENCY) -> dict[str, int]:
    """The step fields measured by `edm rtl latency` (its JSON at `path`)."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise TimingError(f"{path}: not found; run `edm rtl latency` first (it writes {DEFAULT_RTL_LATENCY})") \
            from None
    except (OSError, ValueError) as e:
        raise TimingError(f"{path}: cannot read it as JSON: {e}") from e
    return steps_from_latency(doc, str(path))


def rtl_fabric_config(doc: dict[str, Any], kind: str) -> dict[str, Any]:
    """A configuration under which the simulator models the RTL testbench that
    measured `doc` (`edm rtl latency`): its steps, one 2.56 ns clock, 25 Gb/s
    links (one block per cycle), links as delay lines of the testbench's length
    (no PMA/PMD), and its DRAM latency for `kind` ("read" or "write"). A message
    alone then takes the RTL's end-to-end cycles (tests/rtl/test_rtl_fabric.py)."""
    data = _breakdown(doc)
    cycle = protocol.CYCLE_PS
    return {"protocol": "edm-paper", "nodes": 4, "link_gbps": 25, "cycle_ps": cycle, "scheduler_cycle_ps": cycle,
            "phy_ps": 0, "prop_ps": data["link_cycles"] * cycle,
            "dram_ps": data["cases"]["unloaded"][kind]["dram"] * cycle, **steps_from_latency(doc)}
