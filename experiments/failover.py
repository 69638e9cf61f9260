"""Failover in the simulator (issue 25, paper §3.3): a link or a switch goes
down mid-run, with one switch plane or the dual switch; operations lost,
duplicated, and the time until traffic flows again.

    .venv/bin/python experiments/failover.py               # 16 nodes, 60 000 256-byte messages
    .venv/bin/python experiments/failover.py --messages 20000 --seed 2

The failure comes at a third of the issue period. "Affected" operations are
those whose requester or memory node is the failed link's host (all of them
for a switch). Recovery time: from the failure to the first completion of an
affected operation issued at or after it (new traffic flowing again).
Stalled: the longest time past the failure an affected operation in flight
at the failure took to complete. Sent on one plane: dual-switch messages
whose requester saw its link to a plane down (`link_detect_ns`, default
100 ns) and left that plane out. Demand dropped: notifications a switch
dropped when it failed or refused for a port it saw down (their requesters
send them again). Writes lost: writes neither in memory nor reported
failed (target 0: with --data-recovery protocol, the default, a write whose
data went into a dead link gets no acknowledgement and is sent again with
its id, docs/protocol.md §4b; reported failed after give_up_ns, "outcome
unknown" if its data got in but its acknowledgement could not come back;
ideal: the bound, the switch's timer knows what arrived). Prints a markdown
table; seeded.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from edm import sim


def measure(res, host, fail_ps):
    s, df = res.summary, res.messages
    issue = df["issue_ps"].to_numpy(np.int64)
    complete = df["complete_ps"].to_numpy(np.int64)
    affected = np.ones(len(df), bool) if host is None else (
        (df["requester"].to_numpy() == host) | (df["memory"].to_numpy() == host))
    done = complete >= 0
    after = affected & done & (issue >= fail_ps)
    recovery = f"{(complete[after].min() - fail_ps) / 1e3:.0f}" if after.any() else "never"
    in_flight = affected & done & (issue < fail_ps) & (complete >= fail_ps)
    stalled = (complete[in_flight].max() - fail_ps) / 1e3 if in_flight.any() else 0.0
    sizes = np.where(df["op"].to_numpy() == "rmw", 8, df["size"].to_numpy()).astype(np.int64)
    # Bytes delivered beyond the completed operations' would be duplicates
    # (partial deliveries of failed operations aside).
    extra = s["delivered_bytes"] - int(sizes[done].sum())
    return {
        "operations": s["messages"],
        "completed": s["completed"],
        "lost (reported failed)": s["failed"] + s["timed_out"],
        "writes lost": s["writes_lost"],
        "writes re-sent": s["write_retries"],
        "writes failed (outcome unknown)": f"{s['writes_failed']} ({s['writes_failed_applied']})",
        "lost silently": s["deadlocked"],
        "duplicates delivered": extra,
        "second copies discarded": s["duplicate_data"] + s["mirror_copies_discarded"],
        "units into a down link": s["link_down_drops"],
        "demand dropped": s["demand_dropped"],
        "sent on one plane": s["unmirrored"],
        "units hit": s["control_corrupted"] + s["data_corrupted"],
        "links disabled": s["links_disabled"],
        "recovery (ns)": recovery,
        "stalled (ns)": f"{stalled:.0f}",
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=16)
    ap.add_argument("--messages", type=int, default=60_000)
    ap.add_argument("--load", type=float, default=0.5)
    ap.add_argument("--retry-timeout-ns", type=int, default=2_000)
    ap.add_argument("--zero-queue", type=int, default=1, choices=[0, 1],
                    help="1: EDM's rules (booked circuits); 0: circuits that queue at the switch")
    ap.add_argument("--data-recovery", default="protocol", choices=["protocol", "ideal"])
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    base = {"nodes": args.nodes, "messages": args.messages, "load": args.load, "workload": "micro",
            "message_bytes": 256, "seed": args.seed, "zero_queue": args.zero_queue,
            "retry_timeout_ns": args.retry_timeout_ns, "give_up_ns": 200_000,
            "data_recovery": args.data_recovery}
    started = time.perf_counter()
    probe = sim.run(base).messages
    fail_ns = int(probe["issue_ps"].max() / 3 / 1e3)
    outage_ns = 20_000
    host = 3
    cases = [
        ("one plane, link 3 down 20 us", False, f"link:{host}@{fail_ns}-{fail_ns + outage_ns}", host),
        ("one plane, switch down 20 us", False, f"switch@{fail_ns}-{fail_ns + outage_ns}", None),
        ("one plane, switch down for good", False, f"switch@{fail_ns}", None),
        ("dual switch, link 3 of plane 0 down 20 us", True,
         f"link:{host}:0@{fail_ns}-{fail_ns + outage_ns}", host),
        ("dual switch, link 3 of plane 0 down for good", True, f"link:{host}:0@{fail_ns}", host),
        ("dual switch, switch 0 down for good", True, f"switch:0@{fail_ns}", None),
        ("dual switch, switch 1 down for good", True, f"switch:1@{fail_ns}", None),
        ("one plane, link 3 noisy (BER 1e-4), BER monitor", False, f"link:{host}@{fail_ns}/1e-4", host),
        ("dual switch, link 3 of plane 0 noisy (BER 1e-4), BER monitor", True,
         f"link:{host}:0@{fail_ns}/1e-4", host),
    ]
    rows = []
    for name, dual, failures, affected_host in cases:
        # The monitor (802.3's threshold and window, counting dropped units)
        # disables a noisy link; it never fires on a clean one.
        res = sim.run({**base, "dual_switch": int(dual), "failures": failures,
                       "ber_monitor_threshold": 16, "ber_monitor_window_ns": 125_000})
        rows.append({"case": name, "failures": f"`{failures}`",
                     **measure(res, affected_host, fail_ns * 1000)})
    print("| " + " | ".join(rows[0]) + " |")
    print("|" + "---|" * len(rows[0]))
    for r in rows:
        print("| " + " | ".join(str(v) for v in r.values()) + " |")
    print(f"\nfailure at {fail_ns} ns of a {int(probe['issue_ps'].max() / 1e3)} ns issue period; "
          f"data_recovery = {args.data_recovery}; {len(rows) + 1} runs, {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
