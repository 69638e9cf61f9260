"""cocotb: pcs_encoder against the reference codec's Clause 49 encoder."""

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from edm import protocol
from edm.protocol import codec
from pcs_vectors import frame_blocks, lane4_start_word, near_ordered_set_words, ordered_set_words, terminate_words
from tbutil import clock_and_reset, seeded_random


async def encode(dut, word):
    dut.in_valid.value = 1
    dut.xgmii_data.value, dut.xgmii_ctrl.value = word
    await RisingEdge(dut.clk)
    await ReadOnly()
    out = int(dut.block.value)
    invalid = bool(dut.invalid.value)
    await FallingEdge(dut.clk)
    return (out & 3, out >> 2), invalid


@cocotb.test()
async def frames_idles_and_junk(dut):
    await clock_and_reset(dut, in_valid=0)
    rng = seeded_random(17)
    reference = frame_blocks(rng, 24)
    words = codec.xgmii_decode(reference)
    words += [lane4_start_word(rng) for _ in range(4)] + terminate_words(rng) + ordered_set_words(rng)
    reference += codec.xgmii_encode(words[len(reference):])
    types = {b[1] & 0xFF for b in reference if b[0] == protocol.SYNC_CTRL}
    assert {protocol.BT_O0_O4, protocol.BT_O0_S4, protocol.BT_O0_C4, protocol.BT_C4_O4} <= types
    for i, (word, expected) in enumerate(zip(words, reference)):
        got, invalid = await encode(dut, word)
        assert not invalid and got == expected, f"word {i} {word}: {got} != {expected}"
    # Words with no encoding must become the all-error block and be flagged.
    error_block = None
    near = near_ordered_set_words(rng)
    shapes = [0x0F, 0x3C, 0x81, 0x02, 0x11, 0xF1, 0x1F]
    for word in [(rng.getrandbits(64), rng.choice(shapes)) for _ in range(200)] + near:
        try:
            codec.xgmii_encode([word])
            assert word not in near, f"{word} has an encoding"
            continue
        except codec.CodecError:
            pass
        got, invalid = await encode(dut, word)
        assert invalid, f"{word} accepted"
        error_block = error_block or got
        assert got == error_block
    assert error_block is not None
    assert codec.xgmii_decode([error_block])[0][1] == 0xFF, "error block is all control"
