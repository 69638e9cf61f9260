"""The README's headline tables are docs/results.json's, and docs/results.json is what the code computes.

docs/results.json is written by `edm report --readme` (edm.reproduce.summary) from
`edm reproduce`'s stored results; the README's tables between
`<!-- results:NAME -->` and `<!-- /results -->` are rendered from it.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from edm.reproduce import summary as rs
from edm.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SUMMARY = ROOT / "docs" / rs.SUMMARY_FILE


def test_every_marked_readme_table_is_the_summarys_and_every_summary_table_is_shown():
    text, tables = README.read_text(), rs.read(SUMMARY)
    marked = [m.group(1) for m in rs.MARKER.finditer(text)]
    assert rs.disagreements(text, tables) == [], "re-run `edm report --readme` (or fix docs/results.json)"
    assert sorted(marked) == sorted(tables), "a table of docs/results.json the README does not show, or the reverse"
    assert text.count("<!-- results:") == len(marked)
    assert not re.search(r"\b[0-9a-f]{7,40}\b", SUMMARY.read_text()), "docs/ holds commit ids only in CHANGELOG"
    for name, entry in tables.items():
        assert entry["command"].startswith("edm ") and re.fullmatch(r"20\d\d-\d\d-\d\d", entry["date"]), name
        assert entry["inputs"] and all(len(row) == len(entry["columns"]) for row in entry["rows"]), name


def test_the_readme_fits_one_screen_of_tables():
    text = README.read_text()
    assert len(text.splitlines()) <= 200
    cells = [c for line in text.splitlines() if line.startswith("|") for c in line.strip("|").split(" | ")]
    assert cells and max(len(c) for c in cells) <= 300


@pytest.mark.parametrize("name, make", [("protocol-overhead", rs.protocol_overhead_entry),
                                        ("unloaded", rs.unloaded_entry)])
def test_tables_cheap_to_recompute_are_what_the_code_computes_now(name, make):
    stored, now = rs.read(SUMMARY)[name], make()
    assert (stored["columns"], stored["rows"]) == (now["columns"], now["rows"]), \
        f"{name}: the code computes other numbers now; re-run `edm report --readme`"


def test_rewriting_replaces_only_marked_tables_and_refuses_a_broken_marker():
    entry = {"columns": ["", "a"], "rows": [["x", "1"]]}
    text = "intro\n<!-- results:t -->\n| old |\n<!-- /results -->\nafter | 2 |\n"
    assert rs.rewrite_readme(text, {"t": entry}) == "intro\n<!-- results:t -->\n| | a |\n|---|---|\n| x | 1 |\n" \
                                                    "<!-- /results -->\nafter | 2 |\n"
    assert rs.disagreements(text, {"t": entry}) == ["t"]
    with pytest.raises(rs.SummaryError, match="'u' is marked but not in the results summary"):
        rs.rewrite_readme("<!-- results:u -->\n<!-- /results -->\n", {"t": entry})
    with pytest.raises(rs.SummaryError, match="has no '<!-- /results -->'"):
        rs.rewrite_readme("<!-- results:t -->\n| old |\n", {"t": entry})


def test_report_readme_keeps_what_it_cannot_compute_and_rewrites_the_rest(tmp_path, capsys):
    """With no stored results, `edm report --readme` recomputes the tables that need none and keeps the others."""
    (tmp_path / "docs").mkdir()
    shutil.copy(SUMMARY, tmp_path / "docs" / rs.SUMMARY_FILE)
    readme = tmp_path / "README.md"
    text = README.read_text()
    old = rs.read(SUMMARY)["unloaded"]
    readme.write_text(text.replace(rs.render(old), rs.render({**old, "rows": [["stale"] * len(old["columns"])]})))
    assert main(["report", "--out", str(tmp_path / "none"), "--readme", str(readme)]) == 0
    assert readme.read_text() == text
    assert "kept from before: " in capsys.readouterr().out
    tables = json.loads((tmp_path / "docs" / rs.SUMMARY_FILE).read_text())["tables"]
    assert tables["unloaded"]["rows"] == old["rows"] and tables.get("fig8a") == rs.read(SUMMARY).get("fig8a")
    # A README without a marker's end is refused with one line naming it, and nothing is written.
    readme.write_text("<!-- results:unloaded -->\n")
    assert main(["report", "--out", str(tmp_path / "none"), "--readme", str(readme)]) == 2
    assert "README.md: a '<!-- results:NAME -->' marker has no" in capsys.readouterr().err
    assert readme.read_text() == "<!-- results:unloaded -->\n"


def test_commit_ids_live_only_in_the_changelog():
    """Design documents describe the design as it is: history (commit ids) goes to docs/CHANGELOG.md."""
    commit = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")
    docs = [README, *sorted(README.parent.joinpath("docs").glob("*.md"))]
    found = [f"{p.name}:{n}: {m.group()}" for p in docs if p.name != "CHANGELOG.md"
             for n, line in enumerate(p.read_text().splitlines(), 1) for m in commit.finditer(line)]
    assert not found, "commit ids outside docs/CHANGELOG.md:\n" + "\n".join(found)


# The two design documents that grew into lab notebooks before (issue #39): a
# design document states the design, its invariants and its current figures;
# history goes to docs/CHANGELOG.md and a topic that outgrows its document
# gets its own (docs/scheduler.md came out of docs/hardware.md).
DOC_LINE_LIMITS = {"hardware.md": 700, "faults.md": 700}


def test_design_documents_stay_within_their_length():
    docs = README.parent / "docs"
    over = {name: n for name, limit in DOC_LINE_LIMITS.items()
            if (n := len((docs / name).read_text().splitlines())) > limit}
    assert not over, f"design documents over their line limit {DOC_LINE_LIMITS}: {over}"
