"""Simulator speed and memory: prints figures with the command that made them.

    .venv/bin/python experiments/bench_sim.py            # the two standard cases
    .venv/bin/python experiments/bench_sim.py --quick    # smaller, for a smoke run

Each case runs in a fresh process so its peak RSS is its own.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

# One core per case: numpy's BLAS would otherwise start a thread per core
# whose busy-waiting competes with the engine on small machines.
ONE_CORE = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

CASES = {
    # The paper's rules (protocol edm-paper), then EDM's own (protocol edm,
    # the default: zero-queue placement, start delays, memory order,
    # pipelined matching, priority hold; docs/simulator.md).
    "micro-64B-load0.8-paper": {"protocol": "edm-paper", "nodes": 144, "workload": "micro", "load": 0.8,
                                "messages": 1_000_000},
    "hadoop-load0.4-paper": {"protocol": "edm-paper", "nodes": 144, "workload": "hadoop", "load": 0.4,
                             "messages": 100_000},
    "micro-64B-load0.8-edm": {"protocol": "edm", "nodes": 144, "workload": "micro", "load": 0.8,
                              "messages": 1_000_000},
    "hadoop-load0.4-edm": {"protocol": "edm", "nodes": 144, "workload": "hadoop", "load": 0.4, "messages": 100_000},
}


def run_case(config: dict) -> dict:
    from edm import sim

    start = time.perf_counter()
    r = sim.run(config)
    wall = time.perf_counter() - start
    s = r.summary
    return {
        "messages": s["messages"],
        "completed": s["completed"],
        "engine_seconds": s["wall_seconds"],
        "total_seconds": wall,
        "engine_messages_per_second": s["messages"] / s["wall_seconds"],
        "events": s["events"],
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "mean_slowdown": s["mean_slowdown"],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="a tenth of the messages")
    ap.add_argument("--case", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.case:
        config = dict(CASES[args.case])
        if args.quick:
            config["messages"] //= 10
        print(json.dumps(run_case(config)))
        return 0
    cmd = f"{sys.executable} experiments/bench_sim.py" + (" --quick" if args.quick else "")
    print(f"# {cmd}  ({platform.processor() or platform.machine()}, one core per case)")
    print("| case | messages | engine s | msg/s (engine) | total s | peak RSS MB | mean slowdown |")
    print("|---|---|---|---|---|---|---|")
    for name in CASES:
        out = subprocess.run(
            [sys.executable, __file__, "--case", name] + (["--quick"] if args.quick else []),
            capture_output=True, text=True, check=True, env=ONE_CORE,
        )
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(
            f"| {name} | {r['messages']} | {r['engine_seconds']:.2f} | {r['engine_messages_per_second']:,.0f} "
            f"| {r['total_seconds']:.2f} | {r['peak_rss_mb']:.0f} | {r['mean_slowdown']:.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
