"""``edm rtl asic``: the OpenSTA report parser, FO4, the fits on closed forms, bad input,
and one real run of the scheduler at N = 4 and 8 (cached per RTL in .build/rtl_asic)."""

from __future__ import annotations

import json
import math
import shutil

import pytest

from edm.rtl import asic as rtl_asic
from edm.cli import main

HAVE_TOOLS = shutil.which("sta") is not None and rtl_asic.Path(rtl_asic.LIBERTY).exists()
needs_tools = pytest.mark.skipif(not HAVE_TOOLS, reason="opensta / qflow-tech-osu018 not installed "
                                                         "(scripts/install-system.sh)")

# OpenSTA 2.0.17 (Debian's 2019 release) report_checks, one path, trimmed.
REPORT = """\
Startpoint: dut.g_stage[0].u_stage.g_head.nonempty\\\\DFFPOSX1
            (rising edge-triggered flip-flop clocked by clk)
Endpoint: dut.wr_ptr[2]\\\\DFFPOSX1 (rising edge-triggered flip-flop clocked by clk)
Path Group: clk
Path Type: max

    Delay      Time   Description
-------------------------------------------------------------
   0.0000    0.0000   clock clk (rise edge)
   0.0000    0.0000   clock network delay (ideal)
   0.0000    0.0000 ^ dut.g_stage[0].u_stage.g_head.nonempty\\\\DFFPOSX1/CLK (DFFPOSX1)
   0.9405    0.9405 v dut.g_stage[0].u_stage.g_head.nonempty\\\\DFFPOSX1/Q (DFFPOSX1)
   0.2301    1.1706 ^ _13865_/Y (MUX2X1)
   0.8259    1.9965 v _14341_/Y (NOR2X1)
   1.2351    3.2316 ^ _14346_/Y (NOR2X1)
   0.0902    3.3218 v _08218_/Y (MUX2X1)
   0.0000    3.3218 v dut.wr_ptr[2]\\\\DFFPOSX1/D (DFFPOSX1)
             3.3218   data arrival time

 100.0000  100.0000   clock clk (rise edge)
   0.0000  100.0000   clock network delay (ideal)
   0.0000  100.0000   clock reconvergence pessimism
           100.0000 ^ dut.wr_ptr[2]\\\\DFFPOSX1/CLK (DFFPOSX1)
  -0.1804   99.8196   library setup time
            99.8196   data required time
-------------------------------------------------------------
            99.8196   data required time
            -3.3218   data arrival time
-------------------------------------------------------------
            96.4978   slack (MET)
"""


def test_sta_report_gives_slack_arrival_endpoints_and_cells():
    p = rtl_asic.parse_sta_path(REPORT)
    assert p.slack_ns == pytest.approx(96.4978) and p.arrival_ns == pytest.approx(3.3218)
    assert p.startpoint == "dut.g_stage[0].u_stage.g_head.nonempty" and p.endpoint == "dut.wr_ptr[2]"
    assert [c for _, c in p.cells] == ["DFFPOSX1", "MUX2X1", "NOR2X1", "NOR2X1", "MUX2X1", "DFFPOSX1"]
    lib = rtl_asic.Library("x", {"DFFPOSX1": 96.0}, frozenset({"DFFPOSX1"}))
    assert rtl_asic.logic_depth(p, lib) == 4
    # A violated path: the critical path is still the period minus the slack.
    assert rtl_asic.parse_sta_path(REPORT.replace("96.4978   slack (MET)", "-3.5000   slack (VIOLATED)")).slack_ns == -3.5


def test_hierarchical_path_names_read_as_the_flat_ones():
    # OpenSTA joins a hierarchical netlist's instance names with '/'.
    report = REPORT.replace("dut.g_stage[0].u_stage.g_head.nonempty", "dut/g_stage[0].u_stage/g_head.nonempty")
    report = report.replace("dut.wr_ptr[2]", "dut/wr_ptr[2]").replace("_14341_/Y", "dut/g_q[1].u_q/_14341_/Y")
    p = rtl_asic.parse_sta_path(report)
    assert p.startpoint == "dut.g_stage[0].u_stage.g_head.nonempty" and p.endpoint == "dut.wr_ptr[2]"
    assert p.cells[2] == ("dut/g_q[1].u_q/_14341_", "NOR2X1") and len(p.cells) == 6


def test_module_breakdown_counts_each_module_times_its_instances():
    lib = rtl_asic.Library("x", {"DFFPOSX1": 96.0, "NAND2X1": 24.0, "INVX1": 16.0}, frozenset({"DFFPOSX1"}))
    q, f = "$paramod$abc\\edm_notif_queue", "$paramod$def\\edm_fifo"
    stat = {"modules": {
        "$paramod$123\\edm_pim_scheduler": {"num_cells_by_type": {q: 4, f: 4, "NAND2X1": 10, "DFFPOSX1": 2}},
        q: {"num_cells_by_type": {"NAND2X1": 5, "DFFPOSX1": 3, f: 1}},
        f: {"num_cells_by_type": {"INVX1": 2, "DFFPOSX1": 1}},
        "\\other": {"num_cells_by_type": {"INVX1": 99}}}}
    rows = {r["module"]: r for r in rtl_asic.module_breakdown(stat, "edm_pim_scheduler", lib)}
    assert set(rows) == {"edm_pim_scheduler", "edm_notif_queue", "edm_fifo"}
    assert rows["edm_fifo"]["instances"] == 4 + 4 and rows["edm_notif_queue"]["instances"] == 4
    assert rows["edm_notif_queue"] == {"module": "edm_notif_queue", "instances": 4, "cells": 8,
                                       "area_um2": 5 * 24 + 3 * 96, "flip_flops": 3}
    # The same total as rtl_synth's recursive count, which the area is computed from.
    cells = rtl_asic.rtl_synth.parse_yosys_stat(stat, "edm_pim_scheduler")
    assert sum(r["instances"] * r["area_um2"] for r in rows.values()) == sum(
        v * lib.areas[k] for k, v in cells.items())
    assert sum(r["instances"] * r["flip_flops"] for r in rows.values()) == cells["DFFPOSX1"]


def test_a_stage_past_its_deadline_is_stopped_with_a_clear_message():
    log = rtl_asic.Path(".build/test_rtl_asic_stage.log")
    (rtl_asic.ROOT / ".build").mkdir(exist_ok=True)
    start = rtl_asic.time.monotonic()
    with pytest.raises(rtl_asic.StageTimeout, match=r"N=64 yosys: stopped after .*--timeout-min"):
        rtl_asic.run_stage(["sleep", "30"], log, "N=64 yosys", deadline=start + 0.5)
    assert rtl_asic.time.monotonic() - start < 10
    rc, secs, cpu = rtl_asic.run_stage(["sh", "-c", "exit 3"], log, "quick", deadline=rtl_asic.time.monotonic() + 30)
    assert rc == 3 and secs >= 0 and cpu >= 0


@needs_tools
def test_a_timed_out_port_count_is_reported_and_the_rest_fitted(monkeypatch, tmp_path, capsys):
    def fake_measure(n, *args, **kwargs):
        if n >= 16:
            raise rtl_asic.StageTimeout(f"N={n} yosys: stopped after 1m00s, the per-N time limit (--timeout-min)")
        return _row(n, 1000.0 * n * n, 16 * n * n, 10 + 4 * math.log2(n))

    monkeypatch.setattr(rtl_asic, "measure", fake_measure)
    monkeypatch.setattr(rtl_asic, "measure_fo4", lambda *args, **kwargs: 0.1)
    out = tmp_path / "asic.json"
    assert main(["rtl", "asic", "--ports", "4", "8", "16", "32", "--timeout-min", "1", "--json", str(out)]) == 1
    captured = capsys.readouterr()
    assert "N=16 yosys: stopped after 1m00s" in captured.err and "N = 32 not tried" in captured.err
    assert "# not measured (--timeout-min 1): N = 16, 32" in captured.out and "Fits over N = 4, 8" in captured.out
    doc = json.loads(out.read_text())
    assert [r["ports"] for r in doc["rows"]] == [4, 8] and [m["ports"] for m in doc["not_measured"]] == [16, 32]
    assert doc["scaling"]["state_exponent"] == pytest.approx(2)


def test_the_current_yosys_pass_is_read_from_the_log():
    log = rtl_asic.Path(".build/test_rtl_asic_pass.log")
    (rtl_asic.ROOT / ".build").mkdir(exist_ok=True)
    (rtl_asic.ROOT / log).write_text(
        "4.2. Executing OPT pass (performing simple optimizations).\n"
        "7. Executing ABC pass (technology mapping using ABC).\n"
        "7.1. Extracting gate netlist of module `$paramod$ff41\\edm_notif_queue' to `<abc-temp-dir>/input.blif'..\n")
    assert rtl_asic._last_pass(log) == "Executing ABC pass (technology mapping using ABC) on edm_notif_queue"
    assert rtl_asic._last_pass(rtl_asic.Path(".build/no-such.log")) == ""


def test_a_report_without_a_path_is_an_error():
    with pytest.raises(rtl_asic.SynthError, match="no timed path"):
        rtl_asic.parse_sta_path("No paths found.\n")


def test_fo4_is_the_per_stage_delay_of_the_chains_difference():
    # Chains of d0 + k·fo4 (+ an end effect e): the difference over the extra stages is fo4.
    fo4, d0, e = 0.1, 0.37, 0.02
    assert rtl_asic.fo4_from_arrivals((10, d0 + 10 * fo4 - e), (20, d0 + 20 * fo4 - e)) == pytest.approx(fo4)
    with pytest.raises(ValueError):
        rtl_asic.fo4_from_arrivals((20, 1.0), (10, 0.5))
    v = rtl_asic.fo4_chain_verilog(3)
    assert v.count("INVX1 s") == 3 and v.count("INVX1 l") == 9   # each stage: the next + 3 loads


@needs_tools
def test_osu018_liberty_and_its_fo4(tmp_path):
    lib = rtl_asic.read_liberty(rtl_asic.LIBERTY)
    assert lib.areas["INVX1"] == 16 and lib.areas["NAND2X1"] == 24
    assert {"DFFPOSX1", "DFFNEGX1", "DFFSR", "LATCH"} <= lib.sequential and "INVX1" not in lib.sequential
    out = rtl_asic.Path(".build/test_rtl_asic_fo4")
    shutil.rmtree(rtl_asic.ROOT / out, ignore_errors=True)
    fo4 = rtl_asic.measure_fo4(lib, out)
    # A 0.18 µm FO4 is some 60-120 ps; OSU's typical-corner INVX1 gives about 99 ps.
    assert 0.06 < fo4 < 0.15
    assert rtl_asic.measure_fo4(lib, out) == fo4        # cached


def test_power_fit_returns_the_exponent_of_an_exact_power_law():
    ns = [8, 16, 32, 64]
    a, c = rtl_asic.fit_power(ns, [3.0 * n ** 2.5 for n in ns])
    assert a == pytest.approx(2.5) and c == pytest.approx(3.0)
    slope, icpt = rtl_asic.fit_line([3, 4, 5, 6], [10 + 4 * x for x in (3, 4, 5, 6)])
    assert slope == pytest.approx(4) and icpt == pytest.approx(10)
    with pytest.raises(ValueError):
        rtl_asic.fit_line([3, 3], [1, 2])


def _row(n: int, area: float, bits: float, fo4: float) -> rtl_asic.Row:
    return rtl_asic.Row(ports=n, depth=8, cell_area_um2=area, ff_bits=int(bits), memory_bits=0,
                        state_bits=int(bits), critical_path_ns=fo4 * 0.1, fo4=fo4, logic_depth=10,
                        path_from="a", path_to="b", cells=1)


def test_scaling_extrapolates_a_closed_form_to_512_ports():
    lib = rtl_asic.Library("x", {"NAND2X1": 24.0}, frozenset())
    # area = 1000 N², state = 16 N², path = 10 + 4 log2 N FO4; N = 4 lies off the law
    # and is left out of the fit (N >= 8 measured twice or more).
    rows = [_row(4, 1.0, 1.0, 99.0)] + [_row(n, 1000.0 * n * n, 16 * n * n, 10 + 4 * math.log2(n))
                                        for n in (8, 16, 32)]
    s = rtl_asic.scaling(rows, 0.1, lib)
    assert s["fit_ports"] == [8, 16, 32]
    assert s["area_exponent"] == pytest.approx(2) and s["state_exponent"] == pytest.approx(2)
    assert s["fo4_per_log2n"] == pytest.approx(4) and s["fo4_intercept"] == pytest.approx(10)
    e, node = s["estimate"], rtl_asic.NODE
    assert e["fo4_per_cycle"] == pytest.approx(10 + 4 * 9)
    assert e["fo4_budget_per_cycle"] == pytest.approx(1000 / 3 / node["fo4_ps"])
    assert e["area_um2_osu018"] == pytest.approx(1000 * 512 ** 2)
    assert e["area_mm2_at_node"] == pytest.approx(1000 * 512 ** 2 / (24 / node["nand2_um2"]) / 1e6)
    assert e["state_bits"] == pytest.approx(16 * 512 ** 2)
    # Only N = 4 and 8: both are used; one N: no fit.
    assert rtl_asic.scaling(rows[:2], 0.1, lib)["fit_ports"] == [4, 8]
    assert "estimate" not in rtl_asic.scaling(rows[:1], 0.1, lib)


@pytest.mark.parametrize("argv, message", [
    (["--ports", "1"], "--ports must be port counts >= 2"),
    (["--ports", "4", "4"], "--ports has a port count twice"),
    (["--depth", "0"], "--depth must be >= 1"),
    (["--timeout-min", "0"], "--timeout-min must be > 0"),
    (["--json", "/nonexistent-dir/out.json"], "does not exist"),
    (["--out-dir", "/tmp/x"], "--out-dir must be inside the repository"),
    (["--liberty", "/nonexistent.lib"], "cannot read the liberty"),
    (["--design", "switch", "--registered-tree"], "--registered-tree is for --design scheduler"),
])
def test_bad_input_exits_2_with_one_line(argv, message, capsys):
    assert main(["rtl", "asic", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_the_registered_tree_sets_its_parameter_and_has_its_own_build(tmp_path):
    """--registered-tree: the scheduler's REGISTERED_TREE = 1 in the Yosys script (so in
    the cache key) and a folder of its own (no synthesis here)."""
    lib = rtl_asic.Library(path="cells.lib", areas={}, sequential=frozenset())
    design = rtl_asic.DESIGNS["scheduler"]
    plain, tree = (rtl_asic.yosys_script(4, 12, design, lib, tmp_path, "paper", None, registered_tree=t)
                   for t in (False, True))
    assert "REGISTERED_TREE" not in plain
    assert "chparam -set REGISTERED_TREE 1 edm_pim_scheduler" in tree
    assert tree.replace("chparam -set REGISTERED_TREE 1 edm_pim_scheduler; ", "") == plain


def test_a_missing_sta_exits_2(monkeypatch, capsys):
    monkeypatch.setattr(rtl_asic.shutil, "which", lambda name: None)
    assert main(["rtl", "asic", "--ports", "4"]) == 2
    assert "apt-get install opensta" in capsys.readouterr().err


@needs_tools
@pytest.mark.usefixtures("yosys")  # tests/conftest.py: YoWASP's cache warmed once
@pytest.mark.long  # 75 s (tests/conftest.py: started first)
class TestRealRuns:
    """Real Yosys + OpenSTA runs; one class, so one worker: the hierarchical N = 4 run
    (cached in .build/rtl_asic) is shared, never written by two workers at once."""

    def test_asic_flow_reports_every_field_for_the_scheduler(self, tmp_path, capsys):
        out = tmp_path / "asic.json"
        assert main(["rtl", "asic", "--design", "scheduler", "--ports", "4", "8", "--json", str(out)]) == 0
        stdout = capsys.readouterr().out
        doc = json.loads(out.read_text())
        assert [r["ports"] for r in doc["rows"]] == [4, 8] and doc["flow"] == "hierarchical"
        assert doc["not_measured"] == []
        for r in doc["rows"]:
            assert r["cell_area_um2"] > 0 and r["state_bits"] > 0 and r["ff_bits"] == r["state_bits"]
            # Hierarchical: a module per port (the queues, the lane FIFOs) is kept once with its
            # N instances, and the design's figures are the sums over the instances.
            mods = {m["module"]: m for m in r["modules"]}
            assert mods[doc["module"]]["instances"] == 1
            assert max(m["instances"] for m in r["modules"]) >= r["ports"]
            assert sum(m["instances"] * m["area_um2"] for m in r["modules"]) == pytest.approx(r["cell_area_um2"])
            assert sum(m["instances"] * m["flip_flops"] for m in r["modules"]) == r["state_bits"]
            assert 0 <= r["memory_bits"] <= r["state_bits"]
            assert r["critical_path_ns"] > 0 and r["logic_depth"] >= 1
            assert r["fo4"] == pytest.approx(r["critical_path_ns"] / doc["fo4_ns"])
            assert f"| {r['ports']} | {r['depth']} | {r['cell_area_um2'] / 1e6:.3f} | {r['state_bits']} |" in stdout
        small, big = doc["rows"]
        assert big["state_bits"] > small["state_bits"] and big["cell_area_um2"] > small["cell_area_um2"]
        assert 0.06 < doc["fo4_ns"] < 0.15
        s = doc["scaling"]
        assert s["fit_ports"] == [4, 8] and s["area_exponent"] > 0 and s["estimate"]["area_mm2_at_node"] > 0
        assert "ESTIMATE at N = 512" in stdout


    def test_hierarchical_and_flat_synthesis_agree_at_4_ports(self, tmp_path):
        """The hierarchical flow (each module mapped once) against the flattened one. Flat
        optimization merges registers that several instances hold alike (each queue's copy of
        the free sources: N·(N-1) more flip-flops hierarchically) and maps across module
        boundaries: measured at N = 4, +0.5 % area, +12 flip-flops, the path 6.5 % shorter
        (2026-11-28); +4.0 % area once the queue gained the registered tree's per-pair insert
        (2026-11-29: 4 037 cells per queue mapped alone against 3 872 before, the flat netlist
        smaller than before), so the area bound is 5 %."""
        out = {}
        for flag in ([], ["--flat"]):
            path = tmp_path / f"asic{len(flag)}.json"
            assert main(["rtl", "asic", "--ports", "4", *flag, "--json", str(path)]) == 0
            out[bool(flag)] = json.loads(path.read_text())
        hier, flat = out[False]["rows"][0], out[True]["rows"][0]
        assert out[True]["flow"] == "flat" and flat["flow"] == "flat" and hier["flow"] == "hierarchical"
        assert len(flat["modules"]) == 1 and len(hier["modules"]) >= 3
        assert hier["cell_area_um2"] == pytest.approx(flat["cell_area_um2"], rel=0.05)
        assert 0 <= hier["state_bits"] - flat["state_bits"] <= 0.01 * flat["state_bits"]
        assert hier["memory_bits"] == flat["memory_bits"]
        assert hier["critical_path_ns"] == pytest.approx(flat["critical_path_ns"], rel=0.15)
        assert hier["logic_depth"] == pytest.approx(flat["logic_depth"], rel=0.25)
