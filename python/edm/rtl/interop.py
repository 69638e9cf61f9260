"""``edm rtl interop``: standard Ethernet frames across the RTL fabric, checked
by Ethernet models we did not write.

Runs ``tests/rtl/tb_fabric_interop.py`` on the whole fabric
(``tests/rtl/tb_fabric_top.sv`` with ``XGMII_MACS = 1``: 2 compute and 2
memory nodes, 19-cycle links, ``edm_eth_switch``) under Verilator:
cocotbext-eth's XGMII source and sink on every host's MAC side, scapy's
packets (ARP, IPv4/UDP, IPv6/UDP, RoCEv2, 802.1Q; 64 B to 9000 B) host ->
switch -> host while the compute nodes keep reads and writes in flight
(``--read-share`` of them reads; every byte checked, the switch's ``cnt_conflict`` must stay 0), then the same frames
alone for their latency, then a frame queue overfilled on purpose.

Prints and writes (``--json``) a summary with ``frames_sent``,
``frames_received`` (a broadcast counts once per receiver), ``frames_altered``
(arrived not as sent, or where not addressed, or with a bad FCS),
``frames_lost`` (addressed, not arrived, not counted by the switch),
``frames_dropped_counted``, ``ordered_sets_seen`` (by the switch's L2 stage),
``memory_units_completed`` (reads and writes completed, every byte checked),
``switch_data_waits`` (the switch's ``cnt_conflict``), per test.

Needs a repository checkout (the testbench lives under ``tests/rtl``) and
Verilator; the first run builds the model (a few minutes).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from edm.args import integer, out_file
from edm.rtl.latency import testbenches

KEYS = ("frames_sent", "frames_received", "frames_altered", "frames_lost", "frames_dropped_counted",
        "ordered_sets_seen", "memory_units_completed", "switch_data_waits")
TESTS = ("frames_with_memory", "frames_alone", "overfill")


def run(frames: int, seed: int, frame_load: float = 0.1, read_share: float = 0.3) -> dict:
    """Runs the interop bench's three tests; returns their summaries by test name."""
    testbenches("edm rtl interop", "tb_fabric_interop.py")
    from rtlsim import run_bench  # noqa: PLC0415 (the testbenches' own runner)

    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "interop.json"
        for test in TESTS:   # each from reset in a simulation of its own (one model)
            try:
                failed += run_bench("tb_fabric_interop", name="tb_fabric_interop", seed=seed, testcase=test,
                                    extra_env={"EDM_INTEROP_FRAMES": str(frames),
                                               "EDM_INTEROP_FRAME_LOAD": str(frame_load),
                                               "EDM_INTEROP_READ_SHARE": str(read_share),
                                               "EDM_INTEROP_JSON": str(out)})
            except SystemExit:   # under pytest a failed case raises: the others still run
                failed.append(test)
        result = json.loads(out.read_text()) if out.exists() else {}
    result["failed_tests"] = failed
    return result


def report(result: dict) -> str:
    lines = []
    for name in TESTS:
        r = result.get(name)
        if r is None:
            lines.append(f"{name}: no result (see the log above)")
            continue
        lines.append(f"{name}: " + ", ".join(f"{k} {r[k]}" for k in KEYS))
        lat = r.get("frame_latency_cycles")
        if lat:
            lines.append(f"  memory load {r['memory_load']} blocks/cycle/egress; frame latency /S/ to /S/ "
                         f"min {lat['min']} mean {lat['mean']} max {lat['max']} cycles over {lat['frames']} frames")
    if result.get("failed_tests"):
        lines.append(f"FAILED: {', '.join(result['failed_tests'])}")
    return "\n".join(lines)


def _interop(args: argparse.Namespace) -> int:
    result = run(args.frames, args.seed, args.frame_load / 1000, args.read_share / 100)
    print(report(result))
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {path}")
    return 1 if result["failed_tests"] else 0


def add_subparser(psub) -> None:
    s = psub.add_parser(
        "interop", help="real Ethernet frames (cocotbext-eth, scapy) across the RTL fabric with memory traffic",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("--frames", type=integer(10, 1_000_000), default=10_000,
                   help="frames in the run with memory traffic (default 10000); a fifth of that alone "
                        "(10 to 1000), a quarter per sender in the overfill test (30 to 100)")
    s.add_argument("--seed", type=integer(0, 2**31 - 1), default=0, help="the bench's seed (EDM_SEED, default 0)")
    s.add_argument("--frame-load", type=integer(1, 1000), default=100,
                   help="frame blocks each host offers per 1000 cycles (default 100)")
    s.add_argument("--read-share", type=integer(0, 100), default=30, metavar="PERCENT",
                   help="reads among the memory operations, in percent (default 30: writes are the longer "
                        "messages, so a write-heavy mix keeps the links busier with memory)")
    s.add_argument("--json", type=out_file, metavar="OUT", help="also write the summary as JSON to OUT")
    s.set_defaults(func=_interop)
