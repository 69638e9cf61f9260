"""``edm simulate``: one simulation from a TOML config and/or flags."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable

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
        if args.stream:
            try:
                s = _streamed(config, out, args.quiet, source)
            except OSError as e:
                return _unwritable(out, e)
        else:
            try:
                result = sim.run(config, progress=not args.quiet, source=source)
            except sim.Interrupted as stop:
                result = stop.result
            s = result.summary
    except (ConfigError, ValueError) as e:
        print(f"edm simulate: {e}", file=sys.stderr)
        return 2
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / "summary.json").write_text(json.dumps(s, indent=2, sort_keys=True))
        if not args.stream:
            result.messages.to_parquet(out / "messages.parquet", index=False)
    except OSError as e:
        return _unwritable(out, e)
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


def _streamed(config: dict[str, Any], out: Path, quiet: bool, source: str) -> dict[str, Any]:
    """--stream: the records go to OUT/messages.parquet in batches during the
    run (written beside, then moved into place); the summary is read from it."""
    from edm.sim import stream

    out.mkdir(parents=True, exist_ok=True)
    partial = out / "messages.parquet.partial"
    summary = stream.run_to_parquet(config, partial, progress=not quiet, source=source)
    partial.replace(out / "messages.parquet")
    return summary


def _unwritable(out: Path, e: OSError) -> int:
    print(f"edm simulate: --out {out}: cannot write the results: {e.strerror or e} "
          f"({e.filename or out})", file=sys.stderr)
    return 2


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


# `edm simulate --help` in groups a newcomer can scan; a field's group follows
# its scope in the schema, but for the workload's and the memory nodes' fields.
_WORKLOAD_FIELDS = frozenset((
    "workload", "load", "write_ratio", "message_bytes", "messages", "seed", "warmup_fraction",
    "address_space_bytes", "closed_loop_threads", "compute_ns", "compute_distribution",
))
_MEMORY_PREFIXES = ("dram_", "placement", "translate", "tlb_", "protection")
_GROUPS = {
    "workload": "what runs: a named workload, a size-CDF or trace file (docs/workloads.md), its load and seed",
    "fabric": "the rack: protocol, nodes, links, clocks and EDM's pipeline steps",
    "memory nodes": "DRAM, placement, translation and protection at the memory nodes",
    "EDM rules": "EDM's scheduling levers (protocol edm; edm-paper fixes the paper's values)",
    "baselines": "the packet baselines' parameters (0 keeps a protocol's own default)",
    "faults": "bit errors, failures, timeouts and recovery (EDM)",
}
# Each time flag's unit is its name's last part; a value may name another.
_TIME_UNITS_PS = {"ps": 1, "ns": 1_000, "us": 1_000_000, "ms": 1_000_000_000}


def _group_of(field: dict) -> str:
    name, scope = field["name"], field["scope"]
    if name in _WORKLOAD_FIELDS:
        return "workload"
    if name.startswith(_MEMORY_PREFIXES):
        return "memory nodes"
    if scope == "rule":
        return "EDM rules"
    if scope == "baselines":
        return "baselines"
    if scope == "edmonly" and not name.startswith("background"):
        return "faults"
    return "fabric"


def _time_value(unit: str, kind: type) -> Callable[[str], int | float]:
    """An argparse type for a time field in `unit` (ps or ns): a plain number
    is in that unit; one ending in ps, ns, us or ms is converted to it."""

    def parse(text: str) -> int | float:
        t = text.strip()
        given = next((u for u in _TIME_UNITS_PS if t.endswith(u)), None)
        number = t[: -len(given)] if given else t
        try:
            value = float(number) if given or kind is float else int(number)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a time (a number, in {unit} unless it ends in "
                                             f"ps, ns, us or ms)") from None
        if given:
            value = value * _TIME_UNITS_PS[given] / _TIME_UNITS_PS[unit]
            if kind is int:
                if value != int(value):
                    raise argparse.ArgumentTypeError(f"{text} is not a whole number of {unit}")
                value = int(value)
        return value

    parse.lo = parse.hi = None  # type: ignore[attr-defined]  # ranges: the schema's (edm.args fuzz test)
    return parse


def _flag_type(field: dict) -> Callable[[str], Any]:
    unit = field["name"].rsplit("_", 1)[-1]
    if unit in ("ps", "ns") and field["type"] in ("int", "float"):
        return _time_value(unit, _TYPES[field["type"]])
    return _TYPES[field["type"]]


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "simulate", help="simulate a rack: one protocol, one workload",
        usage="%(prog)s [--config FILE] [--FIELD VALUE ...] [--timing {paper,rtl}] [--out DIR] [--quiet]",
        description="Simulate a rack: one protocol, one workload. Every field below is also a key of a "
                    "--config TOML file and of the dict edm.sim.run takes (docs/config.md). Units: every time "
                    "field names its unit last: _ps picoseconds, _ns nanoseconds, _cycles pipeline clock "
                    "cycles; a _ps or _ns value may name its own unit instead (--read-timeout-ns 2us, "
                    "--scheduler-cycle-ps 0.333ns). Sizes are bytes unless named otherwise.")
    groups = {name: p.add_argument_group(name, doc) for name, doc in _GROUPS.items()}
    for f in SCHEMA:
        unit = f["name"].rsplit("_", 1)[-1]
        groups[_group_of(f)].add_argument(
            f"--{f['name'].replace('_', '-')}", dest=f["name"], type=_flag_type(f), default=None,
            metavar=unit.upper() if unit in ("ps", "ns", "cycles", "bytes") else f["type"].upper(),
            help=f"{f['doc']} ({f['range']}; default {f['default']})".replace("%", "%%"))
    io = p.add_argument_group("input and output")
    io.add_argument("--config", help="TOML file with any of the fields above (flags override it)")
    io.add_argument("--timing", choices=timing.TIMINGS, default="paper",
                    help="pipeline step cycles: the paper's (default) or our RTL's, as `edm rtl latency` measured "
                         "them (the *_cycles fields; python/edm/sim/timing.py); rtl reads --timing-file, which "
                         "`edm rtl latency` writes (it runs the RTL benches under Verilator)")
    io.add_argument("--timing-file", default=str(timing.DEFAULT_RTL_LATENCY),
                    help=f"the `edm rtl latency` result --timing rtl reads (default {timing.DEFAULT_RTL_LATENCY}; "
                         f"made by `edm rtl latency --json FILE`)")
    io.add_argument("--out", type=out_dir, default="results/simulate", help="output folder (default results/simulate)")
    io.add_argument("--quiet", action="store_true", help="no progress bar")
    io.add_argument("--stream", action="store_true",
                    help="write messages.parquet in batches during the run and compute the summary from it, so "
                         "memory does not grow with the records (a generated open-loop workload; docs/simulator.md "
                         "\"Outputs\")")
    io.add_argument("--schema", action="store_true", help="print every configuration field as docs/config.md has it")
    p.set_defaults(func=_cmd)
