"""Bit-error sweep of the simulator (issues 25, 40; paper §3.3): the same
workload at BER 0 and 1e-9 ... 1e-4 on every link, with one switch plane
and two; what was hit, detected, retried, every write's outcome, and what
throughput is kept.

    .venv/bin/python experiments/ber_sweep.py                  # 16 nodes, 100 000 256-byte messages
    .venv/bin/python experiments/ber_sweep.py --messages 20000 --seed 2 --planes 1
    .venv/bin/python experiments/ber_sweep.py --burst-bits 16   # errors in 16-bit bursts
    .venv/bin/python experiments/ber_sweep.py --json OUT.json   # also one JSON row per point
    .venv/bin/python experiments/ber_sweep.py --data-recovery ideal   # the bound: the switch knows

Every bit of every block flips independently, or (--burst-bits) errors come
in bursts at the same bit-error rate; recovery as in docs/faults.md §4 and
docs/protocol.md §4b: timeouts, idempotent retries with the message id,
first copy kept; every write acknowledged by its memory node (/A/) or sent
again with its id until acknowledged, or reported failed after give_up_ns.
Prints a markdown table; seeded. The JSON rows carry `writes`,
`writes_lost` (neither applied nor reported: target 0),
`writes_applied_twice`, `writes_unresolved` (targets 0), `writes_failed`
(reported), `ack_bytes_per_write` (/A/ wire bytes per write on each of
the two links an /A/ crosses) and `ack_share_of_write_wire` (issue 40's
measure: /A/ wire bytes over the write stream's, i.e. each write's /N/ and
data units with framing as its requester sends them; beside it
`ack_share_of_write_blocks`, /A/ blocks over the data blocks alone).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from edm import sim
from edm.protocol import codec

BERS = [0.0, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4]
BLOCK_WIRE_BYTES = 66 / 8  # one 66-bit block on the line


def unit_blocks(size: int, chunk: int) -> int:
    """Blocks of a write's data units (chunks of `chunk` bytes)."""
    full, rest = divmod(size, chunk)
    return full * codec.message_blocks("WREQ", chunk) + (codec.message_blocks("WREQ", rest) if rest else 0)


def point(base: dict, ber: float, planes: int) -> tuple[dict, float]:
    """One run: its summary's figures as a row, and its goodput (bytes of
    operations applied by the last issue)."""
    res = sim.run({**base, "ber": ber, "dual_switch": int(planes == 2)})
    s, df = res.summary, res.messages
    # Goodput while messages are issued: bytes of the operations done by
    # the last issue (a retry's timer at the very end would otherwise
    # stretch the run and hide the rate).
    last_issue = int(df["issue_ps"].max())
    done = (df["complete_ps"] >= 0) & (df["complete_ps"] <= last_issue)
    goodput = float(df["size"][done].sum())
    write = df["op"] == "write"
    writes = int(write.sum())
    chunk = int(s["config"]["chunk_bytes"])
    data_blocks = sum(unit_blocks(int(b), chunk) for b in df["size"][write])
    outcomes = s.get("outcomes", {})
    return {
        "planes": planes,
        "ber": ber,
        "messages": s["messages"],
        "completed": s["completed"],
        "writes": writes,
        "writes_acked": int((write & (df["acked_ps"] >= 0)).sum()),
        "writes_failed": int((write & (df["outcome"] == "failed")).sum()),
        "writes_lost": s["writes_lost"],
        "writes_unresolved": s["writes_unresolved"] + int((write & (df["outcome"] == "unresolved")).sum()),
        "writes_applied_twice": s["writes_applied_twice"],
        "writes_failed_applied": s["writes_failed_applied"],
        "rmw_applied_twice": s["rmw_applied_twice"],
        "failed": s["failed"] + s["timed_out"],
        "outcomes": outcomes,
        "control_corrupted": s["control_corrupted"],
        "data_corrupted": s["data_corrupted"],
        "undetected": s["undetected"],
        "write_data_dropped": s["write_data_dropped"],
        "write_retries": s["write_retries"],
        "acks_sent": s["acks_sent"],
        "acks_lost": s["acks_lost"],
        "ack_bytes_per_write": s["acks_sent"] * BLOCK_WIRE_BYTES / max(writes, 1),
        # /A/ blocks against the writes' data blocks (on the links they share).
        "ack_share_of_write_blocks": s["acks_sent"] / max(data_blocks, 1),
        # Issue 40's measure: /A/ wire bytes against the write stream's wire
        # bytes, every block a write's requester sends for it: its /N/ and its
        # data units with their framing (the first copy of each; a /G/ is the
        # switch's block, not the stream's). Every block is 66 bits on the line.
        "ack_share_of_write_wire": s["acks_sent"] / max(writes + data_blocks, 1),
        "response_data_dropped": s["response_data_dropped"],
        "notify_retries": s["notify_retries"],
        "chunk_retries": s["chunk_retries"],
        "retry_buffer_max": s["retry_buffer_max"],
        "dup_span_max": s["dup_span_max"],
        "p99_latency_ns": s["p99_latency_ns"],
        "mean_write_latency_ns": s["by_op"].get("write", {}).get("mean_latency_ns", float("nan")),
        "mean_write_acked_latency_ns": s["by_op"].get("write", {}).get("mean_acked_latency_ns", float("nan")),
    }, goodput


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=16)
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--load", type=float, default=0.5)
    ap.add_argument("--workload", default="micro")
    ap.add_argument("--message-bytes", type=int, default=256)
    ap.add_argument("--write-ratio", type=float, default=0.5)
    ap.add_argument("--retry-timeout-ns", type=int, default=20_000)
    ap.add_argument("--burst-bits", type=int, default=0, help="0: independent bit errors; L: bursts of L bits")
    ap.add_argument("--zero-queue", type=int, default=1, choices=[0, 1],
                    help="1: EDM's rules (booked circuits); 0: circuits that queue at the switch")
    ap.add_argument("--data-recovery", default="protocol", choices=["protocol", "ideal"],
                    help="protocol: every write acknowledged or sent again (docs/protocol.md §4b); "
                         "ideal: a bound, the switch's timer knows whether the data arrived")
    ap.add_argument("--planes", default="1,2", help="switch planes to run: 1, 2 or 1,2")
    ap.add_argument("--bers", default=",".join(f"{b:g}" for b in BERS), help="comma-separated bit-error rates")
    ap.add_argument("--json", type=Path, help="also write one JSON row per point here")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    try:
        planes = [int(p) for p in args.planes.split(",")]
        bers = [float(b) for b in args.bers.split(",")]
    except ValueError:
        ap.exit(2, f"ber_sweep: --planes {args.planes!r} / --bers {args.bers!r}: not numbers\n")
    if not set(planes) <= {1, 2}:
        ap.exit(2, f"ber_sweep: --planes {args.planes!r}: planes are 1 or 2\n")
    base = {"nodes": args.nodes, "messages": args.messages, "load": args.load, "workload": args.workload,
            "message_bytes": args.message_bytes, "write_ratio": args.write_ratio, "seed": args.seed,
            "zero_queue": args.zero_queue, "retry_timeout_ns": args.retry_timeout_ns,
            "ber_burst_bits": args.burst_bits, "data_recovery": args.data_recovery}
    started = time.perf_counter()
    rows, table = [], []
    for p in planes:
        clean_goodput = None
        for ber in bers:
            row, goodput = point(base, ber, p)
            clean_goodput = clean_goodput or goodput
            row["goodput_kept"] = goodput / clean_goodput
            rows.append(row)
            table.append({
                "planes": p,
                "BER": f"{ber:.0e}" if ber else "0",
                "completed": f"{row['completed']} / {row['messages']}",
                "writes acked / failed / lost / unresolved / applied twice":
                    f"{row['writes_acked']} / {row['writes_failed']} / {row['writes_lost']} / "
                    f"{row['writes_unresolved']} / {row['writes_applied_twice']}",
                "write data dropped": row["write_data_dropped"],
                "writes re-sent": row["write_retries"],
                "/A/ sent (lost)": f"{row['acks_sent']} ({row['acks_lost']})",
                "/A/ bytes per write": f"{row['ack_bytes_per_write']:.2f}",
                "/A/ share of write wire bytes (data blocks)":
                    f"{100 * row['ack_share_of_write_wire']:.2f} % ({100 * row['ack_share_of_write_blocks']:.2f} %)",
                "control / data units dropped": f"{row['control_corrupted']} / {row['data_corrupted']}",
                "undetected": row["undetected"],
                "responses asked again": row["response_data_dropped"],
                "goodput kept": f"{row['goodput_kept']:.4f}",
                "p99 (ns)": f"{row['p99_latency_ns']:.0f}",
                "write mean posted / acked (ns)":
                    f"{row['mean_write_latency_ns']:.0f} / {row['mean_write_acked_latency_ns']:.0f}",
            })
            if args.json:
                # Rewritten after every point: a crash keeps what finished.
                args.json.write_text(json.dumps(rows, indent=1) + "\n")
    print("| " + " | ".join(table[0]) + " |")
    print("|" + "---|" * len(table[0]))
    for r in table:
        print("| " + " | ".join(str(v) for v in r.values()) + " |")
    print(f"\n{len(rows)} runs of {args.messages} messages, data_recovery = {args.data_recovery}, "
          f"{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
