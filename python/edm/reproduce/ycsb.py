"""The paper's Figures 6 and 7 (YCSB over a key-value store in remote memory) for
``edm reproduce``: the runs of ``edm ycsb --figure 6`` and ``--figure 7`` on the
modelled fabrics (EDM, RoCEv2, CXL; docs/ycsb.md), stored in ``ycsb.json`` in the
result folder and reused while the code they depend on is unchanged (a
fingerprint of ``python/edm/ycsb``, the protocol constants and the codec).

Every read of every run is checked against the client's dict (edm.ycsb.store):
a run whose store disagrees raises, it is never reported.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from edm.reproduce import stored as stored_results

YCSB_FILE = "ycsb.json"
REQUESTS = {"full": 20_000, "quick": 2_000}
SEED = 1
# The paper's claims (§4.2.2): Figure 6, EDM's throughput over RoCEv2's; Figure 7,
# EDM's mean latency at most this many times CXL's.
PAPER_FIG6_RATIO = 2.7
PAPER_FIG7_CXL_RATIO = 1.3


def _fingerprint() -> str:
    root = Path(__file__).resolve().parents[1]
    files = sorted((root / "ycsb").glob("*.py")) + [root / "protocol" / "__init__.py", root / "protocol" / "codec.py"]
    return stored_results.fingerprint(files, lambda f: f.name)


def stored(out: Path) -> dict[str, Any] | None:
    return stored_results.read_json(out / YCSB_FILE, "by the next run")


def measure(out: Path, quick: bool) -> dict[str, Any]:
    """Runs (or reuses) both figures' presets; returns the stored document."""
    from edm.ycsb.cli import FIGURE_PRESETS  # noqa: PLC0415
    from edm.ycsb.run import run_model  # noqa: PLC0415

    requests = REQUESTS["quick" if quick else "full"]
    fingerprint = _fingerprint()
    doc = stored(out)
    if doc is not None and doc.get("fingerprint") == fingerprint and doc.get("requests") == requests:
        print("ycsb: reused (code unchanged)", file=sys.stderr)
        return doc
    start = time.perf_counter()
    figures: dict[str, list[dict[str, Any]]] = {}
    for fig in ("6", "7"):
        p = FIGURE_PRESETS[fig]
        runs = [(w, f, k, x) for w in p["workload"] for f in p["fabric"] for k in p["outstanding"]
                for x in p["local_fraction"]]
        figures[fig] = []
        for i, (w, f, k, x) in enumerate(runs, 1):
            r = run_model(w, f, operations=requests, outstanding=k, seed=SEED, local_fraction=x)
            r.update(outstanding=k, local_fraction=x)
            figures[fig].append(r)
            print(f"ycsb figure {fig} [{i}/{len(runs)}]: workload {w} on {f}, {k} in flight, local {x:g}",
                  file=sys.stderr)
    doc = {"fingerprint": fingerprint, "requests": requests, "seed": SEED,
           "command": f"edm ycsb --figure 6|7 --requests {requests} --seed {SEED}",
           "figures": figures, "wall_seconds": time.perf_counter() - start}
    out.mkdir(parents=True, exist_ok=True)
    tmp = (out / YCSB_FILE).with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    tmp.replace(out / YCSB_FILE)
    print(f"ycsb: {doc['wall_seconds']:.0f} s", file=sys.stderr)
    return doc


def _find(runs: list[dict[str, Any]], **match: Any) -> dict[str, Any]:
    for r in runs:
        if all(r.get(k) == v for k, v in match.items()):
            return r
    raise KeyError(match)


def fig6_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Per workload and requests in flight: EDM's and RoCEv2's requests/s and their ratio."""
    runs = doc["figures"]["6"]
    rows = []
    for w in sorted({r["workload"] for r in runs}):
        for k in sorted({r["outstanding"] for r in runs}):
            edm, roce = _find(runs, workload=w, fabric="edm", outstanding=k), \
                _find(runs, workload=w, fabric="roce", outstanding=k)
            rows.append({"workload": w.upper(), "in flight": k,
                         "EDM M req/s": f"{edm['requests_per_second'] / 1e6:.3f}",
                         "RoCEv2 M req/s": f"{roce['requests_per_second'] / 1e6:.3f}",
                         "EDM / RoCEv2": f"{edm['requests_per_second'] / roce['requests_per_second']:.2f}",
                         "paper": f"≈ {PAPER_FIG6_RATIO:g}"})
    return rows


def fig7_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Per local share: mean latency and its standard deviation, EDM, CXL and RoCEv2."""
    runs = doc["figures"]["7"]
    rows = []
    for x in sorted({r["local_fraction"] for r in runs}):
        row: dict[str, Any] = {"local share": f"{x:g}"}
        for f, name in (("edm", "EDM"), ("cxl", "CXL"), ("roce", "RoCEv2")):
            r = _find(runs, fabric=f, local_fraction=x)
            row[f"{name} mean ns (std)"] = f"{r['mean_ns']:.0f} ({r['std_ns']:.0f})"
        edm, cxl = _find(runs, fabric="edm", local_fraction=x), _find(runs, fabric="cxl", local_fraction=x)
        row["EDM / CXL"] = f"{edm['mean_ns'] / cxl['mean_ns']:.2f}"
        row["paper"] = f"≤ {PAPER_FIG7_CXL_RATIO:g}"
        rows.append(row)
    return rows


def section(r: Any, doc: dict[str, Any] | None) -> None:
    """The report's YCSB section (r: an edm.report.Report)."""
    r.heading("Figures 6 and 7: YCSB over a key-value store in remote memory")
    if doc is None:
        r.paragraph("Not in this report: `edm reproduce` runs it into `ycsb.json`; on its own, "
                    "`edm ycsb --figure 6` and `edm ycsb --figure 7`.")
        return
    r.paragraph(
        f"`{doc['command']}` (one compute node, one memory node, one switch, 25 GbE; {doc['requests']} YCSB "
        "operations per run on a real hash-indexed store whose every read is checked against a Python dict; "
        "request costs from the protocol definition and Table 1; models and their arithmetic in docs/ycsb.md). "
        "Figure 6: requests per second, EDM against RoCEv2, with one request in flight (latency-bound) and 64 "
        "(the compute node's link is the limit); the paper does not say how many were in flight.")
    r.table(fig6_rows(doc))
    runs7 = doc["figures"]["7"]
    remote = {f: _find(runs7, fabric=f, local_fraction=0.0)["mean_ns"] for f in ("edm", "cxl", "roce")}
    r.paragraph(
        "Figure 7: workload A with a share of the objects in local DRAM (80 ns, our assumption), mean latency and "
        f"standard deviation per request. All objects remote, EDM's mean is {remote['edm'] / remote['cxl']:.2f}x "
        f"our CXL model's and {remote['edm'] / remote['roce']:.2f}x RoCEv2's (paper: EDM within "
        f"{PAPER_FIG7_CXL_RATIO:g}x of CXL and far below RDMA). Our CXL model (68 B flits, a 100 ns switch hop) "
        "is not checked against Pond's own figures (docs/ycsb.md).")
    r.table(fig7_rows(doc))
