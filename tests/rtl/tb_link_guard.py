"""cocotb: pcs_link_guard against a model, every cycle. Its monitor follows the
BER monitor's model (tb_ber_monitor.py, always locked); the link is down in a
cycle when that model's hi_ber was up after the previous cycle or the
partner's remote_down was up two cycles before (two synchronising flops).
While down, every received block leaves as an idle and each non-idle one is
counted; otherwise blocks pass unchanged in the same cycle. Random blocks
(idles and others), the monitor stimulus's invalid sync headers and valid
gaps, and random spans of remote_down.
"""

from __future__ import annotations

import random

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from edm import protocol
from tb_ber_monitor import model, stimulus
from tbutil import clock_and_reset

IDLE = (protocol.BT_C8 << 2) | protocol.SYNC_CTRL


@cocotb.test()
async def link_down_exactly_when_the_model_says(dut):
    window, threshold = int(dut.WINDOW_CYCLES.value), int(dut.THRESHOLD.value)
    rng = random.Random(window * 7 + threshold)
    cycles = stimulus(rng, window, threshold, windows=40)
    for c in cycles:
        c[0] = True   # the guard's monitor runs locked
    hi_after, bad_total, rises = model(cycles, window, threshold)
    remote, down_for = [], 0
    for _ in cycles:
        if down_for == 0 and rng.random() < 0.01:
            down_for = rng.randrange(1, 40)
        remote.append(down_for > 0)
        down_for = max(0, down_for - 1)
    await clock_and_reset(dut, in_valid=0, in_block=IDLE, remote_down=0)
    discarded, downs = 0, 0
    for t, (_, valid, sync) in enumerate(cycles):
        idle = rng.random() < 0.4
        block = IDLE if idle and sync == protocol.SYNC_CTRL else (rng.getrandbits(64) << 2) | sync
        dut.in_valid.value, dut.in_block.value, dut.remote_down.value = valid, block, remote[t]
        await ReadOnly()
        down = (t > 0 and hi_after[t - 1]) or (t > 1 and remote[t - 2])
        downs += down
        assert bool(dut.link_down.value) == down, f"cycle {t}: link_down {dut.link_down.value}, model {down}"
        assert int(dut.out_valid.value) == valid
        assert int(dut.out_block.value) == (IDLE if down else block), f"cycle {t}"
        discarded += valid and down and block != IDLE
        await RisingEdge(dut.clk)
        await FallingEdge(dut.clk)
    assert 0 < downs < len(cycles), "the stimulus never took the link down (or never let it up)"
    await ReadOnly()
    assert int(dut.cnt_bad_sync.value) == bad_total
    assert int(dut.cnt_hi_ber.value) == rises
    assert int(dut.cnt_discarded.value) == discarded > 0
