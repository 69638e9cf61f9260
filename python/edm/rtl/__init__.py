"""``edm rtl``: tools over the SystemVerilog in ``rtl/``, one module per job.

* :mod:`edm.rtl.synth`: ECP5 synthesis, place and route (``edm rtl synth``).
* :mod:`edm.rtl.asic`: standard-cell synthesis and static timing (``edm rtl asic``).
* :mod:`edm.rtl.latency`: Table 1's latencies measured on the RTL fabric (``edm rtl latency``).
* :mod:`edm.rtl.bench`: run one cocotb bench by name, with waveforms (``edm rtl bench``).
* :mod:`edm.rtl.interop`: standard Ethernet frames across the RTL fabric (``edm rtl interop``).

Each module adds its own sub-command; this package only gathers them.
"""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    from edm.rtl import asic, bench, interop, latency, synth  # noqa: PLC0415 - each pulls its own tools

    p = sub.add_parser("rtl", help="RTL tools (synthesis, standard cells, fabric latency, benches, interop)")
    psub = p.add_subparsers(dest="what", required=True, metavar="WHAT")
    for module in (synth, latency, bench, asic, interop):
        module.add_subparser(psub)
