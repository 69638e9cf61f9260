"""``edm plot``: figures and a report from stored sweep results, without re-simulating.

    edm plot results/micro_edm --x load --y mean_slowdown --group scheduler_cycle_ps

Reads every valid point under the folder (see :mod:`edm.sweep`), averages the
metric over seeds (mean and a 95% normal-approximation interval when there are
several; none from one) and over the fields named by ``--average-over`` (any
other field that varies and is neither ``--x`` nor ``--group`` is an error, so
nothing is averaged unasked), and writes ``report.md``, ``report.html`` and ``figures/`` there.
A metric may name a nested field with dots, e.g. ``by_op.read.mean_slowdown``.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from edm.args import in_dir
from edm.report import Report
from edm.sweep import ResultStore


def metric(result: dict[str, Any], path: str) -> float:
    value: Any = result
    for part in path.split("."):
        value = value[part]
    return float(value)


def grid_axes(points: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """{config field: its distinct values} for every field that varies over the points."""
    values: dict[str, set[str]] = defaultdict(set)
    seen: dict[str, dict[str, Any]] = defaultdict(dict)
    for doc in points:
        for k, v in doc["config"].items():
            values[k].add(repr(v))
            seen[k][repr(v)] = v
    fields = set().union(*(doc["config"] for doc in points)) if points else set()
    # A field missing from some points varies too (it has the runner's default there).
    return {k: sorted(seen[k].values(), key=str) for k in sorted(fields)
            if len(values[k]) > 1 or any(k not in doc["config"] for doc in points)}


def check_axes(points: list[dict[str, Any]], x: str, group: str | None, average_over: list[str]) -> list[str]:
    """The axes averaged over (seed first); raises ValueError when --x or --group
    names no config field, or a varying axis would be averaged unasked."""
    fields = sorted(set().union(*(doc["config"] for doc in points)))
    for flag, name in (("--x", x), ("--group", group)):
        if name is not None and name not in fields:
            raise ValueError(f"{flag} {name}: not a config field of these points (fields: {', '.join(fields)})")
    axes = grid_axes(points)
    for name in average_over:
        if name not in axes:
            raise ValueError(f"--average-over {name}: not an axis of these points "
                             f"(axes: {', '.join(axes) or 'none'})")
    unasked = [a for a in axes if a not in (x, group, "seed") and a not in average_over]
    if unasked:
        a = unasked[0]
        shown = ", ".join(map(str, axes[a][:6])) + (", ..." if len(axes[a]) > 6 else "")
        raise ValueError(f"axis {a!r} has {len(axes[a])} values ({shown}) and is neither --x nor --group: "
                         f"give --group {a}, or --average-over {a} to average over it")
    return [a for a in axes if a == "seed"] + [a for a in axes if a in average_over and a != "seed"]


def aggregate(points: list[dict[str, Any]], x: str, y: str, group: str | None) -> dict[Any, list[tuple]]:
    """{group value: [(x, mean, half-width of 95% interval or None, n)]} sorted by x
    (None: one sample, no interval)."""
    samples: dict[tuple, list[float]] = defaultdict(list)
    for doc in points:
        key = (doc["config"].get(group) if group else None, doc["config"][x])
        samples[key].append(metric(doc["result"], y))
    out: dict[Any, list[tuple]] = defaultdict(list)
    for (g, xv), values in sorted(samples.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        n = len(values)
        mean = sum(values) / n
        if n > 1:
            sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
            out[g].append((xv, mean, 1.96 * sd / math.sqrt(n), n))
        else:
            out[g].append((xv, mean, None, n))
    return out


def build_report(folder: Path, x: str, y: str, group: str | None, title: str | None = None,
                 average_over: list[str] | None = None) -> tuple[Path, Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = ResultStore(folder).all_results()
    if not points:
        raise ValueError(f"{folder}: no stored results (run edm sweep first)")
    averaged = check_axes(points, x, group, list(average_over or []))
    # Replicates are named by what they replicate: seeds only when the seed is all that varies.
    count = "seeds" if averaged == ["seed"] else ("points (" + ", ".join(averaged) + ")" if averaged else "points")
    series = aggregate(points, x, y, group)
    report = Report(title or f"{folder.name}: {y} vs {x}")
    flags = f" --group {group}" if group else ""
    flags += "".join(f" --average-over {a}" for a in averaged if a != "seed")
    report.paragraph(f"{len(points)} stored points from `{folder}`"
                     + (f", averaged over {', '.join(averaged)}" if averaged else "")
                     + f"; regenerate with `edm plot {folder} --x {x} --y {y}{flags}`.")
    fig, ax = plt.subplots(figsize=(6, 4))
    rows = []
    for g, pts in series.items():
        xs, means = [p[0] for p in pts], [p[1] for p in pts]
        halves = [p[2] if p[2] is not None else 0.0 for p in pts]
        label = f"{group} = {g}" if group else y
        if any(p[2] is not None for p in pts):
            ax.errorbar(xs, means, yerr=halves, marker="o", capsize=3, label=label)
        else:
            ax.plot(xs, means, marker="o", label=label)
        rows += [{**({group: g} if group else {}), x: p[0], y: p[1],
                  "95% ±": p[2] if p[2] is not None else "— (one sample)", count: p[3]} for p in pts]
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.grid(alpha=0.3)
    ax.legend()
    report.figure(f"{y.replace('.', '_')}_vs_{x}", fig, f"{y} against {x}")
    report.table(rows)
    return report.write(folder)


def _cmd(args: argparse.Namespace) -> int:
    try:
        md, html = build_report(Path(args.folder), args.x, args.y, args.group, average_over=args.average_over)
    except (ValueError, KeyError) as e:
        print(f"edm plot: {e}", file=sys.stderr)
        return 2
    print(f"wrote {md} and {html}")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("plot", help="plot and tabulate stored sweep results (no simulation)")
    p.add_argument("folder", type=in_dir, help="a sweep's result folder (its [sweep] out)")
    p.add_argument("--x", default="load", help="config field on the x axis (default load)")
    p.add_argument("--y", default="mean_slowdown", help="result field to plot (dots for nested fields)")
    p.add_argument("--group", help="config field that separates the curves")
    p.add_argument("--average-over", action="append", default=[], metavar="FIELD",
                   help="average over this varying config field too (repeatable; the seed is always averaged); "
                        "without it a varying field that is neither --x nor --group is an error")
    p.set_defaults(func=_cmd)
