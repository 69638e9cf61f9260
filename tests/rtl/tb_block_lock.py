"""cocotb: pcs_block_lock finds the block boundary at any bit offset, then
passes blocks unchanged, loses lock on a burst of bad headers and relocks."""

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from edm import protocol
from tbutil import seeded_random

WORD = 66


def random_blocks(rng, n):
    return [(rng.choice([protocol.SYNC_DATA, protocol.SYNC_CTRL]), rng.getrandbits(64)) for _ in range(n)]


def to_bits(blocks):
    bits = []
    for sync, payload in blocks:
        word = sync | (payload << 2)
        bits += [(word >> i) & 1 for i in range(WORD)]
    return bits


def to_words(bits):
    return [sum(b << i for i, b in enumerate(bits[k:k + WORD])) for k in range(0, len(bits) - WORD + 1, WORD)]


async def feed(dut, words):
    """Feeds words; returns the blocks seen at the output and whether lock was ever lost."""
    out, lost = [], False
    for w in words:
        dut.in_valid.value = 1
        dut.in_word.value = w
        await RisingEdge(dut.clk)
        await ReadOnly()
        lost |= dut.block_lock.value == 0
        if dut.out_valid.value:
            v = int(dut.block.value)
            out.append((v & 3, v >> 2))
        await FallingEdge(dut.clk)
    return out, lost


def is_contiguous_run(out, blocks):
    start = blocks.index(out[0])
    return out == blocks[start:start + len(out)]


@cocotb.test()
async def locks_at_any_offset_then_relocks_after_bad_headers(dut):
    cocotb.start_soon(Clock(dut.clk, 2, units="ns").start())
    rng = seeded_random(8)
    for shift in (0, 1, 33, 65, rng.randrange(66)):
        dut.rst_n.value = 0
        dut.in_valid.value = 0
        await RisingEdge(dut.clk)
        await FallingEdge(dut.clk)
        dut.rst_n.value = 1
        blocks = random_blocks(rng, 66 * 3 + 400)
        out, _ = await feed(dut, to_words([rng.getrandbits(1) for _ in range(shift)] + to_bits(blocks)))
        assert dut.block_lock.value == 1, f"shift {shift}: no lock"
        assert len(out) >= 200, f"shift {shift}: locked too late ({len(out)} blocks out)"
        assert is_contiguous_run(out, blocks), f"shift {shift}: blocks altered or dropped"
        # 16 invalid headers lose the lock; the following good blocks restore it.
        slips = int(dut.slips.value)
        bad = [(0b11 if i % 2 else 0b00, rng.getrandbits(64)) for i in range(16)]
        tail = random_blocks(rng, 66 * 3 + 200)
        out, lost = await feed(dut, to_words(to_bits(bad + tail)))
        assert lost, f"shift {shift}: 16 bad headers did not break the lock"
        assert dut.block_lock.value == 1 and int(dut.slips.value) > slips
        assert is_contiguous_run(out[-100:], tail), f"shift {shift}: wrong blocks after relock"
