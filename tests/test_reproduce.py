"""edm reproduce --quick: the whole evaluation pipeline, small (Table 1, Fig. 8a, 8b, claims)."""

from __future__ import annotations

import re

from edm.cli import main
from edm.reproduce import APPS, BG_FRAMES, BG_LOADS, RATIOS, Plan
from edm.sim.config import PROTOCOLS


def test_quick_reproduction_writes_a_report_and_reruns_from_stored_results(tmp_path, capsys):
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
    n_bg = len(BG_LOADS) * len(BG_FRAMES) * 2 * len(plan.seeds)
    assert f"background: {n_bg} points, 0 reused, {n_bg} computed, 0 failed" in err
    md = (out / "report.md").read_text()
    html = (out / "report.html").read_text()
    for section in ("Table 1", "Figure 8a", "Figure 8b", "Background Ethernet frames", "claims beside ours"):
        assert section in md and section in html
    for fig in ("fig8a", "fig8b"):
        assert (out / "figures" / f"{fig}.png").stat().st_size > 10_000
    # Every protocol appears in the Fig. 8b table, and every claim has a verdict.
    for proto in [*PROTOCOLS, "edm-hold"]:
        assert f"| {proto} |" in md
    claims = md.split("claims beside ours")[1]
    assert len(re.findall(r"\| (yes|no) \|", claims)) == 13
    # Frames of every size and both modes are in the background table, beside the frame-free run.
    bg = md.split("Background Ethernet frames")[1].split("claims beside ours")[0]
    assert "| none | - |" in bg and "| 9000 B at 0.6 | no |" in bg and "| 1500 B at 0.3 | yes |" in bg
    # A second run simulates nothing; `edm report` re-renders from the store alone.
    assert main(["reproduce", "--quick", "--quiet", "--workers", "2", "--out", str(out)]) == 0
    assert f"fig8a: {n8a} points, {n8a} reused, 0 computed" in capsys.readouterr().err
    (out / "report.md").unlink()
    assert main(["report", "--quick", "--out", str(out)]) == 0
    assert (out / "report.md").read_text().split("Wall time")[1][:20] != md.split("Wall time")[1][:20]


def test_report_without_results_names_what_is_missing(tmp_path, capsys):
    assert main(["report", "--quick", "--out", str(tmp_path)]) == 1
    assert "fig8a:" in capsys.readouterr().err
