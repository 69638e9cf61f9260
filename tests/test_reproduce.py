"""edm reproduce --quick: the whole evaluation pipeline, small (Table 1, Fig. 8a, 8b, claims)."""

from __future__ import annotations

import re

from edm.cli import main
from edm.reproduce import APPS, BG_FRAMES, BG_LOADS, RATIOS, Plan
from edm.sim.config import PROTOCOLS


def test_quick_reproduction_writes_a_report_and_reruns_from_stored_results(tmp_path, capsys, monkeypatch):
    out = tmp_path / "repro"
    assert main(["reproduce", "--quick", "--quiet", "--workers", "2", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    plan = Plan.quick()
    n8a = len(PROTOCOLS) * len(RATIOS) * len(plan.loads) * len(plan.seeds)
    n8b = len(PROTOCOLS) * len(APPS) * len(plan.seeds)
    assert f"fig8a: {n8a} points, 0 reused, {n8a} computed, 0 failed" in err
    assert f"fig8b: {n8b} points, 0 reused, {n8b} computed, 0 failed" in err
    n_hold = len(APPS) * len(plan.seeds)
    assert f"fig8b_hold: {n_hold} points, 0 reused, {n_hold} computed, 0 failed" in err
    assert f"fig8b_zq: {n_hold} points, 0 reused, {n_hold} computed, 0 failed" in err
    n_zq = len(RATIOS) * len(plan.loads) * len(plan.seeds)
    assert f"fig8a_zq: {n_zq} points, 0 reused, {n_zq} computed, 0 failed" in err
    assert f"fig8a_zq_asic: {n_zq} points, 0 reused, {n_zq} computed, 0 failed" in err
    n_bg = len(BG_LOADS) * len(BG_FRAMES) * 2 * len(plan.seeds)
    assert f"background: {n_bg} points, 0 reused, {n_bg} computed, 0 failed" in err
    md = (out / "report.md").read_text()
    html = (out / "report.html").read_text()
    for section in ("Table 1", "Figure 8a", "Figure 8b", "Background Ethernet frames", "claims beside ours"):
        assert section in md and section in html
    for fig in ("fig8a", "fig8b"):
        assert (out / "figures" / f"{fig}.png").stat().st_size > 10_000
    # Every protocol appears in the Fig. 8b table, and every claim has a verdict.
    for proto in [*PROTOCOLS, "edm-hold", "edm-zq"]:
        assert f"| {proto} |" in md
    claims = md.split("claims beside ours")[1]
    assert len(re.findall(r"\| (yes|no) \|", claims)) == 22
    # Memory data never waited at the switch with the zero-queue rules (and the claim says so).
    assert re.search(r"EDM with our zero-queue rules\): zero queuing at the switch for memory traffic \| "
                     r"FPGA clock: up to 0 units per run \(data or forwarded requests\) waited at a switch egress, "
                     r"at most 0.00 ns; 3 GHz scheduler: up to 0 units .* \| yes \|", claims)
    # Its application slowdowns also against the paper rules' alone latency.
    fig8b = md.split("## Figure 8b")[1].split("## Background Ethernet frames")[0]
    assert "Against the paper rules' alone latency" in fig8b and "| hadoop |" in fig8b
    queueing = md.split("Switch queueing of memory data")[1].split("Where each protocol saturates")[0]
    assert re.search(r"\| edm-zq \| 0.8 \| 0(\.0)? \| 0(\.0)? \|", queueing), queueing
    # Frames of every size and both modes are in the background table, beside the frame-free run.
    bg = md.split("Background Ethernet frames")[1].split("claims beside ours")[0]
    assert "| none | - |" in bg and "| 9000 B at 0.6 | no |" in bg and "| 1500 B at 0.3 | yes |" in bg
    # A second run simulates nothing; `edm report` re-renders from the store alone.
    assert main(["reproduce", "--quick", "--quiet", "--workers", "2", "--out", str(out)]) == 0
    assert f"fig8a: {n8a} points, {n8a} reused, 0 computed" in capsys.readouterr().err
    (out / "report.md").unlink()
    assert main(["report", "--quick", "--out", str(out)]) == 0
    assert (out / "report.md").read_text().split("Wall time")[1][:20] != md.split("Wall time")[1][:20]
    assert "not in this report" in md  # the quick run does not simulate the RTL
    # With the RTL's Table 1 stored (here a stand-in breakdown), the report shows it beside the paper's.
    from edm import reproduce, rtl_latency

    monkeypatch.setattr(rtl_latency, "measure", lambda: _fake_rtl_breakdown(0))
    reproduce.measure_rtl_latency(out)
    assert main(["report", "--quick", "--out", str(out)]) == 0
    table1 = (out / "report.md").read_text().split("Figure 8a")[0]
    assert "EDM measured on our RTL" in table1 and "| 64 B read | 14 | 10 |" in table1


def _fake_rtl_breakdown(extra: int) -> dict:
    rows = [["request", 4, 2], ["switch", 10, 8], ["serialization", 3, 0]]
    case = {"rows": rows, "total": 80 + extra, "links": 76, "dram": 2, "detail": {}}
    return {"link_cycles": 19, "cases": {"unloaded": {"read": case, "write": case},
                                         "mtu_frames": {"read": {**case, "total": 81 + extra},
                                                        "write": {**case, "total": 80 + extra}}}}


def test_rtl_table1_is_measured_once_and_reused_while_the_rtl_is_unchanged(tmp_path, monkeypatch, capsys):
    from edm import reproduce, rtl_latency

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
