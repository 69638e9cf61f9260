"""`--timing rtl`: the simulator's step cycles from an `edm rtl latency` result
(python/edm/sim/timing.py). The equality with the RTL itself is checked where
the RTL runs: tests/rtl/test_rtl_fabric.py::test_simulator_speaks_for_the_rtl."""

from __future__ import annotations

import copy
import json

import pytest

from edm import protocol, sim
from edm.cli import main
from edm.sim import timing
from edm.sim.config import DEFAULTS


def _result(read: list[int], write: list[int]) -> dict:
    """An `edm rtl latency` JSON with these step cycles (the rows' names as the command writes them)."""
    def rows(names, cycles):
        return [[f"{n} ...", c, 0] for n, c in zip(names, cycles)]
    return {"breakdown": {"link_cycles": 19, "cases": {"unloaded": {
        "read": {"rows": rows(timing._ROWS["read"], read), "total": 0, "dram": 1},
        "write": {"rows": rows(timing._ROWS["write"], write), "total": 0, "dram": 0}}}}}


# Figure 5's steps as `edm rtl latency` prints them in its "paper" column.
PAPER_READ = [2, 4, 7, 4, 10, 4, 4, 4, 9, 3]
PAPER_WRITE = [2, 4, 7, 4, 9, 4, 4, 4, 9, 3]


def test_the_papers_rows_give_the_papers_steps():
    """Mapping Figure 5's own rows gives the simulator's defaults, except the
    memory node's extra cycle: Figure 5 counts the memory node from the RREQ's
    first block, the model from its last (it adds the request's serialization),
    so the same 10 cycles are 1 - 2 = -1 beyond a /G/'s 9 in the model's terms."""
    steps = timing.steps_from_latency(_result(PAPER_READ, PAPER_WRITE))
    assert set(steps) <= set(DEFAULTS)
    differ = {k: (v, DEFAULTS[k]) for k, v in steps.items() if v != DEFAULTS[k]}
    request_blocks = sim._core.message_blocks("RREQ", 64)
    assert differ == {"rreq_extra_cycles": (10 - 9 - (request_blocks - 1), protocol.HOST_PROC_RREQ_EXTRA_CYCLES)}


def test_switch_tx_mux_goes_to_the_switch_steps():
    """A hop toward a host one cycle longer than toward the switch (the switch's
    TX multiplexer) adds a cycle to the grant's and the circuit's steps, not to the PCS."""
    read, write = list(PAPER_READ), list(PAPER_WRITE)
    for rows in (read, write):
        rows[3] = rows[7] = 5
    steps = timing.steps_from_latency(_result(read, write))
    assert steps["pcs_pass_cycles"] == 2
    assert steps["sw_gen_grant_cycles"] == DEFAULTS["sw_gen_grant_cycles"] + 1
    assert steps["sw_forward_cycles"] == DEFAULTS["sw_forward_cycles"] + 1


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["breakdown"]["cases"].pop("unloaded"), "not an `edm rtl latency` result"),
    (lambda d: d["breakdown"]["cases"]["unloaded"]["read"]["rows"].pop(), "the read has 9 rows"),
    (lambda d: d["breakdown"]["cases"]["unloaded"]["write"]["rows"][2].__setitem__(0, "switch: other"),
     "write row 2"),
    (lambda d: d["breakdown"]["cases"]["unloaded"]["read"]["rows"][1].__setitem__(1, 3), "PHY hops"),
    (lambda d: d["breakdown"]["cases"]["unloaded"]["write"]["rows"][2].__setitem__(1, 2), "sw_notify_cycles"),
])
def test_results_that_do_not_fit_are_refused_by_name(tmp_path, edit, message):
    doc = _result(PAPER_READ, PAPER_WRITE)
    edit(doc)
    path = tmp_path / "latency.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(timing.TimingError, match=message) as e:
        timing.rtl_steps(path)
    assert str(path) in str(e.value)


def test_missing_or_broken_file(tmp_path):
    with pytest.raises(timing.TimingError, match="run `edm rtl latency` first"):
        timing.rtl_steps(tmp_path / "none.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(timing.TimingError, match="bad.json: cannot read it as JSON"):
        timing.rtl_steps(tmp_path / "bad.json")


def test_faster_steps_make_a_message_alone_faster():
    """Each step counts: a cycle less in any of them is a cycle less alone."""
    base = {"protocol": "edm-paper", "nodes": 4}
    for op, field in ((0, "gen_req_cycles"), (0, "proc_response_cycles"), (1, "proc_write_cycles"),
                      (1, "grant_to_data_cycles"), (0, "rreq_extra_cycles"), (1, "sw_notify_cycles"),
                      (0, "sw_request_extra_cycles"), (0, "pcs_pass_cycles")):
        before = sim.alone_ps(base, op, 64)
        after = sim.alone_ps({**base, field: DEFAULTS[field] + 1}, op, 64)
        hops = 4 * 2 if field == "pcs_pass_cycles" else 1
        assert after - before == hops * protocol.CYCLE_PS, field


def test_a_forwarded_request_cannot_take_negative_time():
    with pytest.raises(sim.ConfigError, match="rreq_extra_cycles"):
        sim.config.resolve({"grant_to_data_cycles": 2, "rreq_extra_cycles": -3})


def test_cli_timing_rtl(tmp_path, capsys):
    """`edm simulate --timing rtl` runs with the file's steps; a flag still overrides one."""
    read, write = list(PAPER_READ), list(PAPER_WRITE)
    read[0] = write[0] = 5
    path = tmp_path / "latency.json"
    path.write_text(json.dumps(_result(read, write)))
    out = tmp_path / "out"
    args = ["simulate", "--nodes", "8", "--messages", "200", "--quiet", "--out", str(out)]
    assert main(args + ["--timing", "rtl", "--timing-file", str(path)]) == 0
    assert json.loads((out / "summary.json").read_text())["config"]["gen_req_cycles"] == 5
    assert main(args + ["--timing", "rtl", "--timing-file", str(path), "--gen-req-cycles", "4"]) == 0
    assert json.loads((out / "summary.json").read_text())["config"]["gen_req_cycles"] == 4
    capsys.readouterr()
    assert main(args + ["--timing", "rtl", "--timing-file", str(tmp_path / "none.json")]) == 2
    assert "run `edm rtl latency` first" in capsys.readouterr().err


def test_result_from_reproduce_is_read_too():
    """`edm reproduce` stores the breakdown inside its own document; both forms map alike."""
    doc = _result(PAPER_READ, PAPER_WRITE)
    wrapped = {"fingerprint": "x", "breakdown": copy.deepcopy(doc["breakdown"])}
    assert timing.steps_from_latency(wrapped) == timing.steps_from_latency(doc)
