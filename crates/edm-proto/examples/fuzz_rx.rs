//! A property fuzzer of the reference receiver (`RxDemux`, issue 25): lines of
//! structure-biased traffic (memory units, numbered /N/ /G/, frames preempted
//! by units, idles, data holding control blocks) with random corruption (1-3
//! bit errors, sync-header flips, random blocks), block after block. Checks
//! that it never panics, never delivers a memory message that was not sent,
//! and that its counters equal the events it returned; prints what it counted,
//! including control blocks delivered that were not sent (forged) and frames
//! delivered altered (the PCS does not check the Ethernet FCS; the MAC does).
//!
//!     cargo run --release -p edm-proto --example fuzz_rx -- [blocks] [seed] [error rate]
//!
//! Defaults: 10^7 blocks, seed 1, one corrupted block in 1000. Seeded, so a
//! run repeats exactly.
use edm_proto::control::{Control, ControlKind, ControlTx};
use edm_proto::message::{encode, Message};
use edm_proto::mux::{Event, RxDemux};
use edm_proto::pcs::encode_frame;
use edm_proto::spec::*;
use edm_proto::Block;
use std::collections::HashSet;
use std::time::Instant;

/// xorshift64*: small, seeded, good enough for fuzzing.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

fn random_message(rng: &mut Rng) -> Message {
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
            Message::rres(
                src,
                dst,
                id,
                rng.below(4096) as u16,
                rng.chance(0.5),
                STATUS_OK,
                rng.bytes(n),
            )
        }
        _ => {
            let n = 1 + rng.below(200) as usize;
            let mut data = rng.bytes(n);
            if n >= 14 && rng.chance(0.2) {
                // Data holding a valid control block at a block boundary (data
                // byte 6 starts an /MD/): of a random number, the attack's shape.
                let c = Control {
                    kind: ControlKind::Grant,
                    dst: rng.below(1024) as u16,
                    msg_id: rng.next() as u8,
                    size: rng.next() as u16,
                };
                let b = edm_proto::control::encode_control(&c, rng.next() as u8).unwrap();
                data[6..14].copy_from_slice(&b.payload.to_le_bytes());
            }
            Message::wreq(
                src,
                dst,
                id,
                rng.next(),
                rng.below(4096) as u16,
                rng.chance(0.5),
                data,
            )
        }
    }
}

fn random_control(rng: &mut Rng) -> Control {
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

/// The block with random damage: 1-3 bit errors (sync header included), both
/// sync bits flipped, or a random block.
fn corrupt(rng: &mut Rng, b: Block) -> Block {
    match rng.below(8) {
        0 => Block {
            sync: b.sync ^ 0b11,
            ..b
        },
        1 => Block {
            sync: rng.below(4) as u8,
            payload: rng.next(),
        },
        _ => {
            let mut v = (b.payload as u128) << 2 | b.sync as u128;
            for _ in 0..1 + rng.below(3) {
                v ^= 1 << rng.below(66);
            }
            Block {
                sync: (v & 3) as u8,
                payload: (v >> 2) as u64,
            }
        }
    }
}

/// What was sent, and what the receiver did with it.
#[derive(Default)]
struct Run {
    sent_messages: HashSet<Message>,
    sent_controls: HashSet<Control>,
    sent_frames: HashSet<Vec<u8>>,
    blocks: u64,
    corrupted_blocks: u64,
    messages: u64,
    controls: u64,
    frames: u64,
    errors: u64,
    forged_messages: u64,
    forged_controls: u64,
    altered_frames: u64,
}

impl Run {
    fn push(&mut self, rx: &mut RxDemux, rng: &mut Rng, error_rate: f64, b: Block) {
        let b = if rng.chance(error_rate) {
            self.corrupted_blocks += 1;
            corrupt(rng, b)
        } else {
            b
        };
        self.blocks += 1;
        for e in rx.push(b) {
            match e {
                Event::Message(m) => {
                    self.messages += 1;
                    self.forged_messages += !self.sent_messages.contains(&m) as u64;
                }
                Event::Control(c) => {
                    self.controls += 1;
                    self.forged_controls += !self.sent_controls.contains(&c) as u64;
                }
                Event::Frame { bytes, .. } => {
                    self.frames += 1;
                    self.altered_frames += !self.sent_frames.contains(&bytes) as u64;
                }
                Event::Error(_) => self.errors += 1,
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let target: u64 = args
        .get(1)
        .map_or(10_000_000, |s| s.parse().expect("blocks"));
    let seed: u64 = args.get(2).map_or(1, |s| s.parse().expect("seed"));
    let error_rate: f64 = args.get(3).map_or(1e-3, |s| s.parse().expect("error rate"));
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut rx = RxDemux::new();
    let mut tx = ControlTx::default();
    let mut run = Run::default();
    let started = Instant::now();
    while run.blocks < target {
        // One unit of traffic: a message, a control block, a frame preempted by
        // control blocks, or an idle.
        let mut line: Vec<Block> = vec![];
        match rng.below(10) {
            0..=3 => {
                let m = random_message(&mut rng);
                line = encode(&m);
                if rng.chance(0.2) {
                    // A numbered control block as a filler inside the unit.
                    let c = random_control(&mut rng);
                    run.sent_controls.insert(c);
                    let at = 1 + rng.below(line.len() as u64 - 1) as usize;
                    line.insert(at, tx.encode(&c).unwrap());
                }
                run.sent_messages.insert(m);
            }
            4..=6 => {
                let c = random_control(&mut rng);
                run.sent_controls.insert(c);
                line.push(tx.encode(&c).unwrap());
            }
            7..=8 => {
                let n = ETH_MIN_FRAME_BYTES as usize + rng.below(200) as usize;
                let bytes = rng.bytes(n);
                let frame = encode_frame(&bytes);
                run.sent_frames.insert(bytes);
                for (i, b) in frame.iter().enumerate() {
                    if i > 0 && rng.chance(0.05) {
                        let c = random_control(&mut rng);
                        run.sent_controls.insert(c);
                        line.push(tx.encode(&c).unwrap());
                    }
                    line.push(*b);
                }
                line.push(Block::idle());
                line.push(Block::idle());
            }
            _ => line.push(Block::idle()),
        }
        for b in line {
            run.push(&mut rx, &mut rng, error_rate, b);
        }
    }
    let c = rx.counters;
    let counted_errors = c.corrupted + c.unknown + c.bad_sync + c.frames_bad + c.control_in_data;
    assert_eq!(
        c.messages_ok, run.messages,
        "messages_ok counts the messages delivered"
    );
    assert_eq!(
        c.notifications_ok + c.grants_ok,
        run.controls,
        "the control counters count the controls delivered"
    );
    assert_eq!(
        c.frames_ok, run.frames,
        "frames_ok counts the frames delivered"
    );
    assert_eq!(
        counted_errors, run.errors,
        "every error event is counted once"
    );
    println!(
        "fuzz_rx: {} blocks ({} corrupted, rate {error_rate}), seed {seed}, {:.1} s",
        run.blocks,
        run.corrupted_blocks,
        started.elapsed().as_secs_f64()
    );
    println!(
        "  delivered: {} messages, {} /N/ /G/, {} frames; {} error events",
        run.messages, run.controls, run.frames, run.errors
    );
    println!("  counters: {:?}", c.named());
    println!(
        "  memory messages delivered that were not sent: {} (target 0); /N/ /G/ delivered that \
         were not sent: {}; frames delivered altered (the MAC's FCS catches them): {}",
        run.forged_messages, run.forged_controls, run.altered_frames
    );
    assert_eq!(run.forged_messages, 0, "a memory message was forged");
}
