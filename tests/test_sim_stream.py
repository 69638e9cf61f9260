"""Records streamed to Parquet (edm.sim.stream): the same table and summary as
an in-memory run, in bounded batches."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from edm import sim
from edm.cli import main
from edm.sim import stream
from edm.sim.config import ConfigError

# Figures that measure the run, not its results; and the two counters of
# what each path held (compared by the bounded-memory test).
_COST = {"wall_seconds", "messages_per_second", "max_records_held", "max_rows_held"}


def _assert_same_summary(a: dict, b: dict, where: str = "") -> None:
    """Equal, but for means (an exactly rounded sum against numpy's pairwise
    one: the last bits may differ) and the figures of cost."""
    assert set(a) - _COST == set(b) - _COST, where
    for k in set(a) - _COST:
        x, y = a[k], b[k]
        if isinstance(x, dict) and k != "config":
            _assert_same_summary(x, y, f"{where}{k}.")
        elif isinstance(x, float) and k.startswith("mean_"):
            assert math.isclose(x, y, rel_tol=1e-12) or (math.isnan(x) and math.isnan(y)), f"{where}{k}"
        elif isinstance(x, float) and math.isnan(x):
            assert math.isnan(y), f"{where}{k}"
        else:
            assert x == y, f"{where}{k}: {x} != {y}"


@pytest.mark.parametrize("config", [
    # EDM's rules (records handed during the run), mixed sizes, a warm-up.
    {"protocol": "edm", "nodes": 16, "workload": "hadoop", "load": 0.5, "messages": 1500},
    # Another protocol (records handed at the run's end), no warm-up.
    {"protocol": "pfabric", "nodes": 8, "workload": "micro", "load": 0.3, "messages": 2000,
     "warmup_fraction": 0.0},
])
def test_streamed_records_and_summary_equal_the_in_memory_run(tmp_path, config):
    whole = sim.run(config)
    path = tmp_path / "m.parquet"
    summary = stream.run_to_parquet(config, path, batch_rows=700)
    back = pd.read_parquet(path).set_index("id").sort_index()
    assert back.index.tolist() == list(range(len(whole.messages)))
    pd.testing.assert_frame_equal(back.reset_index(drop=True), whole.messages.reset_index(drop=True))
    _assert_same_summary(whole.summary, summary)
    # The quantiles are exact, not within a sketch's error.
    for k in ("median_slowdown", "p99_slowdown", "p999_latency_ns"):
        assert summary[k] == whole.summary[k]


def test_streamed_run_holds_a_bounded_number_of_records(tmp_path):
    """The core holds the records of the messages in flight and of a
    completion batch (16 384), not of the run; Python one batch of rows."""
    messages, batch = 120_000, 4096
    config = {"protocol": "edm", "nodes": 16, "workload": "micro", "load": 0.3, "messages": messages}
    summary = stream.run_to_parquet(config, tmp_path / "m.parquet", batch_rows=batch)
    assert summary["completed"] == messages
    assert summary["max_rows_held"] <= batch
    assert summary["max_records_held"] < 30_000, summary["max_records_held"]
    assert sim.run({**config, "messages": 20_000}).summary["max_records_held"] == 20_000
    assert sim.run({**config, "protocol": "dctcp", "messages": 2_000}).summary["max_records_held"] == 2_000
    # Past saturation (64 B at load 0.9) the backlog grows with the run, and
    # with it the records held, but some message waits nearly the whole run
    # and holds back no other's record.
    saturated = stream.run_to_parquet({**config, "load": 0.9, "messages": 60_000}, tmp_path / "s.parquet",
                                      batch_rows=batch)
    assert saturated["stable"] is False
    assert saturated["max_records_held"] < 45_000, saturated["max_records_held"]


def test_cli_streams_records_and_refuses_a_trace(tmp_path, capsys):
    out = tmp_path / "o"
    args = ["simulate", "--nodes", "6", "--messages", "500", "--load", "0.3", "--quiet"]
    assert main([*args, "--stream", "--out", str(out)]) == 0
    streamed = json.loads((out / "summary.json").read_text())
    assert len(pd.read_parquet(out / "messages.parquet")) == 500
    assert not (out / "messages.parquet.partial").exists()
    assert main([*args, "--out", str(tmp_path / "p")]) == 0
    _assert_same_summary(json.loads((tmp_path / "p" / "summary.json").read_text()), streamed)
    trace = tmp_path / "t.csv"
    sim.workloads.write_trace(sim.build_workload(sim.config.resolve({"nodes": 4, "messages": 20}, "t")), trace)
    capsys.readouterr()
    assert main(["simulate", "--workload", str(trace), "--nodes", "4", "--stream", "--quiet",
                 "--out", str(tmp_path / "q")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "generated open-loop workload only" in err[0]
    with pytest.raises(ConfigError, match="closed_loop_threads"):
        stream.run_to_parquet({"nodes": 4, "messages": 20, "closed_loop_threads": 2}, tmp_path / "c.parquet")
