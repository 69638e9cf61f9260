"""``edm unloaded``: how each protocol fares alone.

The latency of one 64 B write and of one 8 B-request / 64 B-response read
alone in the network, for EDM and the six baselines, as the simulator
computes it (the same figure every slowdown is divided by), beside the
paper's Table 1 where it has one. Table 1 counts per-module latencies only;
the simulator adds serialization (store and forward at the switch for the
packet baselines), which the ``table1_ns`` column does not contain.

``--fec rs`` adds 802.3's RS-FEC at 100 Gb/s to every link traversal (as a
deployment at 100 Gb/s pays it; the paper's 25 Gb/s testbed has none): a
read crosses four links and a write two in every protocol, so FEC adds the
same to all of them and the paper's columns stay comparable without it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from edm import protocol
from edm.args import integer, out_file
from edm.sim.config import PROTOCOLS, resolve

OPS = {"read": 0, "write": 1}
# Forward error correction per link traversal, ps: none (the paper's Table 1)
# or RS-FEC at 100 Gb/s (802.3 Clause 91).
FEC_PS = {"none": 0, "rs": protocol.RS_FEC_100G_PS}


def _table1_ns(stack_ps: int) -> dict[str, float]:
    """Table 1's total fabric latency for a MAC-based stack: per traversal the
    stack at both hosts, MAC + PCS at both hosts and twice at the switch,
    layer-2 forwarding, four PHY traversals and two hops; a read is two."""
    mac_pcs = protocol.ETH_MAC_PS + protocol.ETH_PCS_PS
    one = 2 * stack_ps + 4 * mac_pcs + protocol.L2_FORWARD_PS + 4 * protocol.PMA_PMD_XCVR_PS + 2 * protocol.PROP_PS
    return {"read": 2 * one / 1e3, "write": one / 1e3}


# The paper's Table 1 total fabric latency (ns) for the stack each protocol
# runs on (CXL is not in Table 1).
TABLE1_NS = {
    "edm": {"read": protocol.PAPER_EDM_READ_TOTAL_PS / 1e3, "write": protocol.PAPER_EDM_WRITE_TOTAL_PS / 1e3},
    "edm-paper": {"read": protocol.PAPER_EDM_READ_TOTAL_PS / 1e3, "write": protocol.PAPER_EDM_WRITE_TOTAL_PS / 1e3},
    "dctcp": _table1_ns(protocol.TCP_STACK_PS),
    "pfc_dcqcn": _table1_ns(protocol.ROCE_STACK_PS),
    "pfabric": _table1_ns(0),
    "ird": _table1_ns(0),
    "fastpass": _table1_ns(0),
}
STACK = {
    "edm": "EDM (PHY), EDM's rules",
    "edm-paper": "EDM (PHY), the paper's rules",
    "dctcp": "TCP/IP in hardware",
    "pfc_dcqcn": "RoCEv2",
    "pfabric": "raw Ethernet",
    "ird": "raw Ethernet",
    "fastpass": "raw Ethernet",
    "cxl": "CXL flits, 100 ns switch hop",
    "ideal-srpt": "EDM's data path, no control (pFabric's Ideal)",
}


def unloaded_table(config: dict[str, Any] | None = None, size: int = 64) -> list[dict[str, Any]]:
    """One row per protocol: unloaded read and write latency (ns)."""
    from edm.sim import alone_ps

    rows = []
    for name in PROTOCOLS:
        cfg = resolve({**(config or {}), "protocol": name})
        row: dict[str, Any] = {"protocol": name, "stack": STACK[name]}
        for op, code in OPS.items():
            row[f"{op}_ns"] = alone_ps(cfg, code, size) / 1e3
            row[f"{op}_table1_ns"] = TABLE1_NS.get(name, {}).get(op)
        rows.append(row)
    return rows


def format_table(rows: list[dict[str, Any]]) -> str:
    def cell(v: float | None) -> str:
        return "-" if v is None else f"{v:.2f}"

    lines = [
        "| protocol | stack | read (ns) | Table 1 read (ns) | write (ns) | Table 1 write (ns) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['protocol']} | {r['stack']} | {cell(r['read_ns'])} | {cell(r['read_table1_ns'])} "
            f"| {cell(r['write_ns'])} | {cell(r['write_table1_ns'])} |"
        )
    return "\n".join(lines)


def _cmd(args: argparse.Namespace) -> int:
    rows = unloaded_table({"link_gbps": args.link_gbps, "fec_ps": FEC_PS[args.fec]}, args.size)
    print(format_table(rows))
    fec = "no FEC" if args.fec == "none" else f"RS-FEC {FEC_PS['rs'] / 1e3:g} ns per link"
    print(f"\n{args.size} B read (8 B request) and write alone, {args.link_gbps} Gbps, {fec}; "
          f"command: edm unloaded --link-gbps {args.link_gbps} --fec {args.fec}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(rows, indent=2))
        print(f"wrote {args.json}", file=sys.stderr)
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("unloaded", help="unloaded read/write latency of every protocol beside Table 1")
    p.add_argument("--link-gbps", type=int, default=100, choices=[10, 25, 100, 400])
    p.add_argument("--size", type=integer(1, protocol.MAX_MESSAGE_BYTES), default=64,
                   help=f"bytes read or written, 1..{protocol.MAX_MESSAGE_BYTES} (default 64)")
    p.add_argument("--fec", choices=sorted(FEC_PS), default="none",
                   help="forward error correction on every link: none (default, the paper's Table 1) or rs "
                        f"(802.3 RS-FEC at 100 Gb/s, {FEC_PS['rs'] / 1e3:g} ns per link traversal)")
    p.add_argument("--json", type=out_file, help="also write the rows as JSON here")
    p.set_defaults(func=_cmd)
