"""Integrity properties that docs/protocol.md promises, checked exhaustively."""

from __future__ import annotations

import itertools

import pytest

from edm import protocol
from edm.protocol import codec
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


def _all_errors_up_to_3_bits():
    for n in (1, 2, 3):
        yield from itertools.combinations(range(protocol.BLOCK_BITS), n)


@pytest.mark.parametrize("seq", [0, 1, 200])
@pytest.mark.parametrize("encode", [codec.encode_notification, codec.encode_grant])
def test_every_1_to_3_bit_error_in_a_notification_or_grant_is_detected(encode, seq):
    block = encode(0x2A5, 0x96, 0xBEEF, seq)
    undetected = []
    for bits in _all_errors_up_to_3_bits():
        try:
            codec.decode_control(_flip(block, bits), seq)
        except codec.CodecError:
            continue
        undetected.append(bits)
    assert not undetected, f"{len(undetected)} undetected errors, e.g. {undetected[:5]}"


def test_a_clean_notification_decodes():
    assert codec.decode_control(codec.encode_notification(5, 7, 4096, 9), 9) == ("N", 5, 7, 4096)


def _receiver_after(n: int) -> tuple[codec.RxDemux, codec.ControlTx]:
    """A receiver that has accepted n grants of its link, and the link's sender."""
    rx, tx = codec.RxDemux(), codec.ControlTx()
    for i in range(n):
        assert rx.push(tx.grant(9, i % 256, 64)) == [("grant", 9, i % 256, 64)]
    return rx, tx


def test_a_receiver_acts_on_no_control_block_hit_by_1_to_3_bit_errors():
    # Through the receiver, sync header included: rejected, never acted on.
    rx, tx = _receiver_after(3)
    block = tx.grant(0x2A5, 0x96, 0xBEEF)
    acted = []
    for bits in _all_errors_up_to_3_bits():
        fresh, _ = _receiver_after(3)
        if any(e[0] in ("grant", "notification") for e in fresh.push(_flip(block, bits))):
            acted.append(bits)
    assert not acted, acted[:5]


def test_a_grant_whose_sync_header_flips_inside_a_frame_is_counted_and_the_frame_survives():
    # Issue 25: the /G/ was absorbed into the frame around it and the frame
    # reported as fine. Now the data block that is the expected control block
    # is dropped and counted; the frame arrives whole; the sequence shows the loss.
    frame = bytes(range(200))
    blocks = codec.encode_frame(frame)
    rx, tx = _receiver_after(2)
    sync, payload = tx.grant(4, 5, 64)
    line = blocks[:7] + [(sync ^ 0b11, payload)] + blocks[7:]
    events = [e for b in line for e in rx.push(b)]
    assert events == [("error", "control_in_data"), ("frame", frame)]
    assert rx.push(tx.grant(4, 6, 64)) == [("error", "corrupted")]  # out of sequence
    assert rx.push(tx.grant(4, 7, 64)) == [("error", "corrupted")]  # resynchronises, rejected
    assert rx.push(tx.grant(4, 8, 64)) == [("grant", 4, 8, 64)]
    c = rx.counters
    assert (c["control_in_data"], c["control_missed"], c["corrupted"], c["frames_ok"]) == (1, 3, 2, 1)


def test_data_holding_another_control_block_never_becomes_one_by_a_sync_flip():
    # The attack of issue 25: data that holds a valid /G/ (here the one numbered
    # 0, or one from another link) at a block boundary. A sync-header flip makes
    # it a control block; it checks only if it is the block the link expects next.
    image = codec.encode_grant(3, 1, 64, 0)
    for n in (1, 5, 255):
        rx, _ = _receiver_after(n)
        assert rx.push((protocol.SYNC_CTRL, image[1])) == [("error", "corrupted")], n
    rx, _ = _receiver_after(256)  # the one link state in 256 that expects it
    assert rx.push((protocol.SYNC_CTRL, image[1])) == [("grant", 3, 1, 64)]


def test_overhead_command_prints_the_codec_figures(capsys):
    assert main(["protocol", "overhead"]) == 0
    out = capsys.readouterr().out
    rreq = codec.overhead_table()[0]
    assert f"{rreq['edm_blocks']} blocks = {rreq['edm_bits']} bits" in out
    assert rreq["edm_blocks"] == codec.message_blocks("RREQ", 8)
