"""cocotb: pcs_encoder against the reference codec's Clause 49 encoder."""

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from edm import codec
from pcs_vectors import frame_blocks, lane4_start_word, terminate_words
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
    words += [lane4_start_word(rng) for _ in range(4)] + terminate_words(rng)
    reference += codec.xgmii_encode(words[len(reference):])
    for i, (word, expected) in enumerate(zip(words, reference)):
        got, invalid = await encode(dut, word)
        assert not invalid and got == expected, f"word {i} {word}: {got} != {expected}"
    # Words with no encoding must become the all-error block and be flagged.
    error_block = None
    for _ in range(200):
        word = (rng.getrandbits(64), rng.choice([0x0F, 0x3C, 0x81, 0x02]))
        try:
            codec.xgmii_encode([word])
            continue
        except codec.CodecError:
            pass
        got, invalid = await encode(dut, word)
        assert invalid, f"{word} accepted"
        error_block = error_block or got
        assert got == error_block
    assert error_block is not None
    assert codec.xgmii_decode([error_block])[0][1] == 0xFF, "error block is all control"
