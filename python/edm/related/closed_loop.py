"""Gao et al. ("Network Requirements for Resource Disaggregation", OSDI 2016)
with the loop closed: applications whose threads compute, issue one remote
memory operation, wait for it and go on (``closed_loop_threads`` in the
simulator; crates/edm-sim/src/engine/closed_loop.rs), so a slower fabric
slows the application.

Two experiments:

* **The budget** (Gao §3.2, Figs. 2–4): an ideal fabric on which every
  operation takes an injected latency plus its payload at a bandwidth
  (``ideal_fabric = "fixed"``), swept over both; degradation is run time
  against zero-delay (local) memory, as Gao measure it.
* **Real fabrics** (Gao §4.4, Fig. 8): the same applications on EDM and every
  baseline; degradation against local memory and against an ideal fabric
  where each operation takes its own unloaded latency (the queueing's share).

How memory-bound an application is decides every degradation; Gao's figures
give no per-application fault rates, so each application's compute time is
calibrated at Gao's Class A budget (5 us, 40 Gb/s gives 5 %, Fig. 2) and the
rest of the sweep is measured from there. ``reproduce(out, quick)`` is the
hook for ``edm reproduce``.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Callable

from edm.args import out_dir
from edm import sim
from edm.report import Report
from edm.sim.config import resolve

# Gao et al.'s findings, quoted with where they are (paper 003 in the shared papers).
GAO_FINDINGS = {
    "bandwidth": ("§1 and Fig. 3", "40–100 Gbps sufficient for within 5 %; beyond 40 Gbps little improvement"),
    "latency": ("§1 and Fig. 4", "3–5 µs end-to-end latency needed; performance very sensitive to latency"),
    "class_a": ("Fig. 2 caption", "Class A apps: 5 µs and 40 Gbps keep ~5 %; Class B: 3 µs and 40–100 Gbps"),
    "page": ("§3.3, Table 4", "a 4 KB page takes 0.82 µs to transmit at 40 Gbps"),
    "queueing_100g": ("§4.4, Fig. 8", "pFabric FCTs at 100 Gbps: 0.4–3.5 % average degradation, rack scale"),
    "queueing_40g": ("§4.4", "at 40 Gbps queueing raises degradation 2–3× over zero queueing (11 % rack scale)"),
}

# The degradation Gao call small, and their Class A budget we calibrate at.
TARGET = 0.05
ANCHOR_LATENCY_NS = 5000.0
ANCHOR_GBPS = 40.0

# Applications: 4 KB pages (Gao's unit of remote access, §3.1) and the hadoop
# size CDF of the traces behind our workloads (crates/edm-sim/workloads).
APPS: dict[str, dict[str, Any]] = {
    "page": {"workload": "micro", "message_bytes": 4096},
    "hadoop": {"workload": "hadoop"},
}

# A rack of 8 compute and 8 memory nodes (Gao's blades, §4.1), 8 threads per
# compute node (their 8-vCPU servers, §3.1), half reads.
RACK: dict[str, Any] = {
    "nodes": 16,
    "memory_nodes": 8,
    "closed_loop_threads": 8,
    "compute_distribution": "exponential",
    "write_ratio": 0.5,
    "seed": 1,
}

PROTOCOLS = ["edm", "edm-paper", "pfabric", "ird", "dctcp", "pfc_dcqcn", "fastpass", "cxl"]


@dataclass
class Plan:
    messages: dict[str, int]
    latencies_ns: list[float]
    # 0: no serialization (pure latency), the line real fabrics are drawn against.
    rates_gbps: list[float]
    links_gbps: list[int]
    protocols: list[str]
    # A memory-bound variant of hadoop: this much compute per operation.
    memory_bound_compute_ns: float = 20_000.0
    quick: bool = False

    @staticmethod
    def full() -> Plan:
        return Plan(
            messages={"page": 12_800, "hadoop": 9_600},
            latencies_ns=[500, 1000, 2000, 3000, 4000, 5000, 7500, 10_000, 15_000, 20_000],
            rates_gbps=[10, 25, 40, 100, 400, 0],
            links_gbps=[25, 100],
            protocols=PROTOCOLS,
        )

    @staticmethod
    def quick_plan() -> Plan:
        return Plan(
            messages={"page": 1_600, "hadoop": 1_280},
            latencies_ns=[1000, 3000, 5000, 10_000],
            rates_gbps=[10, 40, 100, 0],
            links_gbps=[100],
            protocols=["edm", "pfabric", "dctcp"],
            quick=True,
        )


def app_config(app: str, messages: int, **over: Any) -> dict[str, Any]:
    return {**RACK, **APPS[app], "messages": messages, **over}


def calibrated_compute_ns(cfg: dict[str, Any]) -> float:
    """Compute time per operation at which Gao's Class A budget (5 us and
    40 Gb/s) costs 5 %: the mean injected delay over ``TARGET``."""
    sizes = sim.build_workload(resolve(cfg)).size
    serialization_ns = 8 * float(sizes.mean()) / ANCHOR_GBPS
    return (ANCHOR_LATENCY_NS + serialization_ns) / TARGET


def measure(cfg: dict[str, Any]) -> dict[str, Any]:
    """One closed-loop run: the application's figures and the fabric's."""
    s = sim.run(cfg).summary
    a = s["application"]
    ideal = a["unloaded_mean_thread_time_ns"] / a["compute_only_mean_thread_time_ns"] - 1
    return {
        "protocol": cfg.get("protocol", "edm"),
        "unloaded_ns": s["mean_unloaded_ns"],
        "latency_ns": a["mean_latency_ns"],
        "run_time_ms": a["run_time_ns"] / 1e6,
        "vs_local": a["degradation_vs_local"],
        "vs_unloaded": a["degradation_vs_unloaded"],
        "ideal_vs_local": ideal,
        "queueing_factor": a["degradation_vs_local"] / ideal if ideal > 0 else float("nan"),
        "throughput_mops": a["throughput_ops_per_s"] / 1e6,
        "little_ratio": a["little_threads"] / a["threads"],
        "threads": a["threads"],
        "ops": a["ops"],
        "uplink_util_max": s["uplink_util_max"],
        "completed": s["completed"] == s["messages"],
    }


def budget_sweep(plan: Plan, app: str, compute_ns: float) -> list[dict[str, Any]]:
    """Degradation against local memory on the ideal fabric, over latency x bandwidth."""
    rows = []
    for gbps in plan.rates_gbps:
        for latency in plan.latencies_ns:
            cfg = app_config(app, plan.messages[app], compute_ns=compute_ns, ideal_fabric="fixed",
                             ideal_latency_ns=float(latency), ideal_gbps=float(gbps))
            s = sim.run(cfg).summary["application"]
            rows.append({"app": app, "gbps": gbps, "latency_us": latency / 1e3,
                         "vs_local": s["degradation_vs_local"]})
    return rows


def budget_frontier(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per application and bandwidth, the largest latency keeping degradation
    within ``TARGET`` (linear between swept latencies; None if even the
    smallest exceeds it, '>' the largest if none does)."""
    out = []
    for app, gbps in dict.fromkeys((r["app"], r["gbps"]) for r in rows):
        line = sorted((r["latency_us"], r["vs_local"]) for r in rows if (r["app"], r["gbps"]) == (app, gbps))
        budget: str
        if line[0][1] > TARGET:
            budget = f"none (<{line[0][0]:g} µs already {100 * line[0][1]:.1f} %)"
        elif line[-1][1] <= TARGET:
            budget = f"> {line[-1][0]:g} µs"
        else:
            (l0, d0), (l1, d1) = next((a, b) for a, b in zip(line, line[1:]) if b[1] > TARGET)
            budget = f"{l0 + (TARGET - d0) * (l1 - l0) / (d1 - d0):.2f} µs"
        out.append({"app": app, "bandwidth": _rate(gbps), "latency budget for 5 %": budget})
    return out


def protocol_runs(plan: Plan, app: str, compute_ns: float, label: str,
                  progress: Callable[[str], None]) -> list[dict[str, Any]]:
    rows = []
    for link in plan.links_gbps:
        for protocol in plan.protocols:
            progress(f"{label}, {link} Gb/s, {protocol}")
            cfg = app_config(app, plan.messages[app], compute_ns=compute_ns, protocol=protocol, link_gbps=link)
            rows.append({"case": label, "link_gbps": link, **measure(cfg)})
    return rows


@dataclass
class Results:
    plan: Plan
    compute_ns: dict[str, float] = field(default_factory=dict)
    budget: list[dict[str, Any]] = field(default_factory=list)
    fabrics: list[dict[str, Any]] = field(default_factory=list)
    wall_seconds: float = 0.0


def run_all(plan: Plan, progress: Callable[[str], None] = lambda _: None) -> Results:
    start = time.perf_counter()
    res = Results(plan)
    for app in APPS:
        res.compute_ns[app] = calibrated_compute_ns(app_config(app, plan.messages[app]))
        progress(f"budget sweep: {app} (compute {res.compute_ns[app] / 1e3:.1f} µs per operation)")
        res.budget += budget_sweep(plan, app, res.compute_ns[app])
    for app in APPS:
        res.fabrics += protocol_runs(plan, app, res.compute_ns[app], f"{app}, calibrated", progress)
    res.fabrics += protocol_runs(plan, "hadoop", plan.memory_bound_compute_ns, "hadoop, memory-bound", progress)
    res.wall_seconds = time.perf_counter() - start
    return res


def _rate(gbps: float) -> str:
    return f"{gbps:g} Gb/s" if gbps else "no serialization"


def _pct(x: float) -> str:
    return f"{100 * x:.2f} %"


def _figure(res: Results) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(APPS), figsize=(11, 4), sharey=False)
    for ax, app in zip(axes, APPS):
        for gbps in res.plan.rates_gbps:
            line = sorted((r["latency_us"], r["vs_local"]) for r in res.budget if (r["app"], r["gbps"]) == (app, gbps))
            ax.plot([x for x, _ in line], [100 * y for _, y in line], marker=".",
                    linestyle="--" if gbps == 0 else "-", label=f"ideal, {_rate(gbps)}")
        best_link = max(res.plan.links_gbps)
        for r in res.fabrics:
            if r["case"] == f"{app}, calibrated" and r["link_gbps"] == best_link:
                ax.scatter([r["latency_ns"] / 1e3], [100 * r["vs_local"]], marker="x", zorder=3)
                ax.annotate(r["protocol"], (r["latency_ns"] / 1e3, 100 * r["vs_local"]), fontsize=6,
                            xytext=(2, -8), textcoords="offset points", rotation=-45)
        ax.axhline(100 * TARGET, color="grey", linewidth=0.8)
        ax.set_xlabel("latency per operation, µs (ideal: injected; x: measured mean)")
        ax.set_ylabel("run time over local memory, %")
        ax.set_title(f"{app}: compute {res.compute_ns[app] / 1e3:.0f} µs per operation")
    axes[0].legend(fontsize=7)
    return fig


def write_report(res: Results, out: Path, command: str) -> tuple[Path, Path]:
    rep = Report("Gao et al. with the loop closed: application run time on real and ideal fabrics")
    plan = res.plan
    rep.paragraph(
        f"`{command}`, {date.today().isoformat()}, {res.wall_seconds:.0f} s. Rack: {RACK['nodes']} nodes "
        f"({RACK['memory_nodes']} memory), {RACK['closed_loop_threads']} threads per compute node, compute "
        f"times exponential (seed {RACK['seed']}), half reads; "
        + ", ".join(f"{n} {a} operations" for a, n in plan.messages.items()) + ". Compute per "
        "operation calibrated so that Gao's Class A budget (5 µs, 40 Gb/s) costs 5 %: "
        + ", ".join(f"{a} {c / 1e3:.1f} µs" for a, c in res.compute_ns.items()) + "."
    )
    rep.heading("Gao's findings beside ours")
    rep.table(findings_table(res))
    rep.heading("Latency budget for 5 % degradation (ideal fabric)")
    rep.table(budget_frontier(res.budget))
    rep.heading("Degradation on the ideal fabric (against local memory)")
    rates = plan.rates_gbps
    for app in APPS:
        rows = []
        for latency in plan.latencies_ns:
            row: dict[str, Any] = {"app": app, "latency µs": latency / 1e3}
            for gbps in rates:
                match = [r for r in res.budget if (r["app"], r["gbps"], r["latency_us"]) == (app, gbps, latency / 1e3)]
                row[_rate(gbps)] = _pct(match[0]["vs_local"])
            rows.append(row)
        rep.table(rows)
    rep.heading("Real fabrics, loop closed")
    rep.paragraph(
        "vs local: run time over zero-delay memory; vs unloaded: over an ideal fabric where each operation "
        "takes its own unloaded latency (the queueing's share); queueing ×: vs local over the ideal's vs "
        "local; Little: throughput × (latency + compute) / threads, measured where every thread is busy."
    )
    rep.table(fabric_rows(res.fabrics))
    rep.figure("closed_loop_budget", _figure(res),
               "Degradation against local memory: ideal fabrics (lines, injected latency + payload at a rate) "
               f"and real ones at {max(plan.links_gbps)} Gb/s (x, at their measured mean latency); grey: 5 %.")
    return rep.write(out, "closed_loop")


def fabric_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{
        "case": r["case"], "link": r["link_gbps"], "protocol": r["protocol"],
        "unloaded µs": f"{r['unloaded_ns'] / 1e3:.2f}", "latency µs": f"{r['latency_ns'] / 1e3:.2f}",
        "run ms": f"{r['run_time_ms']:.2f}", "vs local": _pct(r["vs_local"]),
        "vs unloaded": _pct(r["vs_unloaded"]), "queueing ×": f"{r['queueing_factor']:.2f}",
        "Mops/s": f"{r['throughput_mops']:.3f}", "Little": f"{r['little_ratio']:.3f}",
    } for r in rows]


def findings_table(res: Results) -> list[dict[str, Any]]:
    frontier = {(r["app"], r["bandwidth"]): r["latency budget for 5 %"] for r in budget_frontier(res.budget)}

    def budget(app: str, gbps: float) -> str:
        return frontier.get((app, _rate(gbps)), "not swept")

    def span(case: str, link: int, key: str) -> str:
        values = [r[key] for r in res.fabrics if r["case"] == case and r["link_gbps"] == link]
        if not values:
            return "not run"
        if key == "queueing_factor":
            return f"{min(values):.2f}–{max(values):.2f}×"
        return f"{_pct(min(values))}–{_pct(max(values))}"

    top, low = max(res.plan.links_gbps), min(res.plan.links_gbps)
    anchor = [r["vs_local"] for r in res.budget
              if r["gbps"] == ANCHOR_GBPS and r["latency_us"] == ANCHOR_LATENCY_NS / 1e3]
    rows = [
        ("class_a", "calibration: measured at 5 µs, 40 Gb/s: " + ", ".join(_pct(d) for d in anchor)),
        ("bandwidth", f"page budget: {budget('page', 40)} at 40, {budget('page', 100)} at 100, "
                      f"{budget('page', 400)} at 400 Gb/s; hadoop sizes: {budget('hadoop', 10)} at 10, "
                      f"{budget('hadoop', 40)} at 40, {budget('hadoop', 100)} at 100 Gb/s"),
        ("latency", f"page: {budget('page', 100)} at 100 Gb/s, {budget('page', 0)} without serialization"),
        ("page", "4096 B at 40 Gb/s: 0.82 µs (the ideal fabric's serialization)"),
        ("queueing_100g", f"{top} Gb/s, every protocol: page {span('page, calibrated', top, 'vs_local')}, "
                          f"hadoop {span('hadoop, calibrated', top, 'vs_local')}; memory-bound hadoop "
                          f"{span('hadoop, memory-bound', top, 'vs_local')}"),
        ("queueing_40g", f"{low} Gb/s: hadoop {span('hadoop, calibrated', low, 'queueing_factor')}, memory-bound "
                         f"{span('hadoop, memory-bound', low, 'queueing_factor')} of zero queueing"),
    ]
    return [{"finding": key, "Gao et al.": GAO_FINDINGS[key][1], "where": GAO_FINDINGS[key][0], "ours": ours}
            for key, ours in rows]


def reproduce(out: Path, quick: bool = False) -> Path:
    """The hook for ``edm reproduce``: runs both experiments and writes
    ``OUT/closed_loop.md`` (and .html, figures/); returns the Markdown's path."""
    plan = Plan.quick_plan() if quick else Plan.full()
    res = run_all(plan, progress=lambda msg: print(f"closed loop: {msg}", file=sys.stderr))
    command = "edm related closed-loop" + (" --quick" if quick else "")
    return write_report(res, out, command)[0]


def reproduce_section(out: Path, quick: bool = False) -> str:
    """``edm reproduce``'s entry (edm.reproduce.related): the report's Markdown."""
    return reproduce(out, quick).read_text()


def _cmd(args: argparse.Namespace) -> int:
    out = Path(args.out)
    md = reproduce(out, args.quick)
    print(md.read_text())
    print(f"-> {md}", file=sys.stderr)
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("closed-loop", help="Gao et al.: application run time with the loop closed (budget sweep "
                                           "on an ideal fabric; EDM and every baseline)")
    p.add_argument("--quick", action="store_true", help="the small version (seconds)")
    p.add_argument("--out", type=out_dir, default="results/related/closed_loop", help="report folder")
    p.set_defaults(func=_cmd)
