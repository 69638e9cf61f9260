//! The protocol-independent engine: a deterministic event queue, links that
//! serialize 66-bit blocks, and the per-message record every protocol fills.
//! A protocol is a [`Protocol`]: it receives its own events and uses the links.
use crate::background::{FrameStats, FrameStream};
use crate::config::{FabricConfig, Ps};
use crate::workload::MessageSpec;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Asks the CPU to start loading `value`'s cache line (a hint only: no effect
/// on results; a no-op off x86-64).
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and does not read or write memory
    // visibly; the pointer comes from a reference.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

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

/// What a link transmission delivers: when the first and the last block
/// arrive at the far end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery {
    pub start: Ps,
    pub first_block: Ps,
    pub last_block: Ps,
}

/// One direction of one link: sends whole units of `blocks` blocks back to
/// back, high-priority units before waiting low-priority ones (never preempting).
/// With background frames ([`FrameStream`]) a unit or control block that finds
/// a frame on the wire waits for it (one block with EDM's preemption).
#[derive(Clone, Debug)]
pub struct Link<U> {
    free_at: Ps,
    /// (blocks, unit, when offered), high priority first.
    waiting: [VecDeque<(u32, U, Ps)>; 2],
    /// Time of the pending free-link wake-up, if one is scheduled.
    wake_at: Option<Ps>,
    pub busy_ps: Ps,
    pub max_waiting: usize,
    /// Boxed: most runs have none, and a small link keeps the hot ones in cache.
    pub frames: Option<Box<FrameStream>>,
    /// Control blocks announced ahead ([`Link::control_block_at`]), in time
    /// order, not yet applied; and the block time they take.
    controls: VecDeque<Ps>,
    /// Start times of units `offer` placed after the unit in flight that have
    /// not started yet (they count as waiting).
    reserved: VecDeque<Ps>,
    /// The fronts of `controls` and `reserved` (`Ps::MAX`: empty), checked on
    /// every use of the link without touching the queues.
    next_control: Ps,
    next_reserved: Ps,
    /// The fabric's block time and one hop's delay (kept: used per unit).
    block_ps: Ps,
    hop_ps: Ps,
}

impl<U> Link<U> {
    pub fn new(fabric: &FabricConfig, frames: Option<FrameStream>) -> Self {
        Link {
            free_at: 0,
            waiting: [VecDeque::new(), VecDeque::new()],
            wake_at: None,
            busy_ps: 0,
            max_waiting: 0,
            frames: frames.map(Box::new),
            controls: VecDeque::new(),
            reserved: VecDeque::new(),
            next_control: Ps::MAX,
            next_reserved: Ps::MAX,
            block_ps: fabric.block_ps(),
            hop_ps: fabric.hop_ps(),
        }
    }

    /// Offers a unit at `now`. Returns `Some` with its start time (`now` if
    /// the link is idle) or queues it; the caller must then call
    /// [`Link::next`] when the link frees. A high-priority unit that finds no
    /// other high-priority one waiting is not queued but starts when the
    /// link frees (nothing offered later could go before it): the caller
    /// needs no wake-up for it. A control block inserted before that start
    /// delays what follows it, not the unit (as for a unit in flight). With
    /// background frames it is queued, as their service follows the link in
    /// time order.
    #[inline]
    pub fn offer(&mut self, now: Ps, blocks: u32, high: bool, unit: U) -> Option<(Ps, u32, U)> {
        match self.start_time(now, high) {
            Some(at) => Some((at, blocks, unit)),
            None => {
                self.wait(now, blocks, high, unit);
                None
            }
        }
    }

    /// [`Link::offer`] in two steps, so the unit need not pass through it:
    /// when a unit offered now starts (taking its place), or `None` if it
    /// must wait (then call [`Link::wait`]).
    #[inline]
    pub fn start_time(&mut self, now: Ps, high: bool) -> Option<Ps> {
        self.apply_controls(now);
        if self.free_at <= now && self.waiting.iter().all(|q| q.is_empty()) {
            return Some(now);
        }
        if high && self.waiting[0].is_empty() && self.frames.is_none() {
            let start = self.free_at.max(now);
            while self.next_reserved <= now && self.reserved.pop_front().is_some() {
                self.next_reserved = self.reserved.front().copied().unwrap_or(Ps::MAX);
            }
            if start > now {
                self.reserved.push_back(start);
                self.next_reserved = self.next_reserved.min(start);
            }
            self.note_waiting();
            return Some(start);
        }
        None
    }

    /// Queues a unit [`Link::start_time`] did not start.
    pub fn wait(&mut self, now: Ps, blocks: u32, high: bool, unit: U) {
        self.waiting[usize::from(!high)].push_back((blocks, unit, now));
        self.note_waiting();
    }

    fn note_waiting(&mut self) {
        let n = self.waiting[0].len() + self.waiting[1].len() + self.reserved.len();
        self.max_waiting = self.max_waiting.max(n);
    }

    /// The next waiting unit and when it was offered, if the link is free at
    /// `now` (call on a wake-up).
    #[inline]
    pub fn next(&mut self, now: Ps) -> Option<(u32, U, Ps)> {
        self.apply_controls(now);
        if self.wake_at == Some(now) {
            self.wake_at = None;
        }
        if self.free_at > now {
            return None;
        }
        self.waiting[0]
            .pop_front()
            .or_else(|| self.waiting[1].pop_front())
    }

    /// Starts sending `blocks` blocks at `now`; returns the delivery times and
    /// when the link frees (schedule a wake-up then if units wait).
    pub fn start(&mut self, now: Ps, blocks: u32) -> (Delivery, Ps) {
        debug_assert!(self.free_at <= now);
        // (A start reserved by `offer` may be later than some announced
        // control blocks: they delay what follows it.)
        let block = self.block_ps;
        let now = now + self.frame_wait(now);
        let first_block = now + self.hop_ps;
        let d = Delivery {
            start: now,
            first_block,
            last_block: first_block + (blocks as Ps - 1) * block,
        };
        self.free_at = now + blocks as Ps * block;
        self.busy_ps += blocks as Ps * block;
        if let Some(f) = &mut self.frames {
            f.memory_busy(now, self.free_at);
        }
        (d, self.free_at)
    }

    /// Sends a single control block (/N/ or /G/) at once, even inside a unit
    /// in progress: the protocol lets them fill any slot (docs/protocol.md §3.3).
    /// Whatever the link was sending then finishes one block later; the unit
    /// in flight is not re-timed (an error of at most one block per filler).
    pub fn insert_control_block(&mut self, now: Ps) -> Delivery {
        self.apply_controls(now);
        let block = self.block_ps;
        let now = if self.free_at <= now {
            now + self.frame_wait(now)
        } else {
            now
        };
        let start = self.free_at.max(now);
        self.free_at = start + block;
        self.busy_ps += block;
        if let Some(f) = &mut self.frames {
            f.memory_busy(start, self.free_at);
        }
        let first_block = now + self.hop_ps;
        Delivery {
            start: now,
            first_block,
            last_block: first_block,
        }
    }

    /// [`Link::insert_control_block`] at `at` (not before any control block
    /// announced so far), announced now: its effect on the link is applied
    /// when the link is next used at or after `at`, in time order, which is
    /// the same as inserting it then (saves the caller an event at `at`).
    /// `None` with background frames: their service must be followed in
    /// time order, so insert the block at `at` instead.
    pub fn control_block_at(&mut self, at: Ps) -> Option<Delivery> {
        if self.frames.is_some() {
            return None;
        }
        debug_assert!(self.controls.back().is_none_or(|&t| t <= at));
        self.controls.push_back(at);
        self.next_control = self.next_control.min(at);
        let first_block = at + self.hop_ps;
        Some(Delivery {
            start: at,
            first_block,
            last_block: first_block,
        })
    }

    /// Applies the announced control blocks due by `now` (`Ps::MAX`: all).
    #[inline]
    pub fn apply_controls(&mut self, now: Ps) {
        while self.next_control <= now {
            // (`now` may be `Ps::MAX`, the empty mark.)
            let Some(at) = self.controls.pop_front() else {
                break;
            };
            self.next_control = self.controls.front().copied().unwrap_or(Ps::MAX);
            self.free_at = self.free_at.max(at) + self.block_ps;
            self.busy_ps += self.block_ps;
        }
    }

    /// If units wait and no wake-up is scheduled for when the link frees: the
    /// time to schedule one (the caller must then call [`Link::next`] at it).
    #[inline]
    pub fn wake_needed(&mut self) -> Option<Ps> {
        if self.has_waiting() && self.wake_at != Some(self.free_at) {
            self.wake_at = Some(self.free_at);
            return Some(self.free_at);
        }
        None
    }

    #[inline]
    pub fn has_waiting(&self) -> bool {
        self.waiting.iter().any(|q| !q.is_empty())
    }

    /// How long memory traffic starting at `now` (link idle) waits for a frame.
    fn frame_wait(&mut self, now: Ps) -> Ps {
        self.frames.as_mut().map_or(0, |f| f.memory_wait(now))
    }
}

impl<U> Link<U> {
    /// Zero-queue mode ([`Timeline`]): the link sends `blocks` blocks from
    /// `start`, a time fixed ahead (not before any booking already passed to
    /// the frames, `start` >= the time of the call). Only the accounting: busy
    /// time, and the frames' pause. Memory never waits for a frame here: its
    /// start is known ahead, so the frame yields its block slot.
    pub fn account(&mut self, now: Ps, start: Ps, blocks: u32) {
        let end = start + blocks as Ps * self.block_ps;
        self.busy_ps += end - start;
        if let Some(f) = &mut self.frames {
            f.memory_busy_ahead(start, end);
            f.advance(now);
        }
    }
}

/// The booked transmissions of one link direction, in time order (EDM's
/// zero-queue mode, where every unit's start is fixed ahead: the switch
/// knows its egress schedule, a host its granted data). So that control
/// units find room between data units, a data unit may be followed by a
/// guard kept free of other data: `unit_guard` after every data unit, and
/// `run_guard` after one that ends a run of back-to-back data (gaps shorter
/// than `run_guard`) at least `max_run` long.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    /// Booked units, sorted by start, not overlapping on the wire (unless
    /// `overlaps` > 0).
    booked: VecDeque<Booking>,
    unit_guard: Ps,
    run_guard: Ps,
    max_run: Ps,
    /// The run of back-to-back data the last data unit booked at the end
    /// belongs to.
    run_start: Ps,
    run_end: Ps,
    /// Bookings that overlapped another on the wire: the rules must keep this 0.
    pub overlaps: u64,
}

#[derive(Clone, Copy, Debug)]
struct Booking {
    start: Ps,
    end: Ps,
    /// Until when no other data may start (`end` for a control unit).
    guard_end: Ps,
    data: bool,
}

impl Timeline {
    pub fn new(unit_guard: Ps, run_guard: Ps, max_run: Ps) -> Self {
        Timeline {
            unit_guard,
            run_guard,
            max_run,
            ..Default::default()
        }
    }

    /// Forgets what has ended, guards included, by `now` (from the front).
    #[inline]
    pub fn prune(&mut self, now: Ps) {
        while self.booked.front().is_some_and(|b| b.guard_end <= now) {
            self.booked.pop_front();
        }
    }

    /// The earliest start from `from` on of a unit of `len` ps: a control
    /// unit needs [start, start + len) free of other units (it may use the
    /// guards); a data unit (`data`) also needs it free of guards, and its
    /// own `unit_guard` free of other data.
    #[inline]
    pub fn first_fit(&self, from: Ps, len: Ps, data: bool) -> Ps {
        let own_guard = if data { self.unit_guard } else { 0 };
        // Ends are in order (units do not overlap); a guard reaches at most
        // the longer guard past its unit's end.
        let reach = self.unit_guard.max(self.run_guard);
        let mut first = self.booked.partition_point(|b| b.end <= from);
        while first > 0 && self.booked[first - 1].end + reach > from {
            first -= 1;
        }
        let mut t = from;
        for b in self.booked.range(first..) {
            if b.start >= t + len + own_guard {
                break;
            }
            let need = if b.data { len + own_guard } else { len };
            let busy_until = if data { b.guard_end } else { b.end };
            if t + need <= b.start || busy_until <= t {
                continue;
            }
            t = busy_until;
        }
        t
    }

    /// Books a control unit at [start, start + len); false (and counted) if
    /// it overlaps a unit on the wire.
    pub fn book(&mut self, start: Ps, len: Ps) -> bool {
        self.insert(Booking {
            start,
            end: start + len,
            guard_end: start + len,
            data: false,
        })
    }

    /// Books a data unit at [start, start + len) (found by `first_fit` with
    /// `data`) with its guard.
    pub fn book_data(&mut self, start: Ps, len: Ps) -> bool {
        let end = start + len;
        let mut guard = self.unit_guard;
        if start >= self.run_end {
            if start >= self.run_end + self.run_guard {
                self.run_start = start;
            }
            self.run_end = end + guard;
            if end - self.run_start >= self.max_run {
                guard = guard.max(self.run_guard);
                (self.run_start, self.run_end) = (end + guard, end + guard);
            }
        }
        self.insert(Booking {
            start,
            end,
            guard_end: end + guard,
            data: true,
        })
    }

    fn insert(&mut self, b: Booking) -> bool {
        let at = self.booked.partition_point(|x| x.start < b.start);
        let clash_before = at > 0 && self.booked[at - 1].end > b.start;
        let clash_after = self.booked.get(at).is_some_and(|x| x.start < b.end);
        self.booked.insert(at, b);
        let clash = clash_before || clash_after;
        self.overlaps += u64::from(clash);
        !clash
    }

    pub fn is_empty(&self) -> bool {
        self.booked.is_empty()
    }
}

/// The background frames of a set of links, finished at `end`.
pub fn frame_stats<U>(links: &mut [Link<U>], end: Ps) -> FrameStats {
    let mut stats = FrameStats::default();
    for l in links.iter_mut() {
        if let Some(f) = &mut l.frames {
            f.finish(end);
            stats.merge(&f.stats);
        }
    }
    stats
}

/// Per-message outcome.
#[derive(Clone, Debug, Default)]
pub struct Record {
    pub complete_ps: Option<Ps>,
    pub alone_ps: Ps,
}

/// Totals a protocol reports besides the per-message records.
#[derive(Clone, Debug, Default)]
pub struct Totals {
    pub events: u64,
    pub end_ps: Ps,
    /// Mean and max utilisation of host uplinks and of switch egress links.
    pub uplink_util_mean: f64,
    pub uplink_util_max: f64,
    pub downlink_util_mean: f64,
    pub downlink_util_max: f64,
    /// Most data units waiting at any switch egress at once (EDM: 0 up to /G/ interleaving).
    pub max_switch_data_queue: usize,
    /// Longest wait of a data unit at a switch egress.
    pub max_switch_data_wait_ps: Ps,
    /// Data units that found another data unit still being sent at their switch
    /// egress (two circuits overlapping): the scheduler must keep this at 0.
    pub switch_data_conflicts: u64,
    /// EDM's zero-queue mode: longest wait of a /G/ or forwarded request at
    /// a switch egress for a gap (beyond when it was generated), and of a
    /// host's /N/ or request for a gap in its granted data.
    pub max_grant_wait_ps: Ps,
    pub max_request_wait_ps: Ps,
    pub max_notification_queue: usize,
    pub scheduler_iterations: u64,
    /// Data bytes delivered to their destination.
    pub delivered_bytes: u64,
    /// Packet baselines: packets dropped at the switch, data packets marked
    /// with ECN, PFC pauses sent, packets retransmitted, retransmission timeouts.
    pub drops: u64,
    pub ecn_marks: u64,
    pub pauses: u64,
    pub retransmissions: u64,
    pub timeouts: u64,
    /// Packet baselines: most bytes queued at one switch egress, and held
    /// from one ingress (PFC accounting).
    pub max_switch_queue_bytes: u64,
    pub max_ingress_bytes: u64,
    /// Background Ethernet frames (EDM with `background.load` > 0).
    pub frames: FrameStats,
}

/// A protocol run over a workload: what the engine returns.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub records: Vec<Record>,
    pub totals: Totals,
}

/// A fabric protocol: the policy the engine runs.
pub trait Protocol {
    /// Simulates `messages` (sorted by issue time) to completion.
    fn run(&mut self, messages: &[MessageSpec], progress: &mut dyn FnMut(u64, u64)) -> Outcome;
    /// The latency of `message` if it were alone in the network (closed form).
    fn alone_ps(&self, message: &MessageSpec) -> Ps;
    fn name(&self) -> &'static str;
}

/// Utilisation (mean, max) of a set of links over `end` ps.
pub fn utilisation<U>(links: &[Link<U>], end: Ps) -> (f64, f64) {
    if end == 0 || links.is_empty() {
        return (0.0, 0.0);
    }
    let u: Vec<f64> = links
        .iter()
        .map(|l| l.busy_ps as f64 / end as f64)
        .collect();
    (
        u.iter().sum::<f64>() / u.len() as f64,
        u.iter().cloned().fold(0.0, f64::max),
    )
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

    #[test]
    fn a_timeline_fits_units_into_gaps_and_counts_overlaps() {
        let mut t = Timeline::new(0, 0, Ps::MAX);
        assert!(t.book(100, 50)); // [100, 150)
        assert!(t.book(200, 10)); // [200, 210)
        assert_eq!(t.first_fit(0, 100, true), 0);
        assert_eq!(t.first_fit(0, 101, true), 210);
        assert_eq!(t.first_fit(0, 50, true), 0);
        assert_eq!(t.first_fit(120, 10, true), 150);
        assert_eq!(t.first_fit(150, 50, true), 150);
        assert_eq!(t.first_fit(150, 51, true), 210);
        assert_eq!(t.first_fit(205, 1, true), 210);
        assert!(t.book(150, 50), "a gap exactly filled");
        assert_eq!(t.overlaps, 0);
        assert!(!t.book(209, 5), "overlaps [200, 210)");
        assert!(!t.book(90, 11), "overlaps [100, 150)");
        assert_eq!(t.overlaps, 2);
        t.prune(215);
        assert!(t.is_empty());
    }

    #[test]
    fn a_timeline_keeps_a_guard_after_every_data_unit_wherever_it_goes() {
        let mut t = Timeline::new(10, 0, Ps::MAX);
        assert!(t.book_data(300, 50)); // [300, 350), guard to 360
        assert!(t.book_data(100, 50)); // placed before: [100, 150), guard to 160
                                       // A control unit may use a guard, data may not.
        assert_eq!(t.first_fit(140, 10, false), 150);
        assert_eq!(t.first_fit(140, 10, true), 160);
        // Data needs its own guard free of the next data unit: [160, 290) + 10 fits, + 11 not.
        assert_eq!(t.first_fit(160, 130, true), 160);
        assert_eq!(t.first_fit(160, 131, true), 360);
        // A control unit inside a guard does not hide the guard from data
        // searching from after the control unit.
        assert!(t.book(350, 5));
        assert_eq!(t.first_fit(356, 1, true), 360);
        assert_eq!(t.first_fit(356, 1, false), 356);
        assert_eq!(t.overlaps, 0);
    }

    #[test]
    fn a_timeline_keeps_a_run_guard_after_each_long_run_of_data() {
        // Run guards of 10 after runs of 100: data units of 30 back to back.
        let mut t = Timeline::new(0, 10, 100);
        let mut at = 0;
        let mut starts = Vec::new();
        for _ in 0..8 {
            at = t.first_fit(at, 30, true);
            starts.push(at);
            assert!(t.book_data(at, 30));
            at += 30;
        }
        // The fourth unit ends a run of 120: a guard follows it.
        assert_eq!(starts, vec![0, 30, 60, 90, 130, 160, 190, 220]);
        assert_eq!(t.first_fit(0, 10, false), 120);
        assert_eq!(t.first_fit(0, 11, false), 250);
        assert_eq!(t.first_fit(100, 5, true), 260);
        // A gap of at least the run guard starts a new run.
        assert!(t.book_data(300, 50));
        assert!(t.book_data(350, 40));
        assert_eq!(t.first_fit(390, 1, true), 390, "a run of 90");
        assert!(t.book_data(390, 10));
        assert_eq!(t.first_fit(400, 1, true), 410, "a run of 100");
        // With unit guards shorter than the run guard, runs go on across them.
        let mut t = Timeline::new(3, 10, 100);
        let mut at = 0;
        for _ in 0..5 {
            at = t.first_fit(at, 30, true);
            assert!(t.book_data(at, 30));
            at += 30;
        }
        // Units at 0, 33, 66, 99 (end 129: a run of 129 -> guard 10), then 139.
        assert_eq!(t.first_fit(129, 10, false), 129);
        assert_eq!(t.first_fit(129, 1, true), 172);
        assert_eq!(t.overlaps, 0);
    }

    #[test]
    fn a_saturated_link_carries_exactly_line_rate() {
        let fabric = FabricConfig::default();
        let mut link: Link<u32> = Link::new(&fabric, None);
        let mut now = 0;
        let mut sent = 0u64;
        for i in 0..1000u32 {
            let offered = link.offer(now, 7, true, i);
            if let Some((at, b, _)) =
                offered.or_else(|| link.next(now).map(|(b, u, _)| (now, b, u)))
            {
                let (_, free) = link.start(at, b);
                sent += b as u64;
                now = free;
            }
        }
        assert_eq!(now, sent * fabric.block_ps());
        assert_eq!(link.busy_ps, now);
    }
}
