"""The reproduction report (``report.md`` and ``report.html``) from stored points only."""

from __future__ import annotations

import platform
import subprocess
import time
from pathlib import Path
from typing import Any

from edm.reproduce.claims import (
    ablation_rows,
    best_fig8a,
    best_fig8b,
    claims,
    distance,
    fig8a_tables,
    fig8b_table,
    ideal_rows,
    ideal_sentence,
    label_curves,
    lowest,
    op_latency,
    op_metric,
    run_length_sentence,
    saturated,
    saturated_from,
    summary_rows,
    table_of,
)
from edm.reproduce.plan import (
    APP_CURVES,
    APPS,
    ASIC_CURVES,
    BATCH_BYTES,
    BG_MEMORY_LOAD,
    CURVES,
    EDM_CURVES,
    EDM_RULES,
    IDEAL,
    RATIOS,
    RTL_CURVES,
    RTL_LATENCY_FILE,
    RUN_LENGTH_TARGET,
    Plan,
)
from edm.sim import STABLE_DELIVERY
from edm.sim.config import PAPER_RULES
from edm.sweep import ResultStore, Sweep, point_key

_STYLE = {"edm-paper": "--", "edm-3GHz": ":", "edm-paper-3GHz": "-."}


class MissingResults(RuntimeError):
    """The report needs points that are not stored (run without --report-only)."""


def stored(sweep: Sweep) -> list[dict[str, Any]]:
    """The stored result of every point of `sweep`; raises naming what is missing."""
    store = ResultStore(sweep.out)
    docs, missing = [], []
    for config in sweep.points():
        doc = store.load(sweep.runner, config)
        if doc is None:
            missing.append(point_key(sweep.runner, config))
        else:
            docs.append(doc)
    if missing:
        raise MissingResults(f"{sweep.name}: {len(missing)} of {len(sweep.points())} points not stored "
                             f"in {sweep.out} (e.g. {missing[0]})")
    return docs


def _git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             cwd=Path(__file__).resolve().parent, timeout=10)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _rtl_timing_section(r: Any, docs: dict[str, list[dict[str, Any]]], t8a: dict[str, Any], t8b: Any) -> None:
    """Figure 8 for the paper's pipeline timing beside our RTL's (`--timing rtl`)."""
    r.heading("Figure 8 on our RTL's timing")
    if "fig8a_rtl" not in docs:
        r.paragraph("Not in this report: the full `edm reproduce` measures our RTL (`edm rtl latency`) first and "
                    "then runs EDM's two protocols again with its pipeline steps; this run had no RTL measurement.")
        return
    steps = {k: v for k, v in docs["fig8a_rtl"][0]["config"].items() if k.endswith("_cycles")}
    r.paragraph("EDM's two protocols again, with the pipeline steps of our RTL as `edm rtl latency` measured them "
                "(`edm simulate --timing rtl`; the mapping, python/edm/sim/timing.py, is checked in closed form: "
                "with the testbench's links the simulator's alone latency equals the RTL's end-to-end cycles). "
                "Curves *-rtl; the others are the paper's Figure 5 steps. Steps: "
                + ", ".join(f"{k} = {v}" for k, v in steps.items()) + ". Mixed 64 B traffic:")
    a_rtl = fig8a_tables(docs["fig8a_rtl"])["mixed"]
    rows = []
    for (c, load), v in sorted({**t8a["mixed"], **a_rtl}.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        if c in (*EDM_CURVES, *RTL_CURVES):
            rows.append({"curve": c, "load": load, "mean slowdown": v["mean_slowdown"][0],
                         "mean latency ns": v["mean_latency_ns"][0], "unloaded ns": v["mean_unloaded_ns"][0],
                         "stable": "SATURATED" if saturated(v) else "yes"})
    r.table(rows)
    b_rtl = fig8b_table(docs["fig8b_rtl"])
    r.paragraph("Application workloads (one seed for the *-rtl runs):")
    r.table([{"workload": w, "curve": c, "mean slowdown": v["mean_slowdown"][0],
              "mean MCT us": round(v["mean_latency_ns"][0] / 1e3, 3)}
             for (w, c), v in sorted({**{k: v for k, v in t8b.items() if k[1] in EDM_CURVES}, **b_rtl}.items())])


def _scale_section(r: Any, plan: Plan, docs: list[dict[str, Any]], t8b: Any) -> None:
    """Figure 8b's points at the paper's switch scale, beside the same workload at plan.nodes."""
    w = plan.scale_workload
    r.heading(f"At {plan.scale_nodes} nodes", level=3)
    shorter = dict(plan.short_scale_runs)
    seconds = sum(d.get("wall_seconds", 0.0) for d in docs)
    r.paragraph(f"The paper's switch scale (§2: 512 ports at 100 Gb/s, a 51.2 Tb/s switch): {w} at load "
                f"{plan.app_load}, {plan.scale_nodes} nodes, seed {plan.seeds[0]}, {plan.scale_messages} messages"
                + "".join(f" ({c}: {n})" for c, n in shorter.items())
                + f", beside the same workload at {plan.nodes} nodes (mean over seeds). The runs are short for so many "
                f"nodes (about {plan.scale_messages // plan.scale_nodes} messages per node): see \"delivered by last "
                f"issue\" (the means of a run below {RUN_LENGTH_TARGET} depend on its length). Cost of these "
                f"{len(docs)} points: {seconds:.0f} s of simulation (sum over points, as stored).")
    ideal = next((d["result"]["mean_slowdown"] for d in docs if d["config"]["protocol"] == IDEAL), None)
    rows = []
    for d in sorted(docs, key=lambda d: APP_CURVES.index(d["config"]["curve"])):
        c, res = d["config"]["curve"], d["result"]
        small = t8b.get((w, c))
        rows.append({"curve": c, "mean slowdown": res["mean_slowdown"],
                     "distance from ideal": distance(res["mean_slowdown"], ideal) if ideal else "-",
                     "p99 slowdown": res["p99_slowdown"], "mean MCT us": round(res["mean_latency_ns"] / 1e3, 2),
                     "delivered by last issue": round(res["delivered_by_last_issue"], 3),
                     f"mean slowdown at {plan.nodes} nodes": small["mean_slowdown"][0] if small else "-",
                     "stable": "yes" if res["delivery_ratio"] >= STABLE_DELIVERY else "SATURATED"})
    r.table(rows)


def build_report(out: Path, plan: Plan, wall_seconds: float | None, command: str, computed: int | None = None,
                 rtl: dict[str, Any] | None = None, ycsb: dict[str, Any] | None = None,
                 related: dict[str, Any] | None = None) -> tuple[Path, Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from edm.reproduce import related as reproduce_related, ycsb as reproduce_ycsb
    from edm.report import Report
    from edm.sim.unloaded import FEC_PS, unloaded_table

    sweeps = plan.sweeps(out)
    docs = {name: label_curves(stored(s)) for name, s in sweeps.items()}
    a_docs = docs["fig8a"] + docs["fig8a_asic"]
    b_docs = docs["fig8b"]
    bg_docs = docs["background"] + docs["background_quiet"]
    total = sum(len(d) for d in docs.values())
    r = Report("EDM: the paper's evaluation, reproduced")
    wall = f"{wall_seconds:.0f} s" if wall_seconds is not None else "not measured (report re-rendered)"
    if wall_seconds is not None and computed is not None:
        # A resumed run reuses stored points: its wall time is not the cost of the whole evaluation.
        wall += f" ({computed} points computed in this run, the others reused from stored results)"
    r.paragraph(
        f"Command: `{command}`. Date {time.strftime('%Y-%m-%d %H:%M %Z')}. Commit `{_git_commit()}`, "
        f"{platform.machine()}, Python {platform.python_version()}. "
        f"Wall time of the run: {wall}. {total} simulated points "
        f"({plan.nodes} nodes, 100 Gbps, chunk 256 B, X = 3; seeds {list(plan.seeds)}; the first "
        f"{plan.warmup_fraction:.0%} of each run's messages excluded as warm-up). Intervals are 95% over seeds. "
        "Every slowdown divides a message's latency by its latency alone in the network under the same protocol, "
        "computed by the simulator. Models and parameters: docs/simulator.md."
    )
    r.paragraph(
        "EDM runs as two protocols on one engine: **edm**, EDM's own rules ("
        + ", ".join(f"{k} = {v}" for k, v in EDM_RULES.items())
        + "), and **edm-paper**, the paper's rules, fixed ("
        + ", ".join(f"{k} = {v}" for k, v in PAPER_RULES.items())
        + "). The paper's claims are about edm-paper; edm is what we would build. The ablation below moves one "
        "lever at a time between the two."
    )

    t8a = fig8a_tables(a_docs)
    t8b = fig8b_table(b_docs)
    r.heading("At a glance")
    r.paragraph(f"Mean slowdown: applications (range over the five workloads, load {plan.app_load}) and 64 B mixed "
                "traffic per load (* past saturation). The best protocol at each load, the ablation and the claims "
                "follow below.")
    r.table(summary_rows(t8a, t8b))

    # Table 1 -------------------------------------------------------------
    r.heading("Table 1: unloaded fabric latency")
    rows = unloaded_table()
    with_fec = {x["protocol"]: x for x in unloaded_table({"fec_ps": FEC_PS["rs"]})}
    r.paragraph("64 B read (8 B request) and 64 B write alone, 100 Gbps, simulated (`edm unloaded`). Table 1 "
                "columns are the paper's per-component totals for the stack each protocol runs on; ours add "
                "serialization and each protocol's own control round trips. The paper's testbed (25 Gbps) runs "
                f"without FEC; a 100 Gbps deployment pays 802.3's RS-FEC on every link ({FEC_PS['rs'] / 1e3:g} ns "
                "per traversal assumed: a read crosses four links, a write two), in the \"with RS-FEC\" columns "
                "(`edm unloaded --fec rs`).")
    r.table([{"protocol": x["protocol"], "stack": x["stack"], "read ns": x["read_ns"],
              "Table 1 read ns": x["read_table1_ns"] or "-", "write ns": x["write_ns"],
              "Table 1 write ns": x["write_table1_ns"] or "-",
              "read ns with RS-FEC": with_fec[x["protocol"]]["read_ns"],
              "write ns with RS-FEC": with_fec[x["protocol"]]["write_ns"]} for x in rows])
    if rtl is None:
        r.paragraph("EDM's latency measured on our RTL is not in this report: `edm reproduce` (full run) measures "
                    f"it into `{RTL_LATENCY_FILE}`; on its own, `edm rtl latency` prints the per-step breakdown.")
    else:
        r.paragraph("EDM measured on our RTL (`edm rtl latency`: compute and memory nodes, switch and PHY paths "
                    "simulated cycle by cycle in Verilator; network stack cycles x 2.56 ns plus Table 1's "
                    "8 PMA/PMD/transceiver traversals and 4 propagation hops). Where the cycles go, step by step: "
                    "docs/hardware.md.")
        r.table([{"operation": f"64 B {kind}", "stack cycles": s["stack_cycles"],
                  "paper cycles": s["paper_stack_cycles"], "stack ns": round(s["stack_ns"], 2),
                  "paper stack ns": round(s["paper_stack_ns"], 2), "total ns": round(s["total_ns"], 2),
                  "paper total ns": round(s["paper_total_ns"], 2),
                  "vs paper": f"{100 * (s['total_ns'] / s['paper_total_ns'] - 1):+.1f} %",
                  "cycles added by MTU/jumbo frames": ", ".join(
                      str(v) for v in s["extra_cycles_with_frames"].values()) or "-"}
                 for kind, s in rtl["summary"].items()])

    # Figure 8a -----------------------------------------------------------
    reproduce_ycsb.section(r, ycsb)

    r.heading("Figure 8a: latency against load, 64 B messages")
    r.paragraph(f"{plan.micro_messages} messages per run, all-to-all. edm and edm-paper run at the FPGA scheduler "
                "clock of Table 1 (2.56 ns); edm-3GHz and edm-paper-3GHz with the paper's 3 GHz ASIC scheduler "
                "estimate (§4.1; scheduler_cycle_ps = 333). The six baselines run on their own stacks (Table 1).")
    fig, axes = plt.subplots(3, 3, figsize=(15, 12), sharex=True)
    for col, (label, ratio) in enumerate(RATIOS.items()):
        for row, (metric, title) in enumerate(((op_metric(ratio, "mean"), "mean slowdown"),
                                               (op_metric(ratio, "p99"), "p99 slowdown"),
                                               (op_latency(ratio), "mean latency (ns)"))):
            ax = axes[row][col]
            for proto in CURVES:
                pts = [(k[1], v[metric]) for k, v in t8a[label].items() if k[0] == proto]
                line = ax.errorbar([p[0] for p in pts], [p[1][0] for p in pts], yerr=[p[1][1] for p in pts],
                                   marker="o", capsize=2, label=proto, lw=2.5 if proto.startswith("edm") else 1.2,
                                   ls=_STYLE.get(proto, "-"))
                # Past saturation (latency grows with run length): marked with a cross.
                over = [(k[1], v[metric][0]) for k, v in t8a[label].items() if k[0] == proto and saturated(v)]
                ax.scatter([o[0] for o in over], [o[1] for o in over], marker="x", s=70, zorder=5,
                           color=line.lines[0].get_color())
            ax.set_yscale("log")
            ax.set_title(f"{label}: {title}")
            ax.grid(alpha=0.3, which="both")
            ax.set_xlabel("load")
    axes[0][0].legend(fontsize=8)
    r.figure("fig8a", fig, "Figure 8a: mean and p99 latency / unloaded latency, and mean absolute latency, against load "
             "(x: past saturation, where latency grows with run length)")
    plt.close(fig)
    for label, ratio in RATIOS.items():
        r.heading(f"Figure 8a, {label}", level=3)
        mean = op_metric(ratio, "mean")
        ideal = {k[1]: v[mean][0] for k, v in t8a[label].items() if k[0] == IDEAL}
        r.table([{"curve": k[0], "load": k[1],
                  "mean slowdown": v[mean][0], "±": v[mean][1],
                  "distance from ideal": distance(v[mean][0], ideal[k[1]]) if k[1] in ideal else "-",
                  "p99 slowdown": v[op_metric(ratio, "p99")][0],
                  "mean latency ns": v[op_latency(ratio)][0],
                  "delivered/issued": v["delivery_ratio"][0],
                  "stable": "SATURATED" if saturated(v) else "yes"}
                 for k, v in sorted(t8a[label].items(), key=lambda kv: (CURVES.index(kv[0][0]), kv[0][1]))])

    r.heading("Switch queueing of memory data (EDM)", level=3)
    r.paragraph(
        "The paper's scheduler never gives a port two circuits at once, but a /G/ or /N/ takes a block slot "
        "inside the unit on the wire and a forwarded RREQ waits behind one, which its release times do not "
        "count: circuits run late and the next one into that port waits at the switch egress. EDM's rules "
        "include zero_queue = 1 (docs/simulator.md): the switch books every unit on its egresses and sends "
        "grants only in gaps. Units (data or forwarded requests) that found their egress busy, and the longest "
        "such wait, mean over seeds, mixed traffic:"
    )
    r.table([{"curve": k[0], "load": k[1], "units that waited": round(v["switch_data_conflicts"][0]),
              "longest wait ns": v["max_switch_data_wait_ns"][0]}
             for k, v in sorted(t8a["mixed"].items(), key=lambda kv: (CURVES.index(kv[0][0]), kv[0][1]))
             if k[0] in (*EDM_CURVES, *ASIC_CURVES)])

    r.heading("Where each protocol saturates", level=3)
    r.paragraph(
        "Load is the fraction of each host's link rate carried by memory *payload* (docs/simulator.md). With "
        "64 B messages the headers, minimum frames, inter-frame gaps, acknowledgements, requests and control "
        "messages of each protocol multiply the wire bytes, so each saturates at its own load; beyond it, queues "
        "grow for as long as a run lasts and its latencies say more about run length than about the protocol. "
        f"A point counts as saturated when, over the second half of its issue period, less than "
        f"{STABLE_DELIVERY:.0%} of the bytes issued were delivered."
    )
    sat_rows = []
    for proto in CURVES:
        row: dict[str, Any] = {"curve": proto}
        for label in RATIOS:
            first = saturated_from(t8a[label], proto)
            row[f"{label}: saturated from load"] = first if first is not None else f"> {max(plan.loads)}"
        sat_rows.append(row)
    r.table(sat_rows)

    r.heading("Figure 8a with RS-FEC on every link", level=3)
    r.paragraph(f"Mixed traffic as above, with 802.3's RS-FEC at 100 Gbps ({FEC_PS['rs'] / 1e3:g} ns per link "
                "traversal, `fec_ps`), which a 100 Gbps deployment pays and the paper's testbed does not. Every "
                "protocol pays it once per link its messages cross (a lone EDM read or write crosses four, a "
                "packet write two: `edm unloaded --fec rs`), so slowdowns shrink as the fixed latency grows.")
    t8a_fec = fig8a_tables(docs["fig8a_fec"])["mixed"]
    mixed = t8a["mixed"]
    r.table([{"curve": k[0], "load": k[1],
              "mean latency ns": mixed[k]["mean_latency_ns"][0] if k in mixed else "-",
              "with RS-FEC": v["mean_latency_ns"][0],
              "mean slowdown": mixed[k]["mean_slowdown"][0] if k in mixed else "-",
              "slowdown with RS-FEC": v["mean_slowdown"][0],
              "stable": "SATURATED" if saturated(v) else "yes"}
             for k, v in sorted(t8a_fec.items(), key=lambda kv: (CURVES.index(kv[0][0]), kv[0][1]))])

    # Figure 8b -----------------------------------------------------------
    r.heading("Figure 8b: application workloads")
    shorter = dict(plan.short_app_runs)
    r.paragraph(f"Load {plan.app_load}, half reads, {plan.app_messages} messages per run"
                + "".join(f" ({c}: {n})" for c, n in shorter.items()) + ", message sizes from the published CDFs.")
    r.paragraph(run_length_sentence(b_docs, t8b, plan.app_messages, shorter))
    fig, axes = plt.subplots(1, 2, figsize=(14, 4.5))
    width = 0.8 / len(APP_CURVES)
    for i, proto in enumerate(APP_CURVES):
        for ax, m in zip(axes, ("mean_slowdown", "p99_slowdown")):
            vals = [t8b[(w, proto)][m] for w in APPS]
            ax.bar([j + i * width for j in range(len(APPS))], [v[0] for v in vals], width,
                   yerr=[v[1] for v in vals], label=proto, capsize=2)
    for ax, m in zip(axes, ("mean", "p99")):
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(APPS))], APPS)
        ax.set_yscale("log")
        ax.set_title(f"{m} message-completion-time slowdown, load {plan.app_load}")
        ax.grid(alpha=0.3, axis="y", which="both")
    axes[0].legend(fontsize=8, ncol=2)
    r.figure("fig8b", fig, "Figure 8b: MCT / ideal (alone) MCT per application workload")
    plt.close(fig)
    low = lowest(b_docs, ["workload", "curve"], "delivered_by_last_issue")
    ideal_b = {k[0]: v["mean_slowdown"][0] for k, v in t8b.items() if k[1] == IDEAL}
    r.table([{"workload": k[0], "curve": k[1], "mean slowdown": v["mean_slowdown"][0],
              "±": v["mean_slowdown"][1],
              "distance from ideal": distance(v["mean_slowdown"][0], ideal_b[k[0]]) if k[0] in ideal_b else "-",
              "p99 slowdown": v["p99_slowdown"][0],
              "mean MCT us": round(v["mean_latency_ns"][0] / 1e3, 2),
              "delivered by last issue": low[k],
              f">= {RUN_LENGTH_TARGET}": "yes" if low[k] >= RUN_LENGTH_TARGET else
              ("no, saturated" if saturated(v) else "no")}
             for k, v in sorted(t8b.items(), key=lambda kv: (APPS.index(kv[0][0]), APP_CURVES.index(kv[0][1])))])
    r.paragraph("\"delivered by last issue\": of all bytes a run issued, the fraction delivered by its last issue "
                "time, lowest over seeds.")
    r.heading("Distance from ideal", level=3)
    r.paragraph(f"{IDEAL} is pFabric's Ideal on EDM's data path: a central scheduler with zero latency keeps a "
                "greedy shortest-remaining-first matching of source uplinks to destination downlinks, recomputed at "
                "every arrival and completion, preemptive, no control blocks (docs/simulator.md). Each curve's mean "
                f"slowdown divided by {IDEAL}'s on the same workload and seeds (1: as good as the ideal), and its "
                f"mean MCT divided by {IDEAL}'s (range over the workloads; slowdowns divide by each protocol's own "
                "alone latency, MCTs do not). " + ideal_sentence(t8b))
    r.table(ideal_rows(t8b))
    paper_alone = table_of([d for d in b_docs if d["config"]["curve"] == "edm"], ["workload"],
                           ["mean_slowdown_paper_alone", "p99_slowdown_paper_alone"])
    r.paragraph("EDM's zero-queue rule makes its own alone latency longer for messages of several chunks (each "
                "chunk keeps a guard behind it), so edm's slowdowns above have a larger denominator than "
                "edm-paper's. edm against the paper rules' alone latency instead:")
    r.table([{"workload": w, "edm mean slowdown": v["mean_slowdown_paper_alone"][0],
              "edm p99 slowdown": v["p99_slowdown_paper_alone"][0]} for (w,), v in paper_alone.items()])
    _scale_section(r, plan, docs["fig8b_scale"], t8b)

    # Best protocol -------------------------------------------------------
    _rtl_timing_section(r, docs, t8a, t8b)

    r.heading("Best protocol at each load")
    r.paragraph("The curve with the lowest mean slowdown at each point (mean over seeds), among EDM's two at the "
                "FPGA clock and the six baselines; then the same with the 3 GHz curves included, and the lowest "
                "mean absolute latency. A baseline's slowdown is against its own (larger) unloaded latency, so "
                "the latency column is the fairer comparison across stacks. \"(saturated)\": past saturation.")
    r.table(best_fig8a(t8a))
    r.table(best_fig8b(t8b))

    # Ablation ------------------------------------------------------------
    r.heading("Ablation: EDM's rules against the paper's, one lever at a time")
    abl_apps = [d for d in docs["ablation_apps"]] + [
        d for d in b_docs if d["config"]["protocol"] in EDM_CURVES and d["config"]["seed"] in plan.ablation_app_seeds]
    r.paragraph(
        "\"edm without X\": EDM's rules with lever X at the paper's value; \"paper + X\": the paper's rules with "
        "X at EDM's value (run as protocol edm with the other levers at the paper's values); \"edm with "
        f"batching\": EDM's rules folding a pair's waiting writes into one /N/ of up to {BATCH_BYTES} B. "
        f"Applications: the five workloads at load {plan.app_load}, half reads, {plan.app_messages} messages, "
        f"seed{'s' if len(plan.ablation_app_seeds) > 1 else ''} {', '.join(map(str, plan.ablation_app_seeds))} "
        "only (the first and last rows are Figure 8b's points of those seeds); range over the workloads. "
        f"64 B: mixed (half reads), {plan.micro_messages} messages, FPGA scheduler clock, mean over seeds "
        f"{list(plan.seeds)}; \"(sat.)\": past saturation. Max switch data wait: the longest wait of memory data "
        "(or a forwarded request) at a switch egress in any of the variant's runs.")
    r.table(ablation_rows(abl_apps, docs["ablation_micro"], plan.ablation_loads))

    # Background frames ---------------------------------------------------
    r.heading("Background Ethernet frames and intra-frame preemption")
    for d in bg_docs:
        c = d["config"]
        c["frames"] = (f"{c['background_frame_bytes']} B at {c['background_load']}" if c.get("background_load")
                       else "none")
        c["preemption"] = "-" if not c.get("background_load") else ("yes" if c["background_preemption"] else "no")
    tbg = table_of(bg_docs, ["frames", "preemption"], ["mean_latency_ns", "mean_slowdown", "p99_slowdown"])
    # Frame figures (absent without frames): the longest wait over seeds, the mean frame delay.
    waits: dict[tuple, dict[str, Any]] = {}
    for d in bg_docs:
        w = waits.setdefault((d["config"]["frames"], d["config"]["preemption"]), {"max": 0.0, "delays": []})
        w["max"] = max(w["max"], d["result"].get("memory_frame_wait_max_ns", 0.0))
        if d["result"].get("frame_delay_mean_ns") is not None:
            w["delays"].append(d["result"]["frame_delay_mean_ns"])
    r.paragraph(f"edm-paper (the paper's rules), 64 B messages, half reads, memory load {BG_MEMORY_LOAD}, while "
                "Ethernet frames of one size arrive at every host uplink and switch egress as a Poisson process at "
                "the given fraction of the link rate (`background_load`, docs/simulator.md). Memory blocks have "
                "priority; with EDM's intra-frame preemption (§3.2.3) they wait at most for the frame block on the "
                "wire, without it for the rest of the frame. Slowdowns are against the unloaded, frame-free latency.")
    r.table([{"frames": k[0], "preemption": k[1], "mean latency ns": v["mean_latency_ns"][0],
              "± ns": v["mean_latency_ns"][1], "mean slowdown": v["mean_slowdown"][0],
              "p99 slowdown": v["p99_slowdown"][0],
              "longest memory wait for a frame ns": waits[k]["max"],
              "mean frame delay ns": (sum(waits[k]["delays"]) / len(waits[k]["delays"])
                                      if waits[k]["delays"] else "-")}
             for k, v in tbg.items()])

    # Claims --------------------------------------------------------------
    r.heading("The paper's claims beside ours")
    r.paragraph("Each claim for EDM's rules (edm) and for the paper's (edm-paper); the paper's claims are about the "
                "latter.")
    r.table(claims(t8a, t8b, tbg, paper_alone), ["claim (paper §4.3)", "curve", "ours", "holds?"])
    r.paragraph("Where a claim does not hold, docs/simulator.md (\"Measured results\") discusses why as far as we "
                "know. Our baselines run on their own Table 1 stacks, so their slowdowns are relative to much "
                "larger unloaded latencies than EDM's: compare absolute latencies too.")

    reproduce_related.section(r, related or {})
    return r.write(out)
