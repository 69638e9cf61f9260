"""Closed-loop applications from Python (Gao et al.; python/edm/related/closed_loop.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from edm import sim
from edm.cli import main
from edm.related import closed_loop
from edm.sim.config import ConfigError

LOOP = {"nodes": 6, "memory_nodes": 2, "message_bytes": 4096, "messages": 800, "closed_loop_threads": 3,
        "compute_ns": 2000.0, "compute_distribution": "exponential"}


def test_a_closed_loop_issues_each_threads_next_message_after_its_last_completes():
    r = sim.run(LOOP)
    df, a = r.messages, r.summary["application"]
    assert a["ops"] == r.summary["completed"] == 800 and a["threads"] == 4 * 3
    assert np.all(np.diff(df["issue_ps"].to_numpy(np.int64)) >= 0), "sorted by issue time"
    # At most `threads` messages of a node in flight at any issue.
    for _, node in df.groupby("requester"):
        issue, done = node["issue_ps"].to_numpy(np.int64), node["complete_ps"].to_numpy(np.int64)
        in_flight = [(np.sum((issue <= t) & (done > t))) for t in issue]
        assert max(in_flight) <= 3
    # Mean thread time on this fabric: compute plus the measured latencies.
    assert a["mean_thread_time_ns"] * a["threads"] == pytest.approx(
        (a["mean_compute_ns"] + a["mean_latency_ns"]) * a["ops"], rel=1e-9)
    assert 0.9 < a["little_threads"] / a["threads"] < 1.1
    assert r.summary["offered_load_source"] == "measured", "load does not apply to a closed loop"
    json.dumps(r.summary)


def test_the_ideal_fabric_gives_the_closed_form_and_a_slower_one_degrades_more():
    fixed = {**LOOP, "compute_distribution": "fixed", "ideal_fabric": "fixed", "ideal_latency_ns": 1000.0,
             "ideal_gbps": 40.0}
    a = sim.run(fixed).summary["application"]
    per_op = 1000.0 + 4096 * 8 / 40.0
    assert a["degradation_vs_local"] == pytest.approx(per_op / 2000.0, rel=1e-9)
    assert a["degradation_vs_unloaded"] == pytest.approx(0.0, abs=1e-12)
    slower = sim.run({**fixed, "ideal_latency_ns": 3000.0}).summary["application"]
    assert slower["degradation_vs_local"] > a["degradation_vs_local"]


def test_closed_loop_options_are_checked():
    with pytest.raises(ConfigError, match="closed_loop_threads"):
        sim.run({**LOOP, "closed_loop_threads": -1})
    with pytest.raises(ConfigError, match="ideal_gbps"):
        sim.run({**LOOP, "ideal_gbps": 40.0})


def test_the_budget_frontier_interpolates_between_swept_latencies():
    rows = [{"app": "a", "gbps": 40, "latency_us": l, "vs_local": d} for l, d in ((1, 0.01), (3, 0.03), (10, 0.10))]
    rows += [{"app": "a", "gbps": 10, "latency_us": 1, "vs_local": 0.06}]
    frontier = {r["bandwidth"]: r["latency budget for 5 %"] for r in closed_loop.budget_frontier(rows)}
    assert frontier["40 Gb/s"] == "5.00 µs"
    assert frontier["10 Gb/s"].startswith("none")


def test_the_quick_experiment_writes_its_report(tmp_path, capsys, monkeypatch):
    small = closed_loop.Plan(messages={"page": 240, "hadoop": 120}, latencies_ns=[1000, 5000], rates_gbps=[40, 0],
                             links_gbps=[100], protocols=["edm", "pfabric"], memory_bound_compute_ns=20_000.0)
    monkeypatch.setattr(closed_loop.Plan, "quick_plan", staticmethod(lambda: small))
    assert main(["related", "closed-loop", "--quick", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "closed_loop.md").read_text()
    assert "Gao's findings beside ours" in text and "| page, calibrated | 100 | edm |" in text
    assert (tmp_path / "figures" / "closed_loop_budget.png").stat().st_size > 0
