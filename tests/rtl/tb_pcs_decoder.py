"""cocotb: pcs_decoder against the reference codec's Clause 49 decoder."""

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from edm import protocol
from edm.protocol import codec
from pcs_vectors import frame_blocks, lane4_start_word, ordered_set_words, terminate_words
from tbutil import clock_and_reset, seeded_random

ERROR_WORD = (int.from_bytes(bytes([protocol.XGMII_ERROR] * 8), "little"), 0xFF)


async def decode(dut, block):
    dut.in_valid.value = 1
    dut.block.value = block[0] | (block[1] << 2)
    await RisingEdge(dut.clk)
    await ReadOnly()
    word = (int(dut.xgmii_data.value), int(dut.xgmii_ctrl.value))
    invalid = bool(dut.invalid.value)
    await FallingEdge(dut.clk)
    return word, invalid


@cocotb.test()
async def frames_and_corrupted_blocks(dut):
    await clock_and_reset(dut, in_valid=0)
    rng = seeded_random(23)
    blocks = frame_blocks(rng, 24) + codec.xgmii_encode([lane4_start_word(rng) for _ in range(4)] + terminate_words(rng)
                                                  + ordered_set_words(rng))
    for i, (block, expected) in enumerate(zip(blocks, codec.xgmii_decode(blocks))):
        got, invalid = await decode(dut, block)
        assert not invalid and got == expected, f"block {i}: {got} != {expected}"
    # Bit errors in control blocks: whatever the reference rejects must be flagged.
    flagged = 0
    for _ in range(400):
        sync, payload = rng.choice([b for b in blocks if b[0] == protocol.SYNC_CTRL])
        bad = (sync ^ (1 << rng.randrange(2)) if rng.random() < 0.1 else sync, payload ^ (1 << rng.randrange(64)))
        try:
            expected = codec.xgmii_decode([bad])[0]
        except codec.CodecError:
            expected = None
        got, invalid = await decode(dut, bad)
        if expected is None:
            assert invalid and got == ERROR_WORD, f"{bad} not flagged"
            flagged += 1
        else:
            assert not invalid and got == expected, f"{bad}: {got} != {expected}"
    assert flagged > 100
