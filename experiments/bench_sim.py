"""Simulator speed and memory: prints figures with the command that made them.

    .venv/bin/python experiments/bench_sim.py            # the two standard cases
    .venv/bin/python experiments/bench_sim.py --quick    # smaller, for a smoke run
    .venv/bin/python experiments/bench_sim.py --scale    # nodes and messages: time, memory, events/s
                                                         # (records streamed to Parquet, edm.sim.stream)
    .venv/bin/python experiments/bench_sim.py --baseline DIR   # each case also with DIR's code, in turn
    .venv/bin/python experiments/bench_sim.py --pfabric  # Figure 8a's pfabric points at loads 0.5-0.9 instead

With --baseline, DIR is another checkout whose python/edm holds its built
extension (edm/_core.abi3.so): each case runs with it, then with this one,
and the table gives both CPU times and their ratio (one session, so a
busy machine slows both alike).

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

# Figure 8a's costliest baseline (issue #43): pfabric, 64 B, every mix, at its
# three highest loads; as `edm reproduce` runs them (python/edm/reproduce/plan.py).
PFABRIC_CASES = {
    f"pfabric-64B-write{ratio}-load{load}": {"protocol": "pfabric", "nodes": 144, "workload": "micro",
                                             "message_bytes": 64, "write_ratio": ratio, "load": load,
                                             "messages": 100_000, "warmup_fraction": 0.1, "seed": 1}
    for ratio in (0.0, 0.5, 1.0) for load in (0.5, 0.7, 0.9)
}


# The scaling table (issue #43): EDM's rules, 64 B messages at load 0.5, on
# every switch size at 10^5 messages and at 512 nodes up to 10^7, the same at
# load 0.3 at 512 nodes; then the 512-node hadoop case. Targets: 10^7 at
# 512 nodes within 1 GB peak; hadoop 10^5 at 512 nodes within 10 s on one core.
SCALE_NODES = (16, 64, 144, 256, 512)
SCALE_MESSAGES = (100_000, 1_000_000, 10_000_000)


def scale_cases(max_messages: int) -> list[dict]:
    micro = {"protocol": "edm", "workload": "micro", "message_bytes": 64, "load": 0.5}
    cases = [{**micro, "nodes": n, "messages": SCALE_MESSAGES[0]} for n in SCALE_NODES]
    cases += [{**micro, "nodes": 512, "messages": m} for m in SCALE_MESSAGES[1:] if m <= max_messages]
    # Load 0.5 is past 64 B traffic's saturation (its backlog, and the memory
    # it takes, grow with the run): the same below it, at load 0.3.
    cases += [{**micro, "load": 0.3, "nodes": 512, "messages": m} for m in SCALE_MESSAGES if m <= max_messages]
    cases.append({"protocol": "edm", "workload": "hadoop", "load": 0.5, "nodes": 512, "messages": 100_000})
    return cases


def scale_table(max_messages: int) -> None:
    """Each case with its records streamed to a Parquet file in a temporary
    folder (`edm simulate --stream`): memory is then the core's per-message
    state, not the records; "records held" is the most the core held at once."""
    cmd = f"{sys.executable} experiments/bench_sim.py --scale" + (
        f" --max-messages {max_messages}" if max_messages != SCALE_MESSAGES[-1] else "")
    print(f"# {cmd}  ({platform.processor() or platform.machine()}, one core per case, "
          f"{time.strftime('%Y-%m-%d')}, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    print("| protocol | workload | nodes | messages | engine s | total s | CPU s | peak RSS MB | records held "
          "| events/s (CPU) | msg/s (CPU) | mean slowdown | delivery ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for config in scale_cases(max_messages):
        out = subprocess.run([sys.executable, __file__, "--config", json.dumps(config), "--stream"],
                             capture_output=True, text=True, check=True, env=ONE_CORE)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"| {config['protocol']} | {config['workload']} | {config['nodes']} | {r['messages']:,} "
              f"| {r['engine_seconds']:.2f} | {r['total_seconds']:.2f} | {r['cpu_seconds']:.2f} "
              f"| {r['peak_rss_mb']:.0f} | {r['max_records_held']:,} | {r['events'] / r['cpu_seconds']:,.0f} "
              f"| {r['messages'] / r['cpu_seconds']:,.0f} | {r['mean_slowdown']:.2f} | {r['delivery_ratio']:.3f} |", flush=True)
    print(f"# ended {load()}")


def run_case(config: dict, stream: bool = False) -> dict:
    """One case in this process: the in-memory run, or with `stream` its
    records streamed to a Parquet file (deleted after)."""
    import tempfile

    from edm import sim

    start = time.perf_counter()
    cpu = time.process_time()
    if stream:
        from edm.sim import stream as streamed

        with tempfile.TemporaryDirectory() as folder:
            s = streamed.run_to_parquet(config, os.path.join(folder, "messages.parquet"))
    else:
        s = sim.run(config).summary
    wall = time.perf_counter() - start
    return {
        # CPU time of this process: what the case costs on one core even on a busy machine.
        "cpu_seconds": time.process_time() - cpu,
        "messages": s["messages"],
        "completed": s["completed"],
        "engine_seconds": s["wall_seconds"],
        "total_seconds": wall,
        "engine_messages_per_second": s["messages"] / s["wall_seconds"],
        "events": s["events"],
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "mean_slowdown": s["mean_slowdown"],
        "max_records_held": s.get("max_records_held"),
        "delivery_ratio": s["delivery_ratio"],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="a tenth of the messages")
    ap.add_argument("--scale", action="store_true", help="the scaling table (nodes x messages)")
    ap.add_argument("--max-messages", type=int, default=SCALE_MESSAGES[-1],
                    help="--scale: leave out runs of more messages than this")
    ap.add_argument("--baseline", metavar="DIR",
                    help="also run each case with the code of checkout DIR (its extension built), in turn")
    ap.add_argument("--pfabric", action="store_true", help="Figure 8a's pfabric points at loads 0.5-0.9 as the cases")
    ap.add_argument("--case", help=argparse.SUPPRESS)
    ap.add_argument("--config", help=argparse.SUPPRESS)
    ap.add_argument("--stream", action="store_true",
                    help="with --config: stream the records to a Parquet file (edm simulate --stream)")
    args = ap.parse_args()
    if args.config:
        print(json.dumps(run_case(json.loads(args.config), args.stream)))
        return 0
    if args.scale:
        scale_table(args.max_messages)
        return 0
    if args.case:
        config = dict({**CASES, **PFABRIC_CASES}[args.case])
        if args.quick:
            config["messages"] //= 10
        print(json.dumps(run_case(config)))
        return 0
    cases = PFABRIC_CASES if args.pfabric else CASES
    flags = (" --pfabric" if args.pfabric else "") + (" --quick" if args.quick else "")
    if args.baseline:
        return compare(args.baseline, args.quick, cases, flags)
    cmd = f"{sys.executable} experiments/bench_sim.py" + flags
    print(f"# {cmd}  ({platform.processor() or platform.machine()}, one core per case, {load()})")
    print("| case | messages | engine s | msg/s (engine) | CPU s | msg/s (CPU) | total s | peak RSS MB "
          "| mean slowdown |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in cases:
        r = case_in_process(name, args.quick)
        print(
            f"| {name} | {r['messages']} | {r['engine_seconds']:.2f} | {r['engine_messages_per_second']:,.0f} "
            f"| {r['cpu_seconds']:.2f} | {r['messages'] / r['cpu_seconds']:,.0f} "
            f"| {r['total_seconds']:.2f} | {r['peak_rss_mb']:.0f} | {r['mean_slowdown']:.2f} |"
        )
    return 0


def load() -> str:
    return f"{time.strftime('%Y-%m-%d %H:%M')}, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"


def case_in_process(name: str, quick: bool, python_path: str | None = None) -> dict:
    """Runs case `name` in a fresh process (with `python_path`'s edm if given)."""
    env = dict(ONE_CORE)
    if python_path:
        env["PYTHONPATH"] = python_path
    out = subprocess.run([sys.executable, __file__, "--case", name] + (["--quick"] if quick else []),
                         capture_output=True, text=True, check=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def compare(baseline: str, quick: bool, cases: dict, flags: str) -> int:
    """Each case with the baseline checkout's code, then with this one: CPU
    seconds of each and the speed-up; the results must be the same."""
    python_path = os.path.join(os.path.abspath(baseline), "python")
    cmd = f"{sys.executable} experiments/bench_sim.py --baseline {baseline}" + flags
    print(f"# {cmd}  ({platform.processor() or platform.machine()}, one core per case, {load()})")
    print("| case | messages | CPU s before | CPU s after | speed-up | msg/s (CPU) after "
          "| peak RSS MB before | after | same mean slowdown |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in cases:
        a = case_in_process(name, quick, python_path)
        b = case_in_process(name, quick)
        print(f"| {name} | {b['messages']} | {a['cpu_seconds']:.2f} | {b['cpu_seconds']:.2f} "
              f"| {a['cpu_seconds'] / b['cpu_seconds']:.2f}x | {b['messages'] / b['cpu_seconds']:,.0f} "
              f"| {a['peak_rss_mb']:.0f} | {b['peak_rss_mb']:.0f} "
              f"| {'yes' if a['mean_slowdown'] == b['mean_slowdown'] else 'NO'} |", flush=True)
    print(f"# ended {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
