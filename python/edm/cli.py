"""The ``edm`` command line.

Each subcommand lives in its own module, which exposes ``add_parser(subparsers)``
registering a parser whose ``func`` default runs it. Add a command by adding its
module to ``COMMAND_MODULES``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from edm.args import ArgumentError, Parser

COMMAND_MODULES = [
    "edm.demo",
    "edm.protocol.cli",
    "edm.sweep",
    "edm.sim.cli",
    "edm.sim.unloaded",
    "edm.plot",
    "edm.reproduce",
    "edm.rtl",
    "edm.ycsb.cli",
    "edm.related",
]


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="edm", description="EDM: memory disaggregation over an Ethernet PHY fabric.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).add_parser(sub)
    return p


def input_errors() -> tuple[type[Exception], ...]:
    """The errors that mean bad input (a config, sweep file, trace or value),
    not a bug: each ends a command with its one-line message and exit code 2."""
    from edm.sim.config import ConfigError
    from edm.sim.workloads import TraceError
    from edm.sweep import SweepError
    from edm.ycsb.cli import UsageError

    return ArgumentError, ConfigError, SweepError, TraceError, UsageError


def main(argv: list[str] | None = None) -> int:
    """Runs one command: its exit code (2: bad input, one line; 130: Ctrl-C)."""
    command = "edm"
    try:
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as e:  # a bad argument (2, its line printed) or --help (0)
            return e.code if isinstance(e.code, int) else 2
        command = f"edm {args.command}"
        return int(args.func(args) or 0)
    except input_errors() as e:
        message = str(e).replace("\n", " ")
        print(message if message.startswith("edm ") else f"{command}: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # a command that keeps partial work says so itself
        print(f"{command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `edm … | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 141


if __name__ == "__main__":
    sys.exit(main())
