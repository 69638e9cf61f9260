//! EDM's link: one direction of one wire, sending whole units back to back
//! with /N/ and /G/ control blocks slipped in anywhere (docs/protocol.md §3.3).
use crate::background::{FrameStats, FrameStream};
use crate::config::FabricConfig;
use crate::time::Ps;
use std::collections::VecDeque;

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
    /// Zero-queue mode ([`super::placement::Timeline`]): the link sends `blocks` blocks from
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

#[cfg(test)]
mod tests {
    use super::*;

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
