"""Bad input as a new user gives it (issue 25): each a clear exception or error
message naming what is wrong, never an abort, a bare traceback or a wrong figure."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from edm import _core, sim
from edm.protocol import codec
from edm.cli import main
from edm.sim import Scheduler
from edm.sim.config import DEFAULTS, ConfigError, resolve
from edm.sim.workloads import TraceError, read_trace

SMALL = {"nodes": 8, "messages": 300, "load": 0.2}


# -- the stand-alone scheduler ------------------------------------------------

@pytest.mark.parametrize("ports", [10**6, 2**40, 1025, 1, 0])
def test_scheduler_ports_out_of_range_is_a_value_error_not_an_abort(ports):
    # 10**6 ports asked for a 4 TB allocation and aborted the process.
    with pytest.raises(ValueError, match=r"ports: .* is not in 2\.\.1024"):
        Scheduler(ports)


@pytest.mark.parametrize("ports", [-1, -(10**6)])
def test_scheduler_negative_ports_is_a_config_error(ports):
    # Issue #38: was the binding's raw OverflowError.
    with pytest.raises(ConfigError, match="negative or too large"):
        Scheduler(ports)


@pytest.mark.parametrize("kw, field", [({"chunk_bytes": 0}, "chunk_bytes"), ({"cycle_ps": 0}, "cycle_ps"),
                                       ({"link_gbps": 7}, "link_gbps"), ({"policy": "lifo"}, "priority")])
def test_scheduler_bad_options_name_the_field(kw, field):
    with pytest.raises(ValueError, match=field):
        Scheduler(4, **kw)


@pytest.mark.parametrize("args", [(4, 1, 0, 64), (1, 1, 0, 64), (0, 9, 0, 64), (0, 1, 0, 0)])
def test_scheduler_bad_notification_is_a_value_error(args):
    s = Scheduler(4)
    with pytest.raises(ValueError):
        s.notify(*args)
    assert [g for _ in range(20) for g in s.step()] == [], "a refused notification leaves nothing behind"


def test_scheduler_takes_numpy_integers():
    s = Scheduler(np.int64(4), chunk_bytes=np.int32(64), cycle_ps=np.uint64(3103))
    s.notify(np.int64(0), np.uint16(1), np.int64(7), np.int64(64))
    assert [g for _ in range(20) for g in s.step()] == [(0, 1, 7, 64)]


# -- configuration values from numpy (sweeps) ----------------------------------

def test_numpy_config_values_are_accepted_as_ints_and_floats():
    cfg = resolve({"nodes": np.int64(8), "messages": np.uint32(300), "load": np.float32(0.25),
                   "write_ratio": np.int64(1), "seed": np.int16(3)})
    assert cfg["nodes"] == 8 and type(cfg["nodes"]) is int
    assert type(cfg["load"]) is float and cfg["load"] == pytest.approx(0.25)
    assert type(cfg["write_ratio"]) is float or type(cfg["write_ratio"]) is int
    json.dumps(cfg)  # plain types: summary.json can hold them
    r = sim.run({"nodes": np.int64(8), "messages": np.int64(300), "load": np.float64(0.2)})
    assert r.summary["completed"] == 300
    json.dumps(r.summary)


@pytest.mark.parametrize("value", [np.float64(8.0), np.bool_(True), True, "8", 8.5])
def test_non_integers_are_still_refused_for_integer_fields(value):
    with pytest.raises(ConfigError, match="field 'nodes'.*should be an integer"):
        resolve({"nodes": value})


def test_huge_message_counts_are_a_config_error_not_an_abort():
    with pytest.raises(ConfigError, match="field 'messages'"):
        resolve({"messages": 10**12})
    with pytest.raises(ValueError, match="messages"):
        _core.generate_open_loop({"nodes": 8, "memory_nodes": 0, "link_gbps": 100, "load": 0.5,
                                  "write_ratio": 0.5, "cdf": [(1.0, 1.0)], "unit": 64,
                                  "messages": 10**12, "seed": 1})
    with pytest.raises(ValueError, match="nodes"):
        _core.generate_open_loop({"nodes": 10**6, "memory_nodes": 0, "link_gbps": 100, "load": 0.5,
                                  "write_ratio": 0.5, "cdf": [(1.0, 1.0)], "unit": 64,
                                  "messages": 10, "seed": 1})


# -- traces ----------------------------------------------------------------------

def test_binary_trace_names_the_file_and_line(tmp_path):
    path = tmp_path / "data.bin"
    path.write_bytes(b"0 3 0 1 64 -1 0\n" + bytes(range(128, 256)))
    with pytest.raises(TraceError, match=rf"{path.name}:2: not a text trace"):
        read_trace(path)
    # Through the CLI: the message, exit 2, no traceback.
    assert main(["simulate", "--workload", str(path), "--nodes", "4", "--out", str(tmp_path / "o"), "--quiet"]) == 2


@pytest.mark.parametrize("line, field", [("0 3 70000 1 64 -1 0", "src"), ("0 3 0 1 5000000000 -1 0", "size"),
                                         ("0 1 0 1 16 0 0", "response"), (f"0 3 0 1 64 -1 {2**63}", "start_slot")])
def test_trace_values_past_the_engines_columns_name_the_field(tmp_path, line, field):
    path = tmp_path / "t.trace"
    path.write_text(line + "\n")
    with pytest.raises(TraceError, match=rf"t.trace:1: field '{field}'"):
        read_trace(path)


def test_trace_summary_reports_the_measured_load_not_the_default(tmp_path):
    # Two requesters, each a 64-byte write every 16 slots (10.24 ns): 50 Gb/s
    # each, load 0.5 at 100 Gb/s; the config's `load` (default 0.5) is set
    # elsewhere on purpose.
    path = tmp_path / "t.trace"
    lines = [f"{2 * i + r} 3 {r} {r + 2} 64 -1 {16 * i}" for i in range(200) for r in (0, 1)]
    path.write_text("\n".join(lines) + "\n")
    s = sim.run({"workload": str(path), "nodes": 4, "load": 0.9}).summary
    assert s["offered_load_source"] == "measured"
    # 200 writes per requester over 199 gaps: 200/199 of 0.5.
    assert s["offered_load"] == pytest.approx(0.5 * 200 / 199)
    g = sim.run({**SMALL, "load": 0.3}).summary
    assert g["offered_load"] == 0.3 and g["offered_load_source"] == "config"


# -- the CLI's --out --------------------------------------------------------------

def test_out_naming_an_existing_file_is_a_clear_error(tmp_path, capsys):
    out = tmp_path / "results"
    out.write_text("not a folder")
    assert main(["simulate", "--nodes", "4", "--messages", "50", "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and str(out) in err and "not a folder" in err and "Traceback" not in err
    assert out.read_text() == "not a folder", "left as it was"


def test_out_below_a_file_is_a_clear_error(tmp_path, capsys):
    (tmp_path / "f").write_text("x")
    assert main(["simulate", "--nodes", "4", "--messages", "50", "--out", str(tmp_path / "f" / "sub"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "is a file, not a folder" in err and len(err.strip().splitlines()) == 1


# -- wrong types and sizes through the Python API: an exception, never an abort ---

_JUNK = [None, -1, 0, 1, 2**16, 2**32, 2**64, -(2**70), 1.5, float("nan"), "x", b"\x00", [], {}, (1, 2),
         np.int64(3), np.float64(2.0), np.uint8(255)]


def _calls(rng: random.Random):
    """(name, callable) pairs of the public entry points with junk arguments."""
    j = lambda: rng.choice(_JUNK)  # noqa: E731
    blocks = lambda: [rng.choice([(j(), j()), (rng.randrange(4), rng.getrandbits(64)), j()])  # noqa: E731
                      for _ in range(rng.randrange(4))]
    yield "Scheduler", lambda: Scheduler(j(), chunk_bytes=j()) if rng.random() < 0.5 else Scheduler(j())
    yield "notify", lambda: Scheduler(4).notify(j(), j(), j(), j())
    yield "encode_grant", lambda: codec.encode_grant(j(), j(), j(), j())
    yield "encode_notification", lambda: codec.encode_notification(j(), j(), j(), j())
    yield "decode_control", lambda: _core.decode_control(rng.choice([(j(), j()), j()]), j())
    yield "implied_seq", lambda: _core.implied_seq(rng.choice([(j(), j()), j()]))
    yield "decode_message", lambda: _core.decode_message(blocks())
    yield "decode_frame", lambda: _core.decode_frame(blocks())
    yield "RxDemux.push", lambda: codec.RxDemux().push(rng.choice([(j(), j()), j()]))
    yield "tx_mux", lambda: codec.tx_mux(rng.choice([[], [j()], [b"\x00" * 64]]), rng.choice([[], [blocks()], j()]),
                                         rng.choice(["fair", "strict", j()]))
    yield "Scrambler", lambda: codec.Scrambler(j()).scramble(j())
    yield "ControlTx.grant", lambda: codec.ControlTx().grant(j(), j(), j())
    yield "resolve", lambda: resolve({rng.choice(list(DEFAULTS)): j()})
    yield "generate_open_loop", lambda: _core.generate_open_loop(
        {"nodes": j(), "memory_nodes": j(), "link_gbps": 100, "load": j(), "write_ratio": 0.5,
         "cdf": [(1.0, 1.0)], "unit": j(), "messages": rng.choice([10, j()]), "seed": 1})


def test_junk_through_the_python_api_raises_ordinary_exceptions():
    """A seeded fuzz of the bindings: each call returns or raises an Exception
    subclass (TypeError, ValueError, OverflowError, ...). A Rust panic would
    surface as pyo3's PanicException, a BaseException, and fail this test; an
    abort would end the run."""
    rng = random.Random(25)
    seen = {}
    for _ in range(300):
        for name, call in _calls(rng):
            try:
                call()
                seen.setdefault(name, set()).add("ok")
            except Exception as e:  # noqa: BLE001 - any ordinary exception is the point
                seen.setdefault(name, set()).add(type(e).__name__)
    assert all(v - {"ok"} for v in seen.values()), f"every entry point refused some junk: {seen}"


# -- issue #38: the Python API's wrong types are the project's ConfigError -------

@pytest.mark.parametrize("config, match", [("abc", "dict of fields, not str"), (42, "dict of fields, not int"),
                                           ({1: 2}, "field name 1 is not a string")])
def test_run_with_a_config_that_is_not_a_dict_of_fields_is_a_config_error(config, match):
    with pytest.raises(ConfigError, match=match):
        sim.run(config)


@pytest.mark.parametrize("args", [(-1,), ("four",), (4.5,)])
def test_scheduler_with_wrong_types_is_a_config_error(args):
    with pytest.raises(ConfigError, match="Scheduler"):
        Scheduler(*args)
