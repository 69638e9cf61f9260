//! Strategies and helpers shared by the integration tests.
#![allow(dead_code)] // each test crate uses a different subset

use edm_proto::control::{Control, ControlKind, ControlTx};
use edm_proto::message::encode;
use edm_proto::mux::{Event, RxDemux};
use edm_proto::spec::*;
use edm_proto::{Block, Kind, Message};
use proptest::collection::vec;
use proptest::prelude::*;

pub fn arb_kind() -> impl Strategy<Value = Kind> {
    prop::sample::select(Kind::ALL.to_vec())
}

/// Any valid message, with payloads of any length up to `max_data` (mostly not multiples of 8).
pub fn arb_message(max_data: usize) -> impl Strategy<Value = Message> {
    (
        arb_kind(),
        (
            0..MAX_PORTS as u16,
            0..MAX_PORTS as u16,
            any::<u8>(),
            any::<u16>(),
        ),
        (
            any::<u64>(),
            0..1u16 << HDR_SEQ_W,
            any::<bool>(),
            0..1u8 << HDR_OP_W,
        ),
        (any::<u64>(), any::<u64>(), vec(any::<u8>(), 0..=max_data)),
    )
        .prop_map(
            |(kind, (src, dst, msg_id, read_len), (addr, seq, last, op), (arg0, arg1, data))| {
                let mut m = match kind {
                    Kind::Rreq => Message::rreq(src, dst, msg_id, addr, read_len),
                    Kind::Wreq => Message::wreq(src, dst, msg_id, addr, seq, last, data),
                    Kind::Rmwreq => Message::rmwreq(src, dst, msg_id, addr, op, arg0, arg1),
                    Kind::Rres => Message::rres(src, dst, msg_id, seq, last, op, data),
                };
                m.seq = seq;
                m.last = last;
                m.op = op;
                m
            },
        )
}

pub fn arb_control() -> impl Strategy<Value = Control> {
    (
        any::<bool>(),
        0..MAX_PORTS as u16,
        any::<u8>(),
        any::<u16>(),
    )
        .prop_map(|(n, dst, msg_id, size)| Control {
            kind: if n {
                ControlKind::Notification
            } else {
                ControlKind::Grant
            },
            dst,
            msg_id,
            size,
        })
}

/// A memory unit: a message or a single /N/ or /G/.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unit {
    Message(Message),
    Control(Control),
}

impl Unit {
    /// The unit's blocks; a control block takes the link's next number.
    pub fn blocks(&self, tx: &mut ControlTx) -> Vec<Block> {
        match self {
            Unit::Message(m) => encode(m),
            Unit::Control(c) => vec![tx.encode(c).unwrap()],
        }
    }
}

pub fn arb_unit(max_data: usize) -> impl Strategy<Value = Unit> {
    prop_oneof![
        arb_message(max_data).prop_map(Unit::Message),
        arb_control().prop_map(Unit::Control)
    ]
}

/// Messages with payload sizes that are (mostly) not multiples of 8, one of each kind.
pub fn sample_messages() -> Vec<Message> {
    let data = |n: usize| (0..n).map(|i| (i * 37 + 11) as u8).collect::<Vec<u8>>();
    let mut v = vec![
        Message::rreq(3, 700, 9, 0xDEAD_BEEF_0000_1234, 64),
        Message::rmwreq(3, 700, 10, 0x1000, RMW_CAS, 5, 6),
    ];
    for n in [0, 1, 2, 3, 7, 9, 13, 61, 100] {
        v.push(Message::rres(700, 3, 9, 1, n % 2 == 0, STATUS_OK, data(n)));
    }
    for n in [1, 5, 10, 67, 255] {
        v.push(Message::wreq(3, 700, 11, 0x2000, 2, true, data(n)));
    }
    v
}

/// Every block through a fresh demultiplexer; all events, in order.
pub fn demux_all(line: &[Block]) -> (Vec<Event>, RxDemux) {
    let mut rx = RxDemux::new();
    let events = line.iter().flat_map(|&b| rx.push(b)).collect();
    (events, rx)
}

/// The block with payload bit `bit` (0..64) or sync bit `bit - 64` (64, 65) flipped.
pub fn flip(block: Block, bit: u32) -> Block {
    if bit < PAYLOAD_BITS {
        Block {
            payload: block.payload ^ (1 << bit),
            ..block
        }
    } else {
        Block {
            sync: block.sync ^ (1 << (bit - PAYLOAD_BITS)),
            ..block
        }
    }
}
