"""cocotb: pcs_ber_monitor against a Python model of 802.3's rule stated per
window: after cycle t of window k (windows of WINDOW_CYCLES cycles from the
moment block lock is gained), hi_ber is up iff window k already holds
THRESHOLD invalid sync headers, or window k-1 held THRESHOLD and t is not
the last cycle of window k. Random error bursts: per window none, one less
than the threshold, exactly the threshold, more, bursts straddling window
edges; random in_valid gaps (an invalid header counts only on a valid
cycle) and lost block lock. hi_ber is compared every cycle; the counters at
the end.
"""

from __future__ import annotations

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from edm import protocol
from tbutil import clock_and_reset, seeded_random

GOOD = (protocol.SYNC_DATA, protocol.SYNC_CTRL)


def stimulus(rng, window, threshold, windows):
    """Per cycle (block_lock, in_valid, in_sync)."""
    cycles = []
    for _ in range(windows):
        bad_at = set()
        shape = rng.choice(["none", "below", "at", "above", "straddle", "random"])
        count = {"none": 0, "below": threshold - 1, "at": threshold, "above": threshold + 3,
                 "straddle": threshold - 1, "random": rng.randrange(2 * threshold)}[shape]
        if shape == "straddle":  # the last cycles of one window and the first of the next
            bad_at = set(range(window - count, window)) | {window, window + 1}
        else:
            bad_at = set(rng.sample(range(window), count))
        for i in range(window):
            valid = rng.random() < 0.9 or i in (0, window - 1)
            sync = rng.choice([0, 3]) if i in bad_at else rng.choice(GOOD)
            cycles.append([True, valid, sync])
        if rng.random() < 0.1:  # lose block lock for a few cycles, somewhere
            at = rng.randrange(len(cycles) - window, len(cycles))
            for c in cycles[at:at + rng.randrange(1, 5)]:
                c[0] = False
    return cycles


def model(cycles, window, threshold):
    """hi_ber after each cycle, and the totals of the counters."""
    out, start, count, previous_over = [], None, 0, False
    bad_total, rises, hi = 0, 0, False
    for t, (lock, valid, sync) in enumerate(cycles):
        if not lock:
            start, hi = None, False
            out.append(hi)
            continue
        if start is None:
            start, count, previous_over = t, 0, False
        pos = (t - start) % window
        if pos == 0 and t != start:
            previous_over, count = count >= threshold, 0
        bad = valid and sync not in GOOD
        count += bad
        bad_total += bad
        now = count >= threshold or (previous_over and pos != window - 1)
        rises += now and not hi and count >= threshold
        hi = now
        out.append(hi)
    return out, bad_total, rises


@cocotb.test()
async def hi_ber_exactly_when_the_model_says(dut):
    window, threshold = int(dut.WINDOW_CYCLES.value), int(dut.THRESHOLD.value)
    rng = seeded_random(window * 1000 + threshold)
    cycles = stimulus(rng, window, threshold, windows=60)
    expected, bad_total, rises = model(cycles, window, threshold)
    await clock_and_reset(dut, block_lock=0, in_valid=0, in_sync=protocol.SYNC_DATA)
    for t, (lock, valid, sync) in enumerate(cycles):
        dut.block_lock.value = lock
        dut.in_valid.value = valid
        dut.in_sync.value = sync
        await RisingEdge(dut.clk)
        await ReadOnly()
        assert bool(dut.hi_ber.value) == expected[t], f"cycle {t}: hi_ber {dut.hi_ber.value}, model {expected[t]}"
        await FallingEdge(dut.clk)
    assert sum(expected) > 0 and not all(expected), "the stimulus never crossed (or never left) the threshold"
    assert int(dut.cnt_bad_sync.value) == bad_total
    assert int(dut.cnt_hi_ber.value) == rises
