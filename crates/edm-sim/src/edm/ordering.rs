//! The requesters' ordering: fences and the memory-order rule, what a
//! message issued waits for before it may take a notification (`hosts.rs`
//! admits it when this part lets it go).
//!
//! Invariants: a requester's `outstanding` counts its messages let through
//! here and not yet finished; a fenced message goes only when nothing of its
//! requester is outstanding, and the messages behind it wait with it (in
//! order); under the memory-order rule a held message's `waits_for` is the
//! number of earlier unfinished messages of its pair it conflicts with, and
//! it goes when that reaches 0. Only whether messages finish is followed
//! here, so the state is untouched when neither rule is on. A message
//! finishes once: a second report of it (a write finished when its data
//! arrived, under the ideal NACK, whose outcome later times out) is ignored.
use super::units::Msg;
use crate::engine::prefetch;
use crate::workload::{overlaps, MessageSpec, Op};
use std::collections::VecDeque;

pub(super) struct Ordering {
    nodes: usize,
    /// Whether messages' finishing at their requester is followed (the
    /// memory-order rule or fences need it).
    tracked: bool,
    /// Memory-order rule (`MemoryOrder::Address`; empty otherwise): per
    /// requester-memory pair the messages issued and not finished, and those
    /// held back by an overlapping earlier one, with how many they wait for.
    pairs: Vec<PairOrder>,
    waits_for: Vec<u32>,
    /// Fences: per requester, messages not finished, and the messages
    /// waiting behind a fence (from the fence on, in order).
    outstanding: Vec<u32>,
    fenced: Vec<VecDeque<u32>>,
    /// Per message (when tracked): its finish was reported.
    finished: Vec<bool>,
    /// The messages the last [`Ordering::finished`] let go, in the order
    /// they go (reused: no allocation per finish).
    freed: Vec<u32>,
}

impl Ordering {
    /// `address`: the memory-order rule is on.
    pub(super) fn new(nodes: usize, msgs: &[MessageSpec], address: bool) -> Self {
        let tracked = address || msgs.iter().any(|m| m.fence);
        Ordering {
            nodes,
            tracked,
            pairs: vec![PairOrder::default(); if address { nodes * nodes } else { 0 }],
            waits_for: vec![0; if address { msgs.len() } else { 0 }],
            outstanding: vec![0; nodes],
            fenced: vec![VecDeque::new(); nodes],
            finished: vec![false; if tracked { msgs.len() } else { 0 }],
            freed: Vec::new(),
        }
    }

    /// Whether messages' finishing at their requester matters (then every
    /// message let through must be reported by [`Ordering::finished`]).
    #[inline(always)]
    pub(super) fn tracked(&self) -> bool {
        self.tracked
    }

    #[inline(always)]
    fn pair(&self, requester: u16, memory: u16) -> usize {
        requester as usize * self.nodes + memory as usize
    }

    /// Message `i` (`spec`) is issued: true if it may go now; else a fence
    /// or an overlapping earlier message holds it (it comes out of
    /// [`Ordering::finished`] later).
    #[inline]
    pub(super) fn issue(&mut self, i: u32, spec: &MessageSpec) -> bool {
        let r = spec.requester as usize;
        if !self.fenced[r].is_empty() || (spec.fence && self.outstanding[r] > 0) {
            self.fenced[r].push_back(i);
            return false;
        }
        self.order(i, spec)
    }

    /// The memory-order rule: message `i` waits for every earlier unfinished
    /// message of its requester-memory pair that overlaps it, one of the two
    /// a write or RMW (a read beside a read needs no order). True: it goes.
    fn order(&mut self, i: u32, spec: &MessageSpec) -> bool {
        if self.tracked {
            self.outstanding[spec.requester as usize] += 1;
        }
        if !self.pairs.is_empty() {
            let pair = self.pair(spec.requester, spec.memory);
            let entry = Unfinished::of(i, spec);
            let conflicts = self.pairs[pair]
                .unfinished
                .iter()
                .filter(|e| e.conflicts(&entry))
                .count() as u32;
            self.pairs[pair].unfinished.push(entry);
            if conflicts > 0 {
                self.waits_for[i as usize] = conflicts;
                self.pairs[pair].held.push(i);
                return false;
            }
        }
        true
    }

    /// Message `i` of pair `m` (its own, or its mega-message's: the same
    /// pair) has finished at its requester: returns how many messages may
    /// go now, read in order with [`Ordering::freed`] (none when `i` had
    /// already finished).
    pub(super) fn finished(&mut self, i: u32, m: Msg, msgs: &[MessageSpec]) -> usize {
        self.freed.clear();
        if std::mem::replace(&mut self.finished[i as usize], true) {
            return 0;
        }
        let r = m.requester as usize;
        self.outstanding[r] -= 1;
        if !self.pairs.is_empty() {
            let pair = self.pair(m.requester, m.memory);
            let at = self.pairs[pair].unfinished.iter().position(|e| e.id == i);
            let at = at.expect("a finished message was unfinished");
            let done = self.pairs[pair].unfinished.remove(at);
            if !self.pairs[pair].held.is_empty() {
                // Those ordered after `i` (a held message is unfinished too;
                // not index order: a closed loop issues out of index order),
                // which now sit from `at` on.
                let PairOrder { unfinished, held } = &mut self.pairs[pair];
                let later = &unfinished[at..];
                let (waits_for, freed) = (&mut self.waits_for, &mut self.freed);
                held.retain(|&h| {
                    let waits = later
                        .iter()
                        .find(|e| e.id == h)
                        .is_some_and(|e| done.conflicts(e));
                    if waits {
                        waits_for[h as usize] -= 1;
                        if waits_for[h as usize] == 0 {
                            freed.push(h);
                            return false;
                        }
                    }
                    true
                });
            }
        }
        while let Some(&f) = self.fenced[r].front() {
            if msgs[f as usize].fence && self.outstanding[r] > 0 {
                break;
            }
            self.fenced[r].pop_front();
            if self.order(f, &msgs[f as usize]) {
                self.freed.push(f);
            }
        }
        self.freed.len()
    }

    /// The `k`th message the last [`Ordering::finished`] let go.
    #[inline(always)]
    pub(super) fn freed(&self, k: usize) -> u32 {
        self.freed[k]
    }

    /// Starts loading pair (`requester`, `memory`)'s lists' header (a hint:
    /// nothing changes).
    #[inline(always)]
    pub(super) fn prefetch_pair(&self, requester: u16, memory: u16) {
        if !self.pairs.is_empty() {
            prefetch(&self.pairs[self.pair(requester, memory)]);
        }
    }

    /// Starts loading the first entry of pair (`requester`, `memory`)'s
    /// unfinished list (a hint: nothing changes).
    #[inline(always)]
    pub(super) fn prefetch_first(&self, requester: u16, memory: u16) {
        if !self.pairs.is_empty() {
            if let Some(first) = self.pairs[self.pair(requester, memory)].unfinished.first() {
                prefetch(first);
            }
        }
    }

    /// Whether the memory-order rule's lists are kept.
    #[inline(always)]
    pub(super) fn by_address(&self) -> bool {
        !self.pairs.is_empty()
    }
}

/// A requester-memory pair's memory-order state: its messages issued and not
/// finished, in order, and those held back by an overlapping earlier one
/// (one struct: a pair's lists are looked at together, one cache line).
#[derive(Clone, Debug, Default)]
struct PairOrder {
    unfinished: Vec<Unfinished>,
    held: Vec<u32>,
}

/// A message issued and not finished, in its pair's memory-order list: what
/// the rule compares, kept in the list itself so that a scan reads one
/// contiguous slice, not each message's spec from the whole workload.
#[derive(Clone, Copy, Debug)]
struct Unfinished {
    id: u32,
    /// It changes memory (a write or RMW).
    changes: bool,
    range: (u64, u64),
}

impl Unfinished {
    fn of(id: u32, spec: &MessageSpec) -> Self {
        Unfinished {
            id,
            changes: spec.op != Op::Read,
            range: spec.range(),
        }
    }

    /// Whether the later of the two must wait for the earlier under the
    /// memory-order rule (same requester and memory node assumed): their
    /// byte ranges overlap and one of them changes memory.
    fn conflicts(&self, other: &Unfinished) -> bool {
        (self.changes || other.changes) && overlaps(self.range, other.range)
    }
}
