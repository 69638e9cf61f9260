"""``edm simulate``: one simulation from a TOML config and/or flags."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from edm.args import out_dir
from edm.sim import timing
from edm.sim.config import SCHEMA, ConfigError, field_lines, load_toml, markdown_table

# Every field of the schema is a flag (flags override the TOML file).
_TYPES = {"int": int, "float": float, "str": str}


def _cmd(args: argparse.Namespace) -> int:
    from edm import sim

    if args.schema:
        print(markdown_table(), end="")
        return 0
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        print(f"edm simulate: --out {out}: exists and is not a folder", file=sys.stderr)
        return 2
    try:
        config = load_toml(args.config) if args.config else {}
        source = str(args.config) if args.config else "flags"
        where = {k: f"line {n}" for k, n in field_lines(args.config).items()} if args.config else {}
        if args.timing == "rtl":
            # The RTL's steps first: a step given in the file or as a flag still wins.
            steps = timing.rtl_steps(args.timing_file)
            where.update({k: f"--timing rtl ({args.timing_file})" for k in steps if k not in config})
            config = {**steps, **config}
        for f in SCHEMA:
            value = getattr(args, f["name"])
            if value is not None:
                config[f["name"]] = value
                where[f["name"]] = f"flag --{f['name'].replace('_', '-')}"
        _refuse_unused_by_trace(config, source, where)
        config = sim.config.resolve(config, source, where)
        try:
            result = sim.run(config, progress=not args.quiet, source=source)
        except sim.Interrupted as stop:
            result = stop.result
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
    if s["interrupted"]:
        print(f"edm simulate: interrupted: {s['completed']} of {s['messages']} messages finished; "
              f"partial results (summary \"interrupted\": true) in {out}", file=sys.stderr)
        return 130
    print(
        f"{s['protocol']}: {s['completed']}/{s['messages']} messages, mean latency {s['mean_latency_ns']:.1f} ns "
        f"(unloaded {s['mean_unloaded_ns']:.1f} ns), mean slowdown {s['mean_slowdown']:.3f}, "
        f"p99 slowdown {s['p99_slowdown']:.3f}, {s['wall_seconds']:.2f} s -> {out}"
    )
    for warning in sim.run_warnings(s):
        print(f"edm simulate: warning: {warning}", file=sys.stderr)
    if "background_frames" in s:
        delays = (f", mean delay {s['frame_delay_mean_ns']:.1f} ns (p99 {s['frame_delay_p99_ns']:.1f} ns)"
                  if s["background_frames"] else "")
        print(f"background: {s['background_frames']} frames{delays}; memory waited for a frame "
              f"{s['memory_frame_waits']} times, at most {s['memory_frame_wait_max_ns']:.2f} ns")
    if "dram_lines" in s:
        print(f"dram: {s['dram_lines']} line accesses, wait mean {s['dram_wait_mean_ns']:.1f} ns, "
              f"p99 {s['dram_wait_p99_ns']:.1f} ns, max {s['dram_wait_max_ns']:.1f} ns; "
              f"busiest memory node {s['dram_imbalance']:.2f}x the mean")
    if s["deadlocked"]:
        print(f"edm simulate: {s['deadlocked']} messages never completed (deadlock), e.g. ids {s['deadlocked_ids']}",
              file=sys.stderr)
        return 1
    return 0


def _refuse_unused_by_trace(config: dict, source: str, where: dict[str, str]) -> None:
    """A trace's messages and issue times come from its file: a load or a
    message count given with one would be ignored, so it is refused."""
    from edm.sim.workloads import is_trace

    wl = config.get("workload")
    if not isinstance(wl, str) or not is_trace(wl):
        return
    for name in ("load", "messages"):
        if name in config:
            raise ConfigError(f"{source}: field '{name}' does not apply to the trace workload {wl} "
                              f"(its messages and issue times come from the file; offered load is measured)"
                              + (f" ({where[name]})" if name in where else ""))


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("simulate", help="simulate a rack: one protocol, one workload")
    p.add_argument("--config", help="TOML file with any of the fields below (flags override it)")
    for f in SCHEMA:
        p.add_argument(f"--{f['name'].replace('_', '-')}", dest=f["name"], type=_TYPES[f["type"]], default=None,
                       help=f"{f['doc']} ({f['range']}; default {f['default']})".replace("%", "%%"))
    p.add_argument("--timing", choices=timing.TIMINGS, default="paper",
                   help="pipeline step cycles: the paper's (default) or our RTL's, as `edm rtl latency` measured "
                        "them (the *_cycles fields; python/edm/sim/timing.py)")
    p.add_argument("--timing-file", default=str(timing.DEFAULT_RTL_LATENCY),
                   help=f"the `edm rtl latency` result --timing rtl reads (default {timing.DEFAULT_RTL_LATENCY})")
    p.add_argument("--out", type=out_dir, default="results/simulate", help="output folder (default results/simulate)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--schema", action="store_true", help="print every configuration field as docs/config.md has it")
    p.set_defaults(func=_cmd)
