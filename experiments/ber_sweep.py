"""Bit-error sweep of the simulator (issue 25, paper §3.3): the same
workload at BER 0 and 1e-9 ... 1e-4 on every link; what was hit, detected,
retried, and what throughput is kept.

    .venv/bin/python experiments/ber_sweep.py                  # 16 nodes, 100 000 256-byte messages
    .venv/bin/python experiments/ber_sweep.py --messages 20000 --seed 2
    .venv/bin/python experiments/ber_sweep.py --burst-bits 16   # errors in 16-bit bursts
    .venv/bin/python experiments/ber_sweep.py --data-recovery ideal   # a write NACK the protocol lacks

Every bit of every block flips independently, or (--burst-bits) errors come
in bursts at the same bit-error rate; recovery as in
docs/faults.md §4: timeouts, idempotent retries with the message id, first
copy kept. With --data-recovery protocol (the default, the protocol as
built) the switch grants a chunk again only if nothing of it reached the
switch: a write whose data is dropped after it is lost (counted), a read's
dropped response is asked for again by its requester. With ideal the
switch's timer knows whether the data arrived intact (a write NACK the
protocol does not have). Prints a markdown table; seeded.
"""

from __future__ import annotations

import argparse
import time

from edm import sim


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=16)
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--load", type=float, default=0.5)
    ap.add_argument("--workload", default="micro")
    ap.add_argument("--message-bytes", type=int, default=256)
    ap.add_argument("--retry-timeout-ns", type=int, default=20_000)
    ap.add_argument("--burst-bits", type=int, default=0, help="0: independent bit errors; L: bursts of L bits")
    ap.add_argument("--zero-queue", type=int, default=1, choices=[0, 1],
                    help="1: EDM's rules (booked circuits); 0: circuits that queue at the switch")
    ap.add_argument("--data-recovery", default="protocol", choices=["protocol", "ideal"],
                    help="protocol: the switch's timer sees its ingress only (writes hit after it are lost); "
                         "ideal: it knows whether the data arrived (a write NACK the protocol lacks)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    base = {"nodes": args.nodes, "messages": args.messages, "load": args.load, "workload": args.workload, "message_bytes": args.message_bytes,
            "seed": args.seed, "zero_queue": args.zero_queue, "retry_timeout_ns": args.retry_timeout_ns, "ber_burst_bits": args.burst_bits,
            "data_recovery": args.data_recovery}
    started = time.perf_counter()
    rows = []
    clean = None
    for ber in [0.0, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4]:
        res = sim.run({**base, "ber": ber})
        s = res.summary
        # Goodput while messages are issued: bytes of the operations done by
        # the last issue (a retry's timer at the very end would otherwise
        # stretch the run and hide the rate).
        df = res.messages
        last_issue = int(df["issue_ps"].max())
        done = (df["complete_ps"] >= 0) & (df["complete_ps"] <= last_issue)
        goodput = float(df["size"][done].sum())
        writes = int((df["op"] == "write").sum())
        if clean is None:
            clean, clean_goodput = s, goodput
        # Bytes delivered beyond the completed messages' would be duplicates.
        rows.append({
            "BER": f"{ber:.0e}" if ber else "0",
            "operations completed": f"{s['completed']} / {s['messages']}",
            "writes lost": f"{s['writes_lost']} / {writes}",
            "failed": s["failed"] + s["timed_out"],
            "control units dropped (hit, detected)": s["control_corrupted"],
            "data units dropped (CRC-32C)": s["data_corrupted"],
            "undetected": s["undetected"],
            "write data units lost": s["write_data_lost"],
            "responses dropped (asked again)": s["response_data_dropped"],
            "/N/ or request re-sent": s["notify_retries"],
            "chunks re-granted": s["chunk_retries"],
            "second copies discarded": s["duplicate_data"] + s["duplicate_notifications"],
            "goodput kept (by last issue)": f"{goodput / clean_goodput:.4f}",
            "p99 latency (ns)": f"{s['p99_latency_ns']:.0f}",
        })
    print("| " + " | ".join(rows[0]) + " |")
    print("|" + "---|" * len(rows[0]))
    for r in rows:
        print("| " + " | ".join(str(v) for v in r.values()) + " |")
    print(f"\n{len(rows)} runs of {args.messages} messages, data_recovery = {args.data_recovery}, "
          f"{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
