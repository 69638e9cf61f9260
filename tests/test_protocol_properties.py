"""Integrity properties that docs/protocol.md promises, checked exhaustively."""

from __future__ import annotations

import itertools

import pytest

from edm import codec, protocol
from edm.cli import main


def _flip(block: codec.Block, bits: tuple[int, ...]) -> codec.Block:
    """Flip bits of a 66-bit block; bits 0-1 are the sync header, 2-65 the payload."""
    sync, payload = block
    for b in bits:
        if b < 2:
            sync ^= 1 << b
        else:
            payload ^= 1 << (b - 2)
    return sync, payload


@pytest.mark.parametrize("encode", [codec.encode_notification, codec.encode_grant])
def test_every_1_to_3_bit_error_in_a_notification_or_grant_is_detected(encode):
    block = encode(0x2A5, 0x96, 0xBEEF)
    undetected = []
    for n in (1, 2, 3):
        for bits in itertools.combinations(range(protocol.BLOCK_BITS), n):
            try:
                codec.decode_control(_flip(block, bits))
            except codec.CodecError:
                continue
            undetected.append(bits)
    assert not undetected, f"{len(undetected)} undetected errors, e.g. {undetected[:5]}"


def test_a_clean_notification_decodes():
    assert codec.decode_control(codec.encode_notification(5, 7, 4096)) == ("N", 5, 7, 4096)


def test_overhead_command_prints_the_codec_figures(capsys):
    assert main(["protocol", "overhead"]) == 0
    out = capsys.readouterr().out
    rreq = codec.overhead_table()[0]
    assert f"{rreq['edm_blocks']} blocks = {rreq['edm_bits']} bits" in out
    assert rreq["edm_blocks"] == codec.message_blocks("RREQ", 8)
