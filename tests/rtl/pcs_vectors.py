"""Stimulus for the PCS tests, made by the reference codec."""

from __future__ import annotations

import random

from edm import protocol
from edm.protocol import codec

IDLE_WORD = (int.from_bytes(bytes([protocol.XGMII_IDLE] * 8), "little"), 0xFF)


def frame_blocks(rng: random.Random, frames: int) -> list[codec.Block]:
    """Frames of every length mod 8 (so /T/ in every lane) with idle gaps."""
    blocks: list[codec.Block] = []
    for i in range(frames):
        size = 64 + (i % 8) + 8 * rng.randrange(0, 40)
        blocks += codec.encode_frame(bytes(rng.getrandbits(8) for _ in range(size)))
        blocks += codec.xgmii_encode([IDLE_WORD] * rng.randrange(1, 3))
    return blocks


def lane4_start_word(rng: random.Random) -> tuple[int, int]:
    lanes = [protocol.XGMII_IDLE] * 4 + [protocol.XGMII_START] + [rng.getrandbits(8) for _ in range(3)]
    return int.from_bytes(bytes(lanes), "little"), 0x1F


def terminate_words(rng: random.Random) -> list[tuple[int, int]]:
    """/T/ in every lane followed by a mix of idle and error characters (so the
    7-bit control codes' positions matter: the idle code is all zeros)."""
    words = []
    for k in range(8):
        for _ in range(3):
            lanes = [rng.getrandbits(8) for _ in range(k)] + [protocol.XGMII_TERM]
            lanes += [rng.choice([protocol.XGMII_IDLE, protocol.XGMII_ERROR]) for _ in range(7 - k)]
            words.append((int.from_bytes(bytes(lanes), "little"), (0xFF << k) & 0xFF))
    return words


def ordered_set_words(rng: random.Random) -> list[tuple[int, int]]:
    """Every figure 49-7 format with a sequence ordered set /Q/ (O0/O4 0x55,
    O0/S4 0x66, O0/C4..C7 0x4B, C0..C3/O4 0x2D): the Clause 46 fault columns
    and other sequence data, beside idles, errors and frame starts."""
    def column(seq: int | None) -> list[int]:
        seq = rng.getrandbits(24) if seq is None else seq
        return [protocol.XGMII_SEQ] + list(seq.to_bytes(3, "little"))

    def control() -> int:
        return rng.choice([protocol.XGMII_IDLE, protocol.XGMII_ERROR])

    faults = [protocol.SEQ_LOCAL_FAULT, protocol.SEQ_REMOTE_FAULT, None]
    words = []
    for _ in range(6):
        a, b = column(rng.choice(faults)), column(rng.choice(faults))
        start = [protocol.XGMII_START] + [rng.getrandbits(8) for _ in range(3)]
        words += [(a + b, 0x11), (a + start, 0x11), (a + [control() for _ in range(4)], 0xF1),
                  ([control() for _ in range(4)] + b, 0x1F)]
    return [(int.from_bytes(bytes(lanes), "little"), ctrl) for lanes, ctrl in words]


def near_ordered_set_words(rng: random.Random) -> list[tuple[int, int]]:
    """Words shaped like ordered-set words that have no encoding: a control
    character other than /Q/ where /Q/ belongs, or /S/ or /Q/ where it cannot be."""
    q, i, s = protocol.XGMII_SEQ, protocol.XGMII_IDLE, protocol.XGMII_START
    lanes = [[i, 0, 0, 1, q, 0, 0, 2], [q, 0, 0, 1, i, 0, 0, 2], [0x5C, 0, 0, 1, q, 0, 0, 1],
             [q, 0, 0, 1, s, 1, 2, 3]]
    words = [(int.from_bytes(bytes(x), "little"), 0x11) for x in lanes[:3]]
    words += [(int.from_bytes(bytes([i, 0, 0, 1, i, i, i, i]), "little"), 0xF1),
              (int.from_bytes(bytes([s, 0, 0, 1, i, i, i, i]), "little"), 0xF1),
              (int.from_bytes(bytes([q, q, i, i, q, 0, 0, 1]), "little"), 0x1F),
              (int.from_bytes(bytes(lanes[3]), "little"), 0x1F)]
    return words
