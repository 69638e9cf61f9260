"""``edm plot``: figures and a report from stored sweep results, without re-simulating.

    edm plot results/micro_edm --x load --y mean_slowdown --group scheduler_cycle_ps

Reads every valid point under the folder (see :mod:`edm.sweep`), averages the
metric over seeds (mean and a 95% normal-approximation interval when there are
several), and writes ``report.md``, ``report.html`` and ``figures/`` there.
A metric may name a nested field with dots, e.g. ``by_op.read.mean_slowdown``.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from edm.report import Report
from edm.sweep import ResultStore


def metric(result: dict[str, Any], path: str) -> float:
    value: Any = result
    for part in path.split("."):
        value = value[part]
    return float(value)


def aggregate(points: list[dict[str, Any]], x: str, y: str, group: str | None) -> dict[Any, list[tuple]]:
    """{group value: [(x, mean, half-width of 95% interval, n)]} sorted by x."""
    samples: dict[tuple, list[float]] = defaultdict(list)
    for doc in points:
        key = (doc["config"].get(group) if group else None, doc["config"][x])
        samples[key].append(metric(doc["result"], y))
    out: dict[Any, list[tuple]] = defaultdict(list)
    for (g, xv), values in sorted(samples.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        n = len(values)
        mean = sum(values) / n
        sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
        out[g].append((xv, mean, 1.96 * sd / math.sqrt(n) if n > 1 else 0.0, n))
    return out


def build_report(folder: Path, x: str, y: str, group: str | None, title: str | None = None) -> tuple[Path, Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = ResultStore(folder).all_results()
    if not points:
        raise ValueError(f"{folder}: no stored results (run edm sweep first)")
    series = aggregate(points, x, y, group)
    report = Report(title or f"{folder.name}: {y} vs {x}")
    report.paragraph(f"{len(points)} stored points from `{folder}`; regenerate with "
                     f"`edm plot {folder} --x {x} --y {y}" + (f" --group {group}`." if group else "`."))
    fig, ax = plt.subplots(figsize=(6, 4))
    rows = []
    for g, pts in series.items():
        xs, means, halves = [p[0] for p in pts], [p[1] for p in pts], [p[2] for p in pts]
        ax.errorbar(xs, means, yerr=halves, marker="o", capsize=3, label=f"{group} = {g}" if group else y)
        rows += [{**({group: g} if group else {}), x: p[0], y: p[1], "95% ±": p[2], "seeds": p[3]} for p in pts]
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.grid(alpha=0.3)
    ax.legend()
    report.figure(f"{y.replace('.', '_')}_vs_{x}", fig, f"{y} against {x}")
    report.table(rows)
    return report.write(folder)


def _cmd(args: argparse.Namespace) -> int:
    try:
        md, html = build_report(Path(args.folder), args.x, args.y, args.group)
    except (ValueError, KeyError) as e:
        print(f"edm plot: {e}", file=sys.stderr)
        return 2
    print(f"wrote {md} and {html}")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("plot", help="plot and tabulate stored sweep results (no simulation)")
    p.add_argument("folder", help="a sweep's result folder (its [sweep] out)")
    p.add_argument("--x", default="load", help="config field on the x axis (default load)")
    p.add_argument("--y", default="mean_slowdown", help="result field to plot (dots for nested fields)")
    p.add_argument("--group", help="config field that separates the curves")
    p.set_defaults(func=_cmd)
