//! Closed-loop applications (Gao et al., "Network Requirements for Resource
//! Disaggregation", §3–§4): every compute node runs threads; a thread
//! computes, issues one memory operation, waits for it to complete, and
//! goes on. A slower fabric thus slows the application, which open-loop
//! streams cannot show. The loop is an [`Issues`] feed of the one run loop,
//! so it drives EDM and every baseline alike.
use super::{Feed, Issues, Outcome, Protocol};
use crate::rng::Rng;
use crate::time::Ps;
use crate::workload::MessageSpec;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// How long a thread computes between two memory operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ComputeTime {
    /// Exactly the mean every time.
    #[default]
    Fixed,
    /// Exponentially distributed about the mean (from the run's seed).
    Exponential,
}

impl ComputeTime {
    pub fn name(self) -> &'static str {
        match self {
            ComputeTime::Fixed => "fixed",
            ComputeTime::Exponential => "exponential",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "fixed" => Some(ComputeTime::Fixed),
            "exponential" => Some(ComputeTime::Exponential),
            _ => None,
        }
    }
}

/// The applications' shape: threads per compute node and their compute time.
#[derive(Clone, Debug, PartialEq)]
pub struct ClosedLoopConfig {
    /// Threads per compute node; 0: open loop (the workload's issue times).
    pub threads: u32,
    /// Mean compute time before each memory operation, ns.
    pub compute_ns: f64,
    pub compute: ComputeTime,
}

impl Default for ClosedLoopConfig {
    fn default() -> Self {
        ClosedLoopConfig {
            threads: 0,
            compute_ns: 1000.0,
            compute: ComputeTime::Fixed,
        }
    }
}

impl ClosedLoopConfig {
    pub fn enabled(&self) -> bool {
        self.threads > 0
    }
}

/// No next message.
const NONE: u32 = u32::MAX;

/// The threads of one run, as the run loop's issue feed. Message `i`
/// belongs to the thread `thread_of[i]`; a thread issues its messages in
/// index order, each a compute time after the previous one completed (the
/// first a compute time after 0).
pub struct ClosedLoop<'a> {
    messages: &'a [MessageSpec],
    /// Per message: its thread, and the thread's next message (or [`NONE`]).
    thread_of: Vec<u32>,
    next_of: Vec<u32>,
    /// Per thread: its compute-time stream.
    streams: Vec<Rng>,
    mean_compute_ps: f64,
    compute: ComputeTime,
    /// Issues due, by (time, order queued, message): deterministic ties.
    due: BinaryHeap<Reverse<(Ps, u64, u32)>>,
    queued: u64,
    /// How much of the completion log has been read.
    seen: usize,
    /// Per message: when it was issued, and the compute time before it.
    pub issue_ps: Vec<Ps>,
    pub compute_ps: Vec<Ps>,
    /// Completions reported with a time before the event that reported
    /// them (then issued at that event instead; 0 on every model we have).
    pub late_completions: u64,
}

impl<'a> ClosedLoop<'a> {
    /// Threads for `messages`: each requester's messages, in index order,
    /// dealt round robin to its `threads` threads; compute times from `seed`.
    pub fn new(messages: &'a [MessageSpec], cfg: &ClosedLoopConfig, seed: u64) -> Self {
        assert!(
            cfg.enabled(),
            "a closed loop needs at least one thread per node"
        );
        let per_node = cfg.threads as usize;
        let nodes = messages
            .iter()
            .map(|m| m.requester as usize + 1)
            .max()
            .unwrap_or(0);
        let mut dealt = vec![0usize; nodes];
        // Dense thread ids: a node's threads are numbered when first used.
        let mut id_of = vec![NONE; nodes * per_node];
        let mut last_of: Vec<u32> = Vec::new();
        let mut thread_of = Vec::with_capacity(messages.len());
        let mut next_of = vec![NONE; messages.len()];
        let mut first = Vec::new();
        for (i, m) in messages.iter().enumerate() {
            let node = m.requester as usize;
            let slot = node * per_node + dealt[node] % per_node;
            dealt[node] += 1;
            if id_of[slot] == NONE {
                id_of[slot] = last_of.len() as u32;
                last_of.push(NONE);
                first.push(i as u32);
            }
            let t = id_of[slot];
            if last_of[t as usize] != NONE {
                next_of[last_of[t as usize] as usize] = i as u32;
            }
            last_of[t as usize] = i as u32;
            thread_of.push(t);
        }
        let mut feed = ClosedLoop {
            messages,
            streams: (0..last_of.len() as u64)
                .map(|t| Rng::fork(seed ^ 0xC105_ED10_0900_0001, t))
                .collect(),
            thread_of,
            next_of,
            mean_compute_ps: cfg.compute_ns * 1000.0,
            compute: cfg.compute,
            due: BinaryHeap::new(),
            queued: 0,
            seen: 0,
            issue_ps: vec![0; messages.len()],
            compute_ps: vec![0; messages.len()],
            late_completions: 0,
        };
        for i in first {
            feed.schedule(0, i);
        }
        feed
    }

    /// The messages the threads issue (their `issue_ps` unused).
    pub fn messages(&self) -> &'a [MessageSpec] {
        self.messages
    }

    /// Threads in the run.
    pub fn threads(&self) -> usize {
        self.streams.len()
    }

    /// The thread that issues message `i`.
    pub fn thread_of(&self, i: usize) -> usize {
        self.thread_of[i] as usize
    }

    /// Message `i`'s thread computes from `from`, then issues it.
    fn schedule(&mut self, from: Ps, i: u32) {
        let stream = &mut self.streams[self.thread_of[i as usize] as usize];
        let compute = match self.compute {
            ComputeTime::Fixed => self.mean_compute_ps,
            ComputeTime::Exponential => stream.exponential(self.mean_compute_ps),
        }
        .round() as Ps;
        self.compute_ps[i as usize] = compute;
        self.due.push(Reverse((from + compute, self.queued, i)));
        self.queued += 1;
    }
}

impl Issues for ClosedLoop<'_> {
    fn next_time(&self) -> Option<Ps> {
        self.due.peek().map(|Reverse((at, _, _))| *at)
    }

    fn take(&mut self) -> u32 {
        let Reverse((at, _, i)) = self.due.pop().expect("next_time said an issue is due");
        self.issue_ps[i as usize] = at;
        i
    }

    fn after_event(&mut self, now: Ps, completions: &[(u32, Ps)]) {
        while self.seen < completions.len() {
            let (i, at) = completions[self.seen];
            self.seen += 1;
            if at < now {
                self.late_completions += 1;
            }
            let next = self.next_of[i as usize];
            if next != NONE {
                self.schedule(at.max(now), next);
            }
        }
    }

    fn total(&self) -> u64 {
        self.thread_of.len() as u64
    }
}

/// What the application did, beside the per-message records.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AppReport {
    pub threads: usize,
    /// Operations completed (every one, unless the run deadlocked).
    pub ops: usize,
    /// Time the last thread finished its last operation (all start at 0).
    pub run_time_ps: Ps,
    /// The run time on an ideal fabric where every operation takes its
    /// latency alone (no queueing): the slowest thread's compute plus
    /// alone latencies, in closed form.
    pub unloaded_run_time_ps: Ps,
    /// The run time with zero-delay memory (local memory, Gao et al.'s
    /// baseline): the slowest thread's compute alone.
    pub compute_only_run_time_ps: Ps,
    /// The same three summed over threads (each thread's own run time): the
    /// degradations compare these, as the run time, a maximum over threads,
    /// also carries the spread of their compute times.
    pub thread_time_ps: u128,
    pub unloaded_thread_time_ps: u128,
    pub compute_only_thread_time_ps: u128,
    pub compute_ps_total: u128,
    pub latency_ps_total: u128,
    /// Operations completed per second from 20 % of the time until the
    /// first thread finishes to that time (every thread busy all through
    /// it), and that window.
    pub throughput_ops_per_s: f64,
    pub window_ps: (Ps, Ps),
    /// Mean latency and compute time of the operations issued in that window.
    pub window_mean_latency_ps: f64,
    pub window_mean_compute_ps: f64,
    /// Little's law: throughput × (mean latency + mean compute) in the window
    /// (equal to `threads` when each thread is always computing or waiting).
    pub little_threads: f64,
    pub late_completions: u64,
}

impl AppReport {
    /// Mean thread run time on this fabric / on the ideal (unloaded) fabric, minus 1.
    pub fn degradation_vs_unloaded(&self) -> f64 {
        self.thread_time_ps as f64 / self.unloaded_thread_time_ps.max(1) as f64 - 1.0
    }

    /// Mean thread run time on this fabric / with zero-delay memory, minus 1.
    pub fn degradation_vs_local(&self) -> f64 {
        self.thread_time_ps as f64 / self.compute_only_thread_time_ps.max(1) as f64 - 1.0
    }
}

/// A closed-loop run: the messages with the issue times the threads gave
/// them, sorted by issue time, their records in the same order, each one's
/// thread, and the application's report.
pub struct ClosedLoopRun {
    pub messages: Vec<MessageSpec>,
    pub outcome: Outcome,
    pub thread_of: Vec<usize>,
    pub report: AppReport,
}

/// Runs `messages` (issue times ignored) as `cfg`'s threads on `protocol`.
pub fn run(
    protocol: &mut dyn Protocol,
    messages: &[MessageSpec],
    cfg: &ClosedLoopConfig,
    seed: u64,
    progress: &mut dyn FnMut(u64, u64),
) -> ClosedLoopRun {
    let mut threads = ClosedLoop::new(messages, cfg, seed);
    let outcome = protocol.run(Feed::Closed(&mut threads), progress);
    let report = report(&threads, &outcome);
    // Issue order, ties by index: what every per-message statistic expects.
    let mut order: Vec<usize> = (0..messages.len()).collect();
    order.sort_by_key(|&i| (threads.issue_ps[i], i));
    let sorted = order
        .iter()
        .map(|&i| MessageSpec {
            issue_ps: threads.issue_ps[i],
            ..messages[i].clone()
        })
        .collect();
    ClosedLoopRun {
        messages: sorted,
        outcome: Outcome {
            records: order.iter().map(|&i| outcome.records[i].clone()).collect(),
            totals: outcome.totals,
        },
        thread_of: order.iter().map(|&i| threads.thread_of(i)).collect(),
        report,
    }
}

/// The application's figures from a finished closed-loop run.
fn report(threads: &ClosedLoop, out: &Outcome) -> AppReport {
    let n = threads.threads();
    let mut finish = vec![0 as Ps; n];
    let mut unloaded = vec![0 as Ps; n];
    let mut compute_only = vec![0 as Ps; n];
    let mut r = AppReport {
        threads: n,
        late_completions: threads.late_completions,
        ..AppReport::default()
    };
    for (i, rec) in out.records.iter().enumerate() {
        let t = threads.thread_of(i);
        let compute = threads.compute_ps[i];
        unloaded[t] += compute + rec.alone_ps;
        compute_only[t] += compute;
        r.compute_ps_total += compute as u128;
        if let Some(done) = rec.complete_ps {
            r.ops += 1;
            finish[t] = finish[t].max(done);
            r.latency_ps_total += (done - threads.issue_ps[i]) as u128;
        }
    }
    let slowest = |times: &[Ps]| times.iter().copied().max().unwrap_or(0);
    let sum = |times: &[Ps]| times.iter().map(|&t| t as u128).sum::<u128>();
    r.run_time_ps = slowest(&finish);
    r.unloaded_run_time_ps = slowest(&unloaded);
    r.compute_only_run_time_ps = slowest(&compute_only);
    r.thread_time_ps = sum(&finish);
    r.unloaded_thread_time_ps = sum(&unloaded);
    r.compute_only_thread_time_ps = sum(&compute_only);
    // Little's law where every thread is busy (threads start at 0 and are
    // never idle until they finish), past the start's transient:
    // completions per second there, and the operations issued there.
    let first_done = finish.iter().copied().min().unwrap_or(0);
    let (from, to) = (first_done / 5, first_done);
    r.window_ps = (from, to);
    let (mut done_in, mut issued_in, mut latency, mut compute) = (0u64, 0u64, 0u128, 0u128);
    for (i, rec) in out.records.iter().enumerate() {
        let Some(done) = rec.complete_ps else {
            continue;
        };
        if (from..to).contains(&done) {
            done_in += 1;
        }
        let issued = threads.issue_ps[i];
        if (from..to).contains(&issued) {
            issued_in += 1;
            latency += (done - issued) as u128;
            compute += threads.compute_ps[i] as u128;
        }
    }
    if to > from && issued_in > 0 {
        r.throughput_ops_per_s = done_in as f64 / ((to - from) as f64 * 1e-12);
        r.window_mean_latency_ps = latency as f64 / issued_in as f64;
        r.window_mean_compute_ps = compute as f64 / issued_in as f64;
        r.little_threads =
            r.throughput_ops_per_s * (r.window_mean_latency_ps + r.window_mean_compute_ps) * 1e-12;
    }
    r
}
