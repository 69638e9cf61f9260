"""Faults in the simulator (issue 25): read timeouts and bit errors, seen
from Python: every operation completes once or is reported timed out."""
import pytest

from edm import sim

BASE = {"nodes": 8, "messages": 3000, "load": 0.6, "seed": 4}


def test_read_timeout_reports_null_responses_not_deadlocks():
    s = sim.run({**BASE, "read_timeout_ns": 50}).summary
    reads = s["by_op"]["read"]["messages"] + s["by_op"].get("rmw", {}).get("messages", 0)
    assert s["timed_out"] == reads > 0 and s["deadlocked"] == 0
    assert s["completed"] + s["timed_out"] == s["messages"]
    assert sim.run({**BASE, "read_timeout_ns": 100_000}).summary["timed_out"] == 0


def test_bit_errors_are_recovered_without_loss_or_duplicates():
    lossy = sim.run({**BASE, "zero_queue": 0, "ber": 1e-5})
    s = lossy.summary
    assert s["control_corrupted"] + s["data_corrupted"] > 0 and s["chunk_retries"] > 0
    assert s["completed"] == s["messages"] and s["undetected"] == 0 and s["timed_out"] == 0
    # Each message completed once, after it was issued (bytes: the Rust tests).
    assert (lossy.messages["complete_ps"] > lossy.messages["issue_ps"].astype("int64")).all()


def test_bit_errors_need_the_rules_recovery_is_modelled_with():
    with pytest.raises(ValueError, match="ber.*zero_queue"):
        sim.run({**BASE, "ber": 1e-6})
