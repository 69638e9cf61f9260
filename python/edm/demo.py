"""``edm demo``: the protocol at a glance (filled in by the codec)."""

from __future__ import annotations

import argparse

from edm import protocol


def run(seed: int) -> int:
    print(f"EDM protocol: {len(protocol.SPEC)} constants; /MS/ subtype 0x{protocol.SUB_MS:02X}")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser("demo", help="encode, multiplex, corrupt and decode a mix of frames and memory messages")
    d.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    d.set_defaults(func=lambda a: run(seed=a.seed))
