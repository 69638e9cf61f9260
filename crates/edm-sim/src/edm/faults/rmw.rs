//! The memory nodes' record of RMWs applied (docs/faults.md §4): a request
//! may reach its memory node more than once (the dual switch's other plane,
//! a chunk granted again, a request re-sent), and an RMW must change memory
//! once and its requester get that one result. A memory node keeps, per
//! requester, the RMWs it applied with their results (as the RTL's
//! `edm_dup_filter` keeps results, rtl/host/edm_dup_filter.sv) until the
//! requester shows it is done with them: every request carries its
//! requester's low-water mark, the oldest message it had not finished to
//! that node when it generated the request (a per-pair issue number). A copy
//! of an RMW
//! * below the mark is refused (answered empty, not applied): its requester
//!   has finished it and drops the answer (`rmw_refused`);
//! * applied before is answered with the kept result (`rmw_replayed`);
//! * else it is applied.
//!
//! So nothing is applied twice and no unfinished RMW is refused, whatever
//! the delay of a copy; the memory node keeps the results of the RMWs applied
//! and not yet below the mark (`rmw_results_kept_max` in a run). (The RTL's
//! filter instead keeps the last 4 results and refuses copies 16 ids behind
//! the newest: docs/faults.md §4 says why the simulator does not.)
//!
//! The simulator holds no memory contents: it checks against every RMW
//! applied so far that no copy applied was applied before
//! (`rmw_applied_twice`) and no refused copy was its RMW's first
//! (`rmw_first_copy_refused`); both must stay 0.
use super::FaultCounters;
use crate::edm::units::Unit;
use crate::workload::Op;

pub(in crate::edm) struct RmwLog {
    nodes: usize,
    /// Per message: its place in the order the requesters issued messages
    /// (compared within a requester-memory pair only), and the low-water
    /// mark its request carries.
    issue_no: Vec<u32>,
    issued: u32,
    carried: Vec<u32>,
    /// Per (memory node, requester): the highest mark seen, and the RMWs
    /// applied at or above it (their results kept).
    low: Vec<u32>,
    kept: Vec<Vec<u32>>,
    /// Per message: applied (what the checks count against, not what the
    /// memory node knows).
    applied: Vec<bool>,
}

/// What a memory node does with an RMW copy.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Apply,
    Replay,
    Refuse,
}

impl RmwLog {
    pub(in crate::edm) fn new(nodes: usize, messages: usize) -> Self {
        RmwLog {
            nodes,
            issue_no: vec![0; messages],
            issued: 0,
            carried: vec![0; messages],
            low: vec![0; nodes * nodes],
            kept: vec![Vec::new(); nodes * nodes],
            applied: vec![false; messages],
        }
    }

    fn pair(&self, unit: &Unit) -> usize {
        unit.spec.memory as usize * self.nodes + unit.spec.requester as usize
    }

    /// The mark at the memory node once `request` has arrived.
    fn low_with(&self, request: &Unit) -> u32 {
        self.low[self.pair(request)].max(self.carried[request.msg as usize])
    }

    fn verdict(&self, request: &Unit) -> Verdict {
        let no = self.issue_no[request.msg as usize];
        if no < self.low_with(request) {
            Verdict::Refuse
        } else if self.kept[self.pair(request)].contains(&no) {
            Verdict::Replay
        } else {
            Verdict::Apply
        }
    }
}

impl RmwLog {
    /// Message `i` is issued: it takes the next issue number.
    pub(in crate::edm) fn issued_message(&mut self, i: u32) {
        self.issue_no[i as usize] = self.issued;
        self.issued += 1;
    }

    /// Message `i`'s request is generated: it carries the issue number of
    /// `oldest`, the oldest unfinished message of its pair (itself if none).
    pub(in crate::edm) fn mark(&mut self, i: u32, oldest: Option<u32>) {
        self.carried[i as usize] = self.issue_no[oldest.unwrap_or(i) as usize];
    }

    /// Whether the forwarded request `request` is an RMW copy its memory
    /// node answers without applying it (its DRAM is not touched).
    pub(in crate::edm) fn replays(&self, request: &Unit) -> bool {
        request.spec.op == Op::Rmw && self.verdict(request) != Verdict::Apply
    }

    /// A forwarded request reaches its memory node intact: its mark is
    /// taken, and an RMW's copy applied, answered with the kept result, or
    /// refused.
    pub(in crate::edm) fn reaches_memory(&mut self, request: &Unit, counters: &mut FaultCounters) {
        let (i, pair) = (request.msg as usize, self.pair(request));
        if request.spec.op == Op::Rmw {
            match self.verdict(request) {
                Verdict::Refuse => {
                    counters.rmw_refused += 1;
                    if !self.applied[i] {
                        counters.rmw_first_copy_refused += 1;
                    }
                }
                Verdict::Replay => counters.rmw_replayed += 1,
                Verdict::Apply => {
                    if self.applied[i] {
                        counters.rmw_applied_twice += 1;
                    }
                    self.applied[i] = true;
                    self.kept[pair].push(self.issue_no[i]);
                }
            }
        }
        let low = self.low_with(request);
        self.low[pair] = low;
        self.kept[pair].retain(|&no| no >= low);
        let kept = self.kept[pair].len() as u64;
        counters.rmw_results_kept_max = counters.rmw_results_kept_max.max(kept);
    }
}
