//! The event queue every simulation runs on: a timing wheel that hands out
//! events in time order, ties in insertion order (deterministic).
use super::prefetch;
use crate::time::Ps;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Events ordered by time, ties broken by insertion order (deterministic).
///
/// A timing wheel: time is cut into slots of `2^SLOT_BITS` ps, and a ring of
/// `SLOTS` slots covers the window from the current slot on. An event inside
/// the window is appended to its slot (so a slot is in insertion order); an
/// event beyond it waits in `far`, a heap on (time, insertion order), and
/// moves to its slot when the window reaches it, before any event can be
/// pushed there directly, so slots stay in insertion order. The current slot
/// is sorted by time (stably) when the queue reaches it; an event pushed into
/// it is inserted after the ones of its time. An event for a time before the
/// current slot waits in `past` and comes out first. Each event is thus moved
/// about once, where a radix heap moved it three times on these workloads.
pub struct EventQueue<E> {
    /// Ring of slots (absolute slot `s` at index `s % SLOTS`); the current
    /// slot's events are in `cur`, never in the ring.
    slots: Vec<Vec<(Ps, u32)>>,
    /// Bit per ring index: its slot holds events.
    occupied: Vec<u64>,
    /// The current slot's events sorted by time then insertion; `head` first.
    cur: Vec<(Ps, u32)>,
    head: usize,
    /// Absolute number of the current slot (time >> SLOT_BITS).
    base: u64,
    /// Events past the window / before the current slot, by (time, insertion order).
    far: BinaryHeap<Reverse<(Ps, u64, u32)>>,
    past: BinaryHeap<Reverse<(Ps, u64, u32)>>,
    events: Vec<Option<E>>,
    free: Vec<u32>,
    seq: u64,
    len: usize,
}

const SLOT_BITS: u32 = 7;
const SLOTS: usize = 1 << 10;
/// How many events ahead `pop` prefetches.
const PREFETCH_AHEAD: usize = 6;

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            slots: (0..SLOTS).map(|_| Vec::new()).collect(),
            occupied: vec![0; SLOTS / 64],
            cur: Vec::new(),
            head: 0,
            base: 0,
            far: BinaryHeap::new(),
            past: BinaryHeap::new(),
            events: Vec::new(),
            free: Vec::new(),
            seq: 0,
            len: 0,
        }
    }
}

impl<E> EventQueue<E> {
    #[inline(always)]
    pub fn push(&mut self, at: Ps, event: E) {
        let slot = match self.free.pop() {
            Some(i) => {
                self.events[i as usize] = Some(event);
                i
            }
            None => {
                self.events.push(Some(event));
                (self.events.len() - 1) as u32
            }
        };
        self.len += 1;
        let s = at >> SLOT_BITS;
        if s > self.base && s - self.base < SLOTS as u64 {
            let i = s as usize % SLOTS;
            self.slots[i].push((at, slot));
            self.occupied[i / 64] |= 1 << (i % 64);
        } else {
            self.push_rare(at, slot);
        }
    }

    /// `push` into the current slot, or before it, or past the window.
    #[inline(never)]
    fn push_rare(&mut self, at: Ps, slot: u32) {
        let s = at >> SLOT_BITS;
        if s == self.base {
            // After every event of a time up to `at` (they came in before it).
            let at_or_before = self.cur[self.head..].partition_point(|&(t, _)| t <= at);
            self.cur.insert(self.head + at_or_before, (at, slot));
        } else if s < self.base {
            self.past.push(Reverse((at, self.seq, slot)));
            self.seq += 1;
        } else {
            self.far.push(Reverse((at, self.seq, slot)));
            self.seq += 1;
        }
    }

    /// The next occupied ring slot after the current one, within the window.
    fn next_occupied(&self) -> Option<u64> {
        let start = (self.base as usize + 1) % SLOTS;
        let words = SLOTS / 64;
        // The first word from `start`'s bit on, then whole words, wrapping
        // around once (back to `start`'s word, its bits before `start`).
        let mut w = start / 64;
        let mut bits = self.occupied[w] & (!0u64 << (start % 64));
        for _ in 0..=words {
            if bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                let ahead = (i + SLOTS - self.base as usize % SLOTS) % SLOTS;
                return Some(self.base + ahead as u64);
            }
            w = (w + 1) % words;
            bits = self.occupied[w];
        }
        None
    }

    /// Makes `cur` hold the earliest events of the ring or `far` (if any).
    #[inline]
    fn settle(&mut self) {
        if self.head >= self.cur.len() {
            self.next_slot();
        }
    }

    #[inline(never)]
    fn next_slot(&mut self) {
        self.cur.clear();
        self.head = 0;
        let next = match self.next_occupied() {
            Some(s) => s,
            None => match self.far.peek() {
                Some(Reverse((at, _, _))) => at >> SLOT_BITS,
                None => return,
            },
        };
        self.base = next;
        // Slots newly inside the window receive their far events, in
        // (time, insertion) order, before anything is pushed there directly.
        let end = self.base + SLOTS as u64;
        while let Some(&Reverse((at, _, slot))) = self.far.peek() {
            let s = at >> SLOT_BITS;
            if s >= end {
                break;
            }
            self.far.pop();
            let i = s as usize % SLOTS;
            self.slots[i].push((at, slot));
            self.occupied[i / 64] |= 1 << (i % 64);
        }
        let i = self.base as usize % SLOTS;
        self.occupied[i / 64] &= !(1 << (i % 64));
        std::mem::swap(&mut self.cur, &mut self.slots[i]);
        // Stable: equal times keep insertion order.
        self.cur.sort_by_key(|&(at, _)| at);
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Ps, E)> {
        let (at, slot) = if let Some(Reverse((at, _, slot))) = self.past.pop() {
            (at, slot)
        } else {
            self.settle();
            let &(at, slot) = self.cur.get(self.head)?;
            self.head += 1;
            // Events are stored apart from the sorted slot: start loading
            // one a few pops ahead.
            if let Some(&(_, ahead)) = self.cur.get(self.head + PREFETCH_AHEAD) {
                prefetch(&self.events[ahead as usize]);
            }
            (at, slot)
        };
        self.len -= 1;
        self.free.push(slot);
        Some((
            at,
            self.events[slot as usize].take().expect("event present"),
        ))
    }

    /// The event `k` pops after the next one, if it is in the current slot
    /// (for prefetching what handling it will need; a later event may still
    /// come before it).
    #[inline(always)]
    pub fn ahead(&self, k: usize) -> Option<&E> {
        let &(_, slot) = self.cur.get(self.head + k)?;
        self.events[slot as usize].as_ref()
    }

    /// Time of the next event, if any.
    pub fn peek_time(&mut self) -> Option<Ps> {
        if let Some(Reverse((at, _, _))) = self.past.peek() {
            return Some(*at);
        }
        self.settle();
        self.cur.get(self.head).map(|&(at, _)| at)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_orders_by_time_then_insertion() {
        let mut q = EventQueue::default();
        q.push(5, "b");
        q.push(3, "a");
        q.push(5, "c");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(3, "a"), (5, "b"), (5, "c")]);
    }

    /// Random pushes around the last time taken (some before it, spread up
    /// to `2^max_bits` after) and pops: the same order as a heap on (time,
    /// insertion order).
    fn queue_matches_reference(seed: u64, max_bits: u64) {
        let mut rng = crate::rng::Rng::new(seed);
        let mut q = EventQueue::default();
        let mut reference = BinaryHeap::new();
        let mut now = 0u64;
        for n in 0..200_000u64 {
            if rng.below(3) > 0 {
                let at = match rng.below(10) {
                    0 => now.saturating_sub(rng.below(50)),
                    1..=4 => now + rng.below(4),
                    _ => {
                        let bits = rng.below(max_bits);
                        now + rng.below(1 << bits)
                    }
                };
                q.push(at, n);
                reference.push(Reverse((at, n)));
            } else {
                if rng.below(2) == 0 {
                    assert_eq!(q.peek_time(), reference.peek().map(|r| r.0 .0));
                }
                let got = q.pop();
                assert_eq!(got, reference.pop().map(|r| r.0));
                if let Some((at, _)) = got {
                    now = at;
                }
            }
            assert_eq!(q.len(), reference.len());
        }
    }

    #[test]
    fn queue_matches_a_sorted_reference_with_ties_and_past_events() {
        queue_matches_reference(8, 40);
    }

    #[test]
    fn queue_matches_a_sorted_reference_around_its_window() {
        // Times within a few slots and up to a few windows ahead.
        for (seed, bits) in [(9, 14), (10, 24), (11, 26)] {
            queue_matches_reference(seed, bits);
        }
    }
}
