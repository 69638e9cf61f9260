"""The ``edm`` command line.

Each subcommand lives in its own module, which exposes ``add_parser(subparsers)``
registering a parser whose ``func`` default runs it. Add a command by adding its
module to ``COMMAND_MODULES``.
"""

from __future__ import annotations

import argparse
import importlib
import sys

COMMAND_MODULES = [
    "edm.demo",
    "edm.protocol_cli",
    "edm.sweep",
    "edm.sim.cli",
    "edm.sim.unloaded",
    "edm.plot",
    "edm.reproduce",
    "edm.rtl_synth",
    "edm.ycsb.cli",
    "edm.related.cli",
]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="edm", description="EDM: memory disaggregation over an Ethernet PHY fabric.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).add_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
