"""YCSB on the RTL fabric: runs tests/rtl/tb_ycsb.py (cocotb, Verilator)
on the whole-fabric testbench with one compute node and one memory node, the
paper's testbed, at the 25G PCS clock (``protocol.CYCLE_PS``, one 66-bit block
per cycle, so the links run at 25 GbE).

Invariants: values come from the RTL memory node's DRAM model through the
fabric and are checked by the client against its dict (tb_ycsb.py); an
operation's latency is from the cycle its first request is queued at the
compute node's request port to the cycle its last request completes there
(for a write: when the compute node reports it sent, not when it reached
DRAM; Table 1's convention differs, see docs/ycsb.md). With ``acks=True``
the fabric is built with write acknowledgements (ACKS = 1, docs/protocol.md
§4b): the operations' latency keeps the posted convention, and each write's
acknowledged time is summarized beside its posted one (``writes``).

Needs a repository checkout and Verilator; the first run builds the model
(a few minutes of g++, then reused).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from edm import protocol

LINK_CYCLES = 19   # as `edm rtl latency`: 2 x 19 + 10 ns per hop, rounded up to cycles


def run_rtl(workload: str, *, operations: int, outstanding: int, seed: int, records: int = 200,
            distribution: str | None = None, acks: bool = False) -> dict[str, Any]:
    from edm.rtl.latency import testbenches  # noqa: PLC0415

    testbenches("edm ycsb --fabric rtl", "tb_ycsb.py")
    from rtlsim import run_bench  # noqa: PLC0415 (the testbenches' own runner)

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "ycsb.json"
        env = {"EDM_FABRIC_LINK_CYCLES": str(LINK_CYCLES), "EDM_YCSB_WORKLOAD": workload,
               "EDM_YCSB_OPERATIONS": str(operations), "EDM_YCSB_OUTSTANDING": str(outstanding),
               "EDM_YCSB_SEED": str(seed), "EDM_YCSB_RECORDS": str(records),
               "EDM_YCSB_DISTRIBUTION": distribution or "", "EDM_YCSB_JSON": str(out),
               "EDM_FABRIC_ACKS": str(int(acks))}
        # The same model as the fabric tests of this shape (tb_fabric_<nc>x<nm>_l<link>[_acks]).
        run_bench("tb_ycsb", {"NC": 1, "NM": 1, "LINK_CYCLES": LINK_CYCLES, **({"ACKS": 1} if acks else {})},
                  name=f"tb_fabric_1x1_l{LINK_CYCLES}" + ("_acks" if acks else ""), extra_env=env)
        if not out.exists():
            raise RuntimeError("edm ycsb --fabric rtl: the simulation wrote no result (see the log above)")
        data = json.loads(out.read_text())
    return summarize_rtl(data, workload=workload, outstanding=outstanding, seed=seed, records=records, acks=acks)


def summarize_rtl(data: dict[str, Any], **meta: Any) -> dict[str, Any]:
    ns = protocol.CYCLE_PS / 1000
    ops = data["ops"]
    lat = np.array([(o["end_cycle"] - o["start_cycle"]) * ns for o in ops])
    end = max(o["end_cycle"] for o in ops) * ns
    by_op = {}
    for name in sorted({o["op"] for o in ops}):
        part = np.array([(o["end_cycle"] - o["start_cycle"]) * ns for o in ops if o["op"] == name])
        by_op[name] = {"operations": int(len(part)), "mean_ns": float(part.mean()),
                       "p99_ns": float(np.quantile(part, 0.99))}
    writes = {}
    if data.get("writes"):   # ACKS: each write's posted and acknowledged times from its issue
        for key in ("posted", "acked"):
            t = np.array([w[f"{key}_cycles"] for w in data["writes"]]) * ns
            writes[key] = {"mean_ns": float(t.mean()), "p99_ns": float(np.quantile(t, 0.99))}
        writes["count"] = len(data["writes"])
    return {"fabric": "rtl", **meta, "operations": len(ops), "requests": data["requests"], "writes": writes,
            "requests_per_second": len(ops) / (end * 1e-9), "mean_ns": float(lat.mean()),
            "p99_ns": float(np.quantile(lat, 0.99)), "variance_ns2": float(lat.var()), "std_ns": float(lat.std()),
            "link_gbps": 25, "local_fraction": 0.0, "cycles": data["cycles"], "by_op": by_op}
