//! The engine every protocol runs on: the event queue ([`EventQueue`]), the
//! one run loop ([`run`]: issues messages in order, counts events, reports
//! progress, finds the run's end), link utilisation, and what a run returns
//! ([`Outcome`]). A protocol plugs in twice: as a [`Protocol`] (what callers
//! run) and, for one run, as a [`Simulation`] (what the loop drives). A run's
//! issues come from a [`Feed`]: the workload's fixed times ([`Feed::Open`],
//! driven as [`InOrder`]) or threads that wait for their last operation
//! ([`Feed::Closed`], a [`closed_loop::ClosedLoop`]); both are [`Issues`]
//! to the loop.
pub mod closed_loop;
pub mod ideal;
mod queue;

pub use queue::EventQueue;

use closed_loop::ClosedLoop;

/// What a run calls now and then with (messages completed, messages).
pub type Progress<'a> = &'a mut dyn FnMut(u64, u64);

use crate::time::Ps;
use crate::workload::MessageSpec;
use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::panic::RefUnwindSafe;

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

/// Per-message outcome.
#[derive(Clone, Debug, Default)]
pub struct Record {
    pub complete_ps: Option<Ps>,
    pub alone_ps: Ps,
    /// Finished by its timeout with a NULL response (EDM's read timeout).
    pub timed_out: bool,
    /// A write (EDM) neither applied nor reported failed (target: never).
    pub lost: bool,
    /// EDM: when a write's acknowledgement reached its requester (its
    /// `complete_ps` is when its data was in memory; docs/protocol.md §4b).
    pub acked_ps: Option<Ps>,
}

/// Where a streamed run hands its records: `hand(ids, records)` gets the
/// records of messages `ids` (as many), at most `batch` at a time, in the
/// order they became final; every message's record is handed exactly once.
pub struct RecordSink<'a> {
    pub batch: usize,
    pub hand: &'a mut dyn FnMut(&[u32], &[Record]),
}

/// A run's per-message records, indexed by message id: the whole table
/// ([`RecordWindow::whole`]), or, streamed ([`RecordWindow::streamed`]),
/// only those of messages issued and not yet final (a map by id: a
/// message that waits long holds back no other's), the final ones handed
/// to a [`RecordSink`] in batches.
#[derive(Clone, Debug, Default)]
pub struct RecordWindow {
    whole: Vec<Record>,
    streamed: bool,
    held: HashMap<u32, Record, BuildHasherDefault<IdHasher>>,
    /// Streamed: the final records not yet handed on.
    ready_ids: Vec<u32>,
    ready: Vec<Record>,
    /// The most records held at once (final ones waiting to be handed on
    /// included).
    pub max_held: usize,
}

impl RecordWindow {
    /// A window holding every record of a run.
    pub fn whole(records: Vec<Record>) -> Self {
        RecordWindow {
            max_held: records.len(),
            whole: records,
            ..Default::default()
        }
    }

    /// An empty window for a streamed run.
    pub fn streamed() -> Self {
        RecordWindow {
            streamed: true,
            ..Default::default()
        }
    }

    /// Holds `record` for message `id` (streamed), or appends it (whole: `id`
    /// the next).
    pub fn hold(&mut self, id: u32, record: Record) {
        if self.streamed {
            self.held.insert(id, record);
        } else {
            debug_assert_eq!(id as usize, self.whole.len());
            self.whole.push(record);
        }
        self.max_held = self
            .max_held
            .max(self.held.len() + self.ready.len() + self.whole.len());
    }

    /// Streamed: message `id`'s record is final; handed on with the next batch.
    pub fn finish(&mut self, id: u32, sink: &mut RecordSink) {
        let record = self.held.remove(&id).expect("a held record");
        self.ready_ids.push(id);
        self.ready.push(record);
        if self.ready.len() >= sink.batch.max(1) {
            self.hand_ready(sink);
        }
    }

    /// Hands on the final records waiting.
    fn hand_ready(&mut self, sink: &mut RecordSink) {
        if !self.ready.is_empty() {
            (sink.hand)(&self.ready_ids, &self.ready);
            self.ready_ids.clear();
            self.ready.clear();
        }
    }

    /// The run's end: hands `sink` every record left, final or not (the
    /// unfinished in message order), in batches.
    pub fn hand_all(&mut self, sink: &mut RecordSink) {
        self.hand_ready(sink);
        let batch = sink.batch.max(1);
        let mut ids: Vec<u32> = self.held.keys().copied().collect();
        ids.sort_unstable();
        let mut records: Vec<Record> = ids.iter().map(|i| self.held[i].clone()).collect();
        self.held.clear();
        let whole = std::mem::take(&mut self.whole);
        ids.extend(0..whole.len() as u32);
        records.extend(whole);
        for (ids, records) in ids.chunks(batch).zip(records.chunks(batch)) {
            (sink.hand)(ids, records);
        }
    }

    /// Whether message `id`'s record is held (streamed: issued, not yet final).
    pub fn holds(&self, id: u32) -> bool {
        if self.streamed {
            self.held.contains_key(&id)
        } else {
            (id as usize) < self.whole.len()
        }
    }

    /// The whole table (empty when streamed).
    pub fn into_vec(self) -> Vec<Record> {
        self.whole
    }
}

impl std::ops::Index<usize> for RecordWindow {
    type Output = Record;
    #[inline(always)]
    fn index(&self, id: usize) -> &Record {
        if self.streamed {
            &self.held[&(id as u32)]
        } else {
            &self.whole[id]
        }
    }
}

impl std::ops::IndexMut<usize> for RecordWindow {
    #[inline(always)]
    fn index_mut(&mut self, id: usize) -> &mut Record {
        if self.streamed {
            self.held.get_mut(&(id as u32)).expect("a held record")
        } else {
            &mut self.whole[id]
        }
    }
}

/// Hashes a message id for [`RecordWindow`]'s map: a multiply (ids are
/// dense integers; std's SipHash would cost more than the rest of a lookup).
#[derive(Clone, Copy, Debug, Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u32(&mut self, id: u32) {
        self.0 = (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
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
    /// Data bytes delivered to their destination.
    pub delivered_bytes: u64,
    /// The most per-message records the run held at once (all of them
    /// unless streamed, [`Protocol::run_streamed`]).
    pub max_records_held: usize,
    /// The protocol's own counters (EDM's, the packet fabric's), which the
    /// engine carries without knowing them (`Totals::edm`, `Totals::packet`).
    pub protocol: Option<Box<dyn ProtocolCounters>>,
    /// The memory nodes' DRAMs (with `FabricConfig::dram` on).
    pub memory: crate::memory::MemoryStats,
    /// The memory nodes' protection (with `FabricConfig::protection` on).
    pub protection: crate::memory::protection::ProtectionStats,
}

/// Counters a protocol keeps besides the engine's [`Totals`]; any plain
/// data type is one. The engine carries them opaquely, so it names no protocol.
pub trait ProtocolCounters: Any + fmt::Debug + Send + Sync + RefUnwindSafe {
    fn clone_boxed(&self) -> Box<dyn ProtocolCounters>;
    fn as_any(&self) -> &dyn Any;
}

impl<T: Any + fmt::Debug + Clone + Send + Sync + RefUnwindSafe> ProtocolCounters for T {
    fn clone_boxed(&self) -> Box<dyn ProtocolCounters> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Clone for Box<dyn ProtocolCounters> {
    fn clone(&self) -> Self {
        (**self).clone_boxed()
    }
}

impl Totals {
    /// The protocol's counters if they are a `C` (None for another
    /// protocol's run). Each protocol names its own: `Totals::edm`,
    /// `Totals::packet`.
    pub fn counters<C: ProtocolCounters>(&self) -> Option<&C> {
        self.protocol
            .as_deref()
            .and_then(|c| c.as_any().downcast_ref::<C>())
    }
}

/// A protocol run over a workload: what the engine returns.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub records: Vec<Record>,
    pub totals: Totals,
}

/// Where a run's messages and their issue times come from.
pub enum Feed<'a, 'b> {
    /// Open loop: `messages` at their own issue times (sorted by them).
    Open(&'a [MessageSpec]),
    /// Closed loop: the threads' messages (their `issue_ps` unused), each
    /// issued when its thread's previous one completes.
    Closed(&'b mut ClosedLoop<'a>),
}

impl<'a> Feed<'a, '_> {
    /// Every message the run may issue, indexed by message id.
    pub fn messages(&self) -> &'a [MessageSpec] {
        match self {
            Feed::Open(messages) => messages,
            Feed::Closed(threads) => threads.messages(),
        }
    }

    /// Whether the feed reads the completion log ([`Issues::reads_completions`]).
    pub fn reads_completions(&self) -> bool {
        match self {
            Feed::Open(messages) => InOrder::new(messages).reads_completions(),
            Feed::Closed(threads) => threads.reads_completions(),
        }
    }
}

/// A fabric protocol: the policy the engine runs.
pub trait Protocol {
    /// Simulates the messages `feed` issues to completion.
    fn run(&mut self, feed: Feed, progress: Progress) -> Outcome;
    /// [`Protocol::run`] of an open loop handing every record to `sink`
    /// (batches of at most `sink.batch`) and returning none. This default
    /// hands them on after the run, in message order; a protocol that can
    /// tell when a record is final hands it on during the run, so that it
    /// holds only those of the messages in flight (`Totals::max_records_held`).
    fn run_streamed(
        &mut self,
        messages: &[MessageSpec],
        progress: Progress,
        sink: &mut RecordSink,
    ) -> Outcome {
        let mut out = self.run(Feed::Open(messages), progress);
        let records = std::mem::take(&mut out.records);
        out.totals.max_records_held = records.len();
        RecordWindow::whole(records).hand_all(sink);
        out
    }
    /// The latency of `message` if it were alone in the network (closed form).
    fn alone_ps(&self, message: &MessageSpec) -> Ps;
    fn name(&self) -> &'static str;
}

/// A protocol's state during one run, as [`run`] drives it. Its handlers
/// push the events they cause into its queue.
pub trait Simulation {
    type Event;
    /// The run's event queue.
    fn queue(&mut self) -> &mut EventQueue<Self::Event>;
    /// The event that issues message `i` (fed in issue order).
    fn issue_event(i: u32) -> Self::Event;
    /// Handles `event` at `now`; false if it does not extend the run (the
    /// run ends at the last event that does).
    fn handle(&mut self, now: Ps, event: Self::Event) -> bool;
    /// Messages completed so far (for progress reports).
    fn completed(&self) -> u64;
    /// Every completion so far, (message, time), in the order recorded: a
    /// closed loop reads the new ones after each event (a time may lie
    /// ahead of the event that recorded it, never before). When the feed
    /// does not read it ([`Issues::reads_completions`]) a simulation may
    /// keep only the latest.
    fn completion_log(&self) -> &[(u32, Ps)];
    /// Called before each event is handled (for prefetch hints; results
    /// must not depend on it).
    #[inline(always)]
    fn before_event(&self) {}
}

/// What the run loop counted.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunEnd {
    pub events: u64,
    /// The last event that extended the run.
    pub end_ps: Ps,
}

/// How many events between progress reports (a power of two).
const PROGRESS_EVERY: u64 = 1 << 16;
/// How many events between polls of the stop check (a power of two; a few
/// thousand events are well under a millisecond of wall time).
const STOP_CHECK_EVERY: u64 = 1 << 12;

/// A request to stop a run early, polled by the run loop: the host's
/// interrupt (Ctrl-C) reaches a long run here.
type StopCheck = Box<dyn FnMut() -> bool>;

thread_local! {
    static STOP_CHECK: std::cell::RefCell<Option<StopCheck>> = const { std::cell::RefCell::new(None) };
    static STOPPED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with `check` polled every [`STOP_CHECK_EVERY`] events by every
/// run loop on this thread; a run whose check says true ends there, its
/// unfinished messages unfinished. Returns `f`'s result and whether a run
/// was stopped early.
pub fn with_stop_check<R>(check: StopCheck, f: impl FnOnce() -> R) -> (R, bool) {
    struct Uninstall;
    impl Drop for Uninstall {
        fn drop(&mut self) {
            STOP_CHECK.with(|c| *c.borrow_mut() = None);
        }
    }
    STOP_CHECK.with(|c| *c.borrow_mut() = Some(check));
    STOPPED.with(|s| s.set(false));
    let _uninstall = Uninstall;
    let out = f();
    (out, STOPPED.with(|s| s.replace(false)))
}

fn stop_requested() -> bool {
    let stop = STOP_CHECK.with(|c| c.borrow_mut().as_mut().is_some_and(|check| check()));
    if stop {
        STOPPED.with(|s| s.set(true));
    }
    stop
}

/// Where a run's issues come from, in time order.
pub trait Issues {
    /// The time of the next issue not yet handed out, if any.
    fn next_time(&self) -> Option<Ps>;
    /// Hands out the next issue's message (after [`Issues::next_time`] said one is due).
    fn take(&mut self) -> u32;
    /// Called after each event with the simulation's completion log.
    fn after_event(&mut self, now: Ps, completions: &[(u32, Ps)]);
    /// How many messages the run issues (for progress reports).
    fn total(&self) -> u64;
    /// Whether [`Issues::after_event`] reads the completion log (else a
    /// simulation may empty it into its records as it goes: less memory).
    fn reads_completions(&self) -> bool {
        true
    }
}

/// Open loop: the workload's own issue times (sorted).
pub struct InOrder<'a> {
    messages: &'a [MessageSpec],
    next: usize,
}

impl<'a> InOrder<'a> {
    pub fn new(messages: &'a [MessageSpec]) -> Self {
        InOrder { messages, next: 0 }
    }
}

impl Issues for InOrder<'_> {
    #[inline(always)]
    fn next_time(&self) -> Option<Ps> {
        self.messages.get(self.next).map(|m| m.issue_ps)
    }
    #[inline(always)]
    fn take(&mut self) -> u32 {
        self.next += 1;
        (self.next - 1) as u32
    }
    #[inline(always)]
    fn after_event(&mut self, _now: Ps, _completions: &[(u32, Ps)]) {}
    fn total(&self) -> u64 {
        self.messages.len() as u64
    }
    fn reads_completions(&self) -> bool {
        false
    }
}

/// Runs `sim` with its issues from `feed` until no event is left, calling
/// `progress(completed, messages)` now and then and at the end: the one
/// loop ([`run_fed`]), built once per kind of feed.
pub fn run<S: Simulation>(sim: &mut S, feed: Feed, progress: Progress) -> RunEnd {
    match feed {
        Feed::Open(messages) => run_fed(sim, &mut InOrder::new(messages), progress),
        Feed::Closed(threads) => run_fed(sim, threads, progress),
    }
}

/// Runs `sim` with its issues from `issues` until no event is left.
pub fn run_fed<S: Simulation, I: Issues>(
    sim: &mut S,
    issues: &mut I,
    progress: &mut dyn FnMut(u64, u64),
) -> RunEnd {
    let total = issues.total();
    let mut end = RunEnd::default();
    // Issue events are fed lazily, in order, to keep the queue small: one
    // enters the queue once nothing queued is earlier.
    loop {
        let mut next = None;
        if let Some(at) = issues.next_time() {
            match sim.queue().peek_time() {
                Some(t) if at > t => {}
                Some(t) if at == t => {
                    // After the events queued for its time.
                    let i = issues.take();
                    sim.queue().push(at, S::issue_event(i));
                }
                // Before every queued event: the queue would hand it
                // straight back, so it is handled without going through it.
                _ => next = Some((at, S::issue_event(issues.take()))),
            }
        }
        let Some((now, event)) = next.or_else(|| sim.queue().pop()) else {
            break;
        };
        end.events += 1;
        if end.events % PROGRESS_EVERY == 0 {
            progress(sim.completed(), total);
        }
        if end.events % STOP_CHECK_EVERY == 0 && stop_requested() {
            break;
        }
        sim.before_event();
        if sim.handle(now, event) {
            end.end_ps = end.end_ps.max(now);
        }
        issues.after_event(now, sim.completion_log());
    }
    progress(sim.completed(), total);
    end
}

/// Utilisation (mean, max) of links busy `busy_ps` each over `end` ps.
pub fn utilisation(busy_ps: impl Iterator<Item = Ps>, end: Ps) -> (f64, f64) {
    let u: Vec<f64> = busy_ps.map(|b| b as f64 / end as f64).collect();
    if end == 0 || u.is_empty() {
        return (0.0, 0.0);
    }
    (
        u.iter().sum::<f64>() / u.len() as f64,
        u.iter().cloned().fold(0.0, f64::max),
    )
}
