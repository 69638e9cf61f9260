"""``edm protocol``: the wire protocol's constants and its cost against Ethernet frames."""

from __future__ import annotations

import argparse
import json

from edm import protocol
from edm.protocol import codec
from edm.report import markdown_table


def overhead_rows() -> tuple[list[str], list[list[str]]]:
    """The README's bandwidth table (columns, rows of cells), computed by the reference codec."""
    columns = ["operation", "EDM on the wire", "Ethernet frame + preamble + IFG", "Ethernet / EDM"]
    rows = [[row["operation"], f"{row['edm_blocks']} blocks = {row['edm_bits']} bits",
             f"{row['ethernet_frame_bytes']} B frame, {row['ethernet_wire_bytes']} B on the wire "
             f"= {row['ethernet_bits']:g} bits", f"{row['ratio']:.2f}x"] for row in codec.overhead_table()]
    return columns, rows


def overhead_markdown() -> str:
    return markdown_table(*overhead_rows())


def _overhead(args: argparse.Namespace) -> int:
    if args.json:
        print(json.dumps(codec.overhead_table(), indent=2))
    else:
        print(overhead_markdown())
        print(
            "\nEthernet bits = wire bytes x 8 x 66/64 (64b/66b). The WREQ frame carries only a MAC "
            "header and FCS around the data (no IP, UDP or RDMA headers), which favours Ethernet."
        )
    return 0


def _constants(args: argparse.Namespace) -> int:
    for name, value in protocol.SPEC.items():
        print(f"{name:32s} {value:#x}" if name.startswith(("BT_", "SUB_", "SYNC_")) else f"{name:32s} {value}")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("protocol", help="protocol constants and wire overhead")
    psub = p.add_subparsers(dest="what", required=True, metavar="WHAT")
    o = psub.add_parser("overhead", help="wire cost of small memory operations, EDM vs Ethernet frames")
    o.add_argument("--json", action="store_true", help="print JSON instead of a Markdown table")
    o.set_defaults(func=_overhead)
    c = psub.add_parser("constants", help="every protocol constant (from crates/edm-proto/src/spec.rs)")
    c.set_defaults(func=_constants)
