"""cocotb: pcs_link_fault against link_fault_model.LinkFaultModel, every cycle:
link_fault, link_up, the transmit word and the counters. Directed cases
first (802.3 46.3.4's numbers: four sequences of a type within the window
take the fault, three do not; the fault clears after exactly 128 columns with
none; a local fault is answered with remote fault sequences, a remote fault
with idles; the PCS's fault is a local fault; the MAC's words pass again only
from a word outside a frame), then random traffic: frames and idles with
fault sequences of both types in either column at random spacing, other
sequence ordered sets, gaps in rx_valid (memory blocks) and spans of
pcs_fault; the random run must visit every transition of figure 46-11."""

from __future__ import annotations


import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from edm import protocol
from edm.protocol import codec
from link_fault_model import IDLE_WORD, LOCAL, OK, REMOTE, LinkFaultModel, fault_column, fault_word
from tbutil import clock_and_reset, seeded_random


class Bench:
    def __init__(self, dut):
        self.dut, self.model, self.cycle = dut, LinkFaultModel(), 0
        self.tx_words: list = []   # the MAC's words, in order
        self.tx_next = 0

    async def step(self, rx_word=IDLE_WORD, rx_valid=True, pcs_fault=False, tx_valid=True):
        d, m = self.dut, self.model
        tx_word = self.tx_words[self.tx_next % len(self.tx_words)] if self.tx_words else IDLE_WORD
        d.rx_valid.value, d.pcs_fault.value, d.tx_valid.value = int(rx_valid), int(pcs_fault), int(tx_valid)
        d.rx_data.value, d.rx_ctrl.value = rx_word
        d.tx_in_data.value, d.tx_in_ctrl.value = tx_word
        await ReadOnly()
        want = m.outputs(tx_word, pcs_fault)
        got = dict(tx=(int(d.tx_data.value), int(d.tx_ctrl.value)), link_fault=int(d.link_fault.value),
                   link_up=bool(d.link_up.value), cnt_local_fault=int(d.cnt_local_fault.value),
                   cnt_remote_fault=int(d.cnt_remote_fault.value))
        for k, v in got.items():
            assert v == want[k], f"cycle {self.cycle}: {k} {v!r} != model {want[k]!r} (state {m.state})"
        m.clock(rx_valid, rx_word, pcs_fault, tx_valid, tx_word)
        self.tx_next += tx_valid
        await RisingEdge(d.clk)
        await FallingEdge(d.clk)
        self.cycle += 1
        return got

    async def idle(self, cycles):
        for _ in range(cycles):
            await self.step()


def word_with_columns(col0: int | None, col1: int | None) -> tuple[int, int]:
    """A word of two columns, each a given /Q/ column or four idles."""
    idle = int.from_bytes(bytes([protocol.XGMII_IDLE] * 4), "little")
    data = (idle if col0 is None else col0) | (idle if col1 is None else col1) << 32
    return data, (0xF if col0 is None else 0x1) | (0xF if col1 is None else 0x1) << 4


LF = fault_column(protocol.SEQ_LOCAL_FAULT)
RF = fault_column(protocol.SEQ_REMOTE_FAULT)


@cocotb.test()
async def directed(dut):
    await clock_and_reset(dut, rx_valid=0, pcs_fault=0, tx_valid=0)
    b = Bench(dut)
    # Three local faults then silence: no fault. Four within the window: fault.
    await b.step(word_with_columns(LF, LF))
    await b.step(word_with_columns(LF, None))
    await b.idle(200)
    assert b.model.link_fault == OK
    await b.step(word_with_columns(None, LF))
    await b.idle(60)                      # 120 columns: still in the window
    await b.step(word_with_columns(LF, LF))
    got = await b.step(word_with_columns(LF, None))   # the fourth
    assert got["link_fault"] == OK
    got = await b.step()
    assert got["link_fault"] == LOCAL and not got["link_up"] and got["tx"] == fault_word(remote=True)
    # The 128th column without a fault sequence clears it (the fourth's word
    # had one, then two a word: the 64th word after it), not the 127th.
    await b.idle(62)
    assert (await b.step())["link_fault"] == LOCAL
    assert (await b.step())["link_fault"] == OK
    # A remote fault is answered with idles; a new type restarts the count.
    for _ in range(2):
        await b.step(fault_word(remote=True))
    got = await b.step(word_with_columns(LF, None))
    assert got["link_fault"] == REMOTE and got["tx"] == IDLE_WORD
    for _ in range(2):
        await b.step(word_with_columns(LF, None))
    assert (await b.step())["link_fault"] == REMOTE, "three local faults after a remote one are not four"
    await b.step(word_with_columns(LF, None))
    assert (await b.step())["link_fault"] == LOCAL
    await b.idle(70)
    # The PCS's fault: local fault two cycles later, link_up low at once.
    got = await b.step(pcs_fault=True)
    assert got["link_fault"] == OK and not got["link_up"]
    await b.step(pcs_fault=True)
    assert (await b.step(pcs_fault=True))["link_fault"] == LOCAL
    await b.idle(70)
    # The MAC's words pass again only outside a frame.
    frame = codec.xgmii_decode(codec.encode_frame(bytes(range(100))))
    b.tx_words, b.tx_next = frame + [IDLE_WORD] * 3, 0
    for _ in range(4):
        await b.step()
    for _ in range(2):
        await b.step(fault_word(remote=False), tx_valid=True)
    await b.idle(64)
    assert b.model.link_fault == OK
    while b.model.mac_in_frame or b.tx_next % len(b.tx_words) != 0:
        await b.step()
    assert b.model.passing
    assert b.model.cnt == {LOCAL: 4, REMOTE: 1}, b.model.cnt


@cocotb.test()
async def random_traffic(dut):
    await clock_and_reset(dut, rx_valid=0, pcs_fault=0, tx_valid=0)
    b = Bench(dut)
    rng = seeded_random(41)
    frames = []
    for _ in range(20):
        frames += codec.xgmii_decode(codec.encode_frame(bytes(rng.getrandbits(8) for _ in range(rng.randrange(60, 300)))))
        frames += [IDLE_WORD] * rng.randrange(1, 4)
    b.tx_words = frames
    rx_frames = frames[7:] + frames[:7]
    k = 0
    for _ in range(120):
        regime = rng.random()
        length = rng.randrange(20, 400)
        p_fault = rng.choice([0.0, 0.01, 0.03, 0.1, 0.5])   # fault sequences per column
        remote_share = rng.random()
        for _ in range(length):
            if regime < 0.08:
                await b.step(pcs_fault=True, rx_valid=rng.random() < 0.5, tx_valid=rng.random() < 0.9)
                continue
            cols = []
            for _ in range(2):
                x = rng.random()
                if x < p_fault:
                    cols.append(RF if rng.random() < remote_share else LF)
                elif x < p_fault + 0.01:
                    cols.append(fault_column(rng.choice([0, 3, 0x010001, rng.getrandbits(24)])))
                else:
                    cols.append(None)
            if cols == [None, None]:
                word = rx_frames[k % len(rx_frames)]
                k += 1
            else:
                word = word_with_columns(*cols)
            await b.step(word, rx_valid=rng.random() < 0.8, tx_valid=rng.random() < 0.9)
    visited = b.model.visited
    dut._log.info(f"{b.cycle} cycles; counters {b.model.cnt}; transitions {sorted(visited)}")
    for edge in (("init", "first"), ("count", "fault"), ("count", "new type"), ("fault", "new type"),
                 ("fault", "fault"), ("count", "window ends"), ("fault", "window ends")):
        assert edge in visited, f"the random run never took {edge}"
    assert b.model.cnt[LOCAL] > 5 and b.model.cnt[REMOTE] > 5, b.model.cnt
