"""The simulator's Python API, CLI, configuration and trace errors."""

from __future__ import annotations

import json
import random

import numpy as np
import pandas as pd
import pytest

from edm import protocol, sim
from edm.cli import main
from edm.sim.config import ConfigError, resolve
from edm.sim.workloads import Messages, TraceError, read_trace, write_trace

SMALL = {"nodes": 8, "messages": 2000, "load": 0.2}


def test_run_completes_every_message_and_summarises():
    r = sim.run(SMALL)
    s = r.summary
    assert s["messages"] == s["completed"] == 2000 and s["deadlocked"] == 0
    assert isinstance(r.messages, pd.DataFrame) and len(r.messages) == 2000
    assert (r.messages["slowdown"] >= 1.0 - 1e-9).all(), "nothing beats its alone latency"
    assert set(s["by_op"]) == {"read", "write"}
    for key in ("mean_slowdown", "p99_slowdown", "mean_latency_ns", "wall_seconds", "throughput_gbps"):
        assert np.isfinite(s[key])
    json.dumps(s)  # storable by edm sweep


def test_same_seed_same_numbers_other_seed_other_numbers():
    strip = lambda s: {k: v for k, v in s.items() if k not in ("wall_seconds", "messages_per_second")}  # noqa: E731
    a, b = sim.run(SMALL).summary, sim.run(SMALL).summary
    assert strip(a) == strip(b)
    assert strip(sim.run({**SMALL, "seed": 2}).summary) != strip(a)


def test_a_message_alone_takes_its_closed_form_time(tmp_path):
    trace = tmp_path / "one.trace"
    trace.write_text("0 3 0 1 64 -1 10\n")
    r = sim.run({"nodes": 2, "workload": str(trace), "link_gbps": 25})
    row = r.messages.iloc[0]
    assert row["latency_ns"] * 1e3 == row["alone_ps"]
    blocks = 11  # a 64-byte WREQ unit
    assert row["alone_ps"] == protocol.PAPER_EDM_WRITE_TOTAL_PS + (blocks - 1) * protocol.BLOCK_PS_25G


@pytest.mark.parametrize("nodes", [2, 16])
def test_the_registered_scheduler_tree_lengthens_a_message_by_its_iteration(tmp_path, nodes):
    # scheduler_registered_tree: the iteration is the RTL's with its request tree
    # registered, sw_pim_iter_cycles(nodes, True) = ceil(log4 nodes) + 3 cycles (4 at 2
    # nodes, 5 at 16), the paper's 3 without, and the notification waits
    # SW_NQ_LANE_CYCLES_REGISTERED = 1 cycle in its lane's FIFO before its insert; a
    # lone write takes that much longer.
    trace = tmp_path / "one.trace"
    trace.write_text("0 3 0 1 64 -1 10\n")
    cfg = {"nodes": nodes, "workload": str(trace), "link_gbps": 25}
    alone = {tree: sim.run({**cfg, "scheduler_registered_tree": tree}).messages.iloc[0]["latency_ns"] * 1e3
             for tree in (0, 1)}
    extra = (protocol.sw_pim_iter_cycles(nodes, True) - protocol.SW_PIM_ITER_CYCLES
             + protocol.SW_NQ_LANE_CYCLES_REGISTERED)
    assert extra == {2: 2, 16: 3}[nodes]
    assert alone[1] - alone[0] == pytest.approx(extra * protocol.CYCLE_PS)


def test_config_errors_name_the_field():
    with pytest.raises(ConfigError, match=r"field 'load' = -1"):
        resolve({"load": -1})
    with pytest.raises(ConfigError, match=r"unknown field\(s\) \['lod'\]"):
        resolve({"lod": 0.5})
    with pytest.raises(ConfigError, match=r"field 'nodes' = '8' should be an integer"):
        resolve({"nodes": "8"})


def test_trace_errors_name_file_line_and_field(tmp_path):
    bad = tmp_path / "bad.trace"
    bad.write_text("0 3 0 1 64 -1 0\n1 2 0 1 64 -1 5\n")
    with pytest.raises(TraceError, match=r"bad.trace:2: field 'type' = 2"):
        read_trace(bad)
    bad.write_text("0 3 0 1 sixty -1 0\n")
    with pytest.raises(TraceError, match=r"bad.trace:1: field 'size' = 'sixty'"):
        read_trace(bad)
    bad.write_text("0 1 0 1 16 -1 0\n")
    with pytest.raises(TraceError, match=r"bad.trace:1: field 'response' = -1"):
        read_trace(bad)


def test_trace_round_trip(tmp_path):
    msgs = Messages(
        op=np.array([0, 1], np.uint8),
        requester=np.array([3, 4], np.uint16),
        memory=np.array([5, 6], np.uint16),
        size=np.array([64, 1460], np.uint32),
        issue_ps=np.array([640, 6400], np.uint64),
    )
    path = tmp_path / "t.trace"
    write_trace(msgs, path)
    back = read_trace(path)
    for field in ("op", "requester", "memory", "size", "issue_ps"):
        assert (getattr(back, field) == getattr(msgs, field)).all(), field


def test_application_workload_sizes_come_from_the_cdf():
    r = sim.run({"nodes": 8, "messages": 3000, "load": 0.1, "workload": "hadoop"})
    sizes = r.messages["size"]
    assert (sizes % 1460 == 0).all() and sizes.min() == 4 * 1460 and sizes.max() <= 920 * 1460


def test_cli_writes_summary_and_parquet(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["simulate", "--nodes", "6", "--messages", "500", "--load", "0.3", "--out", str(out), "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["completed"] == 500
    assert len(pd.read_parquet(out / "messages.parquet")) == 500
    assert "mean slowdown" in capsys.readouterr().out


def test_cli_reports_bad_config(tmp_path, capsys):
    cfg = tmp_path / "c.toml"
    cfg.write_text("nodes = 1\n")
    assert main(["simulate", "--config", str(cfg), "--quiet"]) == 2
    assert "c.toml: field 'nodes' = 1" in capsys.readouterr().err


def test_standalone_scheduler_grants_a_matching_each_cycle():
    rng = random.Random(4)
    s = sim.Scheduler(6, policy="fcfs", chunk_bytes=256, link_gbps=100)
    granted = 0
    for cycle in range(400):
        if rng.random() < 0.5:
            src = rng.randrange(6)
            s.notify(src, (src + 1 + rng.randrange(5)) % 6, cycle % 256, rng.randrange(1, 600))
        grants = s.step()
        assert len({g[0] for g in grants}) == len(grants), "a source granted twice in one cycle"
        assert len({g[1] for g in grants}) == len(grants), "a destination granted twice in one cycle"
        assert all(0 < g[3] <= 256 for g in grants)
        granted += len(grants)
    assert granted > 50
    assert s.cycle == 400


def test_first_grant_comes_after_insert_and_one_iteration_on_the_iteration_grid():
    # Stand-alone, iterations run back to back from cycle 0 (as in the RTL): a
    # notification visible at cycle 2 joins the iteration starting at cycle 3.
    s = sim.Scheduler(2)
    s.notify(0, 1, 7, 64)
    cycles = [s.step() for _ in range(8)]
    first = next(i for i, g in enumerate(cycles) if g)
    assert cycles[first] == [(0, 1, 7, 64)]
    it = protocol.SW_PIM_ITER_CYCLES
    start = -(-protocol.SW_NQ_INSERT_CYCLES // it) * it
    assert first + 1 == start + it


def test_stand_alone_scheduler_takes_the_registered_tree_iteration():
    # registered_tree=True: iterations of sw_pim_iter_cycles(ports, True) cycles (4 at
    # 2 ports, 5 at 16), on their grid from cycle 0, as the RTL with REGISTERED_TREE.
    for ports, it in ((2, 4), (16, 5)):
        assert protocol.sw_pim_iter_cycles(ports, True) == it
        s = sim.Scheduler(ports, registered_tree=True)
        s.notify(0, 1, 7, 64)
        cycles = [s.step() for _ in range(3 * it)]
        first = next(i for i, g in enumerate(cycles) if g)
        assert cycles[first] == [(0, 1, 7, 64)]
        start = -(-protocol.SW_NQ_INSERT_CYCLES // it) * it
        assert first + 1 == start + it


@pytest.mark.parametrize("hold, first", [(0, 2), (2, 3)])
def test_stand_alone_scheduler_takes_the_priority_hold_option(hold, first):
    # Destination 0 gets a long write from free source 1 and a short one from
    # source 2, busy sending to 3: the paper's PIM starts the long one, hold 2
    # waits for source 2 (as crates/edm-sim's scheduler unit test).
    s = sim.Scheduler(4, priority_hold=hold)
    s.notify(2, 3, 1, 5000)
    while not s.step():
        pass
    s.notify(1, 0, 2, 5000)
    s.notify(2, 0, 3, 64)
    to_zero = [g for _ in range(200) for g in s.step() if g[1] == 0]
    assert to_zero[0][2] == first


def test_stand_alone_scheduler_takes_edms_matching_and_ordering_rules():
    # 128 B writes (19 blocks, 4.75 cycles on the wire) on 8 ports, more than
    # the matching can grant: a port is released 4.75 - 3 cycles after its
    # grant; the next iteration starts 2 cycles later on the 3-cycle grid, 1
    # cycle later when pipelined (6 vs 5 cycles a grant). Without pair order a
    # short message of a pair overtakes its long predecessor.
    def granted(pipelined):
        rng = random.Random(9)
        s = sim.Scheduler(8, policy="fcfs", pipelined_matching=pipelined)
        total = 0
        for cycle in range(600):
            for _ in range(4):
                src = rng.randrange(8)
                s.notify(src, (src + 1 + rng.randrange(7)) % 8, cycle % 256, 128)
            total += len(s.step())
        return total

    assert granted(True) > 1.1 * granted(False)
    for pair_order, first in ((True, 1), (False, 2)):
        s = sim.Scheduler(2, pair_order=pair_order)
        s.notify(0, 1, 1, 5000)
        s.notify(0, 1, 2, 64)
        grants = [g for _ in range(20) for g in s.step()]
        assert grants[0][2] == first


@pytest.mark.parametrize("name", sim.config.PROTOCOLS)
def test_every_protocol_runs_from_python_and_nothing_beats_alone(name):
    r = sim.run({**SMALL, "protocol": name, "messages": 500, "load": 0.3})
    s = r.summary
    assert s["protocol"] == name and s["completed"] == 500, s
    assert (r.messages["slowdown"] >= 1.0 - 1e-9).all()
    assert s["mean_unloaded_ns"] > 100


def test_unknown_protocol_is_a_config_error():
    with pytest.raises(ConfigError, match=r"field 'protocol' = 'tcp'"):
        resolve({"protocol": "tcp"})


def test_baseline_parameters_reach_the_engine_and_bad_ones_name_the_field():
    incast = {"protocol": "dctcp", "nodes": 16, "messages": 600, "load": 0.9, "message_bytes": 20000,
              "write_ratio": 1.0}
    default = sim.run(incast).summary
    small = sim.run({**incast, "switch_buffer_bytes": 4000}).summary
    assert default["drops"] == 0 and small["drops"] > 0
    assert small["max_switch_queue_bytes"] <= 4000 < default["max_switch_queue_bytes"]
    # Overrides of other protocols are ignored (one grid may span them all).
    assert sim.run({**incast, "cxl_credits": 4}).summary["mean_latency_ns"] == default["mean_latency_ns"]
    with pytest.raises(ConfigError, match=r"field 'dcqcn_pmax' = 2.0"):
        resolve({"dcqcn_pmax": 2.0})
    with pytest.raises(ConfigError, match=r"field 'cxl_credits' = -1"):
        resolve({"cxl_credits": -1})
    with pytest.raises(ValueError, match=r"pfc_xoff_bytes: 100 is below"):
        sim.run({**incast, "protocol": "pfc_dcqcn", "pfc_xoff_bytes": 100})


def test_background_frames_reach_the_engine_and_preemption_protects_memory_latency():
    # The paper's rules: its claim, and the zero-queue rules refuse frames without preemption.
    base = {"protocol": "edm-paper", "nodes": 16, "messages": 5000, "load": 0.2, "seed": 3}
    quiet = sim.run(base).summary
    assert "background_frames" not in quiet
    jumbo = {**base, "background_load": 0.5, "background_frame_bytes": 9000}
    pre = sim.run(jumbo).summary
    wait = sim.run({**jumbo, "background_preemption": 0}).summary
    assert pre["background_frames"] > 0 and pre["frame_delay_mean_ns"] > 0
    # One 100G block is 0.66 ns: the most a memory transmission waits with preemption.
    assert 0 < pre["memory_frame_wait_max_ns"] <= 0.66
    assert wait["memory_frame_wait_max_ns"] > 300
    assert pre["mean_latency_ns"] - quiet["mean_latency_ns"] < 4
    assert wait["mean_latency_ns"] > quiet["mean_latency_ns"] + 100
    assert sim.run(jumbo).summary["mean_latency_ns"] == pre["mean_latency_ns"]  # deterministic
    with pytest.raises(ConfigError, match=r"field 'background_load' = 0.3 is only modelled for EDM"):
        resolve({"protocol": "pfabric", "background_load": 0.3})
    with pytest.raises(ConfigError, match=r"field 'background_frame_bytes' = 10000"):
        resolve({"background_load": 0.3, "background_frame_bytes": 10000})
    with pytest.raises(ConfigError, match=r"field 'background_preemption' = 2"):
        resolve({"background_preemption": 2})


def test_unloaded_table_has_every_protocol_beside_table_1(capsys):
    from edm.sim.unloaded import unloaded_table

    rows = {r["protocol"]: r for r in unloaded_table()}
    assert set(rows) == set(sim.config.PROTOCOLS)
    # Table 1's raw-Ethernet write is 557.44 ns; ours adds two serializations.
    assert rows["pfabric"]["write_table1_ns"] == pytest.approx(557.44)
    assert rows["pfabric"]["write_ns"] > 557.44
    assert rows["edm"]["read_ns"] < rows["pfc_dcqcn"]["read_ns"] < rows["dctcp"]["read_ns"]
    assert main(["unloaded"]) == 0
    assert "| dctcp | TCP/IP in hardware |" in capsys.readouterr().out


def test_egress_feedback_reaches_the_engine_and_bounds_the_switch_backlog(tmp_path):
    # Hosts 0 and 1 stream 4 KB writes to each other: each egress carries the
    # other's circuits back to back plus a /G/ per chunk of its own stream, so
    # with the paper's release times its backlog grows (docs/simulator.md,
    # "Switch queueing"); with egress feedback it stays within a unit.
    lines = [f"{2 * i + k} 3 {k} {1 - k} 4096 -1 0" for i in range(100) for k in (0, 1)]
    trace = tmp_path / "streams.trace"
    trace.write_text("\n".join(lines) + "\n")
    wait = {}
    for fb in (0, 1):
        s = sim.run({"nodes": 4, "workload": str(trace), "zero_queue": 0, "egress_feedback": fb}).summary
        assert s["completed"] == 200
        wait[fb] = s["max_switch_data_wait_ns"]
    assert wait[0] > 500 and wait[1] < 10, wait
    with pytest.raises(ConfigError, match=r"field\(s\) \['egress_feedback'\] apply to EDM only, not 'dctcp'"):
        resolve({"protocol": "dctcp", "egress_feedback": 1})


def test_zero_queue_rules_reach_the_engine_and_no_data_waits_at_the_switch(tmp_path):
    # The same two opposite streams: under the zero-queue rules nothing waits
    # at the switch; grants wait for gaps instead (reported).
    lines = [f"{2 * i + k} 3 {k} {1 - k} 4096 -1 0" for i in range(100) for k in (0, 1)]
    trace = tmp_path / "streams.trace"
    trace.write_text("\n".join(lines) + "\n")
    paper = sim.run({"nodes": 4, "workload": str(trace), "protocol": "edm-paper"}).summary
    zq = sim.run({"nodes": 4, "workload": str(trace), "zero_queue": 1}).summary
    assert paper["completed"] == zq["completed"] == 200
    assert paper["switch_data_conflicts"] > 0 and "max_grant_wait_ns" not in paper
    assert (zq["switch_data_conflicts"], zq["max_switch_data_queue"], zq["max_switch_data_wait_ns"]) == (0, 0, 0)
    assert zq["max_grant_wait_ns"] > 0
    mixed = sim.run({"nodes": 16, "load": 0.6, "messages": 5000, "zero_queue": 1}).summary
    assert mixed["completed"] == 5000 and mixed["switch_data_conflicts"] == 0
    with pytest.raises(ConfigError, match=r"field\(s\) \['zero_queue'\] apply to EDM only, not 'pfabric'"):
        resolve({"protocol": "pfabric", "zero_queue": 1})
    with pytest.raises(ConfigError, match=r"cannot be changed with protocol 'edm-paper'"):
        resolve({"protocol": "edm-paper", "zero_queue": 1})
    with pytest.raises(ConfigError, match=r"field 'egress_feedback' = 1 has nothing to do with zero_queue"):
        resolve({"zero_queue": 1, "egress_feedback": 1})
    with pytest.raises(ConfigError, match=r"field 'zero_queue' = 1 needs background_preemption = 1"):
        resolve({"zero_queue": 1, "background_load": 0.2, "background_preemption": 0})
    with pytest.raises(ConfigError, match=r"field 'zero_queue' = 2 is not 0 or 1"):
        resolve({"zero_queue": 2})


# Every accepted value of every EDM scheduling option, on EDM's rules and on
# top of the paper's engine: every message completes (priority_hold = 1 once
# deadlocked every run) and every byte arrives.
_OPTION_VALUES = {
    "priority_hold": [0, 1, 2, 7, 1_000_000],
    "memory_order": ["pair", "address"],
    "pipelined_matching": [0, 1],
    "batch_bytes": [0, 64, 300, 65536],
    "zero_queue": [0, 1],
    "start_delay": [0, 1],
    "egress_feedback": [0, 1],
    "max_iterations": [0, 1, 3],
    "priority": ["srpt", "fcfs", "las"],
    "max_active_notifs": [1, 3, 255],
    "chunk_bytes": [1, 64, 256, 9000],
}


@pytest.mark.parametrize("option", sorted(_OPTION_VALUES))
def test_every_accepted_value_of_every_edm_option_completes(option):
    for value in _OPTION_VALUES[option]:
        for rules in ({}, {"zero_queue": 0, "start_delay": 0, "memory_order": "pair", "pipelined_matching": 0,
                           "priority_hold": 0}):
            cfg = {**rules, option: value}
            if cfg.get("egress_feedback") and cfg.get("zero_queue", 1):
                cfg.update(zero_queue=0, start_delay=0)  # they exclude each other
            if cfg.get("start_delay", 1) and not cfg.get("zero_queue", 1):
                cfg["start_delay"] = 0  # start delays need the zero-queue rules
            if cfg.get("start_delay") == 1:
                cfg["zero_queue"] = 1
            for workload in ("hadoop", "micro"):
                s = sim.run({"nodes": 8, "workload": workload, "load": 0.8, "messages": 400, "seed": 2, **cfg}).summary
                assert s["completed"] == 400, (cfg, workload, s["deadlocked_ids"])


def test_summary_by_slices_equals_the_whole_table_computation(monkeypatch):
    """The summary's per-operation figures (masked columns) and slowdowns
    against the paper rules' alone latency (a slice of rows at a time, here
    slices of 97 rows) are exactly what the whole table gives."""
    import edm.sim as sim_mod

    monkeypatch.setattr(sim_mod, "_SLICE_ROWS", 97)
    r = sim.run({**SMALL, "write_ratio": 0.3, "workload": "hadoop", "messages": 1500})
    s, df = r.summary, r.messages
    measured = df.iloc[int(len(df) * s["config"]["warmup_fraction"]):]
    for name in ("read", "write"):
        part = measured[measured["op"] == name]
        lat, slow = part["latency_ns"].dropna().to_numpy(), part["slowdown"].dropna().to_numpy()
        assert s["by_op"][name]["messages"] == len(part)
        assert s["by_op"][name]["mean_unloaded_ns"] == part["alone_ps"].mean() / 1e3
        assert s["by_op"][name]["mean_latency_ns"] == lat.mean()
        assert s["by_op"][name]["p999_slowdown"] == np.quantile(slow, 0.999)
    paper = {**s["config"], **sim_mod.PAPER_RULES, "ber": 0.0, "failures": "", "dual_switch": 0}
    codes = measured["op"].cat.codes.to_numpy()
    alone = np.array([sim.alone_ps(paper, int(c), int(b)) for c, b in zip(codes, measured["size"])])
    slowdown = measured["latency_ns"].to_numpy() / (alone / 1e3)
    slowdown = slowdown[~np.isnan(slowdown)]
    assert len(measured) > 3 * 97, "several slices"
    assert s["mean_slowdown_paper_alone"] == slowdown.mean()
    assert s["p99_slowdown_paper_alone"] == np.quantile(slowdown, 0.99)
