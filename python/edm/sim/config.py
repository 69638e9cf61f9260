"""Simulation configuration: the schema, resolution with clear errors, TOML loading.

A configuration is a flat dict (the same keys as ``edm simulate`` flags and a
TOML file's top level). Every field — name, type, range, default, meaning and
the protocols it applies to — is defined once, in the Rust core
(``crates/edm-sim/src/schema.rs``), and checked there; this module derives
its Python views from ``_core.sim_schema()``. Field by field: docs/config.md.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from edm import _core
from edm.tomlfile import read_toml

# One dict per field: name, type ("int", "float", "str"), range, default,
# paper (the paper rules' value of EDM's rule levers, else None), doc,
# protocols, scope.
SCHEMA: list[dict[str, Any]] = _core.sim_schema()
PROTOCOLS: tuple[str, ...] = tuple(_core.PROTOCOLS)
# EDM's two protocols run on one model: "edm" with EDM's own rules (the
# defaults), "edm-paper" with the paper's (PAPER_RULES, fixed).
EDM_PROTOCOLS: tuple[str, ...] = tuple(_core.EDM_PROTOCOLS)
WORKLOADS: tuple[str, ...] = tuple(_core.GENERATED_WORKLOADS)
DEFAULTS: dict[str, Any] = {f["name"]: f["default"] for f in SCHEMA}
# Overrides of the baselines' defaults (0 keeps a protocol's own).
BASELINE_KEYS: tuple[str, ...] = tuple(f["name"] for f in SCHEMA if f["scope"] == "baselines")
# The paper's values of EDM's scheduling levers: protocol "edm-paper" runs with
# exactly these (docs/simulator.md, "EDM's rules and the paper's").
PAPER_RULES: dict[str, Any] = {f["name"]: f["paper"] for f in SCHEMA if f["scope"] == "rule"}


class ConfigError(ValueError):
    """A configuration that cannot run; the message names the source and field."""


def load_toml(path: str | Path) -> dict[str, Any]:
    """A config file's fields (checked by :func:`resolve`)."""
    return read_toml(path, ConfigError, "config file")


def field_lines(path: str | Path) -> dict[str, int]:
    """The line of each top-level ``key = value`` of a TOML file (for errors)."""
    lines: dict[str, int] = {}
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        m = re.match(r"\s*([A-Za-z0-9_-]+)\s*=", line)
        if m:
            lines.setdefault(m.group(1), n)
    return lines


def resolve(config: dict[str, Any], source: str = "config", where: dict[str, str] | None = None) -> dict[str, Any]:
    """Defaults filled in and every field checked (by the Rust core); raises
    ConfigError naming ``source`` and the field, and where that field was set
    when ``where`` says (e.g. {"nodes": "line 3"})."""
    if not isinstance(config, Mapping):
        raise ConfigError(f"{source}: a configuration is a dict of fields, not {type(config).__name__} "
                          f"{config!r:.40}")
    for k in config:
        if not isinstance(k, str):
            raise ConfigError(f"{source}: field name {k!r} is not a string")
    try:
        return _core.resolve_config({k: _plain(v) for k, v in config.items()}, source)
    except ValueError as e:
        message, field = e.args if len(e.args) == 2 else (str(e), None)
        if where and field in where:
            message += f" ({where[field]})"
        raise ConfigError(message) from None


def _plain(value: Any) -> Any:
    """numpy's (and any other numbers-registered) integers and reals as Python's
    own int and float, so sweeps may pass them; bools (numpy's too) and
    everything else unchanged, for the schema's type check to refuse."""
    if isinstance(value, (bool, np.bool_)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)  # np.float64 is a float subclass: made plain too
    return value


def markdown_table() -> str:
    """docs/config.md: every field of the schema (``edm simulate --schema``
    prints it; a test keeps the file current)."""
    lines = [
        "# Simulator configuration",
        "",
        "Every field a simulation takes, as a TOML file's top-level key, an `edm simulate`",
        "flag (`--name-with-dashes`) or a key of the dict given to `edm.sim.run`.",
        "Generated from the schema in `crates/edm-sim/src/schema.rs` by",
        "`edm simulate --schema > docs/config.md`; `tests/test_config_schema.py` fails",
        "when this file is out of date. Fields of EDM's rules (`edm` only) have the",
        "paper's value under `edm-paper`; other protocols ignore fields that are not",
        "theirs, except as noted.",
        "",
        "| field | type | values | default | protocols | meaning |",
        "|---|---|---|---|---|---|",
    ]
    for f in SCHEMA:
        protocols = "all" if len(f["protocols"]) == len(PROTOCOLS) else ", ".join(f["protocols"])
        if f["scope"] == "rule":
            protocols += f" (edm-paper: {f['paper']})"
        elif f["scope"] == "edmonly":
            protocols += " (others: the default only)"
        lines.append(f"| `{f['name']}` | {f['type']} | {f['range']} | {f['default']!r} | {protocols} | {f['doc']} |")
    return "\n".join(lines) + "\n"
