"""Faults in the simulator (issues 25, 40): read timeouts and bit errors,
seen from Python: every operation completes once or is reported timed out
or failed; every write is acknowledged (its `acked_ps`, outcome "applied")
or reported failed, never lost unseen (-3, outcome "lost")."""
import numpy as np
import pytest

from edm import sim
from edm.sim.workloads import OP_READ, OP_RMW

BASE = {"nodes": 8, "messages": 3000, "load": 0.6, "seed": 4}


def test_read_timeout_reports_null_responses_not_deadlocks():
    s = sim.run({**BASE, "read_timeout_ns": 50}).summary
    reads = s["by_op"]["read"]["messages"] + s["by_op"].get("rmw", {}).get("messages", 0)
    assert s["timed_out"] == reads > 0 and s["deadlocked"] == 0
    assert s["completed"] + s["timed_out"] == s["messages"]
    assert sim.run({**BASE, "read_timeout_ns": 100_000}).summary["timed_out"] == 0


def test_with_an_ideal_nack_bit_errors_are_recovered_without_loss_or_duplicates():
    lossy = sim.run({**BASE, "zero_queue": 0, "ber": 1e-5, "data_recovery": "ideal"})
    s = lossy.summary
    assert s["control_corrupted"] + s["data_corrupted"] > 0 and s["chunk_retries"] > 0
    assert s["completed"] == s["messages"] and s["undetected"] == 0 and s["timed_out"] == 0
    # Each message completed once, after it was issued (bytes: the Rust tests).
    assert (lossy.messages["complete_ps"] > lossy.messages["issue_ps"].astype("int64")).all()


@pytest.mark.parametrize("zero_queue", [0, 1])
def test_with_the_protocol_every_write_is_acknowledged_under_bit_errors(zero_queue):
    run = sim.run({**BASE, "zero_queue": zero_queue, "ber": 1e-5})
    s, df = run.summary, run.messages
    assert s["config"]["data_recovery"] == "protocol"
    assert s["write_data_dropped"] > 0 and s["write_retries"] > 0 and s["undetected"] == 0
    # Every operation has its outcome: applied (a write acknowledged).
    assert s["outcomes"] == {"applied": s["messages"], "failed": 0, "lost": 0, "unresolved": 0}
    assert s["writes_lost"] == s["writes_unresolved"] == s["writes_applied_twice"] == 0
    writes = df[df["op"] == "write"]
    assert (writes["acked_ps"] > writes["complete_ps"]).all() and len(writes) == s["writes_acked"]
    assert (df.loc[df["op"] != "write", "acked_ps"] == -1).all()
    assert s["by_op"]["write"]["mean_acked_latency_ns"] > s["by_op"]["write"]["mean_latency_ns"]
    # One switch, no link down: every data unit dropped was after the switch.
    assert s["data_corrupted"] == s["write_data_dropped"] + s["response_data_dropped"]


def test_without_faults_every_write_is_acknowledged_with_few_ack_blocks():
    s = sim.run(BASE).summary
    assert s["outcomes"]["applied"] == s["messages"] and s["writes_acked"] == 0
    writes = s["by_op"]["write"]["messages"] / (1 - s["config"]["warmup_fraction"])
    assert 0 < s["acks_sent"] < writes


def test_with_the_protocol_the_dual_switch_delivers_a_write_one_plane_dropped():
    s = sim.run({**BASE, "ber": 1e-6, "dual_switch": 1}).summary
    assert s["data_corrupted"] > 0 and s["writes_lost"] == 0
    assert s["completed"] == s["messages"]


def test_data_recovery_is_a_named_choice():
    with pytest.raises(ValueError, match="data_recovery"):
        sim.run({**BASE, "ber": 1e-6, "data_recovery": "nack"})


def test_bit_errors_need_the_rules_recovery_is_modelled_with():
    with pytest.raises(ValueError, match="ber.*memory_order"):
        sim.run({**BASE, "protocol": "edm-paper", "ber": 1e-6})


def test_with_an_ideal_nack_bit_errors_are_recovered_under_the_zero_queue_rules_too():
    s = sim.run({**BASE, "ber": 1e-5, "data_recovery": "ideal"}).summary
    assert s["config"]["zero_queue"] and s["data_corrupted"] > 0
    assert s["completed"] == s["messages"] and s["failed"] == s["timed_out"] == 0


def test_the_dual_switch_loses_nothing_when_a_switch_fails_for_good():
    cfg = {**BASE, "zero_queue": 0, "retry_timeout_ns": 2000, "give_up_ns": 100_000,
           "failures": "switch:0@5000"}
    one = sim.run({**cfg, "failures": "switch@5000"}).summary
    # (With one plane what the dead switch carried fails, reported; no
    # write is lost unseen.)
    assert one["failed"] > 0 and one["writes_lost"] == 0
    assert one["outcomes"]["applied"] + one["outcomes"]["failed"] == one["messages"]
    dual = sim.run({**cfg, "dual_switch": 1}).summary
    assert dual["completed"] == dual["messages"] and dual["failed"] == 0
    assert dual["link_down_drops"] > 0 and dual["mirror_copies_discarded"] > 0
    # One run, the planes coupled: a host stops sending into the dead plane
    # once the other delivered, and sends new messages on the other plane
    # only once it sees its link go dark (link_detect_ns). With one-chunk
    # messages and no retry needed, each message sent on both either had a
    # second copy discarded, lost exactly one unit on the dead plane, or
    # was dropped with the dead switch's state (it grants nothing more),
    # where one plane alone retries until give-up.
    assert dual["notify_retries"] == dual["chunk_retries"] == 0
    assert dual["unmirrored"] > 0
    assert (dual["link_down_drops"] + dual["mirror_copies_discarded"] + dual["unmirrored"]
            + dual["demand_dropped"] == dual["messages"])
    assert dual["link_down_drops"] * 10 < one["link_down_drops"]


def test_messages_left_on_one_plane_are_lost_if_it_fails_too():
    # (The messages are issued in 3.3 us.) Switch 0 fails at 0.5 us for
    # good: every host sees it and sends on plane 1 only. Then host 2's
    # plane-1 link fails too: for 2 us, the retries bring everything
    # through; for good, the messages touching host 2 in flight on plane 1
    # alone are lost with it, reported failed, and no other.
    cfg = {**BASE, "zero_queue": 0, "retry_timeout_ns": 2000, "give_up_ns": 20_000,
           "dual_switch": 1}
    back = sim.run({**cfg, "failures": "switch:0@500,link:2:1@2000-4000"}).summary
    assert back["unmirrored"] > 0 and back["link_down_drops"] > 0
    # (Writes on plane 1 only whose data went into the dead link are sent
    # again for want of their /A/: nothing lost.)
    assert back["completed"] == back["messages"] and back["failed"] == back["writes_lost"] == 0
    ideal = sim.run({**cfg, "failures": "switch:0@500,link:2:1@2000-4000",
                     "data_recovery": "ideal"}).summary
    assert ideal["completed"] == ideal["messages"] and ideal["failed"] == 0
    lost = sim.run({**cfg, "failures": "switch:0@500,link:2:1@2000"})
    s, df = lost.summary, lost.messages
    assert s["unmirrored"] > 0 and s["failed"] > 0
    assert s["outcomes"]["applied"] + s["outcomes"]["failed"] == s["messages"] and s["writes_lost"] == 0
    failed = df[df["outcome"] == "failed"]
    assert len(failed) == s["failed"]
    unfinished = df[df["outcome"] != "applied"]
    assert ((unfinished["requester"] == 2) | (unfinished["memory"] == 2)).all()
    assert (failed["issue_ps"] < 2_000_000).any()


def test_a_memory_nodes_dead_link_is_refused_by_its_switch_and_carried_by_the_other():
    # Host 2's plane-0 link fails for good: its requesters cannot see it,
    # the switch does (link_detect_ns) and refuses the demand for it, so
    # nothing more goes into the dead link; plane 1 carries it all.
    cfg = {**BASE, "zero_queue": 0, "retry_timeout_ns": 300, "give_up_ns": 100_000,
           "dual_switch": 1, "failures": "link:2:0@1000"}
    s = sim.run(cfg).summary
    assert s["completed"] == s["messages"] and s["failed"] == 0
    assert s["demand_dropped"] > 0 and 0 < s["link_down_drops"] < 100


def _with_rmws(cfg):
    """The configuration's workload with every third read made an RMW."""
    msgs = sim.build_workload(sim.resolve(dict(cfg)))
    reads = np.flatnonzero(msgs.op == OP_READ)[::3]
    msgs.op[reads] = OP_RMW
    msgs.size[reads] = 8
    return msgs, len(reads)


def test_an_rmw_is_applied_once_whatever_copies_reach_its_memory_node():
    cfg = {**BASE, "zero_queue": 0, "dual_switch": 1, "retry_timeout_ns": 300}
    msgs, rmws = _with_rmws(cfg)
    assert rmws > 100
    # Without faults each RMW's second copy is recognised and answered with
    # the first's result.
    s = sim.run(cfg, messages=msgs).summary
    assert s["rmw_replayed"] == rmws and s["rmw_applied_twice"] == s["rmw_refused"] == 0
    # Bit errors with short retries, a switch failing: copies from retries and
    # from both planes, none applied twice, no first copy refused.
    # (The protocol's writes with a retry timeout past their /A/'s round trip.)
    for extra in ({"ber": 1e-4, "data_recovery": "ideal"}, {"ber": 1e-4, "retry_timeout_ns": 3000},
                  {"failures": "switch:1@1000"}, {"failures": "link:3:0@500-1500"}):
        s = sim.run({**cfg, **extra}, messages=msgs).summary
        assert s["completed"] == s["messages"] and s["rmw_replayed"] > 0, extra
        assert s["rmw_applied_twice"] == s["rmw_first_copy_refused"] == s["writes_lost"] == 0, extra


@pytest.mark.parametrize("events", ["switch:2@5", "link:99@5", "link:1@9-3", "link:1@5/2"])
def test_bad_failure_events_name_the_field(events):
    with pytest.raises(ValueError, match="failures"):
        sim.run({**BASE, "zero_queue": 0, "failures": events})


def test_outcomes_of_a_protocol_without_acknowledgements_and_of_batched_writes():
    # A baseline has no /A/: its completed writes are applied, no acked_ps.
    base = sim.run({**BASE, "protocol": "dctcp", "messages": 1000})
    assert base.summary["outcomes"]["applied"] == 1000 and (base.messages["acked_ps"] == -1).all()
    # A mega-message's one /A/ acknowledges each of its members.
    batched = sim.run({**BASE, "messages": 2000, "batch_bytes": 1024}).messages
    writes = batched[batched["op"] == "write"]
    assert (batched["outcome"] == "applied").all() and (writes["acked_ps"] > writes["complete_ps"]).all()
