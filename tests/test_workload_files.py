"""Workloads from files (docs/workloads.md): a size-CDF file runs as the
generator's input, a trace as given; each kind is told apart by the core."""

from __future__ import annotations

import pytest

from edm import sim
from edm.cli import main
from edm.sim.workloads import cdf_text, workload_kind

SMALL = {"nodes": 8, "load": 0.3, "messages": 400, "seed": 3}


def _copy_of(app: str, path):
    path.write_text(cdf_text(app))
    return str(path)


def test_a_cdf_file_runs_exactly_as_its_named_workload(tmp_path):
    path = _copy_of("memcached", tmp_path / "mine.txt")
    by_name = sim.run({**SMALL, "workload": "memcached"})
    by_file = sim.run({**SMALL, "workload": path})
    assert by_file.messages[["size", "issue_ps", "complete_ps"]].equals(
        by_name.messages[["size", "issue_ps", "complete_ps"]])
    assert by_file.summary["offered_load_source"] == "config" and by_file.summary["messages"] == 400


def test_a_cdf_file_takes_load_and_messages_and_comments(tmp_path):
    path = tmp_path / "two.txt"
    path.write_text("# size in 1460-byte packets, unused, cumulative probability\n1 1 0.0\n1 1 0.5\n\n10 1 1.0\n")
    assert workload_kind(str(path)) == "cdf"
    r = sim.run({**SMALL, "workload": str(path), "messages": 300})
    sizes = r.messages["size"]
    assert len(sizes) == 300 and (sizes % 1460 == 0).all() and sizes.min() == 1460 and sizes.max() <= 14600
    assert main(["simulate", "--workload", str(path), "--nodes", "8", "--load", "0.3", "--messages", "300",
                 "--quiet", "--out", str(tmp_path / "o")]) == 0


def test_kinds_are_told_apart(tmp_path):
    trace = tmp_path / "t.trace"
    trace.write_text("# a trace\n0 1 0 1 16 64 0\n")
    assert workload_kind("hadoop") == "named" and workload_kind(str(trace)) == "trace"
    assert sim.run({"nodes": 4, "workload": str(trace)}).summary["offered_load_source"] == "measured"


@pytest.mark.parametrize("text, why", [("5 1 0.5\n2 1 1.0\n", "not non-decreasing"),
                                       ("0 1 1.0\n", "below one unit"), ("a 1 1.0\n", "line 1")])
def test_a_bad_cdf_file_is_one_line_naming_it(tmp_path, capsys, text, why):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    rc = main(["simulate", "--workload", str(path), "--nodes", "8", "--messages", "10", "--quiet",
               "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2 and str(path) in err and why in err and len(err.strip().splitlines()) == 1, err
