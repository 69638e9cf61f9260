"""The README's headline tables, generated from results: ``results.json`` and the
README between markers.

``edm reproduce`` and ``edm report`` write ``results.json`` beside the report:
every headline table the README shows, each with the command that produced it,
the date and the identity of its inputs (the stored points it was
computed from, or the simulator code for a table computed without a sweep).
Its numbers are computed by the functions the report uses (``unloaded_table``,
``fig8a_tables``, ``fig8b_table``, the stored ``edm rtl latency``), never copied.

``edm report --readme`` builds the same summary from the stored results (each
table whose points are all stored; a table whose points are not keeps its entry
in ``docs/results.json``, with its own date and inputs), writes
``docs/results.json`` and rewrites the README's tables between

    <!-- results:NAME -->
    | ... generated table ... |
    <!-- /results -->

tests/test_readme_results.py fails when the README and ``docs/results.json``
disagree, and when a table that is cheap to recompute (protocol overhead,
unloaded latency) disagrees with what the code computes now.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from edm.reproduce.claims import _range, fig8a_tables, fig8b_table, label_curves, saturated, saturated_from
from edm.reproduce.plan import APPS, EDM_CURVES, RATIOS, Plan
from edm.report import markdown_table
from edm.sweep import ResultStore, Sweep, code_fingerprint

README = Path(__file__).resolve().parents[3] / "README.md"
SUMMARY_FILE = "results.json"  # beside the report; committed as docs/results.json
SUMMARY_FORMAT = 1
MARKER = re.compile(r"<!-- results:([a-z0-9-]+) -->\n(.*?)<!-- /results -->", re.S)
HEADLINE_MAX_LOAD = 0.7  # Figure 8a's README columns: the loads up to here (0.9 is past every curve)

# The README's unloaded-latency columns: protocol, header (ascending latency).
UNLOADED_COLUMNS = {"edm": "EDM", "cxl": "CXL", "pfabric": "pFabric", "ird": "IRD", "pfc_dcqcn": "PFC+DCQCN",
                    "fastpass": "Fastpass", "dctcp": "DCTCP"}
# Figure 8a's README rows: curve, label.
FIG8A_ROWS = {"edm": "EDM, ours, 2.56 ns scheduler clock (FPGA, Table 1)", "edm-3GHz": "EDM, ours, 3 GHz scheduler (§4.1)",
              "edm-paper": "EDM, paper's rules, 2.56 ns", "edm-paper-3GHz": "EDM, paper's rules, 3 GHz"}
FIG8A_PAPER = "≤ 1.3"  # §4.3: EDM's mean latency stays within 1.3x of unloaded at every load
# Figure 8b's and the saturation table's README columns: curve, header; and the paper's
# words per curve (§4.3, Figure 8b).
FIG8B_COLUMNS = {"edm": "EDM, ours", "edm-paper": "EDM, paper's rules", "pfabric": "pFabric", "ird": "IRD",
                 "dctcp": "DCTCP", "pfc_dcqcn": "PFC+DCQCN", "fastpass": "Fastpass", "cxl": "CXL"}
FIG8B_PAPER = {"edm": "1.2–1.4", "edm-paper": "1.2–1.4", "pfabric": "worse than EDM", "cxl": "up to 8× EDM"}


class SummaryError(ValueError):
    """The README or a summary cannot be read or rewritten (names the file and table)."""


# ------------------------------------------------------------------ entries

def _entry(command: str, columns: list[str], rows: list[list[str]], inputs: dict[str, Any]) -> dict[str, Any]:
    return {"command": command, "date": time.strftime("%Y-%m-%d", time.gmtime()), "inputs": inputs,
            "columns": columns, "rows": rows}


def _hash(hex_digest: str) -> str:
    """A content hash as recorded: upper case, so that docs/ holds no lowercase hex run,
    which the docs' check reads as a commit id (those belong in docs/CHANGELOG.md)."""
    return hex_digest.upper()


def _digest(keys: list[str]) -> str:
    return _hash(hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()[:16])


def _stored_points(sweep: Sweep, keep: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]] | None:
    """The stored points of `sweep` that `keep` selects, or None when one is missing."""
    store = ResultStore(sweep.out)
    docs = []
    for config in sweep.points():
        if keep(config):
            doc = store.load(sweep.runner, config)
            if doc is None:
                return None
            docs.append(doc)
    return docs


def _points_identity(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"points": len(docs), "point_keys_sha256": _digest([d["key"] for d in docs]),
            "simulator_code": sorted({_hash(d["code"]) for d in docs})}


def protocol_overhead_entry() -> dict[str, Any]:
    from edm.protocol.cli import overhead_rows  # noqa: PLC0415

    columns, rows = overhead_rows()
    return _entry("edm protocol overhead", columns, rows, {"simulator_code": _hash(code_fingerprint())})


def unloaded_entry() -> dict[str, Any]:
    from edm.sim.unloaded import unloaded_table  # noqa: PLC0415

    by = {r["protocol"]: r for r in unloaded_table()}
    rows = []
    for op in ("read", "write"):
        rows.append([f"{op}, ours (ns)", *(f"{by[p][f'{op}_ns']:.0f}" for p in UNLOADED_COLUMNS)])
        rows.append([f"{op}, paper Table 1 (ns)", *("–" if by[p][f"{op}_table1_ns"] is None
                                                   else f"{by[p][f'{op}_table1_ns']:.4g}" for p in UNLOADED_COLUMNS)])
    return _entry("edm unloaded", ["", *UNLOADED_COLUMNS.values()], rows, {"simulator_code": _hash(code_fingerprint())})


def rtl_latency_entry(rtl: dict[str, Any]) -> dict[str, Any]:
    """Table 1 on our RTL, from `edm reproduce`'s stored `edm rtl latency`."""
    s = rtl["summary"]
    rows = [["ours, RTL (ns)", *(f"{s[k]['total_ns']:.1f}" for k in ("read", "write"))],
            ["paper, FPGA (ns)", *(f"{s[k]['paper_total_ns']:.4g}" for k in ("read", "write"))],
            ["stack cycles, ours / paper", *(f"{s[k]['stack_cycles']} / {s[k]['paper_stack_cycles']}"
                                             for k in ("read", "write"))]]
    return _entry(rtl.get("command", "edm rtl latency"), ["", "64 B read", "64 B write"], rows,
                  {"rtl_sources": _hash(rtl["fingerprint"])})


def fig8a_entry(out: Path, plan: Plan, command: str) -> dict[str, Any] | None:
    """EDM's mean slowdown, mixed 64 B traffic, per load; None while a point is not stored."""
    loads = [ld for ld in plan.loads if ld <= HEADLINE_MAX_LOAD]
    sweeps = plan.sweeps(out)
    docs: list[dict[str, Any]] = []
    for name in ("fig8a", "fig8a_asic"):
        got = _stored_points(sweeps[name], lambda c: c["protocol"] in EDM_CURVES
                             and c["write_ratio"] == RATIOS["mixed"] and c["load"] in loads)
        if got is None:
            return None
        docs += got
    t = fig8a_tables(label_curves(docs))["mixed"]

    def cell(v: dict[str, tuple[float, float]]) -> str:
        m = v["mean_slowdown"][0]
        return f"{m:.1f} (saturated)" if saturated(v) else f"{m:.2f}"

    rows = [[label, *(cell(t[(c, ld)]) for ld in loads)] for c, label in FIG8A_ROWS.items()]
    rows.append(["paper", *([FIG8A_PAPER] * len(loads))])
    return _entry(command, ["load", *(f"{ld:g}" for ld in loads)], rows, _points_identity(docs))


def saturation_entry(out: Path, plan: Plan, command: str) -> dict[str, Any] | None:
    """The load from which each protocol is saturated, mixed 64 B traffic (Figure 8a's
    points; the report's "Where each protocol saturates"); None while a point is missing."""
    docs = _stored_points(plan.sweeps(out)["fig8a"], lambda c: c["protocol"] in FIG8B_COLUMNS
                          and c["write_ratio"] == RATIOS["mixed"])
    if docs is None:
        return None
    t = fig8a_tables(label_curves(docs))["mixed"]
    cells = [f"{first:g}" if (first := saturated_from(t, c)) is not None else f"> {max(plan.loads):g}"
             for c in FIG8B_COLUMNS]
    return _entry(command, ["", *FIG8B_COLUMNS.values()], [["saturated from load", *cells]], _points_identity(docs))


def fig8b_entry(out: Path, plan: Plan, command: str) -> dict[str, Any] | None:
    """Mean and p99 slowdown over the application workloads, range per curve; None while a point is missing."""
    docs = _stored_points(plan.sweeps(out)["fig8b"], lambda c: c["protocol"] in FIG8B_COLUMNS)
    if docs is None:
        return None
    t = fig8b_table(label_curves(docs))

    def cells(metric: str, mark_saturated: bool) -> list[str]:
        out = []
        for c in FIG8B_COLUMNS:
            vals = [t[(w, c)][metric][0] for w in APPS]
            text = _range(vals).replace("-", "–")
            if mark_saturated and any(saturated(t[(w, c)]) for w in APPS):
                text += " (saturated)"
            out.append(text)
        return out

    rows = [["ours", *cells("mean_slowdown", True)], ["p99", *cells("p99_slowdown", False)],
            ["paper", *(FIG8B_PAPER.get(c, "worse") for c in FIG8B_COLUMNS)]]
    return _entry(command, ["", *FIG8B_COLUMNS.values()], rows, _points_identity(docs))


def build(out: Path, plan: Plan, command: str, rtl: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """Every headline table that the stored results (in `out`) and the code give now."""
    tables = {"protocol-overhead": protocol_overhead_entry(), "unloaded": unloaded_entry()}
    if rtl is not None:
        tables["rtl-latency"] = rtl_latency_entry(rtl)
    for name, make in (("fig8a", fig8a_entry), ("fig8a-saturation", saturation_entry), ("fig8b", fig8b_entry)):
        entry = make(out, plan, command)
        if entry is not None:
            tables[name] = entry
    return tables


# ------------------------------------------------------------------ files

def read(path: Path) -> dict[str, dict[str, Any]]:
    """The tables of a summary file ({} when there is none)."""
    if not path.exists():
        return {}
    try:
        doc = json.loads(path.read_text())
        if doc.get("format") != SUMMARY_FORMAT or not isinstance(doc.get("tables"), dict):
            raise ValueError(f"format is not {SUMMARY_FORMAT}")
    except ValueError as e:
        raise SummaryError(f"{path}: not a results summary ({e})") from e
    return doc["tables"]


def write(path: Path, tables: dict[str, dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"format": SUMMARY_FORMAT, "tables": dict(sorted(tables.items()))},
                              indent=1, ensure_ascii=False) + "\n")
    tmp.replace(path)


def render(entry: dict[str, Any]) -> str:
    """A table entry as the Markdown the README shows."""
    return markdown_table(entry["columns"], entry["rows"]) + "\n"


def rewrite_readme(text: str, tables: dict[str, dict[str, Any]], name: str = "README.md") -> str:
    """`text` with every marked table replaced by its entry's rendering."""
    unknown = [m.group(1) for m in MARKER.finditer(text) if m.group(1) not in tables]
    if unknown:
        raise SummaryError(f"{name}: table {unknown[0]!r} is marked but not in the results summary")
    if text.count("<!-- results:") != len(MARKER.findall(text)):
        raise SummaryError(f"{name}: a '<!-- results:NAME -->' marker has no '<!-- /results -->' after it")
    return MARKER.sub(lambda m: f"<!-- results:{m.group(1)} -->\n{render(tables[m.group(1)])}<!-- /results -->",
                      text)


def disagreements(text: str, tables: dict[str, dict[str, Any]]) -> list[str]:
    """The README's marked tables that differ from the summary's rendering (by name)."""
    return [m.group(1) for m in MARKER.finditer(text)
            if m.group(1) not in tables or m.group(2) != render(tables[m.group(1)])]


def install(readme: Path, built: dict[str, dict[str, Any]]) -> tuple[Path, list[str]]:
    """Merges `built` into docs/results.json beside `readme` and rewrites the README's
    tables from it; returns the summary's path and the names of the tables kept from before."""
    path = readme.parent / "docs" / SUMMARY_FILE
    tables = {**read(path), **built}
    try:
        text = readme.read_text()
    except OSError as e:
        raise SummaryError(f"{readme}: {e.strerror}") from e
    new = rewrite_readme(text, tables, str(readme))
    write(path, tables)
    readme.write_text(new)
    return path, sorted(set(tables) - set(built))

