"""``edm simulate``: one simulation from a TOML config and/or flags."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from edm.sim.config import DEFAULTS, ConfigError, load_toml

# Flags and the config fields they set (flags override the TOML file).
_FLAGS = {
    "protocol": str,
    "nodes": int,
    "memory_nodes": int,
    "link_gbps": int,
    "workload": str,
    "load": float,
    "write_ratio": float,
    "messages": int,
    "seed": int,
    "chunk_bytes": int,
    "priority": str,
    "scheduler_cycle_ps": int,
    "priority_hold": int,
    "egress_feedback": int,
    "zero_queue": int,
    "start_delay": int,
    "early_grant_ps": int,
    "memory_order": str,
    "pipelined_matching": int,
    "batch_bytes": int,
    "max_active_notifs": int,
    "background_load": float,
    "background_frame_bytes": int,
    "background_preemption": int,
}


def _cmd(args: argparse.Namespace) -> int:
    from edm import sim

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        print(f"edm simulate: --out {out}: exists and is not a folder", file=sys.stderr)
        return 2
    try:
        config = load_toml(args.config) if args.config else {}
        source = str(args.config) if args.config else "flags"
        for key in _FLAGS:
            value = getattr(args, key)
            if value is not None:
                config[key] = value
        result = sim.run(config, progress=not args.quiet, source=source)
    except (ConfigError, ValueError) as e:
        print(f"edm simulate: {e}", file=sys.stderr)
        return 2
    s = result.summary
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / "summary.json").write_text(json.dumps(s, indent=2, sort_keys=True))
        result.messages.to_parquet(out / "messages.parquet", index=False)
    except OSError as e:
        print(f"edm simulate: --out {out}: cannot write the results: {e.strerror or e} "
              f"({e.filename or out})", file=sys.stderr)
        return 2
    print(
        f"{s['protocol']}: {s['completed']}/{s['messages']} messages, mean latency {s['mean_latency_ns']:.1f} ns "
        f"(unloaded {s['mean_unloaded_ns']:.1f} ns), mean slowdown {s['mean_slowdown']:.3f}, "
        f"p99 slowdown {s['p99_slowdown']:.3f}, {s['wall_seconds']:.2f} s -> {out}"
    )
    if "background_frames" in s:
        delays = (f", mean delay {s['frame_delay_mean_ns']:.1f} ns (p99 {s['frame_delay_p99_ns']:.1f} ns)"
                  if s["background_frames"] else "")
        print(f"background: {s['background_frames']} frames{delays}; memory waited for a frame "
              f"{s['memory_frame_waits']} times, at most {s['memory_frame_wait_max_ns']:.2f} ns")
    if s["deadlocked"]:
        print(f"edm simulate: {s['deadlocked']} messages never completed (deadlock), e.g. ids {s['deadlocked_ids']}",
              file=sys.stderr)
        return 1
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("simulate", help="simulate a rack: one protocol, one workload")
    p.add_argument("--config", help="TOML file with any of the fields below (flags override it)")
    for key, typ in _FLAGS.items():
        p.add_argument(f"--{key.replace('_', '-')}", dest=key, type=typ, default=None,
                       help=f"(default {DEFAULTS[key]})")
    p.add_argument("--out", default="results/simulate", help="output folder (default results/simulate)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd)
