"""``edm related``: the related systems of issue 24, one subcommand each."""

from __future__ import annotations

import importlib

# Each module exposes add_related_parser(subparsers).
RELATED_MODULES = ["edm.related.clio"]


def add_parser(sub) -> None:
    p = sub.add_parser("related", help="what the related systems teach (Clio, Puri, Gao) on EDM")
    rsub = p.add_subparsers(dest="related", required=True, metavar="SYSTEM")
    for name in RELATED_MODULES:
        importlib.import_module(name).add_related_parser(rsub)
