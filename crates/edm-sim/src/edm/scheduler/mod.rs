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
//! The rooms: `queue.rs` (notification queues), `matching.rs` (one
//! iteration), this file (port state and the options beside the paper).
mod matching;
mod queue;
#[cfg(test)]
mod tests;

use crate::edm::config::Priority;

use crate::time::Ps;
use edm_proto::message::{message_blocks, Kind};
use queue::{Entry, Key, Queue, NONE};

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
    dst_release: Vec<Ps>,
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
            waiting: vec![0; ports.div_ceil(64)],
            entries: Vec::new(),
            free: Vec::new(),
            pair_first: vec![NONE; ports * ports],
            pair_last: vec![NONE; ports * ports],
            ports,
            src_release: vec![0; ports],
            dst_release: vec![0; ports],
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
        self.src_release.iter().any(within) || self.dst_release.iter().any(within)
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
