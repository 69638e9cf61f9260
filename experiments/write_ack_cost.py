"""What the write acknowledgement (/A/, docs/protocol.md §4b) costs on the
fast path: a write's acknowledged completion against an unloaded read, and
EDM's Figure 8b points (mean slowdown per application).

    .venv/bin/python experiments/write_ack_cost.py                      # latencies alone only
    .venv/bin/python experiments/write_ack_cost.py --fig8b-messages 20000 --seeds 1

The /A/ bandwidth is in `experiments/ber_sweep.py` (`ack_share_of_write_wire`,
issue 40's measure, `ack_share_of_write_blocks`, `ack_bytes_per_write`). The Figure 8b points are the plan's (protocol
`edm`, 144 nodes, application load 0.5, write ratio 0.5) with fewer
messages; run the same command on a build without /A/ to compare. Seeded.
"""

from __future__ import annotations

import argparse
import json

from edm import sim
from edm.sim.config import WORKLOADS
from edm.sim.workloads import OP_READ, OP_WRITE


def alone(size: int) -> dict[str, float]:
    """A read, then long after it a write of `size` bytes, alone on 4 nodes:
    the read's latency, the write's in memory and acknowledged (ns)."""
    cfg = {"nodes": 4, "messages": 2}
    msgs = sim.build_workload(sim.resolve(dict(cfg)))
    msgs.op[:] = [OP_READ, OP_WRITE]
    msgs.size[:] = size
    msgs.requester[:] = 0
    msgs.memory[:] = 1
    msgs.issue_ps[:] = [0, 10_000_000]
    df = sim.run(cfg, messages=msgs).messages
    read = (df.complete_ps[0] - df.issue_ps[0]) / 1e3
    acked = (df.acked_ps[1] - df.issue_ps[1]) / 1e3
    return {"bytes": size, "read_ns": read, "write_in_memory_ns": (df.complete_ps[1] - df.issue_ps[1]) / 1e3,
            "write_acked_ns": acked, "acked_over_read": acked / read - 1}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fig8b-messages", type=int, default=0, help="0: skip the Figure 8b points")
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--nodes", type=int, default=144)
    args = ap.parse_args()
    for size in (64, 256):
        a = alone(size)
        print(f"{size} B alone: read {a['read_ns']:.2f} ns, write in memory {a['write_in_memory_ns']:.2f} ns, "
              f"acknowledged {a['write_acked_ns']:.2f} ns = read {100 * a['acked_over_read']:+.1f} %")
    if args.fig8b_messages:
        points = {}
        for w in [w for w in WORKLOADS if w != "micro"]:
            for seed in [int(s) for s in args.seeds.split(",")]:
                s = sim.run({"nodes": args.nodes, "protocol": "edm", "workload": w, "load": 0.5, "write_ratio": 0.5,
                             "messages": args.fig8b_messages, "seed": seed, "warmup_fraction": 0.1}).summary
                points[f"{w}/{seed}"] = s["mean_slowdown"]
                print(f"Figure 8b, edm, {w}, seed {seed}: mean slowdown {s['mean_slowdown']:.6f}", flush=True)
        print(json.dumps(points))


if __name__ == "__main__":
    main()
