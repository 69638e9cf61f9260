"""The simulator's configuration schema: defined once in Rust
(crates/edm-sim/src/schema.rs); Python's defaults, key sets, CLI flags and
docs/config.md derive from it and agree with it."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from edm import _core, sim
from edm.cli import main
from edm.sim import config
from edm.sim.config import ConfigError, resolve

ROOT = Path(__file__).resolve().parents[1]
SMALL = {"nodes": 8, "messages": 400, "load": 0.4}


def test_python_views_are_the_rust_schemas():
    names = [f["name"] for f in config.SCHEMA]
    assert len(names) == len(set(names))
    assert list(config.DEFAULTS) == names
    # The defaults are a configuration the core accepts, unchanged.
    assert resolve({}) == config.DEFAULTS
    assert config.PROTOCOLS == tuple(_core.PROTOCOLS) == (*_core.EDM_PROTOCOLS, *_core.BASELINES)
    protocol = next(f for f in config.SCHEMA if f["name"] == "protocol")
    assert protocol["range"] == ", ".join(config.PROTOCOLS)
    # The paper's rules are what protocol edm-paper runs with; EDM's rules differ from them.
    paper = resolve({"protocol": "edm-paper"})
    assert config.PAPER_RULES == {k: paper[k] for k in config.PAPER_RULES}
    assert any(config.DEFAULTS[k] != v for k, v in config.PAPER_RULES.items())
    for f in config.SCHEMA:
        assert isinstance(f["default"], {"int": int, "float": float, "str": str}[f["type"]]), f
        assert set(f["protocols"]) <= set(config.PROTOCOLS) and f["protocols"], f
        assert f["doc"], f
    assert set(config.BASELINE_KEYS) == {f["name"] for f in config.SCHEMA
                                         if set(f["protocols"]) <= set(_core.BASELINES)}


def test_every_field_is_an_edm_simulate_flag(capsys):
    assert main(["simulate", "--help"]) == 0
    usage = capsys.readouterr().out
    for name in config.DEFAULTS:
        assert f"--{name.replace('_', '-')}" in usage, name


def test_docs_config_md_is_current(capsys):
    assert main(["simulate", "--schema"]) == 0
    printed = capsys.readouterr().out
    assert printed == config.markdown_table()
    assert (ROOT / "docs" / "config.md").read_text() == printed, \
        "docs/config.md is out of date: edm simulate --schema > docs/config.md"


@pytest.mark.parametrize("field, bad, why", [
    ("nodes", 1025, "is not 2..1024"), ("link_gbps", 40, "is not 10, 25, 100 or 400"),
    ("load", 0, "is not in (0.0, 1.5]"), ("warmup_fraction", 1.0, "is not in [0.0, 1.0)"),
    ("batch_bytes", 32, "is not 0 (off) or 64..16777216"), ("priority", "lifo", "is not one of ['srpt', 'fcfs', 'las']"),
    ("early_grant_ps", -2, "is not -1..10000000"), ("memory_order", 1, "should be a string"),
])
def test_range_errors_come_from_the_schema_and_name_the_field(field, bad, why):
    with pytest.raises(ConfigError) as e:
        resolve({field: bad}, "here")
    assert str(e.value) == f"here: field {field!r} = {bad!r} {why}"


def test_a_config_file_error_names_the_file_the_field_and_its_line(tmp_path, capsys):
    cfg = tmp_path / "c.toml"
    cfg.write_text("# a rack\nmessages = 100\n  nodes = 1\n")
    assert main(["simulate", "--config", str(cfg), "--quiet", "--out", str(tmp_path / "o")]) == 2
    assert f"{cfg}: field 'nodes' = 1 is not 2..1024 (line 3)" in capsys.readouterr().err
    # A flag overriding the file is named as the flag.
    assert main(["simulate", "--config", str(cfg), "--nodes", "2000", "--quiet", "--out", str(tmp_path / "o")]) == 2
    assert "field 'nodes' = 2000 is not 2..1024 (flag --nodes)" in capsys.readouterr().err
    cfg.write_text("nodes = 8\nlod = 0.5\n")
    assert main(["simulate", "--config", str(cfg), "--quiet", "--out", str(tmp_path / "o")]) == 2
    assert f"{cfg}: unknown field(s) ['lod']" in capsys.readouterr().err


def test_a_generated_workload_made_in_the_core_runs_as_the_same_messages_given():
    """run() makes a generated workload inside the core; the same messages
    given from Python (as a trace or an application would) give the same
    results, message by message."""
    for extra in ({}, {"workload": "hadoop", "load": 0.3}, {"protocol": "dctcp"}):
        cfg = {**SMALL, **extra}
        inside = sim.run(cfg)
        given = sim.run(cfg, messages=sim.build_workload(resolve(cfg)))
        for column in ("op", "requester", "memory", "size", "issue_ps", "complete_ps", "alone_ps"):
            assert (inside.messages[column] == given.messages[column]).all(), (extra, column)
        assert inside.summary["mean_slowdown"] == given.summary["mean_slowdown"]


def test_numpy_values_reach_the_schema_as_plain_numbers():
    cfg = resolve({"nodes": np.int32(8), "load": np.float32(0.5), "seed": np.uint64(2**63)})
    assert (cfg["nodes"], cfg["load"], cfg["seed"]) == (8, 0.5, 2**63)
    with pytest.raises(ConfigError, match="field 'seed' = -1 is not 0 or more"):
        resolve({"seed": -1})
    with pytest.raises(ConfigError, match=r"field 'seed' = 340282366920938463463374607431768211456 is not"):
        resolve({"seed": 2**128})


def _private_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    return [f"{node.module}.{a.name}" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            for a in node.names if a.name.startswith("_") and not a.name.startswith("__")
            and node.module not in ("edm", "__future__")]


def test_the_sim_package_imports_no_private_names_of_its_own_modules():
    for path in (ROOT / "python" / "edm" / "sim").glob("*.py"):
        assert _private_imports(path) == [], path
