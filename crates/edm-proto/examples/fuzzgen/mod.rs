//! Structure-biased EDM traffic and faults, shared by the fuzzers
//! (`fuzz_rx`: the reference receiver; `rx_vectors`: stimulus and expected
//! results for the RTL receive path, scripts/fuzz_rtl_rx.sh). Seeded.
// Each fuzzer uses a part of this module.
#![allow(dead_code)]
use edm_proto::control::{encode_control, Control, ControlKind, ControlTx};
use edm_proto::message::{encode, Message};
use edm_proto::pcs::encode_frame;
use edm_proto::spec::*;
use edm_proto::Block;

/// xorshift64*: small, seeded, good enough for fuzzing.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

pub fn random_message(rng: &mut Rng) -> Message {
    let (src, dst, id) = (
        rng.below(1024) as u16,
        rng.below(1024) as u16,
        rng.next() as u8,
    );
    match rng.below(4) {
        0 => Message::rreq(src, dst, id, rng.next(), 1 + rng.below(65535) as u16),
        1 => Message::rmwreq(
            src,
            dst,
            id,
            rng.next(),
            1 + rng.below(3) as u8,
            rng.next(),
            rng.next(),
        ),
        2 => {
            let n = rng.below(200) as usize;
            let (seq, last) = (rng.below(4096) as u16, rng.chance(0.5));
            Message::rres(src, dst, id, seq, last, STATUS_OK, rng.bytes(n))
        }
        _ => {
            let n = 1 + rng.below(200) as usize;
            let mut data = rng.bytes(n);
            if n >= 14 && rng.chance(0.2) {
                // Data holding a valid control block at a block boundary (data
                // byte 6 starts an /MD/): of a random number, the attack's shape.
                let b = encode_control(&random_control(rng), rng.next() as u8).unwrap();
                data[6..14].copy_from_slice(&b.payload.to_le_bytes());
            }
            let (addr, seq, last) = (rng.next(), rng.below(4096) as u16, rng.chance(0.5));
            Message::wreq(src, dst, id, addr, seq, last, data)
        }
    }
}

pub fn random_control(rng: &mut Rng) -> Control {
    Control {
        kind: if rng.chance(0.5) {
            ControlKind::Notification
        } else {
            ControlKind::Grant
        },
        dst: rng.below(1024) as u16,
        msg_id: rng.next() as u8,
        size: rng.next() as u16,
    }
}

/// What a clean block of the line belongs to (each kind numbered from 0 in
/// send order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    Message(u64),
    Control(u64),
    Frame(u64),
    Idle,
}

/// What the line carries, in send order per kind.
pub enum Sent {
    Message(Message),
    Control(Control),
    Frame(Vec<u8>),
}

/// The sender: memory units (some with a numbered /N/ or /G/ inside, some
/// with a valid /G/ of a random number in their data), numbered /N/ /G/,
/// frames preempted by them, idles.
pub struct Traffic {
    tx: ControlTx,
    counts: [u64; 3],
}

impl Traffic {
    pub fn new() -> Self {
        Traffic {
            tx: ControlTx::default(),
            counts: [0; 3],
        }
    }

    /// The link was reset: control blocks are numbered from 0 again.
    pub fn reset_link(&mut self) {
        self.tx = ControlTx::default();
    }

    fn take(&mut self, kind: usize) -> u64 {
        self.counts[kind] += 1;
        self.counts[kind] - 1
    }

    fn control(&mut self, rng: &mut Rng, line: &mut Vec<(Block, Owner)>, sent: &mut Vec<Sent>) {
        let c = random_control(rng);
        let owner = Owner::Control(self.take(1));
        line.push((self.tx.encode(&c).unwrap(), owner));
        sent.push(Sent::Control(c));
    }

    /// Appends the next stretch of clean line, and what it carries.
    pub fn next(&mut self, rng: &mut Rng, line: &mut Vec<(Block, Owner)>, sent: &mut Vec<Sent>) {
        match rng.below(10) {
            0..=3 => {
                let m = random_message(rng);
                let owner = Owner::Message(self.take(0));
                let blocks = encode(&m);
                // Sometimes a numbered control block as a filler inside the unit.
                let filler_at = if rng.chance(0.2) {
                    1 + rng.below(blocks.len() as u64 - 1) as usize
                } else {
                    usize::MAX
                };
                for (i, b) in blocks.into_iter().enumerate() {
                    if i == filler_at {
                        self.control(rng, line, sent);
                    }
                    line.push((b, owner));
                }
                sent.push(Sent::Message(m));
            }
            4..=6 => self.control(rng, line, sent),
            7..=8 => {
                let n = ETH_MIN_FRAME_BYTES as usize + rng.below(200) as usize;
                let bytes = rng.bytes(n);
                let owner = Owner::Frame(self.take(2));
                for (i, b) in encode_frame(&bytes).into_iter().enumerate() {
                    if i > 0 && rng.chance(0.05) {
                        self.control(rng, line, sent);
                    }
                    line.push((b, owner));
                }
                sent.push(Sent::Frame(bytes));
                line.push((Block::idle(), Owner::Idle));
                line.push((Block::idle(), Owner::Idle));
            }
            _ => line.push((Block::idle(), Owner::Idle)),
        }
    }
}

/// A block of the right shape in the wrong place: an /MS/ announcing a
/// layout, an /MT/, an /N/ or /G/ of a random number, an idle, a frame's /S/
/// or /T/, or data.
fn plausible_block(rng: &mut Rng) -> Block {
    match rng.below(6) {
        0 => encode(&random_message(rng))[0],
        1 => *encode(&random_message(rng)).last().unwrap(),
        2 => encode_control(&random_control(rng), rng.next() as u8).unwrap(),
        3 => Block::idle(),
        4 => {
            let n = 64 + rng.below(16) as usize;
            let frame = encode_frame(&rng.bytes(n));
            if rng.chance(0.5) {
                frame[0]
            } else {
                *frame.last().unwrap()
            }
        }
        _ => Block::data(rng.next()),
    }
}

/// Names of the faults [`damage`] applies, by its index.
pub const FAULTS: [&str; 8] = [
    "sync flipped",
    "random block",
    "1-3 bit errors",
    "dropped",
    "repeated",
    "replaced by a plausible block",
    "plausible block inserted",
    "4-8 bit errors",
];

fn flip_bits(rng: &mut Rng, b: Block, n: u64) -> Block {
    let mut v = (b.payload as u128) << 2 | b.sync as u128;
    for _ in 0..n {
        v ^= 1 << rng.below(66);
    }
    Block {
        sync: (v & 3) as u8,
        payload: (v >> 2) as u64,
    }
}

/// One fault on block `b`: what goes on the line in its place (0, 1 or 2
/// blocks) and the fault's index in [`FAULTS`].
pub fn damage(rng: &mut Rng, b: Block) -> (Vec<Block>, usize) {
    let fault = match rng.below(16) {
        0 => 0,
        1 => 1,
        2..=7 => 2,
        8 => 3,
        9 => 4,
        10..=11 => 5,
        12..=13 => 6,
        _ => 7,
    };
    let out = match fault {
        0 => vec![Block {
            sync: b.sync ^ 0b11,
            ..b
        }],
        1 => vec![Block {
            sync: rng.below(4) as u8,
            payload: rng.next(),
        }],
        2 => {
            let n = 1 + rng.below(3);
            vec![flip_bits(rng, b, n)]
        }
        3 => vec![],
        4 => vec![b, b],
        5 => vec![plausible_block(rng)],
        6 => vec![plausible_block(rng), b],
        _ => {
            let n = 4 + rng.below(5);
            vec![flip_bits(rng, b, n)]
        }
    };
    (out, fault)
}
