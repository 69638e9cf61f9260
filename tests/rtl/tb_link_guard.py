"""cocotb: pcs_link_guard against a model, every cycle. Its monitor follows the
BER monitor's model (tb_ber_monitor.py, always locked); the link is down in a
cycle when that model's hi_ber was up after the previous cycle or the
partner's remote_down was up two cycles before (two synchronising flops).
While down, every received block leaves as an idle and each non-idle one is
counted, except that a memory unit open on the output when the link went
down is ended first (an /MT/ while /MD/ blocks are due; a data block of ones
and an /MT/ when its /MT/ is due), counted in cnt_cut_units; otherwise
blocks pass unchanged in the same cycle. Blocks: memory units of every kind
(reference codec) among random blocks and idles where the monitor
stimulus has a valid sync header, its invalid ones and valid gaps, and random
spans of remote_down.
"""

from __future__ import annotations

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from edm import protocol
from edm.protocol import codec
from tb_ber_monitor import model, stimulus
from tbutil import clock_and_reset, seeded_random

IDLE = (protocol.BT_C8 << 2) | protocol.SYNC_CTRL
CUT_MT = (((protocol.SUB_MT << 8) | protocol.BT_EDM) << 2) | protocol.SYNC_CTRL
CUT_DATA = ((2**64 - 1) << 2) | protocol.SYNC_DATA


class CutModel:
    """The unit open on the guard's output, and how a cut ends it."""

    def __init__(self):
        self.open, self.md_left, self.mt_owed, self.cut = False, 0, False, 0

    def out(self, block, down):
        if not down:
            return block
        if self.mt_owed or (self.open and self.md_left):
            return CUT_MT
        return CUT_DATA if self.open else IDLE

    def step(self, out, down):
        """A valid cycle whose output was out."""
        if down:
            self.cut += out == CUT_MT
            self.mt_owed = self.open and out == CUT_DATA
            self.open = False
            return
        self.mt_owed = False
        sync, p = out & 3, out >> 2
        edm = sync == protocol.SYNC_CTRL and p & 0xFF == protocol.BT_EDM
        if edm and (p >> 8) & 0xFF == protocol.SUB_MS:
            hdr = p >> 16
            kind = (hdr >> protocol.HDR_KIND_LSB) & 7
            length = (hdr >> protocol.HDR_LEN_LSB) & 0xFFFF
            m = {protocol.KIND_RREQ: 16, protocol.KIND_WREQ: 16 + length, protocol.KIND_RMWREQ: 32,
                 protocol.KIND_RRES: 8 + length}.get(kind, 8)
            self.open, self.md_left = True, (m - 1) >> 3
        elif edm and (p >> 8) & 0xFF == protocol.SUB_MT:
            self.open = False
        elif self.open and sync == protocol.SYNC_DATA and self.md_left:
            self.md_left -= 1


def unit_blocks(rng):
    """An endless stream of packed blocks: memory units of every kind."""
    while True:
        kind = rng.choice(["RREQ", "WREQ", "RMWREQ", "RRES"])
        n = rng.choice([0, 1, 2, 7, 8, 9, 10, 64, 200])
        if kind == "RMWREQ":
            m = codec.Message(kind, 1, 2, 3, protocol.RMW_OPERAND_BYTES, addr=8, op=protocol.RMW_FAA, arg0=5)
        elif kind == "RREQ":
            m = codec.Message(kind, 1, 2, 3, n, addr=rng.getrandbits(40))
        else:
            m = codec.Message(kind, 1, 2, 3, n, addr=rng.getrandbits(40) if kind == "WREQ" else 0,
                              data=bytes(rng.getrandbits(8) for _ in range(n)))
        for sync, payload in codec.encode_message(m):
            yield sync | (payload << 2)


@cocotb.test()
async def link_down_exactly_when_the_model_says(dut):
    window, threshold = int(dut.WINDOW_CYCLES.value), int(dut.THRESHOLD.value)
    rng = seeded_random(window * 7 + threshold)
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
    units = unit_blocks(rng)
    unit_next = None      # a unit's block waiting for a cycle with a valid sync header
    cut = CutModel()
    for t, (_, valid, sync) in enumerate(cycles):
        idle = rng.random() < 0.4
        block = IDLE if idle and sync == protocol.SYNC_CTRL else (rng.getrandbits(64) << 2) | sync
        if sync in (protocol.SYNC_CTRL, protocol.SYNC_DATA) and (unit_next is not None or rng.random() < 0.5):
            block = unit_next if unit_next is not None else next(units)
            unit_next = None if rng.random() < 0.9 else next(units)   # mostly back to back
        dut.in_valid.value, dut.in_block.value, dut.remote_down.value = valid, block, remote[t]
        await ReadOnly()
        down = (t > 0 and hi_after[t - 1]) or (t > 1 and remote[t - 2])
        downs += down
        assert bool(dut.link_down.value) == down, f"cycle {t}: link_down {dut.link_down.value}, model {down}"
        assert int(dut.out_valid.value) == valid
        want = cut.out(block, down)
        assert int(dut.out_block.value) == want, f"cycle {t}: out {int(dut.out_block.value):#x}, model {want:#x}"
        if valid:
            cut.step(want, down)
        discarded += valid and down and block != IDLE
        await RisingEdge(dut.clk)
        await FallingEdge(dut.clk)
    assert 0 < downs < len(cycles), "the stimulus never took the link down (or never let it up)"
    await ReadOnly()
    assert int(dut.cnt_bad_sync.value) == bad_total
    assert int(dut.cnt_hi_ber.value) == rises
    assert int(dut.cnt_discarded.value) == discarded > 0
    assert int(dut.cnt_cut_units.value) == cut.cut > 0
    dut._log.info(f"{len(cycles)} cycles, {downs} down, {cut.cut} units cut short and ended")
