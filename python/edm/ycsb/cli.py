"""``edm ycsb``: YCSB over a key-value store in remote memory (the paper's
§4.2.2, Figures 6 and 7), on modelled fabrics (edm, roce, cxl), on the RTL
fabric (rtl) and at rack scale on the simulator (sim:<protocol>).

Every combination of --workload, --fabric, --outstanding and --local-fraction
is one run; each prints a row (requests per second, mean, p99 and standard
deviation of operation latency) and --json writes them all. ``--figure 6``
and ``--figure 7`` select the paper's figure's runs. docs/ycsb.md describes
the store, the models and the numbers.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from edm.args import integer, out_file, real
from edm.ycsb import models
from edm.ycsb.run import DEFAULT_DRAM_NS, DEFAULT_RECORDS, run_model
from edm.ycsb.workload import DISTRIBUTIONS, WORKLOADS

FIGURE_PRESETS: dict[str, dict[str, Any]] = {
    # Figure 6: throughput of A, B, F, EDM against RoCEv2; latency-bound (1
    # request in flight) and link-bound (64 in flight).
    "6": {"workload": ["a", "b", "f"], "fabric": ["edm", "roce"], "outstanding": [1, 64], "local_fraction": [0.0]},
    # Figure 7: workload A, objects split local:remote, EDM against CXL and RoCEv2.
    "7": {"workload": ["a"], "fabric": ["edm", "cxl", "roce"], "outstanding": [1],
          "local_fraction": [0.0, 0.25, 0.5, 0.75]},
}


class UsageError(ValueError):
    pass


def fabrics_known() -> list[str]:
    from edm.sim.config import PROTOCOLS
    return [*models.FABRICS, "rtl", *(f"sim:{p}" for p in PROTOCOLS)]


def check_args(a: argparse.Namespace) -> None:
    def bad(option: str, value: Any, why: str) -> None:
        raise UsageError(f"edm ycsb: {option} {value!r}: {why}")

    for w in a.workload:
        if w not in WORKLOADS:
            why = "workload E (scans) needs an ordered index; see docs/ycsb.md" if w == "e" else \
                f"not one of {', '.join(sorted(WORKLOADS))}"
            bad("--workload", w, why)
    known = fabrics_known()
    for f in a.fabric:
        if f not in known:
            bad("--fabric", f, f"not one of {', '.join(known)}")
    # Numbers are checked as they are parsed (edm.args); what depends on several options here.
    if any(f.startswith("sim:") for f in a.fabric) and not 1 <= a.rack_memory_nodes < a.nodes:
        bad("--rack-memory-nodes", a.rack_memory_nodes, f"must be in 1..{a.nodes - 1} (--nodes {a.nodes}: "
            "the others are compute nodes)")


def one_run(a: argparse.Namespace, workload: str, fabric: str, outstanding: int, local: float,
            load: float) -> dict[str, Any]:
    common = dict(operations=a.requests, outstanding=outstanding, seed=a.seed, records=a.records)
    if fabric in models.FABRICS:
        return run_model(workload, fabric, gbps=a.link_gbps, dram_ns=a.dram_ns, local_fraction=local,
                         memory_nodes=a.memory_nodes, distribution=a.distribution, **common)
    if local:
        raise UsageError(f"edm ycsb: --local-fraction {local!r}: only the modelled fabrics "
                         f"({', '.join(models.FABRICS)}) split objects locally")
    if fabric == "rtl":
        from edm.ycsb.rtl import run_rtl
        return run_rtl(workload, distribution=a.distribution, **common)
    from edm.ycsb.rack import run_rack
    return run_rack(workload, fabric.split(":", 1)[1], nodes=a.nodes, memory_nodes=a.rack_memory_nodes,
                    load=load, gbps=a.rack_gbps, distribution=a.distribution, dram_ns=a.dram_ns,
                    operations=a.requests, seed=a.seed, records=a.records)


def format_row(r: dict[str, Any]) -> str:
    flight = f"load {r['load']:g}" if "load" in r else r["outstanding"]
    return (f"| {r['workload'].upper()} | {r['fabric']} | {flight} | {r['local_fraction']:g} | "
            f"{r['requests_per_second'] / 1e6:.3f} | {r['mean_ns']:.1f} | {r['p99_ns']:.1f} | {r['std_ns']:.1f} |")


HEADER = ("| workload | fabric | in flight | local share | M requests/s | mean (ns) | p99 (ns) | std (ns) |\n"
          "|---|---|---:|---:|---:|---:|---:|---:|")


def _main(a: argparse.Namespace) -> int:
    if a.figure:
        for key, value in FIGURE_PRESETS[a.figure].items():
            if getattr(a, key) is None:
                setattr(a, key, value)
    a.workload = a.workload or ["a"]
    a.fabric = a.fabric or ["edm", "roce", "cxl"]
    a.outstanding = a.outstanding or [1]
    a.local_fraction = a.local_fraction or [0.0]
    try:
        check_args(a)
    except UsageError as e:
        print(e, file=sys.stderr)
        return 2
    # The rack (sim:...) runs open loop: one run per --load instead of per --outstanding.
    runs = [(w, f, k, x, None) for w in a.workload for f in a.fabric if not f.startswith("sim:")
            for k in a.outstanding for x in a.local_fraction]
    runs += [(w, f, None, 0.0, load) for w in a.workload for f in a.fabric if f.startswith("sim:") for load in a.load]
    results = []
    start = time.time()
    print(HEADER)
    for i, (w, f, k, x, load) in enumerate(runs, 1):
        t = time.time()
        try:
            r = one_run(a, w, f, k, x, load)
        except UsageError as e:
            print(e, file=sys.stderr)
            return 2
        if k is not None:
            r.setdefault("outstanding", k)
        r.setdefault("local_fraction", x)
        results.append(r)
        print(format_row(r), flush=True)
        what = f"load {load:g}" if load is not None else f"{k} in flight, local {x:g}"
        print(f"[{i}/{len(runs)}] workload {w} on {f}, {what}: {time.time() - t:.1f} s", file=sys.stderr)
    from_shell = len(sys.argv) > 1 and sys.argv[1] == "ycsb"
    command = "edm ycsb " + " ".join(sys.argv[2:]) if from_shell else "edm ycsb (called from Python)"
    doc = {"command": command, "date": time.strftime("%Y-%m-%d"), "wall_seconds": time.time() - start,
           "link_gbps": a.link_gbps, "dram_ns": a.dram_ns, "runs": results}
    if a.json:
        out = Path(a.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(doc, indent=1))
        print(f"(written to {out})", file=sys.stderr)
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser("ycsb", help="YCSB over a key-value store in remote memory (Figures 6 and 7)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--figure", choices=sorted(FIGURE_PRESETS), help="the runs of the paper's Figure 6 or 7")
    p.add_argument("--workload", nargs="+", type=str.lower, help="YCSB workloads: a b c d f (default a)")
    p.add_argument("--fabric", nargs="+",
                   help="edm, roce, cxl (models), rtl (cycle-accurate EDM), sim:<protocol> (rack scale); "
                        "default edm roce cxl")
    p.add_argument("--requests", type=integer(1), default=20_000, help="YCSB operations per run (default 20000)")
    p.add_argument("--outstanding", nargs="+", type=integer(1), help="operations in flight (default 1)")
    p.add_argument("--local-fraction", nargs="+", type=real(0.0, 1.0, hi_open=True),
                   help="share of objects in the compute node's DRAM (Figure 7; default 0)")
    p.add_argument("--seed", type=integer(0, 2**63 - 1), default=1, help="seed of every random choice (default 1)")
    p.add_argument("--records", type=integer(2), default=DEFAULT_RECORDS, help=f"keys loaded (default {DEFAULT_RECORDS})")
    p.add_argument("--distribution", choices=DISTRIBUTIONS, help="request distribution (default: the workload's)")
    p.add_argument("--link-gbps", type=int, choices=[10, 25, 100, 400], default=25, help="link rate of the modelled fabrics (default 25, the paper's)")
    p.add_argument("--dram-ns", type=real(0.0), default=DEFAULT_DRAM_NS,
                   help=f"DRAM access, local or at a memory node (default {DEFAULT_DRAM_NS:g}, our assumption)")
    p.add_argument("--memory-nodes", type=integer(1), default=1, help="memory nodes of the modelled fabrics (default 1)")
    p.add_argument("--nodes", type=integer(2, 1024), default=144, help="sim: nodes in the rack, 2..1024 (default 144)")
    p.add_argument("--rack-memory-nodes", type=integer(1), default=16,
                   help="sim: how many of them hold shards, 1..nodes-1 (default 16)")
    p.add_argument("--load", nargs="+", type=real(0.0, 1.5, lo_open=True), default=[0.3],
                   help="sim: offered bytes over the memory nodes' link capacity, one run each (default 0.3)")
    p.add_argument("--rack-gbps", type=int, choices=[10, 25, 100, 400], default=100,
                   help="sim: link rate (default 100, as Figure 8)")
    p.add_argument("--json", type=out_file, help="write every run's numbers here")
    p.set_defaults(func=_main)
