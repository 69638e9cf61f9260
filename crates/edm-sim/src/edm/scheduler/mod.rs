//! EDM's in-switch scheduler (§3.1): per-destination notification queues and
//! priority-PIM. This is the reference model for the RTL switch; its exact
//! semantics are in docs/simulator.md ("Scheduler semantics").
//!
//! Time is in ps. An iteration that starts at `t` decides with the state at
//! `t` (request, accept, mark busy) and its grants are issued at `t + iteration`.
//! Granted ports are released `wire - iteration` after the grant, where `wire`
//! is the chunk's time on the link, so the next chunk's grant (one iteration
//! after the release) lands exactly when the previous chunk's last block does.
//!
//! The rooms: `queue.rs` (the notification queues' data), `matching.rs`
//! (one iteration), this file (port state, notifying and revealing, and the
//! options beside the paper).
mod matching;
mod queue;
#[cfg(test)]
mod tests;

use crate::edm::config::Priority;

use crate::time::Ps;
use edm_proto::message::{message_blocks, Kind};
use queue::{Entry, Front, Head, Key, Queue, NONE};

/// A destination's port state and queue summary, as an iteration reads it:
/// one array of these, so that a visit loads one place, not one per field.
#[derive(Clone, Copy, Debug)]
struct DstState {
    /// When the port is released (free for the next grant).
    release: Ps,
    /// Pipelined: until when an iteration that matched it is in flight
    /// (see `Scheduler::src_in_flight_until`).
    in_flight_until: Ps,
    /// When its queue's first unrevealed entry may be revealed (`Ps::MAX`:
    /// none waits): an iteration calls `reveal` only from then.
    reveal_at: Ps,
    /// A copy of its queue's first (best) revealed entry and how many it
    /// holds, kept with `heads` when there is no per-pair FIFO: an iteration usually decides a destination
    /// on its first entry alone, without loading the queue (whose cache
    /// lines were much of an iteration's cost).
    front: Front,
}

impl Default for DstState {
    fn default() -> Self {
        DstState {
            release: 0,
            in_flight_until: 0,
            reveal_at: Ps::MAX,
            front: Front::default(),
        }
    }
}

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
    /// Per destination, what an iteration reads of it (one array).
    dsts: Vec<DstState>,
    /// Per destination, the latest `visible_at` of any entry that arrived
    /// there and was looked at (revealing an entry waits for it, with the
    /// entries before; what a drop leaves depends on it).
    visible_max: Vec<Ps>,
    /// A bit per destination whose queue holds entries (`Queue::len` > 0):
    /// an iteration visits only those, in order, not every port.
    waiting: Vec<u64>,
    /// Entries, by id; `free` lists the ids of removed ones for reuse.
    entries: Vec<Entry>,
    free: Vec<u32>,
    /// First (the pair's head) and last revealed entry of each (dst, src)
    /// pair (`NONE`: empty).
    pair_first: Vec<u32>,
    pair_last: Vec<u32>,
    ports: usize,
    src_release: Vec<Ps>,
    /// Per port: its link is down, so it is never granted, as a source or a
    /// destination ([`Scheduler::set_link_up`]).
    link_down: Vec<bool>,
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
    /// Per source (destinations: `DstState::in_flight_until`): until when an
    /// iteration that matched it is in flight (its start plus one
    /// iteration), and the release before that match. An iteration in flight has not marked its ports busy yet, so a
    /// pipelined request stage still sees the earlier release, and its accept
    /// stage drops any request to a port matched in flight.
    src_in_flight_until: Vec<Ps>,
    prev_release: Vec<Ps>,
    /// The latest `now` an iteration ran at (iterations must not go back in time).
    last_now: Ps,
    pub max_occupancy: usize,
    pub iterations: u64,
    // Scratch, reused across iterations (generation-stamped, never cleared).
    stamp: u32,
    best_request: Vec<BestRequest>,
    /// A bit per source that got a request this iteration.
    requesting: Vec<u64>,
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
            dsts: vec![DstState::default(); ports],
            visible_max: vec![0; ports],
            waiting: vec![0; ports.div_ceil(64)],
            entries: Vec::new(),
            free: Vec::new(),
            pair_first: vec![NONE; ports * ports],
            pair_last: vec![NONE; ports * ports],
            ports,
            src_release: vec![0; ports],
            link_down: vec![false; ports],
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
            prev_release: vec![0; ports],
            last_now: 0,
            max_occupancy: 0,
            iterations: 0,
            stamp: 0,
            best_request: vec![(0, 0, 0, 0, 0); ports],
            requesting: vec![0; ports.div_ceil(64)],
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
        for dst in 0..self.ports {
            self.sync_front(dst);
        }
    }

    /// The link of `port` is up (the default) or down: while it is down no
    /// iteration starting from now on grants it, as a source or as a
    /// destination; its queued entries wait (the RTL's `link_up`).
    pub fn set_link_up(&mut self, port: u16, up: bool) {
        self.link_down[port as usize] = !up;
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
        let r = &mut self.dsts[dst as usize].release;
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

    /// Marks whether `dst`'s queue holds entries (after its `len` changed).
    #[inline(always)]
    fn mark_waiting(&mut self, dst: usize) {
        let bit = 1u64 << (dst % 64);
        if self.queues[dst].len > 0 {
            self.waiting[dst / 64] |= bit;
        } else {
            self.waiting[dst / 64] &= !bit;
        }
    }

    /// Whether a port was released in `(after, upto]`.
    pub fn released_between(&self, after: Ps, upto: Ps) -> bool {
        let within = |&r: &Ps| r > after && r <= upto;
        self.src_release.iter().any(within) || self.dsts.iter().any(|d| within(&d.release))
    }

    pub fn iteration_ps(&self) -> Ps {
        self.iteration_ps
    }

    /// Time on the link of a data unit carrying `bytes` of a `kind` message.
    pub fn wire_ps(&self, kind: Kind, bytes: u32) -> Ps {
        message_blocks(kind, bytes as u16) as Ps * self.block_ps
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
                consider(self.dsts[dst].release);
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

/// The notification queues: arrival, reveal, the sorted heads.
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
        let first_unrevealed = q.unrevealed.is_empty();
        q.unrevealed.push_back((id, visible_at));
        q.len += 1;
        self.max_occupancy = self.max_occupancy.max(q.len);
        if first_unrevealed {
            self.update_reveal_at(dst as usize);
        }
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
        self.dsts[dst].reveal_at = Ps::MAX;
        while let Some(&(id, visible_at)) = self.queues[dst].unrevealed.front() {
            let visible_max = &mut self.visible_max[dst];
            *visible_max = (*visible_max).max(visible_at);
            if *visible_max > now {
                self.dsts[dst].reveal_at = *visible_max;
                break;
            }
            let q = &mut self.queues[dst];
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
        self.sync_front(dst);
    }

    /// `dst`'s `reveal_at` from its first unrevealed entry (none: `Ps::MAX`).
    fn update_reveal_at(&mut self, dst: usize) {
        self.dsts[dst].reveal_at = match self.queues[dst].unrevealed.front() {
            Some(&(_, visible_at)) => self.visible_max[dst].max(visible_at),
            None => Ps::MAX,
        };
    }

    /// Copies `dst`'s first revealed entry and their number to `front`
    /// (after its `heads` changed). Only without per-pair FIFO, the one
    /// mode that reads it (with it the first entry is often not its pair's
    /// head, and an iteration searches the queue itself).
    #[inline(always)]
    fn sync_front(&mut self, dst: usize) {
        if self.pair_fifo {
            return;
        }
        let heads = &self.queues[dst].heads;
        self.dsts[dst].front = Front {
            head: heads.front().copied().unwrap_or(Head::NONE),
            len: heads.len() as u32,
        };
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
            self.update_reveal_at(dst);
            self.mark_waiting(dst);
            self.sync_front(dst);
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
}
