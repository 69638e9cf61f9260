"""The codec through the Python binding: round trips and error detection."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edm import demo, protocol
from edm.protocol import codec
from edm.protocol.codec import CodecError, Message
from edm.demo import flip

PORTS = st.integers(0, protocol.MAX_PORTS - 1)


@st.composite
def messages(draw, max_data: int = 300) -> Message:
    kind = draw(st.sampled_from(["RREQ", "WREQ", "RMWREQ", "RRES"]))
    common = dict(
        src=draw(PORTS),
        dst=draw(PORTS),
        msg_id=draw(st.integers(0, 255)),
        seq=draw(st.integers(0, (1 << protocol.HDR_SEQ_W) - 1)),
        last=draw(st.booleans()),
        op=draw(st.integers(0, (1 << protocol.HDR_OP_W) - 1)),
    )
    addr = draw(st.integers(0, 2**64 - 1))
    if kind == "RREQ":
        return Message(kind, length=draw(st.integers(0, 65535)), addr=addr, **common)
    if kind == "RMWREQ":
        args = dict(arg0=draw(st.integers(0, 2**64 - 1)), arg1=draw(st.integers(0, 2**64 - 1)))
        return Message(kind, length=protocol.RMW_OPERAND_BYTES, addr=addr, **args, **common)
    data = draw(st.binary(max_size=max_data))
    return Message(kind, length=len(data), addr=addr if kind == "WREQ" else 0, data=data, **common)


def receive(line: list[codec.Block]) -> tuple[list[tuple], dict[str, int]]:
    rx = codec.RxDemux()
    events = [e for b in line for e in rx.push(b)]
    return events, rx.counters


@given(messages())
def test_message_round_trip(m: Message) -> None:
    blocks = codec.encode_message(m)
    assert len(blocks) == codec.message_blocks(m.kind, m.length)
    assert codec.decode_message(blocks) == m
    events, counters = receive(blocks)
    assert events == [("message", m)]
    assert counters["messages_ok"] == 1


def test_block_counts() -> None:
    assert codec.message_blocks("RREQ", 64) == 3
    assert codec.message_blocks("WREQ", 64) == 11
    assert codec.message_blocks("RRES", 0) == 2
    with pytest.raises(CodecError):
        codec.message_blocks("READ", 1)


def test_invalid_messages_raise_codec_error() -> None:
    with pytest.raises(CodecError, match="src"):
        codec.encode_message(Message("RREQ", protocol.MAX_PORTS, 0, 0, 8))
    with pytest.raises(CodecError):
        codec.encode_message(Message("WREQ", 0, 0, 0, 4, data=b"abc"))
    with pytest.raises(CodecError, match="out of range"):
        codec.encode_message(Message("RREQ", 0, 0, 256, 8))
    assert codec.encode_message(Message("RRES", 1, 2, 3, 0, last=1)) == codec.encode_message(Message("RRES", 1, 2, 3, 0))
    with pytest.raises(ValueError, match="CRC"):
        blocks = codec.encode_message(Message("RREQ", 1, 2, 3, 8, addr=4))
        codec.decode_message([blocks[0], flip(blocks[1], 5), blocks[2]])


@given(PORTS, st.integers(0, 255), st.integers(0, 65535))
def test_notification_and_grant_round_trip(dst: int, msg_id: int, size: int) -> None:
    # One link's control blocks are numbered 0, 1, ... (docs/protocol.md §5a).
    n = codec.encode_notification(dst, msg_id, size, 0)
    g = codec.encode_grant(dst, msg_id, size, 1)
    assert codec.decode_control(n, 0) == ("N", dst, msg_id, size)
    assert codec.decode_control(g, 1) == ("G", dst, msg_id, size)
    assert (codec.implied_seq(n), codec.implied_seq(g)) == (0, 1)
    assert receive([n, g])[0] == [("notification", dst, msg_id, size), ("grant", dst, msg_id, size)]
    for bit in range(protocol.BLOCK_BITS):
        with pytest.raises(CodecError):
            codec.decode_control(flip(g, bit), 1)
    with pytest.raises(CodecError, match="CRC-8"):
        codec.decode_control(g, 0)


def test_every_single_bit_error_is_detected() -> None:
    data = bytes(range(37))  # not a multiple of 8
    for m in [Message("RREQ", 1, 2, 3, 64, addr=0x1234), Message("WREQ", 1, 2, 4, len(data), addr=8, data=data)]:
        blocks = codec.encode_message(m)
        for i, bit in itertools.product(range(len(blocks)), range(protocol.BLOCK_BITS)):
            line = list(blocks)
            line[i] = flip(line[i], bit)
            events, counters = receive(line)
            assert not [e for e in events if e[0] == "message"], (i, bit)
            assert counters["corrupted"] + counters["unknown"] + counters["bad_sync"] > 0, (i, bit)


def test_unknown_blocks_are_counted() -> None:
    events, counters = receive([(protocol.SYNC_CTRL, protocol.BT_EDM | protocol.SUB_MST << 8), (protocol.SYNC_CTRL, 0x01)])
    assert events == [("error", "unknown")] * 2
    assert counters["unknown"] == 2
    assert receive([(0, 0), (3, 0)])[1]["bad_sync"] == 2


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.binary(min_size=protocol.ETH_MIN_FRAME_BYTES, max_size=protocol.ETH_MAX_FRAME_BYTES), max_size=3),
    st.lists(messages(max_data=100), max_size=6),
    st.sampled_from(["fair", "strict"]),
    st.data(),
)
def test_mux_demux_round_trip(frames: list[bytes], msgs: list[Message], policy: str, data) -> None:
    units = [codec.encode_message(m) for m in msgs] + [[codec.encode_grant(5, 6, 7, 0)]]
    unit_times = sorted(data.draw(st.lists(st.integers(0, 300), min_size=len(units), max_size=len(units))))
    frame_times = sorted(data.draw(st.lists(st.integers(0, 300), min_size=len(frames), max_size=len(frames))))
    line = codec.tx_mux(frames, units, policy, frame_times=frame_times, unit_times=unit_times)
    events, counters = receive(line)
    assert [e[1] for e in events if e[0] == "message"] == msgs
    assert [e[1] for e in events if e[0] == "frame"] == frames
    assert [e for e in events if e[0] == "grant"] == [("grant", 5, 6, 7)]
    assert counters["frames_ok"] == len(frames)
    assert not [e for e in events if e[0] == "error"]


def test_frames_alone_are_the_standard_encoding() -> None:
    frames = [bytes(range(64)), bytes(100), bytes(range(255)) * 3]
    idle = (protocol.SYNC_CTRL, protocol.BT_C8)
    expected: list[codec.Block] = []
    for f in frames:
        expected += codec.encode_frame(f)
        lanes_used = (protocol.ETH_PREAMBLE_BYTES + len(f) + 1) % 8  # /S/+preamble+SFD, data, /T/
        idles_after_t = (8 - lanes_used) % 8
        expected += [idle] * -(-max(protocol.ETH_IFG_BYTES - idles_after_t, 0) // 8)
    line = codec.tx_mux(frames, [])
    assert line == expected[: len(line)] and len(expected) - len(line) <= 2  # no gap after the last frame
    assert [e[1] for e in receive(line)[0]] == frames
    with pytest.raises(CodecError):
        codec.tx_mux(frames, [], "greedy")
    with pytest.raises(CodecError, match="frame_times"):
        codec.tx_mux(frames, [], frame_times=[0])


@given(st.binary(min_size=protocol.ETH_MIN_FRAME_BYTES, max_size=2000))
def test_frame_and_xgmii_round_trip(frame: bytes) -> None:
    blocks = codec.encode_frame(frame)
    assert codec.decode_frame(blocks) == frame
    words = codec.xgmii_decode(blocks)
    assert codec.xgmii_encode(words) == blocks
    assert words[0] == (0xD555_5555_5555_55FB, 0x01)  # /S/, preamble, SFD; lane 0 in bits 7:0


def test_xgmii_errors() -> None:
    with pytest.raises(CodecError):
        codec.xgmii_encode([(protocol.XGMII_START << 8, 0x02)])  # /S/ in lane 1
    with pytest.raises(CodecError):
        codec.xgmii_decode([(protocol.SYNC_CTRL, protocol.BT_EDM)])
    idle = codec.xgmii_encode([(int.from_bytes(bytes([protocol.XGMII_IDLE] * 8), "little"), 0xFF)])
    assert idle == [(protocol.SYNC_CTRL, protocol.BT_C8)]


@given(st.integers(0, 2**58 - 1), st.integers(0, 2**58 - 1), st.lists(st.integers(0, 2**64 - 1), min_size=2, max_size=8))
def test_scrambler(tx_state: int, rx_state: int, payloads: list[int]) -> None:
    tx, rx, wrong = codec.Scrambler(tx_state), codec.Descrambler(tx_state), codec.Descrambler(rx_state)
    for i, p in enumerate(payloads):
        s = tx.scramble(p)
        assert rx.descramble(s) == p
        locked = ~0 << 58 if i == 0 else ~0
        assert wrong.descramble(s) & locked & (2**64 - 1) == p & locked & (2**64 - 1)
    assert codec.Scrambler().state == 2**58 - 1


def test_scrambler_matches_the_polynomial_bit_by_bit() -> None:
    """An independent bit-serial model: s[n] = d[n] ^ s[n-39] ^ s[n-58], history all ones."""
    history = [1] * 58  # history[-k] = the scrambled bit sent k bits ago
    payloads = [0, 2**64 - 1, 0x0123_4567_89AB_CDEF]
    tx = codec.Scrambler()
    for payload in payloads:
        expected = 0
        for i in range(64):
            bit = (payload >> i & 1) ^ history[-39] ^ history[-58]
            history = history[1:] + [bit]
            expected |= bit << i
        assert tx.scramble(payload) == expected


def test_overhead_table() -> None:
    rreq, wreq = codec.overhead_table()
    assert (rreq["edm_bits"], rreq["ethernet_bits"], rreq["ratio"]) == (198, 693.0, 3.5)
    assert (wreq["edm_blocks"], wreq["edm_bits"]) == (11, 726)
    assert wreq["ethernet_bits"] > wreq["edm_bits"]


def test_demo_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert demo.run(seed=3) == 0
    out = capsys.readouterr().out
    assert "counters:" in out and "RREQ (8 B address)" in out


def test_ack_round_trip_and_numbering() -> None:
    """An /A/ (docs/protocol.md §4b) takes the link's next control number like
    /N/ and /G/, and the receiver reports the ids it acknowledges."""
    tx = codec.ControlTx()
    line = [tx.grant(3, 1, 64), tx.ack(7, 250, 0b1000_0000_0010_0001), tx.notification(3, 2, 64)]
    assert line[1][1] & 0xFFFF == protocol.BT_EDM | protocol.SUB_A << 8
    events, counters = receive(line)
    assert events == [("grant", 3, 1, 64), ("ack", 7, 250, 0x8021), ("notification", 3, 2, 64)]
    assert counters["acks_ok"] == 1 and counters["grants_ok"] == 1
    assert codec.decode_control(line[1], 1) == ("A", 7, 250, 0x8021)
    assert codec.acked_ids(250, 0x8021) == [250, 255, 9]
    # Lost, it shows as a gap in the numbers like any control block.
    events, counters = receive([line[0], line[2]])
    assert events == [("grant", 3, 1, 64), ("error", "corrupted")]
    # Every single-bit error of it is refused.
    for bit in range(66):
        sync, payload = line[1]
        bad = (sync ^ (1 << bit), payload) if bit < 2 else (sync, payload ^ (1 << (bit - 2)))
        rx = codec.RxDemux()
        rx.push(line[0])
        assert not [e for e in rx.push(bad) if e[0] == "ack"], bit
