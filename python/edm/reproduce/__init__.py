"""``edm reproduce``: the paper's evaluation (§4.3, Table 1) end to end.

    edm reproduce                 # full run -> results/reproduce/report.{html,md}
    edm reproduce --quick         # a small version (CI checks the pipeline with it)
    edm report                    # re-render the report from stored results only

Runs its experiments as resumable sweeps on Dask (:mod:`edm.sweep`; each point
is stored under a key of its full configuration, so an interrupted run resumes
and a finished one re-renders without simulating). EDM runs as two protocols:
"edm" (EDM's own scheduling rules) and "edm-paper" (the paper's).

* **Table 1**: unloaded 64 B read and write latency of every protocol beside
  the paper's Table 1 (simulated; :mod:`edm.sim.unloaded`), and EDM's measured
  on our RTL (:mod:`edm.rtl.latency`, the whole-fabric Verilator testbench;
  full run only, stored in ``rtl_latency.json`` and reused while the RTL and
  testbench sources are unchanged).
* **Figure 8a**: 64 B messages, all-to-all, write-only / read-only / mixed,
  mean and p99 latency normalised by each message's unloaded latency, against
  load, for edm, edm-paper (both also with a 3 GHz scheduler) and the six
  baselines, and how long memory data waited at the switch.
* **Figure 8b**: the five application workloads (sizes from the published
  CDFs, half reads), mean and p99 message-completion-time slowdown, with runs
  long enough that 95 % of the issued bytes are delivered by the last issue.
* **Best protocol** at each load and workload.
* **Ablation**: EDM's rules with one lever at the paper's value, and the
  paper's rules with one lever at EDM's, on the applications and 64 B traffic.
* **Background frames** (§3.2.3): the paper's EDM with Ethernet frames (MTU and
  9 KB jumbo) on every link, with and without intra-frame preemption.

The report puts the paper's claims beside ours and says, computed from the
numbers, whether each holds. What is simulated: :mod:`edm.reproduce.plan`;
the numbers: :mod:`edm.reproduce.claims`; the report: :mod:`edm.reproduce.render`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from edm.args import address, in_file, integer, out_dir
from edm.reproduce import related as reproduce_related, ycsb as reproduce_ycsb
from edm.reproduce import stored as stored_results, summary as results_summary
from edm.reproduce.claims import claims, table_of  # noqa: F401 - re-exported
from edm.reproduce.plan import (  # noqa: F401 - re-exported
    ABLATION,
    APP_CURVES,
    APPS,
    BG_FRAMES,
    BG_LOADS,
    CURVES,
    RATIOS,
    Plan,
    curve,
)
from edm.reproduce.render import RTL_LATENCY_FILE, MissingResults, stored  # noqa: F401 - re-exported
from edm.reproduce.render import build_report as _render
from edm.sweep import ResultStore, point_key, run_sweep


def _rtl_fingerprint() -> str:
    """A hash of everything the RTL latency depends on: the RTL and the fabric testbench."""
    from edm.rtl.latency import ROOT  # noqa: PLC0415

    files = sorted((ROOT / "rtl").rglob("*.sv")) + sorted((ROOT / "tests" / "rtl").glob("*fabric*"))
    return stored_results.fingerprint(files, lambda f: str(f.relative_to(ROOT)))


def _stored_rtl_latency(out: Path) -> dict[str, Any] | None:
    """The stored RTL Table 1, or None if there is none or it cannot be read (said on stderr)."""
    return stored_results.read_json(out / RTL_LATENCY_FILE, "by a full run")


def measure_rtl_latency(out: Path) -> dict[str, Any] | None:
    """EDM's Table 1 from the RTL (``edm rtl latency``), stored in `out`; reused while the
    sources are unchanged. None (with a message) where it cannot be measured."""
    path = out / RTL_LATENCY_FILE
    try:
        fingerprint = _rtl_fingerprint()
    except OSError as e:
        print(f"edm reproduce: RTL latency skipped (no RTL sources: {e})", file=sys.stderr)
        return None
    doc = _stored_rtl_latency(out)
    if doc is not None and doc.get("fingerprint") == fingerprint:
        print("rtl latency: reused (RTL unchanged)", file=sys.stderr)
        return doc
    from edm.rtl import latency as rtl_latency  # noqa: PLC0415

    start = time.perf_counter()
    print("rtl latency: simulating the whole fabric in Verilator (about 2 min)...", file=sys.stderr)
    try:
        data = rtl_latency.measure()
    except (SystemExit, Exception) as e:  # noqa: BLE001 - a missing Verilator must not lose the sweeps
        print(f"edm reproduce: RTL latency not measured: {e}", file=sys.stderr)
        return None
    doc = {"fingerprint": fingerprint, "command": "edm rtl latency", "breakdown": data,
           "summary": rtl_latency.summarize(data), "wall_seconds": time.perf_counter() - start}
    out.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    tmp.replace(path)
    print(f"rtl latency: {doc['wall_seconds']:.0f} s", file=sys.stderr)
    return doc




def build_report(out: Path, plan: Plan, wall_seconds: float | None, command: str,
                 computed: int | None = None) -> tuple[Path, Path]:
    """The report from stored points only (and the stored RTL Table 1, if any), and
    beside it the README's headline tables (:mod:`edm.reproduce.summary`)."""
    rtl = _stored_rtl_latency(out)
    paths = _render(out, plan, wall_seconds, command, computed, rtl=rtl,
                    ycsb=reproduce_ycsb.stored(out), related=reproduce_related.stored(out))
    results_summary.write(out / results_summary.SUMMARY_FILE, results_summary.build(out, plan, command, rtl))
    return paths


def update_readme(out: Path, plan: Plan, command: str, readme: Path) -> None:
    """`edm report --readme`: the headline tables from what is stored in `out` into
    docs/results.json beside `readme`, and the README's marked tables from that."""
    built = results_summary.build(out, plan, command, _stored_rtl_latency(out))
    path, kept = results_summary.install(readme, built)
    print(f"wrote {path} ({', '.join(sorted(built))} from {out} and the code"
          + (f"; kept from before: {', '.join(kept)}" if kept else "") + f") and the tables of {readme}")


# ----------------------------------------------------------------- command

def _local_cluster(workers: int | None) -> Any:
    """One Dask cluster for every sweep of a run (each would otherwise start its own)."""
    from dask.distributed import LocalCluster  # noqa: PLC0415

    return LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                        dashboard_address=":0")


def reproduce(out: Path, quick: bool, scheduler: str | None, workers: int | None, progress: bool) -> tuple[Path, Path]:
    plan = Plan.quick() if quick else Plan.full()
    command = "edm reproduce" + (" --quick" if quick else "")
    start = time.perf_counter()
    failed = computed = 0
    if not quick:
        # First: Figure 8 on our RTL's timing takes its steps from it (reproduce_plan.rtl_steps).
        measure_rtl_latency(out)
    sweeps = plan.sweeps(out)
    pending = any(ResultStore(s.out).load(s.runner, c) is None for s in sweeps.values() for c in s.points())
    cluster = _local_cluster(workers) if pending and scheduler is None else None
    try:
        for name, sweep in sweeps.items():
            rep = run_sweep(sweep, scheduler=cluster.scheduler_address if cluster else scheduler, workers=workers,
                            progress=progress)
            for path in rep.corrupted:
                print(f"edm reproduce: {path}: stored result was corrupted or stale; recomputed", file=sys.stderr)
            for config, error in rep.failed:
                last = error.strip().splitlines()[-1] if error.strip() else "error"
                print(f"edm reproduce: {name} point {point_key(sweep.runner, config)} failed: {last}",
                      file=sys.stderr)
            failed += len(rep.failed)
            computed += rep.computed
            print(f"{name}: {rep.total} points, {rep.reused} reused, {rep.computed} computed, "
                  f"{len(rep.failed)} failed, {rep.wall_seconds:.1f} s", file=sys.stderr)
    finally:
        if cluster is not None:
            cluster.close()
    if failed:
        raise RuntimeError(f"{failed} points failed; fix and re-run (finished points are kept)")
    reproduce_ycsb.measure(out, quick)
    reproduce_related.measure(out, quick)
    wall = time.perf_counter() - start
    paths = build_report(out, plan, wall, command, computed)
    print(f"reproduced in {wall:.0f} s ({computed} points computed) -> {paths[1]}")
    return paths


def _cmd(args: argparse.Namespace) -> int:
    out = Path(args.out or ("results/reproduce-quick" if args.quick else "results/reproduce"))
    try:
        if args.report_only and args.readme:
            plan = Plan.quick() if args.quick else Plan.full()
            update_readme(out, plan, "edm reproduce" + (" --quick" if args.quick else ""), Path(args.readme))
        elif args.report_only:
            plan = Plan.quick() if args.quick else Plan.full()
            md, html = build_report(out, plan, None, "edm report" + (" --quick" if args.quick else ""))
            print(f"wrote {md} and {html}")
        else:
            reproduce(out, args.quick, args.scheduler, args.workers, not args.quiet)
    except results_summary.SummaryError as e:  # a README or summary file that cannot be read: bad input
        print(f"edm {args.command}: {e}", file=sys.stderr)
        return 2
    except (MissingResults, RuntimeError) as e:
        print(f"edm {args.command}: {e}", file=sys.stderr)
        return 1
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    for name, helptext, report_only in (
        ("reproduce", "run the paper's evaluation (Table 1, Fig. 8a, 8b, ablation) and write a report", False),
        ("report", "re-render the reproduction report from stored results (no simulation)", True),
    ):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("--quick", action="store_true", help="the small version (seconds, not minutes)")
        p.add_argument("--out", type=out_dir, help="result folder (default results/reproduce[-quick])")
        if not report_only:
            p.add_argument("--scheduler", type=address,
                           help="address of an existing Dask scheduler, tcp://host:port (default: a local cluster)")
            p.add_argument("--workers", type=integer(1),
                           help="local worker processes, at least 1 (default: one per core)")
            p.add_argument("--quiet", action="store_true", help="no progress bars")
        else:
            p.add_argument("--readme", type=in_file, nargs="?", const=str(results_summary.README),
                           help="instead of the report: the README's headline tables from the stored results, "
                                "through docs/results.json beside it (default README: the repository's)")
            p.set_defaults(scheduler=None, workers=None, quiet=True)
        p.set_defaults(func=_cmd, report_only=report_only, readme=None)
