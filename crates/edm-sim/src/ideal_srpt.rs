//! `ideal-srpt`: pFabric's Ideal (Alizadeh et al., SIGCOMM 2013, §5) as a
//! protocol, the reference every fabric here is measured against. A central
//! scheduler with global knowledge and zero latency keeps a greedy
//! shortest-remaining-first matching of (data source uplink, data
//! destination downlink) pairs, recomputed at every arrival and completion:
//! unfinished messages in order of remaining wire time (ties: earlier issue,
//! then lower index), each taking its two ports if both are still free.
//! Preemptive and fluid: a newly arrived shorter message takes a port from a
//! longer one at once (the longer keeps what it has sent); there are no
//! chunks and no control blocks (a read's request costs nothing, its data
//! leaves the memory node at issue).
//!
//! Serialization and propagation are EDM's data path: a message's data is
//! EDM's data units (`DEFAULT_CHUNK_BYTES` chunks, each with its header and
//! end blocks) sent back to back, `wire` ps on its source uplink and, cut
//! through, on its destination downlink; its last bit leaves the source at
//! `s` and the message completes at `s + path`, `path` being EDM's data path
//! from a unit's last block out to the message complete (two hops, the
//! switch's forwarding, the receiver's processing, a read's memory access,
//! minus the block already counted in `wire`). Alone, a message takes
//! exactly `wire + path` (its `alone_ps`).
use crate::config::FabricConfig;
use crate::edm::config::StepCycles;
use crate::engine::{
    self, utilisation, EventQueue, Feed, Outcome, Progress, Protocol, Record, Simulation, Totals,
};
use crate::time::Ps;
use crate::workload::{MessageSpec, Op};
use edm_proto::message::{message_blocks, Kind};
use edm_proto::spec::{DEFAULT_CHUNK_BYTES, RMW_RESULT_BYTES};
use std::collections::BTreeSet;

/// The ideal SRPT fabric on `fabric` (EDM's default pipeline steps).
pub struct IdealSrpt {
    fabric: FabricConfig,
    steps: StepCycles,
}

/// One stretch of a message on its ports: `[start, end)` of its wire time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Service {
    pub message: u32,
    pub start_ps: Ps,
    pub end_ps: Ps,
}

impl IdealSrpt {
    pub fn new(fabric: FabricConfig) -> Self {
        IdealSrpt {
            fabric,
            steps: StepCycles::default(),
        }
    }

    /// (data source, data destination): a write's requester to its memory
    /// node, a read's or RMW's response the other way.
    pub fn ports(m: &MessageSpec) -> (u16, u16) {
        if m.op == Op::Write {
            (m.requester, m.memory)
        } else {
            (m.memory, m.requester)
        }
    }

    /// Data bytes a message moves (a read's or RMW's response).
    fn data_bytes(m: &MessageSpec) -> u32 {
        if m.op == Op::Rmw {
            RMW_RESULT_BYTES
        } else {
            m.size
        }
    }

    /// Wire time of a message's data: EDM's data units, back to back.
    pub fn wire_ps(&self, m: &MessageSpec) -> Ps {
        let kind = if m.op == Op::Write {
            Kind::Wreq
        } else {
            Kind::Rres
        };
        let bytes = Self::data_bytes(m);
        let (full, rest) = (bytes / DEFAULT_CHUNK_BYTES, bytes % DEFAULT_CHUNK_BYTES);
        let mut blocks = full as Ps * message_blocks(kind, DEFAULT_CHUNK_BYTES as u16) as Ps;
        if rest > 0 {
            blocks += message_blocks(kind, rest as u16) as Ps;
        }
        blocks * self.fabric.block_ps()
    }

    /// From the last bit leaving the source to the message complete.
    pub fn path_ps(&self, m: &MessageSpec) -> Ps {
        let f = &self.fabric;
        let (processing, memory) = if m.op == Op::Write {
            (self.steps.proc_write, 0)
        } else {
            (
                self.steps.proc_response,
                f.memory_ps() + f.translate.bound_ps(),
            )
        };
        2 * f.hop_ps() + f.cycles(self.steps.sw_forward + processing) + memory - f.block_ps()
    }

    /// Runs `messages` and returns every stretch of service too (for the
    /// invariant checks: one message per port at a time).
    pub fn run_traced(&self, messages: &[MessageSpec]) -> (Outcome, Vec<Service>) {
        self.run_with(Feed::Open(messages), &mut |_, _| {}, true)
    }

    fn run_with(&self, feed: Feed, progress: Progress, trace: bool) -> (Outcome, Vec<Service>) {
        let messages = feed.messages();
        let nodes = self.fabric.nodes;
        let mut sim = SrptSim {
            q: EventQueue::default(),
            messages,
            remaining: messages.iter().map(|m| self.wire_ps(m)).collect(),
            path: messages.iter().map(|m| self.path_ps(m)).collect(),
            started: vec![NOT_RUNNING; if trace { messages.len() } else { 0 }],
            waiting: BTreeSet::new(),
            running: Vec::new(),
            src_unfinished: vec![0; nodes],
            dst_unfinished: vec![0; nodes],
            active_src: 0,
            active_dst: 0,
            src_left: vec![0; nodes],
            dst_left: vec![0; nodes],
            last_ps: 0,
            epoch: 0,
            src_taken: vec![0; nodes],
            dst_taken: vec![0; nodes],
            src_holder: vec![0; nodes],
            dst_holder: vec![0; nodes],
            finish_seq: 0,
            next_finish: Ps::MAX,
            completions: Vec::with_capacity(messages.len()),
            services: Vec::new(),
            trace,
        };
        let wire: Vec<Ps> = sim.remaining.clone();
        let end = engine::run(&mut sim, feed, progress);
        let mut records: Vec<Record> = messages
            .iter()
            .enumerate()
            .map(|(i, _)| Record {
                alone_ps: wire[i] + sim.path[i],
                ..Record::default()
            })
            .collect();
        let (mut up, mut down) = (vec![0; nodes], vec![0; nodes]);
        let mut end_ps = end.end_ps;
        let mut delivered_bytes = 0;
        for &(i, at) in &sim.completions {
            let m = &messages[i as usize];
            records[i as usize].complete_ps = Some(at);
            end_ps = end_ps.max(at);
            delivered_bytes += Self::data_bytes(m) as u64;
            let (s, d) = Self::ports(m);
            up[s as usize] += wire[i as usize];
            down[d as usize] += wire[i as usize];
        }
        let (uplink_util_mean, uplink_util_max) = utilisation(up.into_iter(), end_ps);
        let (downlink_util_mean, downlink_util_max) = utilisation(down.into_iter(), end_ps);
        let outcome = Outcome {
            records,
            totals: Totals {
                events: end.events,
                end_ps,
                uplink_util_mean,
                uplink_util_max,
                downlink_util_mean,
                downlink_util_max,
                delivered_bytes,
                ..Totals::default()
            },
        };
        (outcome, sim.services)
    }
}

impl Protocol for IdealSrpt {
    fn run(&mut self, feed: Feed, progress: Progress) -> Outcome {
        self.run_with(feed, progress, false).0
    }

    fn alone_ps(&self, m: &MessageSpec) -> Ps {
        self.wire_ps(m) + self.path_ps(m)
    }

    fn name(&self) -> &'static str {
        "ideal-srpt"
    }
}

const NOT_RUNNING: Ps = Ps::MAX;

#[derive(Clone, Copy, Debug)]
enum Ev {
    Issue(u32),
    /// The earliest finish of the matching (stale once a later one is
    /// scheduled: its number is not `finish_seq`).
    Finish(u64),
}

struct SrptSim<'a> {
    q: EventQueue<Ev>,
    messages: &'a [MessageSpec],
    /// Wire time each message has left to send.
    remaining: Vec<Ps>,
    path: Vec<Ps>,
    /// Traced runs: when each running message's current stretch began.
    started: Vec<Ps>,
    /// Issued, unfinished and not in the matching, in SRPT order: their keys
    /// (remaining, issue, index) stand still while they wait, so the order
    /// is kept, not re-sorted at every matching.
    waiting: BTreeSet<(Ps, Ps, u32)>,
    /// The current matching (the messages whose remaining time falls).
    running: Vec<u32>,
    /// Issued and unfinished messages per data source / destination, and the
    /// ports with any: a matching is complete once every such port is taken
    /// or has no message left further down the order.
    src_unfinished: Vec<u32>,
    dst_unfinished: Vec<u32>,
    active_src: usize,
    active_dst: usize,
    /// Scratch of `rematch`: per port, its messages not yet passed.
    src_left: Vec<u32>,
    dst_left: Vec<u32>,
    /// When `remaining` was last brought up to date.
    last_ps: Ps,
    /// Matchings made so far; a port is taken in this one if its stamp is `epoch`.
    epoch: u64,
    src_taken: Vec<u64>,
    dst_taken: Vec<u64>,
    /// The message holding each taken port.
    src_holder: Vec<u32>,
    dst_holder: Vec<u32>,
    /// The number of the latest finish event, and its time.
    finish_seq: u64,
    next_finish: Ps,
    completions: Vec<(u32, Ps)>,
    services: Vec<Service>,
    trace: bool,
}

impl SrptSim<'_> {
    /// Sends what the matching sent since `last_ps`; finishes messages done
    /// (true if any).
    fn advance(&mut self, now: Ps) -> bool {
        let sent = now - self.last_ps;
        self.last_ps = now;
        if sent == 0 {
            return false;
        }
        let mut finished = false;
        for &i in &self.running {
            let r = &mut self.remaining[i as usize];
            *r -= sent; // never below 0: a finish event comes first
            if *r == 0 {
                finished = true;
                self.completions.push((i, now + self.path[i as usize]));
                let (s, d) = IdealSrpt::ports(&self.messages[i as usize]);
                self.src_unfinished[s as usize] -= 1;
                self.active_src -= (self.src_unfinished[s as usize] == 0) as usize;
                self.dst_unfinished[d as usize] -= 1;
                self.active_dst -= (self.dst_unfinished[d as usize] == 0) as usize;
            }
        }
        finished
    }

    /// Counts message `i` among the unfinished of its ports.
    fn count_issue(&mut self, i: u32) {
        let (s, d) = IdealSrpt::ports(&self.messages[i as usize]);
        self.active_src += (self.src_unfinished[s as usize] == 0) as usize;
        self.src_unfinished[s as usize] += 1;
        self.active_dst += (self.dst_unfinished[d as usize] == 0) as usize;
        self.dst_unfinished[d as usize] += 1;
    }

    /// A message's place in SRPT order now.
    fn key(&self, i: u32) -> (Ps, Ps, u32) {
        (
            self.remaining[i as usize],
            self.messages[i as usize].issue_ps,
            i,
        )
    }

    /// The matching with message `i` just issued, where no recomputation
    /// can change it (true): between arrivals and completions the running
    /// messages' remaining times fall together, which only moves matched
    /// messages ahead of unmatched ones and leaves the greedy matching as it
    /// is. So `i` joins it if both its ports are free, and changes nothing if
    /// each port is free or held by a message ahead of it (it waits). Else
    /// (it would preempt) false: it waits and the caller recomputes.
    fn place_arrival(&mut self, now: Ps, i: u32) -> bool {
        let (s, d) = IdealSrpt::ports(&self.messages[i as usize]);
        let (s, d) = (s as usize, d as usize);
        let epoch = self.epoch;
        let (s_free, d_free) = (self.src_taken[s] != epoch, self.dst_taken[d] != epoch);
        if s_free && d_free {
            self.take(s, d, i);
            if self.trace {
                self.started[i as usize] = now;
            }
            let finish = now + self.remaining[i as usize];
            if finish < self.next_finish {
                self.schedule_finish(finish);
            }
            return true;
        }
        let key = self.key(i);
        self.waiting.insert(key);
        (s_free || self.key(self.src_holder[s]) < key)
            && (d_free || self.key(self.dst_holder[d]) < key)
    }

    fn take(&mut self, s: usize, d: usize, i: u32) {
        self.src_taken[s] = self.epoch;
        self.dst_taken[d] = self.epoch;
        self.src_holder[s] = i;
        self.dst_holder[d] = i;
        self.running.push(i);
    }

    fn schedule_finish(&mut self, at: Ps) {
        self.finish_seq += 1;
        self.next_finish = at;
        self.q.push(at, Ev::Finish(self.finish_seq));
    }

    /// The greedy SRPT matching at `now`, and the event of its first finish.
    /// The matched messages go back among the waiting with their keys of now;
    /// the walk down the order stops once no port with a message further
    /// down is free (the same matching as walking every message).
    fn rematch(&mut self, now: Ps) {
        for k in 0..self.running.len() {
            let i = self.running[k];
            if self.remaining[i as usize] > 0 {
                self.waiting.insert(self.key(i));
            }
        }
        self.epoch += 1;
        let epoch = self.epoch;
        let previous = if self.trace {
            self.running.clone()
        } else {
            Vec::new()
        };
        self.running.clear();
        self.src_left.copy_from_slice(&self.src_unfinished);
        self.dst_left.copy_from_slice(&self.dst_unfinished);
        // Ports taken, or with nothing left further down the order.
        let (mut src_done, mut dst_done) = (0, 0);
        let mut first_finish = Ps::MAX;
        // Moved out while walked (no copy), so the walk can take ports.
        let mut waiting = std::mem::take(&mut self.waiting);
        for &(remaining, _, i) in &waiting {
            if src_done == self.active_src || dst_done == self.active_dst {
                break;
            }
            let (s, d) = IdealSrpt::ports(&self.messages[i as usize]);
            let (s, d) = (s as usize, d as usize);
            self.src_left[s] -= 1;
            self.dst_left[d] -= 1;
            let (s_taken, d_taken) = (self.src_taken[s] == epoch, self.dst_taken[d] == epoch);
            if !s_taken && !d_taken {
                self.take(s, d, i);
                first_finish = first_finish.min(remaining);
                src_done += 1;
                dst_done += 1;
                continue;
            }
            src_done += (!s_taken && self.src_left[s] == 0) as usize;
            dst_done += (!d_taken && self.dst_left[d] == 0) as usize;
        }
        for &i in &self.running {
            waiting.remove(&self.key(i));
        }
        self.waiting = waiting;
        if self.trace {
            self.trace_changes(now, &previous);
        }
        if first_finish != Ps::MAX {
            self.schedule_finish(now + first_finish);
        } else {
            self.next_finish = Ps::MAX;
        }
    }

    /// Closes the stretches of messages that stopped, opens those that started.
    fn trace_changes(&mut self, now: Ps, previous: &[u32]) {
        let mut now_running = vec![false; self.messages.len()];
        for &i in &self.running {
            now_running[i as usize] = true;
        }
        for &i in previous {
            if !now_running[i as usize] {
                let start_ps = std::mem::replace(&mut self.started[i as usize], NOT_RUNNING);
                if now > start_ps {
                    self.services.push(Service {
                        message: i,
                        start_ps,
                        end_ps: now,
                    });
                }
            }
        }
        for &i in &self.running {
            if self.started[i as usize] == NOT_RUNNING {
                self.started[i as usize] = now;
            }
        }
    }
}

impl Simulation for SrptSim<'_> {
    type Event = Ev;

    fn queue(&mut self) -> &mut EventQueue<Ev> {
        &mut self.q
    }

    fn issue_event(i: u32) -> Ev {
        Ev::Issue(i)
    }

    fn handle(&mut self, now: Ps, event: Ev) -> bool {
        match event {
            Ev::Finish(seq) if seq != self.finish_seq => false,
            Ev::Finish(_) => {
                self.advance(now);
                self.rematch(now);
                true
            }
            Ev::Issue(i) => {
                let finished = self.advance(now);
                self.count_issue(i);
                if finished {
                    self.waiting.insert(self.key(i));
                    self.rematch(now);
                } else if !self.place_arrival(now, i) {
                    self.rematch(now);
                }
                true
            }
        }
    }

    fn completed(&self) -> u64 {
        self.completions.len() as u64
    }

    fn completion_log(&self) -> &[(u32, Ps)] {
        &self.completions
    }
}
