"""edm reproduce --quick: the whole evaluation pipeline, small (Table 1, Fig. 8a, 8b, claims)."""

from __future__ import annotations

import re

import pytest

from edm.cli import main
from edm.reproduce import ABLATION, APP_CURVES, APPS, BG_FRAMES, BG_LOADS, CURVES, RATIOS, Plan
from edm.reproduce.plan import LEVERS, ablation_variants, variant
from edm.sim.config import DEFAULTS, PAPER_RULES, PROTOCOLS


def test_ablation_variants_move_one_lever_between_edms_rules_and_the_papers():
    rows = ablation_variants()
    assert [r[0] for r in rows][0] == "edm" and rows[-1][0] == "edm-paper" and len(rows) == 2 * len(LEVERS) + 3
    for name, keys, _ in rows[1:-1]:
        assert keys["protocol"] == "edm"
        levers = {k: keys.get(k, DEFAULTS[k]) for k in PAPER_RULES}
        at_paper = {k for k in LEVERS if levers[k] == PAPER_RULES[k]}
        if name.startswith("edm without"):
            assert len(at_paper) == 1, name
        elif name.startswith("paper +"):
            # One lever at EDM's value, and what it needs (start delays: zero queue).
            assert len(at_paper) == len(LEVERS) - name.count("+"), name
        else:
            assert name == "edm with batching" and not at_paper and levers["batch_bytes"] > 0
        assert variant(keys) == name  # each configuration maps back to its own row
    assert variant({"protocol": "edm-paper"}) == "edm-paper" and variant({"protocol": "pfabric"}) is None


@pytest.mark.long  # 40 s (tests/conftest.py: started first)
def test_quick_reproduction_writes_a_report_and_reruns_from_stored_results(tmp_path, capsys, monkeypatch):
    out = tmp_path / "repro"
    assert main(["reproduce", "--quick", "--quiet", "--workers", "2", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    plan = Plan.quick()
    n8a = len(PROTOCOLS) * len(RATIOS) * len(plan.loads) * len(plan.seeds)
    n8b = len(PROTOCOLS) * len(APPS) * len(plan.seeds)
    assert f"fig8a: {n8a} points, 0 reused, {n8a} computed, 0 failed" in err
    assert f"fig8b: {n8b} points, 0 reused, {n8b} computed, 0 failed" in err
    assert f"fig8b_scale: {len(PROTOCOLS)} points, 0 reused, {len(PROTOCOLS)} computed, 0 failed" in err
    n_asic = 2 * len(RATIOS) * len(plan.loads) * len(plan.seeds)
    assert f"fig8a_asic: {n_asic} points, 0 reused, {n_asic} computed, 0 failed" in err
    n_abl = (len(ABLATION) - 2) * len(APPS) * len(plan.ablation_app_seeds)
    assert f"ablation_apps: {n_abl} points, 0 reused, {n_abl} computed, 0 failed" in err
    n_abl = len(ABLATION) * len(plan.ablation_loads) * len(plan.seeds)
    assert f"ablation_micro: {n_abl} points, 0 reused, {n_abl} computed, 0 failed" in err
    n_bg = len(BG_LOADS) * len(BG_FRAMES) * 2 * len(plan.seeds)
    assert f"background: {n_bg} points, 0 reused, {n_bg} computed, 0 failed" in err
    md = (out / "report.md").read_text()
    html = (out / "report.html").read_text()
    for section in ("Table 1", "Figure 8a", "Figure 8b", "Best protocol", "Ablation", "Background Ethernet frames",
                    "claims beside ours", "Related systems"):
        assert section in md and section in html
    assert "Date 20" in md
    # Every related system ran, and its own report is where the table says.
    from edm.related import REPRODUCED
    related = md.split("## Related systems")[1]
    for name, _module, _title in REPRODUCED:
        assert f"related/{name}/{name}.md" in related and (out / "related" / name / f"{name}.md").stat().st_size > 200
    for fig in ("fig8a", "fig8b"):
        assert (out / "figures" / f"{fig}.png").stat().st_size > 10_000
    # Every curve is in Figure 8a's tables and every protocol in Figure 8b's, with its run length.
    fig8a = md.split("## Figure 8a:")[1].split("## Figure 8b")[0]
    for name in CURVES:
        assert f"| {name} | {plan.loads[0]} |" in fig8a, name
    assert "edm-zq" not in md and "edm-hold" not in md
    fig8b = md.split("## Figure 8b")[1].split("## Best protocol")[0]
    for name in APP_CURVES:
        assert re.search(rf"\| hadoop \| {name} \| [^\n]* \| 0\.\d+ \| (yes|no|no, saturated) \|", fig8b), name
    assert "delivered_by_last_issue" in fig8b and "Run length" in fig8b
    # Distance from ideal: each curve's mean slowdown over ideal-srpt's, computed from the stored points.
    ideal = fig8b.split("### Distance from ideal")[1]
    for name in APP_CURVES:
        if name != "ideal-srpt":
            assert re.search(rf"\| {name} \| \d+\.\d+ \|", ideal), name
    assert "edm is " in ideal and "x ideal-srpt's mean slowdown" in ideal
    assert re.search(r"\| hadoop \| ideal-srpt \| [0-9.]+ \| [0-9.]+ \| 1(\.0+)? \|", fig8b)
    scale = fig8b.split(f"### At {plan.scale_nodes} nodes")[1].split("##")[0]
    for name in APP_CURVES:
        assert re.search(rf"\| {name} \| [0-9.]+ \| [0-9.]+ \|", scale), name
    assert "s of simulation" in scale
    assert "edm against the paper rules' alone latency" in fig8b and "| hadoop | " in fig8b.split("alone latency")[-1]
    # The best protocol of every mix and load, and of every workload, is one of the curves.
    best = md.split("## Best protocol")[1].split("## Ablation")[0]
    for label in RATIOS:
        for load in plan.loads:
            m = re.search(rf"\| {label} \| {load} \| ([a-z_0-9-]+)", best)
            assert m and m.group(1) in CURVES, (label, load)
    for w in APPS:
        m = re.search(rf"\| {w} \| ([a-z_0-9-]+) \|", best)
        assert m and m.group(1) in APP_CURVES, w
    # The ablation: one row per variant, each with every column filled.
    ablation = md.split("## Ablation")[1].split("## Background")[0]
    rows = [line for line in ablation.splitlines() if line.startswith("| ") and not line.startswith("| variant")]
    assert [r.split(" | ")[0][2:] for r in rows] == ABLATION
    assert all(" | - |" not in r for r in rows)
    assert all(f"64 B at {load}" in ablation for load in plan.ablation_loads)
    # EDM's rules (zero_queue = 1) never let memory data wait at the switch; the paper's do.
    assert re.search(r"\| edm \| EDM's rules \|.* \| 0(\.0)? \|$", rows[0]), rows[0]
    queueing = md.split("Switch queueing of memory data")[1].split("Where each protocol saturates")[0]
    for name in ("edm", "edm-3GHz"):
        for load in plan.loads:
            assert re.search(rf"\| {name} \| {load} \| 0(\.0)? \| 0(\.0)? \|", queueing), (name, load)
    assert re.search(r"\| edm-paper \| 0.8 \| [1-9]", queueing), queueing
    claims = md.split("claims beside ours")[1]
    assert len(re.findall(r"\| (yes|no) \|", claims)) == 25
    assert re.search(r"zero queuing at the switch for memory traffic \| edm, edm-3GHz \| FPGA clock: up to 0 units "
                     r"per run \(data or forwarded requests\) waited at a switch egress, at most 0.00 ns; 3 GHz "
                     r"scheduler: up to 0 units .* \| yes \|", claims)
    assert re.search(r"zero queuing at the switch for memory traffic \| edm-paper, edm-paper-3GHz \| .* \| no \|",
                     claims)
    for name in ("edm", "edm-paper"):
        assert re.search(rf"application MCT within 1.2-1.4x of ideal \| {name} \|", claims), name
    # Frames of every size and both modes are in the background table, beside the frame-free run.
    bg = md.split("Background Ethernet frames")[1].split("claims beside ours")[0]
    assert "| none | - |" in bg and "| 9000 B at 0.6 | no |" in bg and "| 1500 B at 0.3 | yes |" in bg
    # The README's headline tables, beside the report: the report's numbers, from the same stored points.
    from edm.reproduce import summary as rs

    summary = rs.read(out / rs.SUMMARY_FILE)
    assert sorted(summary) == ["fig8a", "fig8a-saturation", "fig8b", "protocol-overhead", "unloaded"]  # no RTL
    where = md.split("Where each protocol saturates")[1].split("##")[0]
    for curve, cell in zip(rs.FIG8B_COLUMNS, summary["fig8a-saturation"]["rows"][0][1:]):
        assert re.search(rf"\| {curve} \| [^|]+ \| [^|]+ \| {re.escape(cell)} \|", where), (curve, cell)
    mixed = md.split("### Figure 8a, mixed")[1].split("###")[0]
    for row, curve in zip(summary["fig8a"]["rows"], rs.FIG8A_ROWS):
        for load, cell in zip(summary["fig8a"]["columns"][1:], row[1:]):
            m = re.search(rf"\| {curve} \| {load} \| ([0-9.]+) \|.* \| (yes|SATURATED) \|", mixed)
            # (The report shows 4 significant digits, the README 2 decimals, or 1 past saturation.)
            saturated = m.group(2) == "SATURATED"
            assert cell.endswith(" (saturated)") == saturated, (curve, load)
            assert abs(float(cell.split(" ")[0]) - float(m.group(1))) <= (0.051 if saturated else 0.0051), (curve, load)
    shown = [ld for ld in plan.loads if ld <= rs.HEADLINE_MAX_LOAD]
    assert summary["fig8a"]["columns"][1:] == [f"{ld:g}" for ld in shown]
    assert summary["fig8a"]["inputs"]["points"] == 4 * len(shown) * len(plan.seeds)
    assert summary["fig8b"]["inputs"]["points"] == len(rs.FIG8B_COLUMNS) * len(APPS) * len(plan.seeds)
    edm_hadoop = float(re.search(r"\| hadoop \| edm \| ([0-9.]+) \|", fig8b).group(1))
    lo, _, hi = summary["fig8b"]["rows"][0][1].split(" ")[0].partition("–")
    assert float(lo) - 0.05 <= edm_hadoop <= float(hi or lo) + 0.05
    # A second run simulates nothing; `edm report` re-renders from the store alone.
    assert main(["reproduce", "--quick", "--quiet", "--workers", "2", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"fig8a: {n8a} points, {n8a} reused, 0 computed" in err
    assert all(", 0 computed," in line for line in err.splitlines() if " points, " in line), err
    assert all(f"related {name}: reused" in err for name, _m, _t in REPRODUCED), err
    (out / "report.md").unlink()
    assert main(["report", "--quick", "--out", str(out)]) == 0
    assert (out / "report.md").read_text().split("Wall time")[1][:20] != md.split("Wall time")[1][:20]
    assert "not in this report" in md  # the quick run does not simulate the RTL
    # With the RTL's Table 1 stored (here a stand-in breakdown), the report shows it beside the paper's.
    from edm import reproduce
    from edm.rtl import latency as rtl_latency

    monkeypatch.setattr(rtl_latency, "measure", lambda: _fake_rtl_breakdown(0))
    reproduce.measure_rtl_latency(out)
    assert main(["report", "--quick", "--out", str(out)]) == 0
    table1 = (out / "report.md").read_text().split("Figure 8a")[0]
    assert "EDM measured on our RTL" in table1 and "| 64 B read | 14 | 10 |" in table1
    rtl_row = rs.read(out / rs.SUMMARY_FILE)["rtl-latency"]["rows"][0]
    total = re.search(r"\| 64 B read \| 14 \| 10 \| [0-9.]+ \| [0-9.]+ \| ([0-9.]+) \|", table1).group(1)
    assert rtl_row[1] == f"{float(total):.1f}"
    # `edm report --readme` rewrites a README's marked tables from those stored results.
    readme = tmp_path / "README.md"
    readme.write_text("# x\n<!-- results:fig8a -->\n| old |\n<!-- /results -->\n<!-- results:rtl-latency -->\n"
                      "<!-- /results -->\n")
    assert main(["report", "--quick", "--out", str(out), "--readme", str(readme)]) == 0
    written = rs.read(tmp_path / "docs" / rs.SUMMARY_FILE)
    assert rs.disagreements(readme.read_text(), written) == [] and "| old |" not in readme.read_text()
    assert written["fig8a"]["rows"] == summary["fig8a"]["rows"] and written["rtl-latency"]["rows"][0] == rtl_row
    # That stand-in's rows do not map onto the simulator's steps: said, and no RTL-timing curves.
    assert "Figure 8 on our RTL's timing left out" in capsys.readouterr().err
    # With a breakdown that maps, a run adds Figure 8 on our RTL's timing (EDM's two protocols).
    monkeypatch.setattr(rtl_latency, "measure", _fitting_rtl_breakdown)
    (out / reproduce.RTL_LATENCY_FILE).unlink()
    reproduce.measure_rtl_latency(out)
    assert main(["reproduce", "--quick", "--quiet", "--workers", "2", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    n_rtl = 2 * len(plan.loads)
    assert f"fig8a_rtl: {n_rtl} points, 0 reused, {n_rtl} computed, 0 failed" in err
    assert f"fig8b_rtl: {2 * len(APPS)} points, 0 reused" in err
    rtl_part = (out / "report.md").read_text().split("## Figure 8 on our RTL's timing")[1].split("## Best")[0]
    assert "gen_req_cycles = 3" in rtl_part
    for name in ("edm", "edm-rtl", "edm-paper", "edm-paper-rtl"):
        assert f"| {name} | {plan.loads[0]} |" in rtl_part and f"| hadoop | {name} |" in rtl_part, name


def _fake_rtl_breakdown(extra: int) -> dict:
    rows = [["request", 4, 2], ["switch", 10, 8], ["serialization", 3, 0]]
    case = {"rows": rows, "total": 80 + extra, "links": 76, "dram": 2, "detail": {}}
    return {"link_cycles": 19, "cases": {"unloaded": {"read": case, "write": case},
                                         "mtu_frames": {"read": {**case, "total": 81 + extra},
                                                        "write": {**case, "total": 80 + extra}}}}


def _fitting_rtl_breakdown() -> dict:
    """A stand-in `edm rtl latency` breakdown whose rows map onto the simulator's steps."""
    from edm.sim import timing

    def case(kind, cycles, total):
        return {"rows": [[f"{n} ...", c, 1] for n, c in zip(timing._ROWS[kind], cycles)], "total": total,
                "links": 76, "dram": 1, "detail": {}}
    unloaded = {"read": case("read", [3, 2, 9, 3, 6, 2, 3, 3, 9, 3], 120),
                "write": case("write", [3, 2, 8, 3, 6, 2, 3, 3, 10, 9], 125)}
    return {"link_cycles": 19, "cases": {"unloaded": unloaded, "mtu_frames": unloaded}}


def test_rtl_table1_is_measured_once_and_reused_while_the_rtl_is_unchanged(tmp_path, monkeypatch, capsys):
    from edm import reproduce
    from edm.rtl import latency as rtl_latency

    calls = []
    monkeypatch.setattr(rtl_latency, "measure", lambda: calls.append(1) or _fake_rtl_breakdown(len(calls)))
    doc = reproduce.measure_rtl_latency(tmp_path)
    assert calls == [1] and doc["summary"]["read"]["stack_cycles"] == 14
    assert doc["summary"]["read"]["extra_cycles_with_frames"] == {"mtu_frames": 1}
    assert reproduce.measure_rtl_latency(tmp_path)["fingerprint"] == doc["fingerprint"] and calls == [1]
    assert "reused (RTL unchanged)" in capsys.readouterr().err
    # A changed source (here: a different fingerprint on disk) is measured again.
    stored = tmp_path / reproduce.RTL_LATENCY_FILE
    stored.write_text(stored.read_text().replace(doc["fingerprint"], "0" * 16))
    reproduce.measure_rtl_latency(tmp_path)
    assert calls == [1, 1]
    # A failing measurement (no Verilator, say) is reported and loses nothing.
    monkeypatch.setattr(rtl_latency, "measure", lambda: (_ for _ in ()).throw(SystemExit("verilator not found")))
    stored.unlink()
    assert reproduce.measure_rtl_latency(tmp_path) is None
    assert "RTL latency not measured: verilator not found" in capsys.readouterr().err


def test_report_without_results_names_what_is_missing(tmp_path, capsys):
    assert main(["report", "--quick", "--out", str(tmp_path)]) == 1
    assert "fig8a:" in capsys.readouterr().err
