//! Stimulus and expected results for the RTL receive-path fuzzer
//! (scripts/fuzz_rtl_rx.sh, tests/rtl/fuzz_rx_main.cpp; docs/faults.md §3).
//! Writes binary records to stdout, one per line block, in segments: each
//! segment shifts the line by 1-65 junk bits (block lock must find the new
//! boundary), sends PREAMBLE scrambled idles (the receiver's EDM side is held
//! in reset meanwhile), then `segment` blocks of fuzzgen traffic with faults
//! (the sender's: `fault rate`, on blocks before the scrambler) and single bit
//! errors on the line (`line error rate`, after it; the descrambler makes
//! each three). For every such block the record holds what the reference
//! receiver (a fresh RxDemux per segment, fed by the reference descrambler)
//! did with it: the events it completed and all its counters.
//!
//!     cargo run --release -p edm-proto --example rx_vectors -- blocks seed fault_rate line_error_rate segment
//!
//! Record (56 bytes, little-endian): kind u8 (0 junk, 1 preamble, 2 checked),
//! junk bits or sync u8, events u8 (bit 0 a good message, 1 an /N/, 2 a /G/, 3 an /A/),
//! control msg_id u8, control dst u16, control size u16, line payload u64,
//! descrambled payload u64, then the counters messages_ok, corrupted,
//! unknown, notifications_ok, grants_ok, bad_sync, control_missed,
//! control_in_data as u32.
mod fuzzgen;

use edm_proto::control::ControlKind;
use edm_proto::mux::{Event, RxDemux};
use edm_proto::pcs::{Descrambler, Scrambler};
use edm_proto::Block;
use fuzzgen::{damage, Rng, Traffic};
use std::io::{BufWriter, Write};

const PREAMBLE: u64 = 1000;

struct Line<W: Write> {
    out: W,
    scrambler: Scrambler,
    descrambler: Descrambler,
}

impl<W: Write> Line<W> {
    fn record(&mut self, kind: u8, sync: u8, events: &[Event], line: u64, seen: u64, rx: &RxDemux) {
        let mut r = [0u8; 56];
        r[0] = kind;
        r[1] = sync;
        for e in events {
            match e {
                Event::Message(_) => r[2] |= 1,
                Event::Control(c) => {
                    r[2] |= match c.kind {
                        ControlKind::Notification => 2,
                        ControlKind::Grant => 4,
                        ControlKind::Ack => 8,
                    };
                    r[3] = c.msg_id;
                    r[4..6].copy_from_slice(&c.dst.to_le_bytes());
                    r[6..8].copy_from_slice(&c.size.to_le_bytes());
                }
                _ => {}
            }
        }
        r[8..16].copy_from_slice(&line.to_le_bytes());
        r[16..24].copy_from_slice(&seen.to_le_bytes());
        let c = rx.counters;
        let counters = [
            c.messages_ok,
            c.corrupted,
            c.unknown,
            c.notifications_ok,
            c.grants_ok,
            c.bad_sync,
            c.control_missed,
            c.control_in_data,
        ];
        for (i, v) in counters.iter().enumerate() {
            r[24 + 4 * i..28 + 4 * i].copy_from_slice(&(*v as u32).to_le_bytes());
        }
        write_or_stop(&mut self.out, &r);
    }

    /// Scrambles `b`, puts a bit error on the line with `line_error_rate`,
    /// descrambles: (line block, block the receiver sees).
    fn send(&mut self, rng: &mut Rng, b: Block, line_error_rate: f64) -> (Block, Block) {
        let mut line = Block {
            sync: b.sync,
            payload: self.scrambler.scramble(b.payload),
        };
        if rng.chance(line_error_rate) {
            let bit = rng.below(66);
            if bit < 2 {
                line.sync ^= 1 << bit;
            } else {
                line.payload ^= 1 << (bit - 2);
            }
        }
        let seen = Block {
            sync: line.sync,
            payload: self.descrambler.descramble(line.payload),
        };
        (line, seen)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, name: &str| -> String {
        args.get(i).cloned().unwrap_or_else(|| {
            panic!("argument {i} ({name}) missing: blocks seed fault_rate line_error_rate segment")
        })
    };
    let target: u64 = arg(1, "blocks").parse().expect("blocks: an integer");
    let seed: u64 = arg(2, "seed").parse().expect("seed: an integer");
    let fault_rate: f64 = arg(3, "fault_rate").parse().expect("fault_rate: a number");
    let line_error_rate: f64 = arg(4, "line_error_rate")
        .parse()
        .expect("line_error_rate: a number");
    let segment: u64 = arg(5, "segment").parse().expect("segment: an integer");
    let mut rng = Rng::new(seed);
    let mut traffic = Traffic::new();
    let mut line = Line {
        out: BufWriter::with_capacity(1 << 20, std::io::stdout().lock()),
        scrambler: Scrambler::default(),
        descrambler: Descrambler::default(),
    };
    let (mut clean, mut sent) = (Vec::new(), Vec::new());
    let mut checked = 0u64;
    while checked < target {
        let idle_rx = RxDemux::new();
        line.record(0, 1 + rng.below(65) as u8, &[], 0, 0, &idle_rx);
        for _ in 0..PREAMBLE {
            let (l, s) = line.send(&mut rng, Block::idle(), 0.0);
            line.record(1, l.sync, &[], l.payload, s.payload, &idle_rx);
        }
        traffic.reset_link();
        let mut rx = RxDemux::new();
        let end = (checked + segment).min(target);
        while checked < end {
            clean.clear();
            sent.clear();
            traffic.next(&mut rng, &mut clean, &mut sent);
            for &(b, _) in &clean {
                let blocks = if rng.chance(fault_rate) {
                    damage(&mut rng, b).0
                } else {
                    vec![b]
                };
                for b in blocks {
                    let (l, s) = line.send(&mut rng, b, line_error_rate);
                    let events = rx.push(s);
                    line.record(2, l.sync, &events, l.payload, s.payload, &rx);
                    checked += 1;
                }
            }
        }
    }
    if let Err(e) = line.out.flush() {
        stop(e);
    }
}

/// The harness reading stdout stops at its first mismatches: end quietly then.
fn stop(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    panic!("stdout: {e}");
}

fn write_or_stop<W: Write>(out: &mut W, bytes: &[u8]) {
    if let Err(e) = out.write_all(bytes) {
        stop(e);
    }
}
