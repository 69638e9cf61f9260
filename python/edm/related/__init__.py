"""``edm related``: what the related systems of issue #24 teach (Clio's translated,
protected memory node; Puri's memory pools; Gao's closed-loop applications),
measured on our simulator and RTL. One module per system registers its subcommand (``add_parser``);
add a module to ``RELATED_MODULES`` to add one."""

from __future__ import annotations

import argparse
import importlib

RELATED_MODULES = [
    "edm.related.clio",
    "edm.related.closed_loop",
    "edm.related.pools",
]


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("related", help="related systems (issue #24): experiments on our simulator")
    related = p.add_subparsers(dest="related", required=True, metavar="SYSTEM")
    for name in RELATED_MODULES:
        importlib.import_module(name).add_parser(related)

# What `edm reproduce` runs (edm.reproduce.related): (name, module, title);
# each module has reproduce_section(out, quick) -> its report's Markdown,
# written to out/<name>.md.
REPRODUCED = [
    ("clio", "edm.related.clio", "Clio: translation and protection"),
    ("pools", "edm.related.pools", "Puri et al.: memory pools, DRAM contention, placement"),
    ("closed_loop", "edm.related.closed_loop", "Gao et al.: applications with the loop closed"),
]
