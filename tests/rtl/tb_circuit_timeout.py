"""cocotb: edm_circuit_timeout against a model, every cycle: give_up is up in
a cycle where a head waits (head_valid), nothing of its ingress is under way
(!busy), it is not being used (!head_used), and the ingress has been quiet
like that (a head waiting, not busy, not used) for the TIMEOUT_CYCLES - 1
cycles before; or at once when stale (a later circuit's unit came) while a
head waits unused, whatever busy and the wait. A give-up does not restart
the wait: if a head still waits in the next cycle, it goes too. Random head,
busy and use patterns, with long quiet stretches so that circuits are given
up, singly and in runs; the counter (it lags give_up) at the end.
"""

from __future__ import annotations

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from tbutil import clock_and_reset, seeded_random


@cocotb.test()
async def give_up_exactly_when_the_model_says(dut):
    timeout = int(dut.TIMEOUT_CYCLES.value)
    rng = seeded_random(timeout)
    await clock_and_reset(dut, head_valid=0, busy=0, head_used=0, stale=0)
    idle, given, runs = 0, 0, 0     # runs: timed-out heads given up in the cycle after another
    last = False
    for t in range(40 * max(timeout, 1) + 2000):
        quiet = (t // (3 * max(timeout, 1))) % 2 == 0   # stretches with rare activity
        head = rng.random() < (0.98 if quiet else 0.7)
        busy = rng.random() < (0.001 if quiet else 0.3)
        used = head and rng.random() < (0.001 if quiet else 0.1)
        stale = rng.random() < (0.0005 if quiet else 0.05)
        dut.head_valid.value, dut.busy.value, dut.head_used.value, dut.stale.value = head, busy, used, stale
        await ReadOnly()
        want = head and not used and (stale or (timeout != 0 and not busy and idle >= timeout - 1))
        assert bool(dut.give_up.value) == want, f"cycle {t}: give_up {dut.give_up.value}, model {want}"
        given += want
        timed_out = want and not stale
        runs += timed_out and last
        last = timed_out
        idle = 0 if (not head or busy or used) else min(idle + 1, max(timeout - 1, 0))
        await RisingEdge(dut.clk)
        await FallingEdge(dut.clk)
    dut.head_valid.value, dut.stale.value = 0, 0
    for _ in range(2):   # the counter is two edges behind give_up
        await RisingEdge(dut.clk)
    await ReadOnly()
    assert int(dut.cnt_given_up.value) == given
    assert given > 0, given
    if timeout:
        assert runs > 0, "no two heads timed out in a row"
