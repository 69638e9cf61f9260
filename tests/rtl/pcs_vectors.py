"""Stimulus for the PCS tests, made by the reference codec."""

from __future__ import annotations

import random

from edm import codec, protocol

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
