"""The EDM reference codec for Python.

Everything is computed by the Rust golden model (``crates/edm-proto``) through
``edm._core``; this module only gives messages a dataclass. A block is a
``(sync, payload)`` tuple; XGMII words are ``(data, ctrl)`` with lane 0 in data
bits 7:0 and ctrl bit i marking lane i as a control character. Invalid input
raises :class:`CodecError` (a ``ValueError``) whose message gives the reason.

/N/ and /G/ blocks are numbered per link direction (``seq``, from 0 at link
reset, modulo 256; docs/protocol.md §5a): the sender numbers them with
:class:`ControlTx`, and :class:`RxDemux` accepts only the one it expects next.
"""

from __future__ import annotations

from dataclasses import astuple, dataclass

from edm import _core

Block = tuple[int, int]

CodecError = _core.CodecError
Scrambler = _core.Scrambler
Descrambler = _core.Descrambler
message_blocks = _core.message_blocks
encode_notification = _core.encode_notification
encode_grant = _core.encode_grant
encode_ack = _core.encode_ack  # (peer, base id, map of ids applied, seq) -> /A/ (docs/protocol.md §4b)
decode_control = _core.decode_control
implied_seq = _core.implied_seq
encode_frame = _core.encode_frame
decode_frame = _core.decode_frame
xgmii_encode = _core.xgmii_encode
xgmii_decode = _core.xgmii_decode
tx_mux = _core.tx_mux
overhead_table = _core.overhead_table
space_address = _core.space_address  # (asid, vaddr) -> a request's address word (docs/protocol.md §3.4)
split_space_address = _core.split_space_address  # address word -> (asid, vaddr)

__all__ = [
    "Block",
    "CodecError",
    "ControlTx",
    "Descrambler",
    "Message",
    "RxDemux",
    "Scrambler",
    "decode_control",
    "decode_frame",
    "decode_message",
    "acked_ids",
    "encode_ack",
    "encode_frame",
    "encode_grant",
    "encode_message",
    "encode_notification",
    "implied_seq",
    "message_blocks",
    "overhead_table",
    "space_address",
    "split_space_address",
    "tx_mux",
    "xgmii_decode",
    "xgmii_encode",
]


@dataclass
class Message:
    """One memory message. ``kind`` is "RREQ", "WREQ", "RMWREQ" or "RRES";
    ``length`` is the header's len (RREQ: bytes to read; WREQ/RRES: ``len(data)``;
    RMWREQ: RMW_OPERAND_BYTES). ``op`` is the RMW opcode or the RRES status.
    Fields a kind does not carry must be 0 (see docs/protocol.md)."""

    kind: str
    src: int
    dst: int
    msg_id: int
    length: int
    addr: int = 0
    seq: int = 0
    last: bool = True
    op: int = 0
    arg0: int = 0
    arg1: int = 0
    data: bytes = b""


def encode_message(m: Message) -> list[Block]:
    """The blocks /MS/, /MD/..., /MT/ of ``m``."""
    return _core.encode_message(*astuple(m))


def decode_message(blocks: list[Block]) -> Message:
    """The message carried by exactly these blocks (no fillers)."""
    return Message(*_core.decode_message(blocks))


def acked_ids(base: int, applied: int) -> list[int]:
    """The message ids an /A/ with base id ``base`` and map ``applied`` acknowledges."""
    return [(base + k) % 256 for k in range(16) if applied >> k & 1]


class ControlTx:
    """A link's /N/, /G/ and /A/ sender: numbers its control blocks from 0."""

    def __init__(self) -> None:
        self.next = 0

    def _take(self) -> int:
        seq, self.next = self.next, (self.next + 1) % 256
        return seq

    def notification(self, dst: int, msg_id: int, size: int) -> Block:
        block = encode_notification(dst, msg_id, size, self.next)
        self._take()
        return block

    def grant(self, dst: int, msg_id: int, size: int) -> Block:
        block = encode_grant(dst, msg_id, size, self.next)
        self._take()
        return block

    def ack(self, peer: int, base: int, applied: int) -> Block:
        block = encode_ack(peer, base, applied, self.next)
        self._take()
        return block


class RxDemux:
    """The streaming RX demultiplexer. ``push(block)`` returns the events the
    block completes: ("message", Message), ("notification", dst, msg_id, size),
    ("grant", dst, msg_id, size), ("ack", peer, base id, map of ids applied),
    ("frame", bytes) or ("error", counter name)."""

    def __init__(self) -> None:
        self._rx = _core.RxDemux()

    def push(self, block: Block) -> list[tuple]:
        return [("message", Message(*e[1])) if e[0] == "message" else e for e in self._rx.push(block)]

    @property
    def counters(self) -> dict[str, int]:
        """messages_ok, notifications_ok, grants_ok, acks_ok, corrupted, unknown,
        bad_sync, frames_ok, frames_bad, control_missed (control sequence
        numbers skipped between accepted /N/ /G/: rejected or lost ones),
        control_in_data (data blocks that are the control block expected next:
        a flipped sync header; dropped, never acted on)."""
        return self._rx.counters

    @property
    def expected_seq(self) -> int:
        """The number of the /N/ or /G/ expected next on the link."""
        return self._rx.expected_seq
