"""The EDM wire protocol's constants for Python.

They are not defined here: they come from the Rust definition
(``crates/edm-proto/src/spec.rs``) through the ``edm._core`` binding, so Python
and Rust cannot disagree. Access them as attributes (``protocol.SUB_MS``) or
through :data:`SPEC`.
"""

from __future__ import annotations

from edm import _core

SPEC: dict[str, int] = dict(_core.spec())


def sw_pim_iter_cycles(ports: int, registered: bool = False) -> int:
    """Cycles of one iteration of the switch scheduler at ``ports`` ports, its request
    tree registered or not (spec.rs; the simulator's ``scheduler_registered_tree``)."""
    return int(_core.sw_pim_iter_cycles(ports, registered))


def __getattr__(name: str) -> int:
    try:
        return SPEC[name]
    except KeyError:
        raise AttributeError(f"edm.protocol has no constant {name!r}") from None


def __dir__() -> list[str]:
    return sorted(list(SPEC) + ["SPEC", "sw_pim_iter_cycles"])
