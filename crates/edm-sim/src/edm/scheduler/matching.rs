//! One priority-PIM iteration (§3.1): free destinations request their
//! best eligible message, each source accepts its best request, accepted
//! pairs become busy and are granted a chunk one iteration later.
use super::queue::{key_major, Head, Key, NONE};
use super::{Grant, Iteration, Scheduler};
use crate::edm::config::Priority;
use crate::engine::prefetch;
use crate::time::Ps;

impl Scheduler {
    /// One priority-PIM iteration starting at `now`.
    pub fn iterate(&mut self, now: Ps) -> Iteration {
        let mut out = Iteration::default();
        self.iterate_into(now, &mut out);
        out
    }

    /// [`Scheduler::iterate`] into `out` (cleared first), reusing its memory.
    pub fn iterate_into(&mut self, now: Ps, out: &mut Iteration) {
        out.grants.clear();
        out.refused = false;
        out.masked_until = 0;
        debug_assert!(now >= self.last_now, "iterations go forward in time");
        self.last_now = now;
        self.iterations += 1;
        self.stamp = self.stamp.wrapping_add(1);
        let stamp = self.stamp;
        // (1) Each free destination requests its best eligible message: visible,
        // source free, and the oldest of its source-destination pair.
        // Only destinations with entries, in order (step 1 changes no queue's length).
        debug_assert!((0..self.queues.len())
            .all(|d| (self.waiting[d / 64] >> (d % 64) & 1 == 1) == (self.queues[d].len > 0)));
        debug_assert!(
            self.pair_fifo
                || (0..self.queues.len()).all(|d| {
                    let (q, f) = (&self.queues[d], &self.dsts[d].front);
                    f.len as usize == q.heads.len()
                        && q.heads.front().is_none_or(|h| h.entry == f.head.entry)
                })
        );
        // A destination released after this (plus the lead any waiting
        // first chunk may have) is busy for every entry it holds.
        let busy_after = now + self.max_lead_ps + self.early_ps;
        for word in 0..self.waiting.len() {
            let mut bits = self.waiting[word];
            while bits != 0 {
                let dst = word * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                self.request(dst, now, busy_after, stamp, out);
            }
        }
        self.accept(now, out);
    }

    /// Step (1) for destination `dst` (its queue holds entries): it requests
    /// its best eligible message from that message's source (step 2 keeps
    /// each source's best request).
    #[inline(always)]
    fn request(&mut self, dst: usize, now: Ps, busy_after: Ps, stamp: u32, out: &mut Iteration) {
        {
            let early = self.early_ps;
            let d = &self.dsts[dst];
            let (dst_release, in_flight_until, reveal_at) =
                (d.release, d.in_flight_until, d.reveal_at);
            if dst_release > busy_after || self.link_down[dst] {
                return;
            }
            if self.pipelined && now < in_flight_until {
                // Masked while the iteration that matched it is in flight
                // (its release may come sooner): look again when that ends.
                if out.masked_until == 0 || in_flight_until < out.masked_until {
                    out.masked_until = in_flight_until;
                }
                return;
            }
            if now >= reveal_at {
                self.reveal(dst, now);
            } else if reveal_at != Ps::MAX {
                // All `reveal` would do: note its first entry's `visible_at`.
                self.visible_max[dst] = reveal_at;
            }
            // A read's first chunk reaches the ports `lead` later than a chunk
            // sent on a /G/, so it may be granted that much before they are
            // released: its circuit still starts after theirs ends.
            let now_early = now + early;
            let eligible = |h: &Head| {
                let until = now_early + h.lead;
                let src_release = self.seen_src_release(h.src as usize, now);
                !(src_release > until || dst_release > until || self.link_down[h.src as usize])
            };
            // The best pair head's key (priority hold compares with it).
            let mut any = None;
            let mut best: Option<(Key, u16, u32, u32)> = None;
            if !self.pair_fifo {
                // Every entry is its pair's head: the first is the best, and
                // usually decides (from the dense copy; the queue only if not).
                let front = self.dsts[dst].front;
                if front.len == 0 {
                    return;
                }
                let h = front.head;
                any = Some(h.key);
                if eligible(&h) {
                    best = Some((h.key, h.src, h.entry, 0));
                } else if front.len > 1 {
                    for (at, h) in self.queues[dst].heads.iter().enumerate().skip(1) {
                        if eligible(h) {
                            best = Some((h.key, h.src, h.entry, at as u32));
                            break;
                        }
                    }
                }
            } else {
                let pair_heads = &self.pair_first[dst * self.ports..(dst + 1) * self.ports];
                for (at, h) in self.queues[dst].heads.iter().enumerate() {
                    if pair_heads[h.src as usize] != h.entry {
                        continue;
                    }
                    any.get_or_insert(h.key);
                    if eligible(h) {
                        best = Some((h.key, h.src, h.entry, at as u32));
                        break;
                    }
                }
            }
            // (2) Each source keeps the best request it gets (ties: lower destination).
            // Priority hold (an option, SRPT only): rather than start a message
            // `hold` or more times longer than its best one, whose source is
            // busy for at most a chunk more, the destination waits for it.
            // (Only when a better entry exists: with k = 1 the best entry itself
            // would pass the test, and nothing would ever be granted.)
            if let (Some((key, ..)), Some(any)) = (best, any) {
                if self.hold > 0
                    && self.priority == Priority::Srpt
                    && any != key
                    && key_major(any).saturating_mul(self.hold) <= key_major(key)
                {
                    best = None;
                }
            }
            if let Some((key, s, id, at)) = best {
                // Step (3) reads the entry if its source accepts: load it meanwhile.
                prefetch(&self.entries[id as usize]);
                let s = s as usize;
                let slot = &mut self.best_request[s];
                if slot.0 != stamp {
                    *slot = (stamp, key, dst as u16, id, at);
                    self.requesting[s / 64] |= 1u64 << (s % 64);
                } else {
                    out.refused = true;
                    if key < slot.1 {
                        *slot = (stamp, key, dst as u16, id, at);
                    }
                }
            }
        }
    }

    /// Step (3): accepted pairs become busy; grants are issued one iteration later.
    #[inline(always)]
    fn accept(&mut self, now: Ps, out: &mut Iteration) {
        let at = now + self.iteration_ps;
        // The requested sources in port order (a bit each: no sort).
        for word in 0..self.requesting.len() {
            let mut bits = std::mem::take(&mut self.requesting[word]);
            while bits != 0 {
                let s = (word * 64 + bits.trailing_zeros() as usize) as u16;
                bits &= bits - 1;
                self.accept_request(now, at, s, out);
            }
        }
    }

    /// Step (3) for source `s`, which got a request: accepts its best.
    #[inline(always)]
    fn accept_request(&mut self, now: Ps, at: Ps, s: u16, out: &mut Iteration) {
        {
            // `at_head` still indexes the entry: only this grant changes `dst`'s heads.
            let (_, key, dst, id, at_head) = self.best_request[s as usize];
            if self.pipelined {
                // Matched by an iteration in flight (its request stage could
                // not see that): the accept stage drops the request, however
                // short that match's chunk (the hardware masks a port for the
                // iteration's three cycles: its queue entry is only updated at
                // the grant stage).
                if now < self.src_in_flight_until[s as usize] {
                    out.refused = true;
                    return;
                }
                self.prev_release[s as usize] = self.src_release[s as usize];
                self.src_in_flight_until[s as usize] = now + self.iteration_ps;
                self.dsts[dst as usize].in_flight_until = now + self.iteration_ps;
            }
            let e = &mut self.entries[id as usize];
            let bytes = e.remaining.min(self.chunk_bytes);
            let first = !e.granted;
            e.granted = true;
            e.attained_chunks = e.attained_chunks.saturating_add(1);
            e.remaining -= bytes;
            let last = e.remaining == 0;
            let (msg, kind, next) = (e.msg, e.kind, e.next);
            let extra = if first { e.first_extra_ps as Ps } else { 0 };
            if extra > 0 {
                self.leading_by_src[s as usize] -= 1;
                self.leading_by_dst[dst as usize] -= 1;
            }
            if last {
                // The pair's next entry (already in `heads`) becomes its head.
                self.remove_head(dst, key, at_head);
                if self.pair_fifo {
                    let pair = dst as usize * self.ports + s as usize;
                    self.pair_first[pair] = next;
                    if next == NONE {
                        self.pair_last[pair] = NONE;
                    }
                }
                self.free.push(id);
                self.queues[dst as usize].len -= 1;
                self.mark_waiting(dst as usize);
                self.occupancy -= 1;
            } else {
                // A new key (SRPT, LAS) or lead (a first chunk granted).
                self.remove_head(dst, key, at_head);
                self.insert_head(id);
            }
            self.sync_front(dst as usize);
            let release =
                (at + extra + self.wire_ps(kind, bytes)).saturating_sub(self.iteration_ps);
            self.src_release[s as usize] = release;
            self.dsts[dst as usize].release = release;
            out.grants.push(Grant {
                src: s,
                dst,
                msg,
                bytes,
                first,
                last,
                at,
                release,
            });
        }
    }
}
