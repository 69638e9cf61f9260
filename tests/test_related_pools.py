"""Rack memory pools (Puri, issue #24) from Python: the DRAM model's and the
memory manager's results reach the summary, bad combinations are refused by
field, and `edm related pools` writes its table (docs/related.md)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from edm import sim
from edm.cli import main
from edm.related import pools
from edm.sim.config import ConfigError, resolve

SMALL = {"nodes": 12, "memory_nodes": 3, "messages": 2000, "load": 0.1, "dram_channels": 1}


def test_the_summary_reports_dram_queueing_and_the_placement():
    r = sim.run({**SMALL, "placement": "smart-idle"}, progress=False)
    s = r.summary
    assert s["completed"] == s["messages"]
    lines = int(np.ceil(r.messages["size"] / 64).sum())  # 64 B messages at 64 B-aligned addresses
    assert s["dram_lines"] == lines
    assert 0 < s["dram_wait_mean_ns"] <= s["dram_wait_p99_ns"] <= s["dram_wait_max_ns"]
    assert s["dram_late_responses"] == 0
    per_pool = r.messages.groupby("memory")["size"].sum()
    assert set(per_pool.index) <= {9, 10, 11}
    assert s["memory_bytes_imbalance"] == pytest.approx(per_pool.max() / per_pool.mean())
    off = sim.run({**SMALL, "dram_channels": 0}, progress=False).summary
    assert "dram_wait_mean_ns" not in off and "memory_bytes_imbalance" not in off


def test_placement_follows_the_seed_and_only_moves_destinations():
    a, b = (sim.build_workload(resolve({**SMALL, "placement": "random", "seed": 3})) for _ in range(2))
    uniform = sim.build_workload(resolve({**SMALL, "seed": 3}))
    assert np.array_equal(a.memory, b.memory)
    assert np.array_equal(a.size, uniform.size) and np.array_equal(a.issue_ps, uniform.issue_ps)
    assert not np.array_equal(a.memory, uniform.memory)


def test_bad_combinations_name_their_field(tmp_path):
    with pytest.raises(ConfigError, match="dram_ps"):
        resolve({**SMALL, "dram_ps": 5000})
    with pytest.raises(ConfigError, match="dram_channels"):
        resolve({**SMALL, "ber": 1e-9})
    trace = tmp_path / "t.csv"
    trace.write_text("op,requester,memory,size,issue_ps\nread,0,1,64,0\n")
    with pytest.raises(ConfigError, match="placement"):
        resolve({**SMALL, "workload": str(trace), "placement": "round-robin"})
    with pytest.raises(ConfigError, match="placement"):
        resolve({**SMALL, "placement": "best-fit"})


def test_edm_pools_prints_and_writes_its_table(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(pools, "PROTOCOLS", ("edm", "pfabric"))
    monkeypatch.setattr(pools, "RACKS", {"100G": pools.RACKS["100G"]})
    monkeypatch.setattr(pools, "QUICK_MESSAGES", 1000)
    assert main(["related", "pools", "--quick", "--out", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "pools.json").read_text())
    assert len(rows) == 2 * len(pools.POLICIES)
    assert all(r["completed"] == r["messages"] for r in rows)
    assert (tmp_path / "pools.png").stat().st_size > 0
    assert "| 100G | edm | smart-idle |" in capsys.readouterr().out

