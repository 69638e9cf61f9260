//! The scheduler's notification queues: entries, per-destination queues
//! sorted by priority, per-pair FIFO lists, and notifying and revealing.
use super::Scheduler;
use crate::edm::config::Priority;
use crate::time::Ps;
use edm_proto::message::Kind;
use std::collections::VecDeque;

/// No entry (end of a pair's list, an empty pair).
pub(super) const NONE: u32 = u32::MAX;

/// A waiting message: 32 bytes, so that the entries an iteration touches
/// share cache lines (when it became visible is kept in its destination's
/// `unrevealed` queue, the only place that needs it).
#[derive(Clone, Debug)]
pub(super) struct Entry {
    pub(super) msg: u32,
    pub(super) src: u16,
    pub(super) dst: u16,
    pub(super) remaining: u32,
    /// Extra delay of the first chunk's data (a read's forwarded RREQ path).
    pub(super) first_extra_ps: u32,
    /// Arrival order (FCFS priority and tie-break).
    pub(super) order: u64,
    /// The next entry of the same source-destination pair (arrival order).
    pub(super) next: u32,
    pub(super) granted: bool,
    /// WREQ or RRES: the kind of the data units, for their wire time.
    pub(super) kind: Kind,
    /// Chunks granted so far (LAS priority; saturates).
    pub(super) attained_chunks: u16,
}

/// A priority key: the pair (major, minor) as one integer, `major << 64 |
/// minor`, so it orders exactly as the pair does (lexicographically) and
/// compares without branching.
pub(super) type Key = u128;

pub(super) fn key_of(major: u64, minor: u64) -> Key {
    (major as Key) << 64 | minor as Key
}

/// The major part of a key (SRPT: the remaining bytes).
pub(super) fn key_major(key: Key) -> u64 {
    (key >> 64) as u64
}

impl Entry {
    pub(super) fn key(&self, priority: Priority) -> Key {
        match priority {
            Priority::Srpt => key_of(self.remaining as u64, self.order),
            Priority::Fcfs => key_of(self.order, 0),
            Priority::Las => key_of(self.attained_chunks as u64, self.order),
        }
    }

    /// How far before the ports' release it may be granted (see `iterate`).
    pub(super) fn lead(&self) -> Ps {
        if self.granted {
            0
        } else {
            self.first_extra_ps as Ps
        }
    }
}

/// A destination's notification queue, organised so that an iteration finds
/// its best eligible entry without scanning it. The queue in arrival order is
/// `unrevealed` followed, per source, by that pair's list; only each pair's
/// oldest entry (its head, `Scheduler::pair_first`) can be granted. `heads`
/// holds every revealed entry sorted by priority key, and an iteration takes
/// the first that is its pair's head and eligible. (Keeping only the pairs'
/// heads there would insert the next entry of a pair, at a random place,
/// whenever its head ends; this way, with FCFS or equal sizes, entries only
/// join at the back and leave near the front.)
#[derive(Clone, Debug, Default)]
pub(super) struct Queue {
    /// Arrived but not yet revealed, in arrival order, with when each becomes
    /// visible. An entry is revealed
    /// once every entry that arrived before it at this destination is visible:
    /// the original model scanned the queue up to its first invisible entry.
    pub(super) unrevealed: VecDeque<(u32, Ps)>,
    /// The latest `visible_at` of any entry that arrived here (revealing an
    /// entry waits for it, with the entries before).
    pub(super) visible_max: Ps,
    /// Every revealed entry, by key (keys are unique: they contain the
    /// arrival order). A deque: entries leave mostly near the front (the best
    /// eligible) and arrive mostly near the back (new, later entries), and
    /// its insert and remove shift the shorter side.
    pub(super) heads: VecDeque<Head>,
    pub(super) len: usize,
}

/// A revealed entry, as its destination's queue keeps it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Head {
    pub(super) key: Key,
    pub(super) src: u16,
    pub(super) entry: u32,
    /// The entry's [`Entry::lead`].
    pub(super) lead: Ps,
}

impl Scheduler {
    /// A notification for `bytes` of data from `src` to `dst`, usable from
    /// `visible_at`; the first chunk's data takes `first_extra_ps` longer to
    /// reach the switch than later chunks' (so its ports are held that much longer).
    #[allow(clippy::too_many_arguments)]
    pub fn notify(
        &mut self,
        visible_at: Ps,
        src: u16,
        dst: u16,
        msg: u32,
        bytes: u32,
        kind: Kind,
        first_extra_ps: Ps,
    ) {
        let entry = Entry {
            msg,
            src,
            dst,
            remaining: bytes,
            order: self.next_order,
            granted: false,
            attained_chunks: 0,
            kind,
            first_extra_ps: u32::try_from(first_extra_ps)
                .expect("a first chunk's extra delay fits 4 ms"),
            next: NONE,
        };
        let id = match self.free.pop() {
            Some(id) => {
                self.entries[id as usize] = entry;
                id
            }
            None => {
                self.entries.push(entry);
                (self.entries.len() - 1) as u32
            }
        };
        let q = &mut self.queues[dst as usize];
        q.unrevealed.push_back((id, visible_at));
        q.len += 1;
        self.max_occupancy = self.max_occupancy.max(q.len);
        self.mark_waiting(dst as usize);
        self.max_lead_ps = self.max_lead_ps.max(first_extra_ps);
        if first_extra_ps > 0 {
            self.leading_by_src[src as usize] += 1;
            self.leading_by_dst[dst as usize] += 1;
        }
        self.next_order += 1;
        self.occupancy += 1;
    }

    pub fn is_empty(&self) -> bool {
        self.occupancy == 0
    }

    /// Inserts entry `id` into its destination's sorted `heads`.
    pub(super) fn insert_head(&mut self, id: u32) {
        let e = &self.entries[id as usize];
        let head = Head {
            key: e.key(self.priority),
            src: e.src,
            entry: id,
            lead: e.lead(),
        };
        let heads = &mut self.queues[e.dst as usize].heads;
        // Most are later arrivals than every entry there (FCFS, and SRPT
        // among equal sizes): they go at the back, with no search.
        if heads.back().is_none_or(|b| b.key < head.key) {
            heads.push_back(head);
            return;
        }
        let at = heads.partition_point(|h| h.key < head.key);
        heads.insert(at, head);
    }

    /// Removes the head at `at` of `dst`'s heads (its key is `key`).
    pub(super) fn remove_head(&mut self, dst: u16, key: Key, at: u32) {
        let heads = &mut self.queues[dst as usize].heads;
        debug_assert_eq!(heads[at as usize].key, key);
        heads.remove(at as usize);
    }

    /// Reveals the entries of `dst` whose predecessors and themselves are
    /// visible at `now`, appending each to its pair's list.
    pub(super) fn reveal(&mut self, dst: usize, now: Ps) {
        while let Some(&(id, visible_at)) = self.queues[dst].unrevealed.front() {
            let q = &mut self.queues[dst];
            q.visible_max = q.visible_max.max(visible_at);
            if q.visible_max > now {
                break;
            }
            q.unrevealed.pop_front();
            if self.pair_fifo {
                let e = &self.entries[id as usize];
                let pair = dst * self.ports + e.src as usize;
                if self.pair_last[pair] == NONE {
                    self.pair_first[pair] = id;
                } else {
                    self.entries[self.pair_last[pair] as usize].next = id;
                }
                self.pair_last[pair] = id;
            }
            self.insert_head(id);
        }
    }

    /// Drops every waiting entry whose (source, destination) `dropped`
    /// picks (a switch that fails, or sees a port down, forgets that
    /// demand) and returns their messages' ids.
    pub fn drop_entries(&mut self, dropped: impl Fn(u16, u16) -> bool) -> Vec<u32> {
        let mut msgs = Vec::new();
        for dst in 0..self.queues.len() {
            let entries = &self.entries;
            let gone = |id: u32| {
                let e = &entries[id as usize];
                dropped(e.src, e.dst)
            };
            let q = &self.queues[dst];
            let ids: Vec<u32> = (q.unrevealed.iter().map(|&(id, _)| id))
                .chain(q.heads.iter().map(|h| h.entry))
                .filter(|&id| gone(id))
                .collect();
            if ids.is_empty() {
                continue;
            }
            let q = &mut self.queues[dst];
            q.unrevealed.retain(|&(id, _)| !gone(id));
            q.heads.retain(|h| !gone(h.entry));
            q.len -= ids.len();
            self.mark_waiting(dst);
            for id in ids {
                let e = &self.entries[id as usize];
                if e.lead() > 0 {
                    self.leading_by_src[e.src as usize] -= 1;
                    self.leading_by_dst[e.dst as usize] -= 1;
                }
                if self.pair_fifo {
                    // (A pair's entries go together: same source and destination.)
                    let pair = dst * self.ports + e.src as usize;
                    self.pair_first[pair] = NONE;
                    self.pair_last[pair] = NONE;
                }
                msgs.push(e.msg);
                self.free.push(id);
                self.occupancy -= 1;
            }
        }
        msgs
    }

    /// The waiting entries (any order).
    pub(super) fn live(&self) -> impl Iterator<Item = &Entry> {
        let mut removed = vec![false; self.entries.len()];
        for &id in &self.free {
            removed[id as usize] = true;
        }
        self.entries
            .iter()
            .zip(removed)
            .filter(|(_, r)| !r)
            .map(|(e, _)| e)
    }
}
