//! One run's records: every message's record (or, streamed, those not yet
//! final), the completion log the issue feed may read, and where final
//! records go.
//!
//! Invariants: a message completes once (`completed` counts the log's
//! entries ever made); the log is written into the records in completion
//! order, every `COMPLETION_BATCH` unless the feed reads it (then it is kept
//! whole); streamed during the run, a record is handed on once, when its
//! message completed and, a write, was acknowledged.
use super::model::Edm;
use crate::engine::{Protocol, Record, RecordSink, RecordWindow, Totals};
use crate::time::Ps;
use crate::workload::{MessageSpec, Op};

pub(super) struct Records<'a> {
    /// Every message's record, or when streamed those of the messages from
    /// the oldest whose record is not final to the last issued.
    window: RecordWindow,
    /// Streamed runs: where final records go; `during` if they go during
    /// the run (without faults: a record is final when its message
    /// completed and, a write, was acknowledged), else at its end.
    sink: Option<(usize, Hand<'a>)>,
    during: bool,
    /// Streamed: completed writes whose record waits for their acknowledgement.
    unsettled: Vec<u32>,
    alone: AloneCache,
    /// (message, completion time), in completion order: all of them when
    /// the issue feed reads them (a closed loop), else the latest, written
    /// to `window` every `COMPLETION_BATCH` (a batch keeps the writes to
    /// far-away records out of the event handlers; emptying it keeps a long
    /// run's memory 16 B per message smaller).
    completions: Vec<(u32, Ps)>,
    keep_completions: bool,
    completed: u64,
}

/// A streamed run's sink's hand (`RecordSink::hand`).
type Hand<'a> = &'a mut dyn FnMut(&[u32], &[Record]);

/// How many completions are logged before they are written to the records
/// (when the issue feed does not read them).
pub(super) const COMPLETION_BATCH: usize = 1 << 14;

impl<'a> Records<'a> {
    pub(super) fn new() -> Self {
        Records {
            window: RecordWindow::default(),
            sink: None,
            during: false,
            unsettled: Vec::new(),
            alone: AloneCache::default(),
            completions: Vec::new(),
            keep_completions: true,
            completed: 0,
        }
    }

    /// Final records go to `sink`: during the run if `during` (no fault can
    /// change a finished message's record), else at its end.
    pub(super) fn stream_to(&mut self, sink: &'a mut RecordSink, during: bool) {
        self.during = during;
        self.sink = Some((sink.batch, &mut *sink.hand));
    }

    /// Whether records are held from their issue and handed on during the run.
    #[inline(always)]
    pub(super) fn streamed_during(&self) -> bool {
        self.during
    }

    /// The run starts: `reads_completions`, the issue feed reads the
    /// completion log; a run not streamed during holds every record now.
    pub(super) fn start(&mut self, edm: &Edm, msgs: &[MessageSpec], reads_completions: bool) {
        self.keep_completions = reads_completions;
        if self.during {
            self.window = RecordWindow::streamed();
        } else {
            for i in 0..msgs.len() {
                self.hold(edm, msgs, i as u32);
            }
        }
        self.completions.reserve(if self.keep_completions {
            msgs.len()
        } else {
            COMPLETION_BATCH.min(msgs.len())
        });
    }

    /// Holds message `i`'s record, unfinished.
    #[inline]
    pub(super) fn hold(&mut self, edm: &Edm, msgs: &[MessageSpec], i: u32) {
        let alone_ps = self.alone.get(edm, &msgs[i as usize]);
        self.window.hold(
            i,
            Record {
                alone_ps,
                ..Record::default()
            },
        );
    }

    /// Message `i` completed at `at` (logged in completion order and
    /// written to the records in one pass, not to a far-away record now).
    #[inline(always)]
    pub(super) fn complete(&mut self, i: u32, at: Ps) {
        self.completions.push((i, at));
        self.completed += 1;
    }

    /// Writes the completion log into the records when a batch is full
    /// (and the feed does not read it).
    #[inline(always)]
    pub(super) fn write_full_batch(&mut self, msgs: &[MessageSpec]) {
        if self.completions.len() >= COMPLETION_BATCH && !self.keep_completions {
            self.write_completions(msgs);
        }
    }

    /// Writes the completions logged into the records, and empties the log
    /// unless the issue feed reads it.
    fn write_completions(&mut self, msgs: &[MessageSpec]) {
        for &(i, at) in &self.completions {
            self.window[i as usize].complete_ps = Some(at);
        }
        if self.during {
            for k in 0..self.completions.len() {
                self.settle(msgs, self.completions[k].0);
            }
            for i in std::mem::take(&mut self.unsettled) {
                if self.window.holds(i) {
                    self.settle(msgs, i);
                }
            }
        }
        if !self.keep_completions {
            self.completions.clear();
        }
    }

    /// Streamed during the run: message `i`'s record has its completion; it
    /// is final (handed on) once a write is also acknowledged (a member of a
    /// mega-message is acknowledged with the whole: until then it waits in
    /// `unsettled`).
    fn settle(&mut self, msgs: &[MessageSpec], i: u32) {
        let r = &self.window[i as usize];
        let acked = msgs[i as usize].op != Op::Write || r.acked_ps.is_some();
        if !acked {
            self.unsettled.push(i);
            return;
        }
        let Some((batch, hand)) = self.sink.as_mut() else {
            return;
        };
        let sink = &mut RecordSink {
            batch: *batch,
            hand: &mut **hand,
        };
        self.window.finish(i, sink);
    }

    /// The run's end: the log written, every record left handed to the sink
    /// (if any), and how many were held at most into `totals`.
    pub(super) fn close(&mut self, msgs: &[MessageSpec], totals: &mut Totals) {
        self.write_completions(msgs);
        if let Some((batch, hand)) = self.sink.as_mut() {
            let sink = &mut RecordSink {
                batch: *batch,
                hand: &mut **hand,
            };
            self.window.hand_all(sink);
        }
        totals.max_records_held = self.window.max_held;
    }

    /// The records still held (all of them in a run not streamed).
    pub(super) fn into_vec(self) -> Vec<Record> {
        self.window.into_vec()
    }

    /// How many messages completed so far.
    #[inline(always)]
    pub(super) fn completed(&self) -> u64 {
        self.completed
    }

    /// The completion log (`Simulation::completion_log`).
    #[inline(always)]
    pub(super) fn completion_log(&self) -> &[(u32, Ps)] {
        &self.completions
    }
}

impl std::ops::Index<usize> for Records<'_> {
    type Output = Record;
    #[inline(always)]
    fn index(&self, id: usize) -> &Record {
        &self.window[id]
    }
}

impl std::ops::IndexMut<usize> for Records<'_> {
    #[inline(always)]
    fn index_mut(&mut self, id: usize) -> &mut Record {
        &mut self.window[id]
    }
}

/// A message's latency alone depends only on its operation and size: a
/// small direct-mapped cache of it (workloads repeat sizes).
struct AloneCache([(u32, Op, Ps); 256]);

impl Default for AloneCache {
    fn default() -> Self {
        AloneCache([(u32::MAX, Op::Read, 0); 256])
    }
}

impl AloneCache {
    #[inline]
    fn get(&mut self, edm: &Edm, m: &MessageSpec) -> Ps {
        let slot = &mut self.0[(m.size as usize ^ m.op as usize) & 255];
        if (slot.0, slot.1) != (m.size, m.op) {
            *slot = (m.size, m.op, edm.alone_ps(m));
        }
        slot.2
    }
}
