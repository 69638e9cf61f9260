"""``edm rtl latency``: Table 1 of the paper, measured on our RTL.

Runs the whole-fabric testbench (``tests/rtl/tb_fabric_top.sv`` with
``tests/rtl/tb_fabric.py``: compute and memory nodes with their PHY paths, links
as delay lines, one ``edm_switch``) under Verilator, issues a 64 B read and a
64 B write alone in the fabric, and stamps every module boundary: the host's
line before the scrambler, the switch's input and output, the host's line after
the descrambler, DRAM and local-memory ports. Each step is printed in cycles
beside the paper's (§3.2.1, §3.2.2, Figure 5), then the Table 1 totals:
network stack cycles x 2.56 ns plus 8 PMA/PMD/transceiver traversals (19 ns)
and 4 propagation hops (10 ns). The same two messages are measured again with
MTU and 9000 B frames filling both directions of both links on their path.

Needs a repository checkout (the testbench lives under ``tests/rtl``) and
Verilator; the first run builds the model (about a minute).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from edm.args import integer, out_file
from edm import protocol

ROOT = Path(__file__).resolve().parents[3]
CYCLE_NS = protocol.CYCLE_PS / 1000
PHYS_NS = (8 * protocol.PMA_PMD_XCVR_PS + 4 * protocol.PROP_PS) / 1000
PAPER_STACK_NS = {"read": protocol.PAPER_EDM_READ_STACK_PS / 1000, "write": protocol.PAPER_EDM_WRITE_STACK_PS / 1000}
PAPER_TOTAL_NS = {"read": protocol.PAPER_EDM_READ_TOTAL_PS / 1000, "write": protocol.PAPER_EDM_WRITE_TOTAL_PS / 1000}
HOST_PREFIXES = ("compute node", "memory node")


def testbenches(command: str, needed: str) -> Path:
    """The RTL testbench folder (tests/rtl), importable; `command` names the
    caller in the error when this is not a repository checkout."""
    tests = ROOT / "tests" / "rtl"
    if not (tests / needed).exists():
        raise SystemExit(f"{command}: {tests} not found; run it from a repository checkout")
    if str(tests) not in sys.path:
        sys.path.insert(0, str(tests))
    return tests


def measure(link_cycles: int = 19, compute_nodes: int = 2, memory_nodes: int = 2) -> dict:
    """Runs the fabric's latency test; returns its breakdown (see tb_fabric.py)."""
    testbenches("edm rtl latency", "tb_fabric_top.sv")
    from test_rtl_fabric import run_fabric  # noqa: PLC0415 (the testbench's own runner)

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "latency.json"
        run_fabric(nc=compute_nodes, nm=memory_nodes, link_cycles=link_cycles, testcase="latency",
                   latency_json=out)
        if not out.exists():
            raise SystemExit("edm rtl latency: the simulation wrote no result (see the log above)")
        return json.loads(out.read_text())


def measure_translation() -> dict:
    """The cycles the memory node's translation adds (tests/rtl/tb_mem_node_xl.py,
    ``translation_latency``): one 64 B read through the plain node and through
    edm_mem_node_xl, TLB miss then hit."""
    testbenches("edm rtl latency --translation", "tb_mem_node_xl.py")
    from test_rtl_common import translation_cycles  # noqa: PLC0415 (the testbench's own runner)

    with tempfile.TemporaryDirectory() as tmp:
        return translation_cycles(tmp)


def translation_report(cycles: dict, summary: dict) -> str:
    """Table 1's read with the memory node translating: a TLB hit and a miss."""
    plain = cycles["plain"]["to_first_dram_read"]
    added = {case: cycles[case]["to_first_dram_read"] - plain for case in ("hit", "miss")}
    read = summary["read"]
    lines = ["## Memory node with translation and protection (Clio, `edm_mem_node_xl`)", "",
             f"One 64 B read alone at the memory node (DRAM latency {cycles['dram_latency']} cycles): "
             f"cycles from its last block in to its first data read; the miss walks one page-table bucket "
             f"({cycles['walk_reads']} reads).", "",
             "| memory node | to first data read (cycles) | added | Table 1 read total |", "|---|---:|---:|---:|",
             f"| plain (`edm_mem_node`) | {plain} | – | {read['total_ns']:.2f} ns |"]
    for case, label in (("hit", "translating, TLB hit"), ("miss", "translating, TLB miss")):
        lines.append(f"| {label} | {cycles[case]['to_first_dram_read']} | +{added[case]} | "
                     f"{read['total_ns'] + added[case] * CYCLE_NS:.2f} ns |")
    return "\n".join(lines + [""])


def summarize(data: dict) -> dict:
    """Per message kind: stack cycles (without serialization), serialization,
    Table 1 style totals, and the paper's figures."""
    out = {}
    for kind, b in data["cases"]["unloaded"].items():
        serial = sum(v for name, v, _ in b["rows"] if "serialization" in name)
        stack = sum(v for name, v, _ in b["rows"] if "serialization" not in name)
        paper_stack = sum(p for _, _, p in b["rows"])
        loaded = {case: data["cases"][case][kind]["total"] - b["total"] for case in data["cases"] if case != "unloaded"}
        out[kind] = {
            "stack_cycles": stack, "stack_ns": stack * CYCLE_NS,
            "serialization_cycles": serial,
            "total_ns": stack * CYCLE_NS + PHYS_NS,
            "total_with_serialization_ns": (stack + serial) * CYCLE_NS + PHYS_NS,
            # No logic at all: transceivers, propagation and the unit's serialization.
            "physical_floor_ns": serial * CYCLE_NS + PHYS_NS,
            "paper_stack_cycles": paper_stack, "paper_stack_ns": PAPER_STACK_NS[kind],
            "paper_total_ns": PAPER_TOTAL_NS[kind],
            "simulated_end_to_end_cycles": b["total"], "simulated_link_cycles": b["links"],
            "simulated_dram_cycles": b["dram"],
            "extra_cycles_with_frames": loaded,
        }
    return out


def format_report(data: dict, summary: dict, *, host_only: bool = False, command: str = "") -> str:
    lines = [f"# EDM fabric latency from RTL simulation  (`{command}`)", "",
             f"One 64 B read (8 B RREQ, 64 B RRES) and one 64 B write alone in the fabric; "
             f"cycles of {CYCLE_NS:g} ns; links modelled as {data['link_cycles']}-cycle delay lines "
             f"(Table 1's 2 x 19 + 10 ns per hop is added exactly below).", ""]
    for kind in ("read", "write"):
        b, s = data["cases"]["unloaded"][kind], summary[kind]
        lines += [f"## Remote {kind}", "", "| step | ours (cycles) | paper (cycles) |", "|---|---:|---:|"]
        for name, ours, paper in b["rows"]:
            if host_only and not name.startswith(HOST_PREFIXES):
                continue
            mark = "" if "serialization" in name or ours <= paper else " (slower)"
            lines.append(f"| {name} | {ours}{mark} | {paper if 'serialization' not in name else '–'} |")
        if not host_only:
            lines += [
                f"| **network stack** (steps above, without serialization) | **{s['stack_cycles']} = "
                f"{s['stack_ns']:.2f} ns** | **{s['paper_stack_cycles']} = {s['paper_stack_ns']:.2f} ns** |",
                f"| PMA/PMD/transceiver 8 x 19 ns + propagation 4 x 10 ns | {PHYS_NS:.0f} ns | {PHYS_NS:.0f} ns |",
                f"| **total fabric latency** | **{s['total_ns']:.2f} ns** | **{s['paper_total_ns']:.2f} ns** |",
                f"| total with the unit's serialization | {s['total_with_serialization_ns']:.2f} ns | – |",
                f"| physical floor (transceivers, propagation, serialization; no logic) | "
                f"{s['physical_floor_ns']:.2f} ns: ours is {s['total_with_serialization_ns'] - s['physical_floor_ns']:.2f}"
                f" ns above it | – |",
            ]
        for name, value in b.get("detail", {}).items():
            if value is not None:
                lines.append(f"| (detail) {name} | {value} | |")
        extra = ", ".join(f"{case.replace('_', ' ')} +{v} cycles" for case, v in s["extra_cycles_with_frames"].items())
        lines += ["", f"Simulated end to end: {s['simulated_end_to_end_cycles']} cycles "
                      f"({s['simulated_link_cycles']} in links, {s['simulated_dram_cycles']} in the DRAM model). "
                      f"With frames competing on both links of the path (intra-frame preemption): {extra}.", ""]
    return "\n".join(lines)


def _latency(args: argparse.Namespace) -> int:
    start = time.time()
    if args.waves:   # rtlsim.run_bench reads it (docs/hardware.md, Debugging a bench)
        os.environ["EDM_WAVES"] = "1"
    print(f"building and simulating the fabric ({args.compute_nodes} compute + {args.memory_nodes} memory "
          f"nodes, links {args.link_cycles} cycles)...", file=sys.stderr)
    data = measure(args.link_cycles, args.compute_nodes, args.memory_nodes)
    summary = summarize(data)
    command = "edm rtl latency" + (" --host" if args.host else "")
    report = format_report(data, summary, host_only=args.host, command=command)
    print(report)
    result = {"breakdown": data, "summary": summary}
    if args.translation:
        result["translation"] = measure_translation()
        print(translation_report(result["translation"], summary))
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({**result, "wall_seconds": time.time() - start}, indent=1))
    print(f"(written to {out}; {time.time() - start:.0f} s)", file=sys.stderr)
    return 0


def add_subparser(psub) -> None:
    s = psub.add_parser(
        "latency", help="Table 1 from the RTL: per-step cycles of a remote read and write, and totals",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("--host", action="store_true", help="only the host pipeline steps (§3.2.1)")
    s.add_argument("--translation", action="store_true",
                   help="also the cycles a translating memory node (Clio, edm_mem_node_xl) adds, TLB hit and miss")
    s.add_argument("--link-cycles", type=integer(0, 10_000), default=19,
                   help="link delay line per hop in cycles (default 19: 2 x 19 + 10 ns rounded up)")
    s.add_argument("--compute-nodes", type=integer(1, 64), default=2, help="compute nodes in the fabric (default 2)")
    s.add_argument("--memory-nodes", type=integer(1, 64), default=2, help="memory nodes in the fabric (default 2)")
    s.add_argument("--json", type=out_file, default="results/rtl/latency.json",
                   help="where to write the results as JSON")
    s.add_argument("--waves", action="store_true",
                   help="build the fabric with FST tracing (also EDM_WAVES=1) and print the waveform's path")
    s.set_defaults(func=_latency)
