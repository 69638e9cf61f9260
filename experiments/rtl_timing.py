"""EDM's 64 B mixed traffic with the paper's pipeline steps and with our RTL's.

    .venv/bin/python experiments/rtl_timing.py [--latency results/rtl/latency.json]

Needs a stored `edm rtl latency` result (the steps: python/edm/sim/timing.py).
144 nodes, 100 Gbps, 100 000 messages, seed 1, first 10 % warm-up. The full
evaluation with both timings is `edm reproduce` ("Figure 8 on our RTL's timing").
"""

from __future__ import annotations

import argparse

from edm import sim
from edm.sim import timing


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--latency", default=str(timing.DEFAULT_RTL_LATENCY), help="an `edm rtl latency` JSON")
    p.add_argument("--loads", type=float, nargs="+", default=[0.1, 0.3, 0.5])
    args = p.parse_args()
    steps = timing.rtl_steps(args.latency)
    print("| protocol | load | timing | mean slowdown | mean latency ns | unloaded ns |")
    print("|---|---|---|---|---|---|")
    for proto in ("edm", "edm-paper"):
        for load in args.loads:
            for name, extra in (("paper", {}), ("rtl", steps)):
                cfg = {"protocol": proto, "nodes": 144, "workload": "micro", "message_bytes": 64,
                       "messages": 100_000, "load": load, "write_ratio": 0.5, "seed": 1, "warmup_fraction": 0.1,
                       **extra}
                s = sim.run(cfg, progress=False).summary
                print(f"| {proto} | {load} | {name} | {s['mean_slowdown']:.3f} | {s['mean_latency_ns']:.1f} "
                      f"| {s['mean_unloaded_ns']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
