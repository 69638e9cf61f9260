"""`edm simulate --help` a newcomer can read, and README examples that show
what they claim (issue #38)."""

from __future__ import annotations

import json

from edm import sim
from edm.cli import build_parser, main
from edm.sim.config import SCHEMA


def _simulate_parser():
    sub = next(a for a in build_parser()._actions if hasattr(a, "choices") and a.choices and "simulate" in a.choices)
    return sub.choices["simulate"]


def test_every_field_flag_is_in_a_named_group():
    groups = {g.title: {a.dest for a in g._group_actions} for g in _simulate_parser()._action_groups}
    for title in ("workload", "fabric", "memory nodes", "EDM rules", "baselines", "faults", "input and output"):
        assert groups.get(title), f"no group {title!r}"
    grouped = set().union(*(v for k, v in groups.items() if k not in ("options", "optional arguments")))
    assert {f["name"] for f in SCHEMA} <= grouped, "a field flag outside the groups"
    assert "read_timeout_ns" in groups["faults"] and "memory_order" in groups["EDM rules"]
    assert "dctcp_k_bytes" in groups["baselines"] and "load" in groups["workload"]


def test_time_flags_take_their_unit_or_a_named_one(tmp_path, capsys):
    assert main(["simulate", "--nodes", "4", "--messages", "20", "--quiet", "--out", str(tmp_path),
                 "--read-timeout-ns", "2us", "--scheduler-cycle-ps", "0.333ns", "--prop-ps", "5000"]) == 0
    cfg = json.loads((tmp_path / "summary.json").read_text())["config"]
    assert (cfg["read_timeout_ns"], cfg["scheduler_cycle_ps"], cfg["prop_ps"]) == (2000, 333, 5000)
    assert main(["simulate", "--scheduler-cycle-ps", "0.3333ns", "--out", str(tmp_path)]) == 2
    assert "not a whole number of ps" in capsys.readouterr().err


def test_help_names_units_and_what_timing_rtl_needs(capsys):
    assert main(["simulate", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())  # unwrapped
    assert "_ps picoseconds, _ns nanoseconds, _cycles" in text and "`edm rtl latency`" in text


def test_memory_order_pair_differs_only_with_mixed_sizes():
    """README's --memory-order pair example: with one message size the two
    orders agree, so it runs on the hadoop workload (mixed sizes)."""
    small = {"nodes": 16, "load": 0.3, "messages": 1000, "seed": 1}

    def slowdown(**kw):
        return sim.run({**small, **kw}).summary["mean_slowdown"]

    assert slowdown(workload="micro") == slowdown(workload="micro", memory_order="pair")
    assert slowdown(workload="hadoop") != slowdown(workload="hadoop", memory_order="pair")
