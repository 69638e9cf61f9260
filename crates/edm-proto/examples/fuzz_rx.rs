//! A property fuzzer of the reference receiver (`RxDemux`, issue 25, docs/faults.md §3):
//! lines of structure-biased traffic (fuzzgen: memory units, numbered /N/ /G/,
//! frames preempted by them, idles, data holding control blocks) with faults
//! on random blocks (sync flips, 1-3 and 4-8 bit errors, random blocks,
//! dropped, repeated, replaced or preceded by a block of the right shape in
//! the wrong place), block after block. Properties, checked on every event:
//!   * it never panics;
//!   * every memory message delivered is one that was sent, byte for byte,
//!     and after the ones delivered before it (in order, never twice);
//!   * its counters equal the events it returned.
//!
//! Printed, not asserted: /N/ /G/ delivered that were not sent, or out of
//! order (a corrupted control block whose CRC-8 still checks: docs/protocol.md
//! §5a gives the rates), frames delivered altered (the MAC's FCS catches
//! them), what was lost although its own blocks were intact, and blocks/s.
//!
//!     cargo run --release -p edm-proto --example fuzz_rx -- [blocks] [seed] [fault rate]
//!
//! Defaults: 10^7 blocks, seed 1, a fault on one block in 1000. Seeded, so a
//! run repeats exactly.
mod fuzzgen;

use edm_proto::control::Control;
use edm_proto::message::Message;
use edm_proto::mux::{Event, RxDemux};
use fuzzgen::{damage, Owner, Rng, Sent, Traffic, FAULTS};
use std::collections::VecDeque;
use std::time::Instant;

/// Items of one kind sent and not yet delivered or passed, oldest first.
struct Pending<T> {
    items: VecDeque<(u64, T, bool)>,
    next_id: u64,
    delivered: u64,
    /// Delivered but not among the pending ones: never sent, altered, or out of order.
    foreign: u64,
    /// Passed over by a later delivery although none of its blocks was hit.
    lost_intact: u64,
    lost_damaged: u64,
}

impl<T: PartialEq> Pending<T> {
    fn new() -> Self {
        Pending {
            items: VecDeque::new(),
            next_id: 0,
            delivered: 0,
            foreign: 0,
            lost_intact: 0,
            lost_damaged: 0,
        }
    }

    fn sent(&mut self, item: T) {
        self.items.push_back((self.next_id, item, false));
        self.next_id += 1;
        if self.items.len() > 4096 {
            self.pass_front();
        }
    }

    fn damaged(&mut self, id: u64) {
        if let Some(front) = self.items.front().map(|e| e.0) {
            if id >= front {
                if let Some(e) = self.items.get_mut((id - front) as usize) {
                    e.2 = true;
                }
            }
        }
    }

    fn pass_front(&mut self) {
        if let Some((_, _, damaged)) = self.items.pop_front() {
            if damaged {
                self.lost_damaged += 1;
            } else {
                self.lost_intact += 1;
            }
        }
    }

    /// A delivery: the first pending item equal to it, everything before it lost.
    fn delivered(&mut self, item: &T) {
        self.delivered += 1;
        match self.items.iter().position(|e| e.1 == *item) {
            Some(at) => {
                for _ in 0..at {
                    self.pass_front();
                }
                self.items.pop_front();
            }
            None => self.foreign += 1,
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let target: u64 = args
        .get(1)
        .map_or(10_000_000, |s| s.parse().expect("blocks"));
    let seed: u64 = args.get(2).map_or(1, |s| s.parse().expect("seed"));
    let fault_rate: f64 = args.get(3).map_or(1e-3, |s| s.parse().expect("fault rate"));
    let mut rng = Rng::new(seed);
    let mut traffic = Traffic::new();
    let mut rx = RxDemux::new();
    let mut messages: Pending<Message> = Pending::new();
    let mut controls: Pending<Control> = Pending::new();
    let mut frames: Pending<Vec<u8>> = Pending::new();
    let (mut blocks, mut errors) = (0u64, 0u64);
    let mut faults = [0u64; FAULTS.len()];
    let (mut line, mut sent) = (Vec::new(), Vec::new());
    let started = Instant::now();
    while blocks < target {
        line.clear();
        sent.clear();
        traffic.next(&mut rng, &mut line, &mut sent);
        for item in sent.drain(..) {
            match item {
                Sent::Message(m) => messages.sent(m),
                Sent::Control(c) => controls.sent(c),
                Sent::Frame(f) => frames.sent(f),
            }
        }
        for &(clean, owner) in &line {
            let on_line = if rng.chance(fault_rate) {
                let (out, fault) = damage(&mut rng, clean);
                faults[fault] += 1;
                match owner {
                    Owner::Message(id) => messages.damaged(id),
                    Owner::Control(id) => controls.damaged(id),
                    Owner::Frame(id) => frames.damaged(id),
                    Owner::Idle => {}
                }
                out
            } else {
                vec![clean]
            };
            for b in on_line {
                blocks += 1;
                for e in rx.push(b) {
                    match e {
                        Event::Message(m) => {
                            messages.delivered(&m);
                            assert_eq!(
                                messages.foreign, 0,
                                "block {blocks}: a memory message delivered that was not sent, \
                                 or out of order: {m:?}"
                            );
                        }
                        Event::Control(c) => controls.delivered(&c),
                        Event::Frame { bytes, .. } => frames.delivered(&bytes),
                        Event::Error(_) => errors += 1,
                    }
                }
            }
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let c = rx.counters;
    let counted_errors = c.corrupted + c.unknown + c.bad_sync + c.frames_bad + c.control_in_data;
    assert_eq!(
        c.messages_ok, messages.delivered,
        "messages_ok counts the messages delivered"
    );
    assert_eq!(
        c.notifications_ok + c.grants_ok,
        controls.delivered,
        "the control counters count the controls delivered"
    );
    assert_eq!(
        c.frames_ok, frames.delivered,
        "frames_ok counts the frames delivered"
    );
    assert_eq!(counted_errors, errors, "every error event is counted once");
    let faulty: u64 = faults.iter().sum();
    println!(
        "fuzz_rx: {blocks} blocks, seed {seed}, fault rate {fault_rate}: {seconds:.1} s, {:.2} M blocks/s",
        blocks as f64 / seconds / 1e6
    );
    let named: Vec<String> = FAULTS
        .iter()
        .zip(faults)
        .map(|(n, k)| format!("{n} {k}"))
        .collect();
    println!("  faults: {faulty} ({})", named.join(", "));
    println!("  counters: {:?}", c.named());
    for (name, delivered, foreign, lost_intact, lost_damaged, sent) in [
        (
            "memory messages",
            messages.delivered,
            messages.foreign,
            messages.lost_intact,
            messages.lost_damaged,
            messages.next_id,
        ),
        (
            "/N/ /G/",
            controls.delivered,
            controls.foreign,
            controls.lost_intact,
            controls.lost_damaged,
            controls.next_id,
        ),
        (
            "frames",
            frames.delivered,
            frames.foreign,
            frames.lost_intact,
            frames.lost_damaged,
            frames.next_id,
        ),
    ] {
        println!(
            "  {name}: {sent} sent, {delivered} delivered, {foreign} of them not sent or out of order; \
             lost: {lost_damaged} hit by a fault, {lost_intact} intact"
        );
    }
    println!(
        "  memory messages delivered that were not sent: 0 (asserted on every event); /N/ /G/ \
         not sent or out of order: {} (accepted corrupted control blocks, docs/protocol.md §5a); \
         frames altered: {} (the PCS has no FCS; the MAC checks it)",
        controls.foreign, frames.foreign
    );
}
