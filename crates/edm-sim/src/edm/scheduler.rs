//! EDM's in-switch scheduler (§3.1): per-destination notification queues and
//! priority-PIM. This is the reference model for the RTL switch; its exact
//! semantics are in docs/simulator.md ("Scheduler semantics").
//!
//! Time is in ps. An iteration that starts at `t` decides with the state at
//! `t` (request, accept, mark busy) and its grants are issued at `t + iteration`.
//! Granted ports are released `wire - iteration` after the grant, where `wire`
//! is the chunk's time on the link, so the next chunk's grant (one iteration
//! after the release) lands exactly when the previous chunk's last block does.
use crate::config::{Priority, Ps};
use crate::engine::prefetch;
use edm_proto::message::{message_blocks, Kind};
use std::collections::VecDeque;

/// One grant: `src` may send `bytes` of message `msg` to `dst` now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grant {
    pub src: u16,
    pub dst: u16,
    pub msg: u32,
    pub bytes: u32,
    /// The first grant of the message (for a read: the forwarded RREQ).
    pub first: bool,
    /// The grant that exhausts the message.
    pub last: bool,
    /// Time the grant is issued.
    pub at: Ps,
    /// When its source and destination become free for the next grant.
    pub release: Ps,
}

/// No entry (end of a pair's list, an empty pair).
const NONE: u32 = u32::MAX;

/// A waiting message: 32 bytes, so that the entries an iteration touches
/// share cache lines (when it became visible is kept in its destination's
/// `unrevealed` queue, the only place that needs it).
#[derive(Clone, Debug)]
struct Entry {
    msg: u32,
    src: u16,
    dst: u16,
    remaining: u32,
    /// Extra delay of the first chunk's data (a read's forwarded RREQ path).
    first_extra_ps: u32,
    /// Arrival order (FCFS priority and tie-break).
    order: u64,
    /// The next entry of the same source-destination pair (arrival order).
    next: u32,
    granted: bool,
    /// WREQ or RRES: the kind of the data units, for their wire time.
    kind: Kind,
}

/// A priority key: the pair (major, minor) as one integer, `major << 64 |
/// minor`, so it orders exactly as the pair does (lexicographically) and
/// compares without branching.
type Key = u128;

fn key_of(major: u64, minor: u64) -> Key {
    (major as Key) << 64 | minor as Key
}

/// The major part of a key (SRPT: the remaining bytes).
fn key_major(key: Key) -> u64 {
    (key >> 64) as u64
}

impl Entry {
    fn key(&self, priority: Priority) -> Key {
        match priority {
            Priority::Srpt => key_of(self.remaining as u64, self.order),
            Priority::Fcfs => key_of(self.order, 0),
        }
    }

    /// How far before the ports' release it may be granted (see `iterate`).
    fn lead(&self) -> Ps {
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
struct Queue {
    /// Arrived but not yet revealed, in arrival order, with when each becomes
    /// visible. An entry is revealed
    /// once every entry that arrived before it at this destination is visible:
    /// the original model scanned the queue up to its first invisible entry.
    unrevealed: VecDeque<(u32, Ps)>,
    /// The latest `visible_at` of any entry that arrived here (revealing an
    /// entry waits for it, with the entries before).
    visible_max: Ps,
    /// Every revealed entry, by key (keys are unique: they contain the
    /// arrival order). A deque: entries leave mostly near the front (the best
    /// eligible) and arrive mostly near the back (new, later entries), and
    /// its insert and remove shift the shorter side.
    heads: VecDeque<Head>,
    len: usize,
}

/// A revealed entry, as its destination's queue keeps it.
#[derive(Clone, Copy, Debug)]
struct Head {
    key: Key,
    src: u16,
    entry: u32,
    /// The entry's [`Entry::lead`].
    lead: Ps,
}

/// What one iteration did.
#[derive(Clone, Debug, Default)]
pub struct Iteration {
    pub grants: Vec<Grant>,
    /// Some request was refused by its source: another iteration may match more.
    pub refused: bool,
    /// Pipelined: the earliest time a port that had a request waiting stops
    /// being masked by an iteration in flight (0: none was).
    pub masked_until: Ps,
}

/// A source's best request of an iteration: (stamp, key, destination, entry,
/// index in the destination's heads).
type BestRequest = (u32, Key, u16, u32, u32);

pub struct Scheduler {
    queues: Vec<Queue>,
    /// Entries, by id; `free` lists the ids of removed ones for reuse.
    entries: Vec<Entry>,
    free: Vec<u32>,
    /// First (the pair's head) and last revealed entry of each (dst, src)
    /// pair (`NONE`: empty).
    pair_first: Vec<u32>,
    pair_last: Vec<u32>,
    ports: usize,
    src_release: Vec<Ps>,
    dst_release: Vec<Ps>,
    priority: Priority,
    chunk_bytes: u32,
    iteration_ps: Ps,
    block_ps: Ps,
    next_order: u64,
    /// The largest `first_extra_ps` seen: how far ahead of a port's release a
    /// read's first chunk may be granted.
    max_lead_ps: Ps,
    /// How far before its release any port may be granted (0 in the paper's
    /// design; see [`Scheduler::grant_early`]).
    early_ps: Ps,
    /// Ungranted entries with a first-chunk lead, by source and by destination.
    leading_by_src: Vec<u32>,
    leading_by_dst: Vec<u32>,
    occupancy: usize,
    /// Priority hold factor (0: off, the paper's PIM); see [`Scheduler::hold_for_shorter`].
    hold: u64,
    /// Per-pair FIFO (the paper): only a pair's oldest entry may be granted.
    /// Off under EDM's memory-order rule, where hosts hold back the messages
    /// that must not overtake ([`Scheduler::without_pair_order`]).
    pair_fifo: bool,
    /// Pipelined matching: a new iteration may start every scheduler cycle
    /// ([`Scheduler::pipeline`]); `cycle_ps` is that cycle.
    pipelined: bool,
    cycle_ps: Ps,
    /// Per port: until when an iteration that matched it is in flight (its
    /// start plus one iteration), and (sources) the release before that
    /// match. An iteration in flight has not marked its ports busy yet, so a
    /// pipelined request stage still sees the earlier release, and its accept
    /// stage drops any request to a port matched in flight.
    src_in_flight_until: Vec<Ps>,
    dst_in_flight_until: Vec<Ps>,
    prev_release: Vec<Ps>,
    /// The latest `now` an iteration ran at (iterations must not go back in time).
    last_now: Ps,
    pub max_occupancy: usize,
    pub iterations: u64,
    // Scratch, reused across iterations (generation-stamped, never cleared).
    stamp: u32,
    best_request: Vec<BestRequest>,
    requesting_srcs: Vec<u16>,
}

impl Scheduler {
    pub fn new(
        ports: usize,
        priority: Priority,
        chunk_bytes: u32,
        iteration_ps: Ps,
        block_ps: Ps,
    ) -> Self {
        Scheduler {
            queues: vec![Queue::default(); ports],
            entries: Vec::new(),
            free: Vec::new(),
            pair_first: vec![NONE; ports * ports],
            pair_last: vec![NONE; ports * ports],
            ports,
            src_release: vec![0; ports],
            dst_release: vec![0; ports],
            priority,
            chunk_bytes,
            iteration_ps,
            block_ps,
            next_order: 0,
            max_lead_ps: 0,
            early_ps: 0,
            leading_by_src: vec![0; ports],
            leading_by_dst: vec![0; ports],
            occupancy: 0,
            hold: 0,
            pair_fifo: true,
            pipelined: false,
            cycle_ps: iteration_ps,
            src_in_flight_until: vec![0; ports],
            dst_in_flight_until: vec![0; ports],
            prev_release: vec![0; ports],
            last_now: 0,
            max_occupancy: 0,
            iterations: 0,
            stamp: 0,
            best_request: vec![(0, 0, 0, 0, 0); ports],
            requesting_srcs: Vec::new(),
        }
    }

    /// Priority hold, an option beside the paper's design (SRPT only): a free
    /// destination whose best queued message waits for a busy source does
    /// not start a message `factor` or more times longer meanwhile; it stays
    /// idle until that source is released (at most one chunk later). Without
    /// it a short message can starve: a source and a destination serving
    /// other partners are released at different instants, while each busy
    /// pair is released together and re-matches at once (docs/simulator.md).
    pub fn hold_for_shorter(&mut self, factor: u32) {
        self.hold = factor as u64;
    }

    /// No per-pair FIFO: every entry may be granted, whatever its pair's older
    /// entries are doing (EDM's memory-order rule: the hosts hold back a
    /// message that must not overtake an earlier one, docs/protocol.md).
    pub fn without_pair_order(&mut self) {
        self.pair_fifo = false;
    }

    /// Pipelined matching: an iteration may start every `cycle` (one
    /// scheduler cycle) while earlier ones are in flight. Each still takes
    /// three cycles (request, accept, mark busy): its request stage sees the
    /// ports as the iterations that ended left them, and its accept stage
    /// drops any request whose source or destination an iteration in flight
    /// has just matched (one more mask per port in hardware).
    pub fn pipeline(&mut self, cycle: Ps) {
        self.pipelined = true;
        self.cycle_ps = cycle;
    }

    /// The time from one iteration's start to the next one's (one cycle when
    /// pipelined, else a whole iteration).
    pub fn issue_interval_ps(&self) -> Ps {
        if self.pipelined {
            self.cycle_ps
        } else {
            self.iteration_ps
        }
    }

    /// The release of source `s` as the request stage of an iteration
    /// starting at `now` sees it. (A destination matched by an iteration in
    /// flight may still request in hardware, but its request is masked at
    /// accept, before any source chooses: the model lets it skip the
    /// iteration, which is the same.)
    #[inline]
    fn seen_src_release(&self, s: usize, now: Ps) -> Ps {
        if self.pipelined && now < self.src_in_flight_until[s] {
            self.prev_release[s]
        } else {
            self.src_release[s]
        }
    }

    /// How far before the release of `src` and `dst` an iteration may use
    /// one of them: only waiting first chunks with a lead can (else 0).
    pub fn lookahead_ps(&self, src: u16, dst: u16) -> Ps {
        self.early_ps
            + if self.leading_by_src[src as usize] + self.leading_by_dst[dst as usize] > 0 {
                self.max_lead_ps
            } else {
                0
            }
    }

    /// Lets every port be granted up to `early` before its release (EDM's
    /// zero-queue mode, where the engine books each circuit to start only
    /// when its ports are actually free, and moves the release to match).
    pub fn grant_early(&mut self, early: Ps) {
        self.early_ps = early;
    }

    /// How far before `dst`'s release an iteration may use it (see
    /// [`Scheduler::lookahead_ps`]).
    pub fn dst_lookahead_ps(&self, dst: u16) -> Ps {
        self.early_ps
            + if self.leading_by_dst[dst as usize] > 0 {
                self.max_lead_ps
            } else {
                0
            }
    }

    /// Holds `dst` busy until at least `release` (the engine's egress
    /// feedback: a circuit into it ends later than its grant planned). True
    /// if that moved its release.
    pub fn hold_dst_until(&mut self, dst: u16, release: Ps) -> bool {
        let r = &mut self.dst_release[dst as usize];
        if release > *r {
            *r = release;
            return true;
        }
        false
    }

    /// Holds `src` busy until at least `release` (zero-queue mode: its
    /// circuit starts later than the grant planned). True if that moved it.
    pub fn hold_src_until(&mut self, src: u16, release: Ps) -> bool {
        let r = &mut self.src_release[src as usize];
        if release > *r {
            *r = release;
            return true;
        }
        false
    }

    /// Whether a port was released in `(after, upto]`.
    pub fn released_between(&self, after: Ps, upto: Ps) -> bool {
        let within = |&r: &Ps| r > after && r <= upto;
        self.src_release.iter().any(within) || self.dst_release.iter().any(within)
    }

    pub fn iteration_ps(&self) -> Ps {
        self.iteration_ps
    }

    /// Time on the link of a data unit carrying `bytes` of a `kind` message.
    pub fn wire_ps(&self, kind: Kind, bytes: u32) -> Ps {
        message_blocks(kind, bytes as u16) as Ps * self.block_ps
    }

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
    fn insert_head(&mut self, id: u32) {
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
    fn remove_head(&mut self, dst: u16, key: Key, at: u32) {
        let heads = &mut self.queues[dst as usize].heads;
        debug_assert_eq!(heads[at as usize].key, key);
        heads.remove(at as usize);
    }

    /// Reveals the entries of `dst` whose predecessors and themselves are
    /// visible at `now`, appending each to its pair's list.
    fn reveal(&mut self, dst: usize, now: Ps) {
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
        let mut requesting_srcs = std::mem::take(&mut self.requesting_srcs);
        requesting_srcs.clear();
        // (1) Each free destination requests its best eligible message: visible,
        // source free, and the oldest of its source-destination pair.
        for dst in 0..self.queues.len() {
            let early = self.early_ps;
            let dst_release = self.dst_release[dst];
            if self.queues[dst].len == 0 || dst_release > now + self.max_lead_ps + early {
                continue;
            }
            if self.pipelined && now < self.dst_in_flight_until[dst] {
                // Masked while the iteration that matched it is in flight
                // (its release may come sooner): look again when that ends.
                let until = self.dst_in_flight_until[dst];
                if out.masked_until == 0 || until < out.masked_until {
                    out.masked_until = until;
                }
                continue;
            }
            self.reveal(dst, now);
            let q = &self.queues[dst];
            // The best pair head's key (priority hold compares with it).
            let mut any = None;
            let mut best: Option<(Key, u16, u32, u32)> = None;
            let pair_heads = &self.pair_first[dst * self.ports..(dst + 1) * self.ports];
            for (at, h) in q.heads.iter().enumerate() {
                if self.pair_fifo && pair_heads[h.src as usize] != h.entry {
                    continue;
                }
                any.get_or_insert(h.key);
                // A read's first chunk reaches the ports `lead` later than a
                // chunk sent on a /G/, so it may be granted that much before
                // they are released: its circuit still starts after theirs ends.
                let until = now + h.lead + early;
                let src_release = self.seen_src_release(h.src as usize, now);
                if src_release > until || dst_release > until {
                    continue;
                }
                best = Some((h.key, h.src, h.entry, at as u32));
                break;
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
                    requesting_srcs.push(s as u16);
                } else {
                    out.refused = true;
                    if key < slot.1 {
                        *slot = (stamp, key, dst as u16, id, at);
                    }
                }
            }
        }
        // (3) Accepted pairs become busy; grants are issued one iteration later.
        let at = now + self.iteration_ps;
        requesting_srcs.sort_unstable();
        for &s in &requesting_srcs {
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
                    continue;
                }
                self.prev_release[s as usize] = self.src_release[s as usize];
                self.src_in_flight_until[s as usize] = now + self.iteration_ps;
                self.dst_in_flight_until[dst as usize] = now + self.iteration_ps;
            }
            let e = &mut self.entries[id as usize];
            let bytes = e.remaining.min(self.chunk_bytes);
            let first = !e.granted;
            e.granted = true;
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
                self.occupancy -= 1;
            } else {
                // A new key (SRPT) or lead (a first chunk granted).
                self.remove_head(dst, key, at_head);
                self.insert_head(id);
            }
            let release =
                (at + extra + self.wire_ps(kind, bytes)).saturating_sub(self.iteration_ps);
            self.src_release[s as usize] = release;
            self.dst_release[dst as usize] = release;
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
        self.requesting_srcs = requesting_srcs;
    }

    /// The waiting entries (any order).
    fn live(&self) -> impl Iterator<Item = &Entry> {
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

    /// Earliest time after `now` at which a waiting entry may become eligible
    /// (a notification turns visible or a port is released); None if none waits.
    /// (For the stand-alone model, which never grants early: `grant_early` is
    /// not taken into account.)
    pub fn next_change_after(&self, now: Ps) -> Option<Ps> {
        let mut next: Option<Ps> = None;
        let mut consider = |t: Ps| {
            if t > now {
                next = Some(next.map_or(t, |n: Ps| n.min(t)));
            }
        };
        for (dst, queue) in self.queues.iter().enumerate() {
            if queue.len > 0 {
                consider(self.dst_release[dst]);
            }
        }
        for queue in &self.queues {
            for &(_, visible_at) in &queue.unrevealed {
                consider(visible_at);
            }
        }
        for e in self.live() {
            consider(self.src_release[e.src as usize]);
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sched(ports: usize, priority: Priority) -> Scheduler {
        Scheduler::new(ports, priority, 256, 3 * 2560, 640)
    }

    #[test]
    fn every_iteration_is_a_matching_and_maximal_when_run_to_quiescence() {
        let mut rng = crate::rng::Rng::new(5);
        for trial in 0..50 {
            let n = 8;
            let mut s = sched(
                n,
                if trial % 2 == 0 {
                    Priority::Srpt
                } else {
                    Priority::Fcfs
                },
            );
            for m in 0..40u32 {
                let src = rng.below(n as u64) as u16;
                let dst = ((src as u64 + 1 + rng.below(n as u64 - 1)) % n as u64) as u16;
                s.notify(0, src, dst, m, 1 + rng.below(2000) as u32, Kind::Wreq, 0);
            }
            // Iterate at one instant (ports stay busy): grants accumulate into a matching.
            let mut used_src = vec![false; n];
            let mut used_dst = vec![false; n];
            loop {
                let it = s.iterate(0);
                for g in &it.grants {
                    assert!(
                        !used_src[g.src as usize] && !used_dst[g.dst as usize],
                        "not a matching"
                    );
                    used_src[g.src as usize] = true;
                    used_dst[g.dst as usize] = true;
                }
                if it.grants.is_empty() {
                    break;
                }
            }
            // Maximal: no waiting entry has both ends free.
            for e in s.live() {
                assert!(
                    used_dst[e.dst as usize] || used_src[e.src as usize],
                    "not maximal"
                );
            }
        }
    }

    #[test]
    fn priority_hold_leaves_a_destination_idle_for_a_much_shorter_message() {
        // Destination 0: a long message from free source 1, a short one from
        // source 2, which is busy sending to 3.
        let setup = |hold| {
            let mut s = sched(4, Priority::Srpt);
            s.hold_for_shorter(hold);
            s.notify(0, 2, 3, 1, 5000, Kind::Wreq, 0);
            assert_eq!(s.iterate(0).grants.len(), 1); // 2 -> 3 busy now
            s.notify(0, 1, 0, 2, 5000, Kind::Wreq, 0);
            s.notify(0, 2, 0, 3, 64, Kind::Wreq, 0);
            s
        };
        let g = setup(0).iterate(1).grants;
        assert_eq!(
            g.iter().map(|g| g.msg).collect::<Vec<_>>(),
            vec![2],
            "paper: start the long one"
        );
        let mut s = setup(2);
        assert!(s.iterate(1).grants.is_empty(), "hold: wait for source 2");
        let later = s.next_change_after(1).unwrap();
        let g = s.iterate(later).grants;
        assert!(g.iter().any(|g| g.msg == 3), "then the short one: {g:?}");
    }

    #[test]
    fn srpt_prefers_short_messages_but_keeps_pair_order() {
        let mut s = sched(4, Priority::Srpt);
        s.notify(0, 1, 0, 10, 5000, Kind::Wreq, 0); // pair (1,0) oldest, long
        s.notify(0, 1, 0, 11, 64, Kind::Wreq, 0); // same pair, short: must wait
        s.notify(0, 2, 0, 12, 1000, Kind::Wreq, 0);
        let g = s.iterate(0).grants;
        assert_eq!((g[0].src, g[0].msg), (2, 12), "SRPT across pairs");
        let mut s = sched(4, Priority::Srpt);
        s.notify(0, 1, 0, 10, 5000, Kind::Wreq, 0);
        s.notify(0, 1, 0, 11, 64, Kind::Wreq, 0);
        assert_eq!(s.iterate(0).grants[0].msg, 10, "per-pair order");
    }

    #[test]
    fn fcfs_serves_in_arrival_order_and_chunks_then_releases() {
        let mut s = sched(3, Priority::Fcfs);
        s.notify(0, 1, 0, 1, 600, Kind::Wreq, 0);
        s.notify(0, 2, 0, 2, 64, Kind::Wreq, 0);
        let mut now = 0;
        let mut order = Vec::new();
        while !s.is_empty() {
            let it = s.iterate(now);
            order.extend(it.grants.iter().map(|g| (g.msg, g.bytes)));
            now = s
                .next_change_after(now)
                .unwrap_or(now + s.iteration_ps())
                .max(now + s.iteration_ps());
        }
        assert_eq!(order, vec![(1, 256), (1, 256), (1, 88), (2, 64)]);
    }

    #[test]
    fn priority_hold_of_one_still_grants_the_best_message() {
        // k = 1: the best entry itself passes "k times longer than the best";
        // it must not hold itself back (every run deadlocked).
        let mut s = sched(2, Priority::Srpt);
        s.hold_for_shorter(1);
        s.notify(0, 0, 1, 1, 64, Kind::Wreq, 0);
        assert_eq!(s.iterate(0).grants.len(), 1);
    }

    #[test]
    fn a_pipelined_request_to_a_source_matched_in_flight_is_dropped_at_accept() {
        // Iteration 1 (t = 0) matches source 1 with destination 0. Iteration 2
        // starts a cycle later, before iteration 1 has marked source 1 busy:
        // destination 2 still requests source 1 and is refused at accept.
        let mut s = sched(3, Priority::Srpt);
        s.pipeline(2560);
        s.notify(0, 1, 0, 1, 5000, Kind::Wreq, 0);
        assert_eq!(s.iterate(0).grants.len(), 1);
        s.notify(0, 1, 2, 2, 64, Kind::Wreq, 0);
        let it = s.iterate(2560);
        assert!(it.grants.is_empty() && it.refused, "dropped at accept");
        // Once iteration 1 has ended, the request stage sees source 1 busy.
        let it = s.iterate(3 * 2560);
        assert!(it.grants.is_empty() && !it.refused);
    }

    #[test]
    fn without_pair_order_a_later_entry_of_a_pair_may_go_first() {
        let mut s = sched(2, Priority::Srpt);
        s.without_pair_order();
        s.notify(0, 1, 0, 10, 5000, Kind::Wreq, 0);
        s.notify(0, 1, 0, 11, 64, Kind::Wreq, 0);
        assert_eq!(s.iterate(0).grants[0].msg, 11, "shortest first");
    }

    #[test]
    fn invisible_notifications_wait() {
        let mut s = sched(2, Priority::Fcfs);
        s.notify(100, 0, 1, 7, 8, Kind::Rres, 0);
        assert!(s.iterate(99).grants.is_empty());
        assert_eq!(s.next_change_after(99), Some(100));
        assert_eq!(s.iterate(100).grants.len(), 1);
    }
}

#[cfg(test)]
mod timeline_tests {
    use super::*;

    #[test]
    fn granted_circuits_never_overlap_at_a_port_over_time() {
        // Random notifications over time; every grant occupies its source and
        // destination for [at + extra, at + extra + wire): no two may overlap,
        // with the paper's PIM and with the priority hold option.
        // With EDM's own rules too: pipelined matching, no per-pair FIFO.
        for hold in [0, 1, 2] {
            for (pipelined, pair_fifo) in [(false, true), (true, true), (true, false)] {
                circuits_never_overlap(hold, pipelined, pair_fifo);
            }
        }
    }

    fn circuits_never_overlap(hold: u32, pipelined: bool, pair_fifo: bool) {
        let mut rng = crate::rng::Rng::new(21);
        let n = 6;
        let mut s = Scheduler::new(n, Priority::Srpt, 256, 3 * 2560, 640);
        s.hold_for_shorter(hold);
        if pipelined {
            s.pipeline(2560);
        }
        if !pair_fifo {
            s.without_pair_order();
        }
        let mut busy: Vec<Vec<(Ps, Ps)>> = vec![Vec::new(); 2 * n];
        let mut now = 0;
        let mut msg = 0;
        for _ in 0..3000 {
            if rng.below(3) == 0 {
                let src = rng.below(n as u64) as u16;
                let dst = ((src as u64 + 1 + rng.below(n as u64 - 1)) % n as u64) as u16;
                let extra = rng.below(2) * 3840;
                s.notify(
                    now + 7680,
                    src,
                    dst,
                    msg,
                    1 + rng.below(900) as u32,
                    Kind::Rres,
                    extra,
                );
                msg += 1;
            }
            for g in s.iterate(now).grants {
                let start = g.release + s.iteration_ps() - s.wire_ps(Kind::Rres, g.bytes);
                let interval = (start, g.release + s.iteration_ps());
                for port in [g.src as usize, n + g.dst as usize] {
                    if let Some(&(_, end)) = busy[port].last() {
                        assert!(
                            interval.0 >= end,
                            "port {port} overlaps: {interval:?} after {end}"
                        );
                    }
                    busy[port].push(interval);
                }
            }
            now += s.issue_interval_ps();
        }
        assert!(busy.iter().map(Vec::len).sum::<usize>() > 1000);
    }
}
