"""cocotb: edm_crc32c_unit (one combinational CRC step per block) against the
reference codec: every unit of random kinds and sizes (0..300 payload bytes,
every residue of |M| mod 8) is fed block by block, the state kept here the way
the RTL users keep it, and the CRC-32C the step gives at the /MT/ must equal
the CRC field of the /MT/ the reference codec made. A corrupted data block must
give a different CRC."""

from __future__ import annotations

import random

import cocotb
from cocotb.triggers import Timer

from edm import protocol
from edm.protocol import codec
from tbutil import seeded_random

HEADER_AND_EXT = {"RREQ": 16, "WREQ": 16, "RMWREQ": 32, "RRES": 8}  # |M| - payload bytes


def unit_length(m: codec.Message) -> int:
    return HEADER_AND_EXT[m.kind] + (len(m.data) if m.kind in ("WREQ", "RRES") else 0)


def random_message(rng: random.Random, n: int) -> codec.Message:
    kind = rng.choice(["RREQ", "WREQ", "RMWREQ", "RRES"])
    common = dict(src=rng.randrange(1024), dst=rng.randrange(1024), msg_id=rng.randrange(256))
    if kind == "RREQ":
        return codec.Message(kind, length=max(n, 1), addr=rng.getrandbits(64), **common)
    if kind == "RMWREQ":
        return codec.Message(kind, length=protocol.RMW_OPERAND_BYTES, addr=rng.getrandbits(64) & ~7,
                             op=rng.randrange(2), arg0=rng.getrandbits(64), arg1=rng.getrandbits(64), **common)
    data = rng.randbytes(n)
    if kind == "WREQ":
        return codec.Message(kind, length=n, addr=rng.getrandbits(64), data=data, **common)
    return codec.Message(kind, length=n, data=data, **common)


async def unit_crc(dut, blocks, length: int) -> int:
    """The CRC the step computes over `blocks` (/MS/ /MD/.. /MT/), as a generator would."""
    crc = residue = shift = 0
    lay = (length - 1) % 8
    for i, (_sync, payload) in enumerate(blocks):
        is_ms, is_mt = i == 0, i == len(blocks) - 1
        dut.is_ms.value = is_ms
        dut.is_mt.value = is_mt
        dut.payload.value = payload
        dut.len_mod8.value = length % 8
        dut.crc.value = crc
        dut.residue.value = residue
        dut.shift.value = shift
        await Timer(1, "ns")
        if is_mt:
            final = int(dut.crc_next.value) if lay >= 6 else crc
            return final ^ 0xFFFF_FFFF
        crc, residue, shift = int(dut.crc_next.value), int(dut.residue_next.value), int(dut.shift_next.value)
    raise AssertionError("no /MT/")


@cocotb.test()
async def crc_matches_the_codec(dut):
    rng = seeded_random(32)
    residues = set()
    for t in range(600):
        m = random_message(rng, t % 64 if t < 128 else rng.randrange(301))
        blocks = codec.encode_message(m)
        length = unit_length(m)
        residues.add(length % 8)
        want = blocks[-1][1] >> 32
        got = await unit_crc(dut, blocks, length)
        assert got == want, f"{m.kind} of {len(m.data)} B (|M| = {length}): CRC {got:#010x}, codec {want:#010x}"
        if len(blocks) > 2:  # one flipped bit of M in a data block changes the CRC
            i = rng.randrange(1, len(blocks) - 1)
            lay = (length - 1) % 8
            tail = lay - 5 if lay >= 6 else 0
            used = 8 if i < len(blocks) - 2 else (length - 6 - tail) - 8 * (len(blocks) - 3)
            assert 3 <= used <= 8, (length, len(blocks), used)
            bad = list(blocks)
            bad[i] = (blocks[i][0], blocks[i][1] ^ (1 << rng.randrange(8 * used)))
            assert await unit_crc(dut, bad, length) != want, f"{m.kind}: a flipped bit in block {i} went unseen"
    assert residues == set(range(8)), residues
