"""Failover in the RTL dual switch (docs/faults.md §6): runs
tests/rtl/tb_dual_fabric.py (two planes, mirrored requests, first copies
applied) for several seeds, with no fault, a compute node's link cut and
restored, a memory node's link cut and restored, and a switch stopped for
good, every byte checked; prints what was lost, what was applied twice, and
how traffic went on after the fault.

    .venv/bin/python experiments/dual_fabric.py                  # seeds 0..4, 100 rounds
    .venv/bin/python experiments/dual_fabric.py --seeds 10 --rounds 200
    .venv/bin/python experiments/dual_fabric.py --two-cuts --seeds 1 --rounds 100   # 150 rounds

--two-cuts runs `two_link_cuts` instead (a cut on each plane, one after the
other, docs/faults.md §6); --second-cut T moves the second cut to cycle T
(e.g. into the first one's recovery, which the default 6000 is after);
--count-failures lets requests fail there and prints what failed or was lost
(from the filters' verdicts, as --ber). --shared-reads runs `shared_reads` (reads, writes
and adds of one region, each read checked against the memory engines' commit
order) and prints its figures; with --read-order 0 on a top built without the
order for reads, where the bench counts stale reads (and fails if none).

    .venv/bin/python experiments/dual_fabric.py --shared-reads --seeds 5 [--read-order 0]

--ber runs `bit_errors` instead: bit errors on every link of both planes at
that rate per bit (--burst L: in bursts of L bits), a /N/ re-send timer of
--retry cycles and read timeout of --timeout, most requests to memory node
0, fetch-and-adds of a shared word; it prints, per seed, what was lost on the
wire (both copies hit), refused as stale though no copy was applied (a first
copy refused), applied twice, and the largest id lag of a first copy at the
filter (docs/faults.md §6). --mirror-wait builds the top with that
MIRROR_WAIT_CYCLES (a plane left out sooner lags further); --count-only
records refused first copies instead of failing on them.

    .venv/bin/python experiments/dual_fabric.py --ber 1e-6 --seeds 3 [--burst 8] [--retry 300]

--acks [T] builds the top with write acknowledgements (ACKS = 1: the memory
nodes send /A/, each compute host re-sends a write T cycles, default 1500,
after its posted completion without one: above an /A/'s longest wait for its
pair and node slots; docs/protocol.md §4b) and, for
--two-cuts and --ber, prints each seed's writes by outcome: acknowledged,
failed and reported (and of those, applied whole anyway), lost unseen (not
in memory whole though acknowledged, or without --acks completed OK),
unresolved, applied twice (every DRAM word checked against the copies
applied). --two-cuts --acks counts failures as --count-failures does and
fails a seed with a write lost unseen, unresolved or applied twice.
--one-plane (with --ber) holds plane 1's switch in reset and its links cut
from the start: plane 0 alone, a write hit on it has no second copy.

    .venv/bin/python experiments/dual_fabric.py --two-cuts --acks --seeds 50 [--first-seed 0] [--json OUT]
    .venv/bin/python experiments/dual_fabric.py --ber 4e-5 --acks --one-plane --seeds 3

Every run asserts what the bench asserts (tests/rtl/tb_dual_fabric.py); the
runs that pass are printed, and the script then fails naming every run that
did not. Cycles are 2.56 ns (the PCS clock).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "rtl"))

from test_rtl_faults import DUAL_TESTS, TWO_CUTS_TEST, run_dual_fabric  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0 .. N-1 (moves every test's seed)")
    parser.add_argument("--rounds", type=int, default=100, help="random requests per compute node")
    parser.add_argument("--two-cuts", action="store_true", help="the two-cut test instead of the four")
    parser.add_argument("--second-cut", type=int, help="with --two-cuts: the second cut's cycle (default 6000)")
    parser.add_argument("--count-failures", action="store_true",
                        help="with --two-cuts: requests may fail; print what failed or was lost")
    parser.add_argument("--shared-reads", action="store_true", help="the shared_reads test instead")
    parser.add_argument("--read-order", type=int, default=1, choices=(0, 1),
                        help="with --shared-reads: tb_dual_fabric_top READ_ORDER")
    parser.add_argument("--ber", type=float, help="the bit_errors test at this bit-error rate instead")
    parser.add_argument("--burst", type=int, default=1, help="with --ber: bits per error burst")
    parser.add_argument("--retry", type=int, default=300, help="with --ber: cfg_retry cycles")
    parser.add_argument("--timeout", type=int, default=1500, help="with --ber: cfg_timeout cycles")
    parser.add_argument("--mirror-wait", type=int, help="with --ber: tb_dual_fabric_top MIRROR_WAIT_CYCLES")
    parser.add_argument("--count-only", action="store_true", help="with --ber: count first copies refused")
    parser.add_argument("--acks", type=int, nargs="?", const=1500, metavar="T",
                        help="write acknowledgements (ACKS = 1), a write re-sent T cycles (1500) without /A/")
    parser.add_argument("--one-plane", action="store_true", help="with --ber: plane 1 stopped from the start")
    parser.add_argument("--first-seed", type=int, default=0, help="seeds FIRST .. FIRST + N - 1")
    parser.add_argument("--json", type=Path, help="append each run's summary (one JSON line) to this file")
    args = parser.parse_args()
    if args.ber is not None:
        bit_errors(args)
        return
    if args.shared_reads:
        shared_reads(args.seeds, args.read_order)
        return
    rows, failures = [], []
    start = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        for s in seeds(args):
            out = Path(tmp) / f"seed{s}.json"
            failed = run_dual_fabric(testcase=TWO_CUTS_TEST if args.two_cuts else DUAL_TESTS,
                                     seed=s, parameters=acks_build(args),
                                     env={"EDM_DUAL_ROUNDS": str(args.rounds), "EDM_DUAL_JSON": str(out),
                                          **acks_env(args),
                                          **({} if args.second_cut is None
                                             else {"EDM_DUAL_SECOND_CUT": str(args.second_cut)}),
                                          **({"EDM_DUAL_FAILURES": "1"} if args.count_failures else {})})
            done = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
            keep(args, s, done)
            tests = (TWO_CUTS_TEST if args.two_cuts else DUAL_TESTS).split(",")
            failed = sorted(set(failed) | {t for t in tests if t not in {r["test"] for r in done}})
            if failed:   # (a summary is written before the bench's last checks: failed, yet in the table)
                failures.append(f"seed {s}: {', '.join(failed)} failed "
                                f"(EDM_SEED={s}; tests/rtl/sim_build/tb_dual_fabric/results.xml)")
            rows += [(s, r) for r in done]
    print("| test | seed | cycles | requests / bytes checked | writes / RMW | lost | reported failed "
          "| applied twice (DRAM words) | second copies marked (stale) | completions dropped | requests on one plane "
          "| /N/ re-sent / stray grants / circuits given up |")
    print("|---|---:|---:|---|---|---:|---:|---:|---|---:|---:|---|")
    for s, r in rows:
        c = r["counters"]
        print(f"| {r['test']} | {s} | {r['cycles']} | {r['requests']} / {r['bytes_checked']} | {r['writes']} / {r['rmw']} "
              f"| {r['lost']} | {r['reported_failed']} | {r['duplicated_dram_words']} "
              f"| {sum(c['filter_cnt_dup'])} ({sum(c['filter_cnt_stale'])}) "
              f"| {sum(c['mirror_cnt_dup']) + sum(c['mirror_cnt_stale'])} | {sum(c['mirror_cnt_unmirrored'])} "
              f"| {sum(c['cn_cnt_retries'])} / {sum(c['cn_cnt_stray'])} / {sum(c['sw_cnt_lost_grants'])} |")
    if args.count_failures or args.acks:
        print("\n| seed | reads / writes / RMWs failed | write chunks lost on the wire | first copies refused "
              "| applied twice | RMWs applied, reported failed |")
        print("|---:|---|---:|---:|---:|---:|")
        for s, r in [(s, r) for s, r in rows if "copies" in r]:
            k, n = r["copies"], r["failed"]
            print(f"| {s} | {n['1']} / {n['2']} / {n['3']} | {k['lost_on_wire_writes']} | {k['refused_first']} "
                  f"| {k['applied_twice']} | {k['rmw_applied_reported_failed']} |")
        write_outcome_table(args, rows)
    print()
    print("| fault | seed | in flight (failed) | completed by plane | last in flight done after | "
          "first completion after | first new one after | longest gap 2000 before / after "
          "| completions 2000 before / after |")
    print("|---|---:|---|---|---:|---:|---:|---|---|")
    for s, r in rows:
        for f in r["faults"]:
            print(f"| {f['fault']} | {s} | {f['in_flight']} ({f['in_flight_failed']}) | {f['in_flight_planes']} "
                  f"| {f['in_flight_done_by']} | {f['first_completion_after']} | {f['first_new_completion_after']} "
                  f"| {f['longest_gap_before']} / {f['longest_gap_after']} "
                  f"| {f['completions_before']} / {f['completions_after']} |")
    finish(len(rows), start, failures)


def seeds(args) -> range:
    return range(args.first_seed, args.first_seed + args.seeds)


def acks_build(args, **parameters) -> dict | None:
    """The top's parameters: ACKS = 1 with --acks (a model of its own)."""
    if args.acks is not None:
        parameters["ACKS"] = 1
    return parameters or None


def acks_env(args) -> dict:
    return {} if args.acks is None else {"EDM_DUAL_ACKS": str(args.acks)}


def keep(args, seed: int, summaries: list) -> None:
    """--json: each run's summary, one line, with its seed and options."""
    if args.json:
        with args.json.open("a") as out:
            for r in summaries:
                out.write(json.dumps({"seed": seed, "acks": args.acks, "one_plane": args.one_plane,
                                      "ber": args.ber, **r}) + "\n")


def write_outcome_table(args, rows) -> None:
    """Each run's writes by outcome (tb_dual_fabric write_outcomes; the runs that count them)."""
    rows = [(s, r) for s, r in rows if "write_outcomes" in r]
    print(f"\nWrites ({'acknowledged, re-sent after ' + str(args.acks) + ' cycles' if args.acks else 'no /A/'}):\n")
    print("| seed | writes | acknowledged | failed, reported (not sent / applied whole) | lost unseen | unresolved "
          "| applied twice | re-sent | reads / RMWs failed |")
    print("|---:|---:|---:|---|---:|---:|---:|---:|---|")
    for s, r in rows:
        w, k = r["write_outcomes"], r["copies"]
        print(f"| {s} | {w['writes']} | {w['acknowledged'] if args.acks else '-'} "
              f"| {w['failed_reported']} ({w['posted_failed']} / {w['failed_applied']}) | {w['lost_unseen']} | {w['unresolved']} "
              f"| {w['applied_twice']} | {sum(r['counters']['wr_cnt_resent'])} "
              f"| {k['reads_failed']} / {k['rmw_failed']} |")
    total = {key: sum(r["write_outcomes"][key] for _, r in rows)
             for key in ("writes", "acknowledged", "failed_reported", "lost_unseen", "unresolved", "applied_twice")}
    print(f"\nall {len(rows)} runs: {total}")


def finish(runs: int, start: float, failures: list) -> None:
    """The wall time; then a failure naming every run that did not pass."""
    print(f"\n{runs} runs in {time.time() - start:.0f} s")
    if failures:
        sys.exit("\n".join(failures))


def shared_reads(seeds: int, read_order: int) -> None:
    start = time.time()
    print("| seed | READ_ORDER | cycles | requests (reads) | first copies on plane 0 / 1 | reads answered by "
          "the later copy | reads whose copies differ | stale reads | word read and written in one cycle |")
    print("|---:|---:|---:|---|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for s in range(seeds):
            out = Path(tmp) / f"seed{s}.json"
            env = {"EDM_DUAL_JSON": str(out)}
            if not read_order:
                env["EDM_DUAL_UNORDERED"] = "1"
            failed = run_dual_fabric(testcase="shared_reads", env=env, seed=s,
                                     parameters=None if read_order else {"READ_ORDER": 0})
            if failed or not out.exists():
                sys.exit(f"seed {s}: the bench failed (see tests/rtl/sim_build/ results.xml)")
            r = json.loads(out.read_text())
            o = r["order"]
            print(f"| {s} | {read_order} | {r['cycles']} | {o['ordered']} ({o['reads']}) "
                  f"| {o['first_on_plane'][0]} / {o['first_on_plane'][1]} | {o['answered_by_later_copy']} "
                  f"| {o['copies_differ']} | {o['stale_reads']} | {o['races']} |")
    print(f"\n{seeds} runs in {time.time() - start:.0f} s")


def bit_errors(args) -> None:
    start = time.time()
    failures = []
    print("| seed | BER / burst | retry / timeout | cycles | requests | reads / RMWs failed | RMWs applied, "
          "reported failed | write chunks lost on the wire | first copies refused (writes) | applied twice "
          "| copies marked stale | largest id lag: first copy / any | bits flipped |")
    print("|---:|---|---|---:|---:|---|---:|---:|---|---:|---:|---|---:|")
    parameters = acks_build(args, **({} if args.mirror_wait is None else {"MIRROR_WAIT_CYCLES": args.mirror_wait}))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for s in seeds(args):
            out = Path(tmp) / f"seed{s}.json"
            env = {"EDM_DUAL_JSON": str(out), "EDM_DUAL_ROUNDS": str(args.rounds),
                   "EDM_DUAL_BER": str(args.ber), "EDM_DUAL_BURST": str(args.burst),
                   "EDM_DUAL_RETRY": str(args.retry), "EDM_DUAL_TIMEOUT": str(args.timeout)}
            if args.count_only:
                env["EDM_DUAL_COUNT_ONLY"] = "1"
            if args.one_plane:
                env["EDM_DUAL_ONE_PLANE"] = "1"
            failed = run_dual_fabric(testcase="bit_errors", env={**env, **acks_env(args)}, parameters=parameters,
                                     seed=s)
            if failed:
                failures.append(f"seed {s}: bit_errors failed (EDM_SEED={s}; results.xml under "
                                f"tests/rtl/sim_build/)")
            if not out.exists():   # failed before its summary
                print(f"| {s} | {args.ber:g} / {args.burst} | {args.retry} / {args.timeout} | failed |")
                continue
            r = json.loads(out.read_text())
            keep(args, s, [r])
            rows.append((s, r))
            k = r["copies"]
            print(f"| {s} | {args.ber:g} / {args.burst} | {args.retry} / {args.timeout} | {r['cycles']} "
                  f"| {r['requests']} | {k['reads_failed']} / {k['rmw_failed']} | {k['rmw_applied_reported_failed']} "
                  f"| {k['lost_on_wire_writes']} | {k['refused_first']} ({k['refused_first_writes']}) "
                  f"| {k['applied_twice']} | {k['stale_marks']} | {k['lag_first']} / {k['lag_any']} "
                  f"| {k['bits_flipped']} |")
    write_outcome_table(args, rows)
    finish(args.seeds, start, failures)


if __name__ == "__main__":
    main()
