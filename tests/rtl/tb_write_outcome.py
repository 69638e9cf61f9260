"""cocotb: edm_write_outcome, a compute node's write outcomes (docs/protocol.md
§4b), against the rule it states.

The bench posts writes (a posted completion each: destination, id, tag) to 4
tracked memory nodes and one untracked port, ids per destination in order,
and plays the memory nodes' /A/: most writes are acknowledged a random
while after they are posted, some before (the engine's completion queue held
up: EARLY), in /A/ naming several ids at once; some never (lost); some
acknowledged a second time after their outcome (a duplicate's
re-acknowledgement, a stray); outcomes are taken with random back-pressure.
Checked: every write to a tracked destination gets exactly one outcome, ok
if and only if its /A/ came, a failure no sooner than cfg_give_up after it
was posted and no later than the scan's bound, an ok one's age the cycles
from its posted completion to its /A/ (within the /A/ queue's delay; 0 for
an EARLY one); no outcome for anything else; the counters agree.
"""

from __future__ import annotations

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from tbutil import clock_and_reset, seeded_random

GIVE_UP = 400
TRACKED = [0, 1, 2, 3]
UNTRACKED = 9


@cocotb.test()
async def every_tracked_write_gets_one_outcome(dut):
    rng = seeded_random("write_outcome")
    slots = 1 << int(dut.SLOTS_LOG2.value)
    n_slots = slots << int(dut.DST_LOG2.value)
    await clock_and_reset(dut, cfg_give_up=GIVE_UP, posted_valid=0, posted_dst=0, posted_id=0, posted_tag=0,
                          ack_valid=0, ack_peer=0, ack_base=0, ack_map=0, out_ready=0)
    cycles = 12000
    next_id = {d: 0 for d in TRACKED + [UNTRACKED]}
    posted = {}            # cycle -> (dst, id, tag)
    ack_due = {}           # cycle -> list of (dst, id)
    writes = {}            # (dst, id, tag, cycle) -> dict(posted, acked=None, fate)
    tag = 0
    for t in range(50, cycles - 1500, 4):
        if rng.random() < 0.8:
            d = rng.choice(TRACKED + [UNTRACKED])
            i = next_id[d]
            next_id[d] = (i + 1) % 256
            tag = (tag + 1) % 256
            posted[t] = (d, i, tag)
            fate = rng.choices(["ack", "early", "lost", "twice"], [75, 8, 10, 7])[0]
            w = writes[(d, i, tag, t)] = dict(posted=t, fate=fate, acked=None)
            if fate == "early":
                ack_due.setdefault(t - rng.randint(1, 3), []).append((d, i, w))
            elif fate in ("ack", "twice"):
                ack_due.setdefault(t + rng.randint(5, 150), []).append((d, i, w))
            if fate == "twice":
                ack_due.setdefault(t + rng.randint(GIVE_UP + 20, GIVE_UP + 200), []).append((d, i, None))
    pending_acks = []      # (dst, id, write or None) waiting to be sent
    outcomes = []
    stray_sent = 0
    for t in range(cycles):
        p = posted.get(t)
        dut.posted_valid.value = p is not None
        if p is not None:
            dut.posted_dst.value, dut.posted_id.value, dut.posted_tag.value = p
        pending_acks += ack_due.get(t, [])
        # One /A/ every other cycle: the first pending id and the others of
        # its destination within 16 ids of it.
        dut.ack_valid.value = 0
        if pending_acks and t % 2 == 0:
            d, base, _ = pending_acks[0]
            take = [a for a in pending_acks if a[0] == d and (a[1] - base) % 256 < 16]
            for a in take:
                pending_acks.remove(a)
                if a[2] is not None:
                    a[2]["acked"] = t
                else:
                    stray_sent += 1
            dut.ack_valid.value, dut.ack_peer.value, dut.ack_base.value = 1, d, base
            dut.ack_map.value = sum(1 << ((a[1] - base) % 256) for a in take)
        ready = rng.random() < 0.6
        dut.out_ready.value = int(ready)
        await ReadOnly()
        if int(dut.out_valid.value) and ready:
            outcomes.append((t, int(dut.out_dst.value), int(dut.out_id.value), int(dut.out_tag.value),
                             int(dut.out_ok.value), int(dut.out_age.value)))
        await RisingEdge(dut.clk)
        await FallingEdge(dut.clk)
    # Every tracked write: exactly one outcome, the right one. Keys (dst, id,
    # tag) repeat after hundreds of writes: matched in order.
    by_key = {}
    for o in outcomes:
        by_key.setdefault(o[1:4], []).append(o)
    n_ok = n_fail = 0
    for (d, i, g, _), w in sorted(writes.items(), key=lambda kv: kv[1]["posted"]):
        o = by_key[(d, i, g)].pop(0) if by_key.get((d, i, g)) else None
        if d == UNTRACKED:
            assert o is None, f"an outcome for an untracked write: {o}"
            continue
        assert o is not None, f"no outcome for write {d}/{i} tag {g}: {w}"
        t, _, _, _, ok, age = o
        assert t >= w["posted"], f"outcome {o} before write {d}/{i} was posted: {w}"
        if w["acked"] is not None and w["acked"] - w["posted"] < GIVE_UP:
            assert ok, f"write {d}/{i} acknowledged after {w['acked'] - w['posted']} cycles, reported failed"
            true_age = max(0, w["acked"] - w["posted"])
            assert true_age <= age <= true_age + 40, (w, o)
            n_ok += 1
        else:
            assert not ok, f"write {d}/{i} never acknowledged, reported ok: {o}"
            assert GIVE_UP <= t - w["posted"] <= GIVE_UP + n_slots + 200, (w, o)
            n_fail += 1
    left = [o for v in by_key.values() for o in v]
    assert not left, f"outcomes for no write: {left[:4]}"
    counts = {n: int(getattr(dut, f"cnt_{n}").value) for n in ("acked", "failed", "stray", "untracked",
                                                                  "ack_overflow")}
    dut._log.info(f"{len(writes)} writes: {n_ok} acknowledged, {n_fail} failed; "
                  f"{stray_sent} re-acknowledgements sent; counters {counts}")
    assert counts["acked"] == n_ok and counts["failed"] == n_fail and counts["ack_overflow"] == 0
    assert counts["untracked"] == sum(1 for (d, _, _, _) in writes if d == UNTRACKED)
    assert n_ok > 1000 and n_fail > 100 and stray_sent > 50
    assert sum(1 for w in writes.values() if w["fate"] == "early" and w["acked"] is not None) > 50


@cocotb.test()
async def a_stale_reack_does_not_hide_a_newer_early_ack(dut):
    """A resolved write's re-acknowledgement (id 5) holds its slot EARLY; the
    early /A/ of the write 64 ids later (69, same slot) must take the slot,
    so that its posted completion is acknowledged, not failed at the give-up
    (found by experiments/dual_fabric.py --two-cuts --acks, seed 47). An
    older id (133 - 64 = 69 then 5 again) never displaces a newer EARLY one."""
    await clock_and_reset(dut, cfg_give_up=GIVE_UP, posted_valid=0, posted_dst=0, posted_id=0, posted_tag=0,
                          ack_valid=0, ack_peer=0, ack_base=0, ack_map=0, out_ready=1)
    outcomes = []

    async def step(n=1):
        for _ in range(n):
            await ReadOnly()
            if int(dut.out_valid.value):
                outcomes.append((int(dut.out_id.value), int(dut.out_tag.value), int(dut.out_ok.value)))
            await RisingEdge(dut.clk)
            await FallingEdge(dut.clk)

    async def ack(i):
        dut.ack_valid.value, dut.ack_peer.value, dut.ack_base.value, dut.ack_map.value = 1, 0, i, 1
        await step()
        dut.ack_valid.value = 0
        await step(4)

    async def post(i, tag):
        dut.posted_valid.value, dut.posted_dst.value, dut.posted_id.value, dut.posted_tag.value = 1, 0, i, tag
        await step()
        dut.posted_valid.value = 0

    await ack(5)        # a stray: slot 5 EARLY with id 5
    await ack(69)       # the next write of slot 5, acknowledged before its posted completion
    await ack(5)        # older again: must not take the slot back
    await post(69, 7)
    await step(GIVE_UP + 200)
    assert outcomes == [(69, 7, 1)], f"write 69's outcome: {outcomes}"
    assert int(dut.cnt_acked.value) == 1 and int(dut.cnt_failed.value) == 0
