"""The numbers ``edm reproduce`` reports, computed from stored points: tables of means
over seeds, the paper's claims beside ours, the best protocol at each load and
the ablation table. No simulation and no rendering here."""

from __future__ import annotations

import math
from typing import Any

from edm.reproduce.plan import (
    APP_CURVES,
    APPS,
    ASIC_CURVES,
    BASELINES,
    CURVES,
    EDM_CURVES,
    IDEAL,
    RATIOS,
    RUN_LENGTH_TARGET,
    ablation_variants,
    curve,
    variant,
)
from edm.sim import STABLE_DELIVERY

Table = dict[tuple, dict[str, tuple[float, float]]]


def _mean_ci(values: list[float]) -> tuple[float, float]:
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, 0.0
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    return mean, 1.96 * sd / math.sqrt(n)


def _get(result: dict[str, Any], path: str) -> float:
    value: Any = result
    for part in path.split("."):
        value = value[part]
    return float(value)


def table_of(docs: list[dict[str, Any]], keys: list[str], metrics: list[str]) -> Table:
    """{config values of `keys`: {metric: (mean over seeds, 95% half-width)}}."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for d in docs:
        groups.setdefault(tuple(d["config"][k] for k in keys), []).append(d["result"])
    return {k: {m: _mean_ci([_get(r, m) for r in rs]) for m in metrics} for k, rs in sorted(groups.items(), key=str)}


def lowest(docs: list[dict[str, Any]], keys: list[str], metric: str) -> dict[tuple, float]:
    """{config values of `keys`: the lowest value of `metric` over the group's points (seeds)}."""
    out: dict[tuple, float] = {}
    for d in docs:
        k = tuple(d["config"][key] for key in keys)
        out[k] = min(out.get(k, math.inf), _get(d["result"], metric))
    return out


def op_metric(ratio: float, stat: str) -> str:
    """The slowdown metric of the op a write ratio measures (mixed: all ops)."""
    if ratio == 1.0:
        return f"by_op.write.{stat}_slowdown"
    if ratio == 0.0:
        return f"by_op.read.{stat}_slowdown"
    return f"{stat}_slowdown"


def op_latency(ratio: float) -> str:
    return {1.0: "by_op.write.mean_latency_ns", 0.0: "by_op.read.mean_latency_ns"}.get(ratio, "mean_latency_ns")


def label_curves(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each point's curve and ablation variant, added to its configuration (not stored)."""
    for d in docs:
        d["config"]["curve"] = curve(d["config"])
        d["config"]["variant"] = variant(d["config"]) or d["config"]["protocol"]
    return docs


def fig8a_tables(a_docs: list[dict[str, Any]]) -> dict[str, Table]:
    t8a = {}
    for label, ratio in RATIOS.items():
        part = [d for d in a_docs if d["config"]["write_ratio"] == ratio]
        t8a[label] = table_of(part, ["curve", "load"],
                              [op_metric(ratio, "mean"), op_metric(ratio, "p99"), op_latency(ratio),
                               "mean_latency_ns", "mean_unloaded_ns", "delivery_ratio",
                               "switch_data_conflicts", "max_switch_data_wait_ns"])
    return t8a


def fig8b_table(b_docs: list[dict[str, Any]]) -> Table:
    return table_of(b_docs, ["workload", "curve"], ["mean_slowdown", "p99_slowdown", "mean_latency_ns",
                                                    "delivery_ratio"])


def saturated(metrics: dict[str, tuple[float, float]]) -> bool:
    return metrics["delivery_ratio"][0] < STABLE_DELIVERY


def saturated_from(table: Table, curve: str) -> float | None:
    """The lowest load at which `curve` is saturated in a Figure 8a table (None: at none)."""
    loads = sorted(k[1] for k, v in table.items() if k[0] == curve and saturated(v))
    return loads[0] if loads else None


def _num(x: float) -> str:
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def _range(values: list[float], fmt: str = ".2f") -> str:
    lo, hi = min(values), max(values)
    fmt = ".0f" if hi >= 100 else ".1f" if hi >= 10 else fmt
    return f"{lo:{fmt}}" if f"{lo:{fmt}}" == f"{hi:{fmt}}" else f"{lo:{fmt}}-{hi:{fmt}}"


# ------------------------------------------------------------ run length

def run_length(b_docs: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """{curve: {workload: lowest delivered_by_last_issue over seeds}} of the application runs."""
    low = lowest(b_docs, ["curve", "workload"], "delivered_by_last_issue")
    return {c: {w: low[(c, w)] for w in APPS if (c, w) in low} for c in APP_CURVES}


def run_length_sentence(b_docs: list[dict[str, Any]], t8b: Table, messages: int,
                        shorter: dict[str, int] | None = None) -> str:
    """What the application runs' length achieved, curve by curve (`shorter`: curves run with fewer messages)."""
    per = run_length(b_docs)
    short = {c: v for c, v in per.items() if v and min(v.values()) < RUN_LENGTH_TARGET}
    ok = [c for c in APP_CURVES if per.get(c) and c not in short]
    shorter = shorter or {}
    text = (f"Run length: each application run issues {messages} messages"
            + "".join(f" ({c}: {n})" for c, n in shorter.items()) + " and the simulation then runs until "
            "every message has completed; the means count every message after the warm-up. For them not to "
            "depend on where a run stops issuing, at least "
            f"{RUN_LENGTH_TARGET:.0%} of all bytes issued must be delivered by the last issue time "
            "(`delivered_by_last_issue`; the rest, delivered while the network drains, is mostly the tail of "
            "the largest messages). In brackets below: the lowest over seeds, range over the workloads. ")
    text += (f"Reached on every workload and seed by {', '.join(ok)}. " if ok else "")
    sat = {c: v for c, v in short.items() if any((w, c) in t8b and saturated(t8b[(w, c)]) for w in APPS)}
    if sat:
        text += ("Not reached by " + ", ".join(f"{c} ({_range(list(v.values()), '.3f')})" for c, v in sat.items())
                 + f": saturated at this load (on some workload less than {STABLE_DELIVERY:.0%} of the bytes issued "
                 "over the second half of the issue period are delivered), so queues grow for as long as a run "
                 "lasts, no run length reaches the target and the means grow with the run length"
                 + ("; " + ", ".join(c for c in sat if c in shorter) + " therefore runs fewer messages (its "
                    "simulation slows down as its queues grow), and its means are lower than a longer run's"
                    if any(c in shorter for c in sat) else "") + ". ")
    rest = {c: v for c, v in short.items() if c not in sat}
    if rest:
        text += ("Not reached at this run length by "
                 + ", ".join(f"{c} ({_range(list(v.values()), '.3f')}; below on "
                             f"{', '.join(w for w in APPS if v.get(w, 1) < RUN_LENGTH_TARGET)})" for c, v in rest.items())
                 + ". ")
    return text.strip()


# ------------------------------------------------------------ best protocol

def _best(candidates: dict[str, float]) -> tuple[str, float]:
    name = min(candidates, key=candidates.get)
    return name, candidates[name]


def best_fig8a(t8a: dict[str, Table]) -> list[dict[str, Any]]:
    """For each mix and load: the curve with the lowest mean slowdown, at the FPGA scheduler
    clock and with the 3 GHz curves too, beside EDM's two and the best baseline."""
    rows = []
    for label, ratio in RATIOS.items():
        m = op_metric(ratio, "mean")
        t = t8a[label]
        for load in sorted({k[1] for k in t}):
            at = {k[0]: v for k, v in t.items() if k[1] == load}
            fpga = {c: at[c][m][0] for c in CURVES if c in at and c not in (*ASIC_CURVES, IDEAL)}
            every = {c: at[c][m][0] for c in CURVES if c in at and c != IDEAL}
            best, value = _best(fpga)
            base, base_value = _best({c: fpga[c] for c in BASELINES if c in fpga})
            fast, fast_value = _best(every)
            lat, lat_value = _best({c: at[c][op_latency(ratio)][0] for c in fpga})
            rows.append({"mix": label, "load": load, "best": best + (" (saturated)" if saturated(at[best]) else ""),
                         "its mean slowdown": value,
                         **{c: at[c][m][0] for c in EDM_CURVES if c in at},
                         "best baseline": f"{base} ({_num(base_value)})",
                         "best with 3 GHz curves": fast if fast == best else f"{fast} ({_num(fast_value)})",
                         "lowest mean latency": f"{lat} ({lat_value:.0f} ns)",
                         IDEAL: at[IDEAL][m][0] if IDEAL in at else "-",
                         "best / ideal": distance(value, at[IDEAL][m][0]) if IDEAL in at else "-"})
    return rows


def best_fig8b(t8b: Table) -> list[dict[str, Any]]:
    rows = []
    for w in APPS:
        slow = {c: t8b[(w, c)]["mean_slowdown"][0] for c in APP_CURVES if (w, c) in t8b and c != IDEAL}
        best, value = _best(slow)
        base, base_value = _best({c: slow[c] for c in BASELINES if c in slow})
        lat, lat_value = _best({c: t8b[(w, c)]["mean_latency_ns"][0] for c in slow})
        rows.append({"workload": w, "best": best, "its mean slowdown": value,
                     **{c: slow[c] for c in EDM_CURVES if c in slow},
                     "best baseline": f"{base} ({_num(base_value)})",
                     "lowest mean MCT": f"{lat} ({lat_value / 1e3:.1f} us)",
                     IDEAL: t8b[(w, IDEAL)]["mean_slowdown"][0] if (w, IDEAL) in t8b else "-",
                     "best / ideal": (distance(value, t8b[(w, IDEAL)]["mean_slowdown"][0])
                                      if (w, IDEAL) in t8b else "-")})
    return rows


# ------------------------------------------------------------ distance from ideal

def distance(value: float, ideal: float) -> float:
    """A mean slowdown's distance from ideal-srpt's: their ratio (1: as good as the ideal)."""
    return round(value / ideal, 3)


def ideal_rows(t8b: Table) -> list[dict[str, Any]]:
    """Figure 8b's distance from ideal: per curve, each workload's mean slowdown / ideal-srpt's,
    and its mean MCT / ideal-srpt's (the two differ where a protocol's alone latency does)."""
    rows = []
    for c in APP_CURVES:
        if c == IDEAL or not all((w, c) in t8b and (w, IDEAL) in t8b for w in APPS):
            continue
        row: dict[str, Any] = {"curve": c}
        for w in APPS:
            row[w] = distance(t8b[(w, c)]["mean_slowdown"][0], t8b[(w, IDEAL)]["mean_slowdown"][0])
        mct = [t8b[(w, c)]["mean_latency_ns"][0] / t8b[(w, IDEAL)]["mean_latency_ns"][0] for w in APPS]
        row["mean MCT / ideal's"] = _range(mct)
        rows.append(row)
    return sorted(rows, key=lambda r: max(r[w] for w in APPS))


def ideal_sentence(t8b: Table) -> str:
    """Where EDM's two protocols stand against ideal-srpt and the best baseline (from the table)."""
    rows = {r["curve"]: r for r in ideal_rows(t8b)}
    if not rows:
        return "ideal-srpt is not among the stored points."
    parts = []
    for c in EDM_CURVES:
        if c in rows:
            parts.append(f"{c} is {_range([rows[c][w] for w in APPS], '.3f')}x ideal-srpt's mean slowdown")
    base = [c for c in rows if c in BASELINES]
    if base:
        best = min(base, key=lambda c: max(rows[c][w] for w in APPS))
        parts.append(f"the closest baseline, {best}, {_range([rows[best][w] for w in APPS], '.3f')}x")
    return "Over the five workloads " + "; ".join(parts) + "."


# ------------------------------------------------------------ summary

def summary_rows(t8a: dict[str, Table], t8b: Table) -> list[dict[str, Any]]:
    """EDM's curves at a glance: applications (range over the workloads) and 64 B mixed per load."""
    rows = []
    mixed = t8a["mixed"]
    loads = sorted({k[1] for k in mixed})
    for name in (*EDM_CURVES, *ASIC_CURVES, *BASELINES, IDEAL):
        row: dict[str, Any] = {"curve": name}
        apps = [t8b[(w, name)] for w in APPS if (w, name) in t8b]
        row["apps mean slowdown"] = _range([v["mean_slowdown"][0] for v in apps]) if apps else "-"
        row["apps p99"] = _range([v["p99_slowdown"][0] for v in apps], ".1f") if apps else "-"
        for load in loads:
            v = mixed.get((name, load))
            row[f"64 B mixed {load}"] = "-" if v is None else _num(v["mean_slowdown"][0]) + ("*" if saturated(v) else "")
        rows.append(row)
    return rows


# ------------------------------------------------------------ ablation

def ablation_rows(app_docs: list[dict[str, Any]], micro_docs: list[dict[str, Any]],
                  loads: tuple[float, ...]) -> list[dict[str, Any]]:
    """One row per ablation variant: application slowdowns (range over the workloads of the
    mean over seeds), 64 B mean slowdown per load, and the longest wait of memory data at a
    switch egress over all its points. Points must carry their "variant" (label_curves)."""
    apps = table_of(app_docs, ["variant", "workload"], ["mean_slowdown", "p99_slowdown", "max_switch_data_wait_ns"])
    low = lowest(app_docs, ["variant", "workload"], "delivered_by_last_issue")
    micro = table_of(micro_docs, ["variant", "load"], ["mean_slowdown", "delivery_ratio",
                                                       "max_switch_data_wait_ns"])
    rows = []
    for name, _, sets in ablation_variants():
        a = [v for k, v in apps.items() if k[0] == name]
        mu = {k[1]: v for k, v in micro.items() if k[0] == name}
        if not a and not mu:
            continue
        row: dict[str, Any] = {"variant": name, "sets": sets}
        row["apps mean slowdown"] = _range([v["mean_slowdown"][0] for v in a]) if a else "-"
        row["apps p99 slowdown"] = _range([v["p99_slowdown"][0] for v in a], ".1f") if a else "-"
        dl = [v for k, v in low.items() if k[0] == name]
        row["apps delivered by last issue"] = f"{min(dl):.3f}" if dl else "-"
        for load in loads:
            v = mu.get(load)
            row[f"64 B at {load}"] = ("-" if v is None else
                                      f"{v['mean_slowdown'][0]:.3f}" + (" (sat.)" if saturated(v) else ""))
        waits = [v["max_switch_data_wait_ns"][0] for v in a] + [v["max_switch_data_wait_ns"][0] for v in mu.values()]
        row["max switch data wait ns"] = max(waits) if waits else "-"
        rows.append(row)
    return rows


# ------------------------------------------------------------ claims

BOUNDS = (("read-only", 1.2), ("write-only", 1.3), ("mixed", 1.3))
RULES = {"edm": "EDM's rules", "edm-paper": "the paper's rules"}


def claims(t8a: dict[str, Table], t8b: Table, tbg: Table | None = None,
           paper_alone: Table | None = None) -> list[dict[str, str]]:
    """Each claim, for EDM's rules and the paper's, our numbers and whether it holds."""
    def series(label: str, proto: str, stat: str = "mean") -> list[tuple[float, float]]:
        m = op_metric(RATIOS[label], stat)
        return sorted((k[1], v[m][0]) for k, v in t8a[label].items() if k[0] == proto)

    def saturation(label: str, proto: str) -> str:
        loads = sorted(k[1] for k, v in t8a[label].items() if k[0] == proto and saturated(v))
        return f"; saturated from load {loads[0]}" if loads else "; never saturated"

    def row(claim: str, name: str, ours: str, holds: bool) -> dict[str, str]:
        return {"claim (paper §4.3)": claim, "curve": name, "ours": ours, "holds?": "yes" if holds else "no"}

    out = []
    for name in (*EDM_CURVES, *ASIC_CURVES):
        clock = "3 GHz scheduler" if name in ASIC_CURVES else "FPGA clock"
        for label, bound in BOUNDS:
            load, value = max(series(label, name), key=lambda p: p[1])
            within = [ld for ld, v in series(label, name) if v <= bound]
            out.append(row(f"EDM {label}: within {bound}x of unloaded at all loads ({clock})", name,
                           f"worst {value:.2f}x at load {load}; within {bound}x up to load "
                           f"{max(within) if within else '-'}{saturation(label, name)}", value <= bound))

    def queued(curve_name: str) -> tuple[float, float]:
        rows = [v for label in RATIOS for k, v in t8a[label].items() if k[0] == curve_name]
        return (max(v["switch_data_conflicts"][0] for v in rows), max(v["max_switch_data_wait_ns"][0] for v in rows))

    for name in EDM_CURVES:
        per_clock = {clock: queued(c) for clock, c in (("FPGA clock", name), ("3 GHz scheduler", f"{name}-3GHz"))}
        out.append(row("(§3.1.1) zero queuing at the switch for memory traffic", f"{name}, {name}-3GHz",
                       "; ".join(f"{clock}: up to {units:.0f} units per run (data or forwarded requests) waited at "
                                 f"a switch egress, at most {wait:.2f} ns" for clock, (units, wait) in per_clock.items()),
                       all(u == 0 for u, _ in per_clock.values())))
    for name in EDM_CURVES:
        apps = [t8b[(w, name)]["mean_slowdown"][0] for w in APPS]
        ours = f"{_range(apps)}x"
        if name == "edm" and paper_alone:
            alone = [v["mean_slowdown_paper_alone"][0] for v in paper_alone.values()]
            ours += f" ({_range(alone)}x against the paper rules' alone latency)"
            apps += alone
        out.append(row("application MCT within 1.2-1.4x of ideal", name, ours, max(apps) <= 1.4))
    for name in EDM_CURVES:
        wins = [w for w in APPS if t8b[(w, name)]["mean_slowdown"][0]
                <= min(t8b[(w, b)]["mean_slowdown"][0] for b in BASELINES)]
        base = {b: [t8b[(w, b)]["mean_slowdown"][0] for w in APPS] for b in BASELINES}
        best = min(base, key=lambda b: max(base[b]))
        out.append(row("application MCT lower than every baseline's (Fig. 8b)", name,
                       f"lowest on {len(wins)} of {len(APPS)} workloads"
                       + (f" ({', '.join(wins)})" if 0 < len(wins) < len(APPS) else "")
                       + f"; best baseline {best} {_range(base[best])}x", len(wins) == len(APPS)))
    for name in EDM_CURVES:
        ratios = {w: t8b[(w, "cxl")]["mean_slowdown"][0] / t8b[(w, name)]["mean_slowdown"][0] for w in APPS}
        w_max = max(ratios, key=ratios.get)
        out.append(row("CXL's MCT up to 8x EDM's", name, f"up to {ratios[w_max]:.1f}x ({w_max})",
                       ratios[w_max] >= 4))
    for name in EDM_CURVES:
        ird, edm = series("mixed", "ird"), series("mixed", name)
        lo, hi = ird[0][1] / edm[0][1], ird[-1][1] / edm[-1][1]
        out.append(row("IRD close to EDM at low load, degrading at high load", name,
                       f"IRD/EDM slowdown {lo:.2f} at load {ird[0][0]}, {hi:.2f} at load {ird[-1][0]}",
                       lo <= 1.5 and hi > lo))

    # DCTCP and pFabric run on different stacks here (TCP/IP vs raw Ethernet),
    # so compare the delay load adds (latency - unloaded), not slowdowns.
    def added(proto: str) -> list[float]:
        return [v["mean_latency_ns"][0] - v["mean_unloaded_ns"][0]
                for k, v in sorted(t8a["mixed"].items()) if k[0] == proto]

    ratio = [a / b if b > 0 else float("nan") for a, b in zip(added("dctcp"), added("pfabric"))]
    out.append(row("DCTCP = pFabric on single-packet workloads", "dctcp, pfabric",
                   "DCTCP/pFabric queueing delay " + ", ".join(f"{x:.2f}" for x in ratio) + " over loads",
                   all(0.7 <= x <= 1.4 for x in ratio)))
    fp = series("mixed", "fastpass")
    out.append(row("Fastpass limited by its server's bandwidth", "fastpass",
                   f"Fastpass slowdown {fp[0][1]:.2f} at load {fp[0][0]}, {fp[-1][1]:.2f} at load {fp[-1][0]} "
                   "(its arbiter link carries one request per flow)", fp[-1][1] > 3))
    if tbg:
        quiet = tbg[("none", "-")]["mean_latency_ns"][0]
        pre = {k[0]: v["mean_latency_ns"][0] - quiet for k, v in tbg.items() if k[1] == "yes"}
        no = {k[0]: v["mean_latency_ns"][0] - quiet for k, v in tbg.items() if k[1] == "no"}
        worst_pre, worst_no = max(pre, key=pre.get), max(no, key=no.get)
        block_ns = 66 / 100  # one block at 100 Gbps
        out.append(row("(§3.2.3) with preemption, memory latency stays within a few block times of unloaded "
                       "while frames share the links", "edm-paper",
                       f"mean latency +{pre[worst_pre]:.2f} ns with preemption (frames {worst_pre}), "
                       f"+{no[worst_no]:.0f} ns without (frames {worst_no}); one block = {block_ns:.2f} ns",
                       pre[worst_pre] <= 4 * block_ns))
    return out
