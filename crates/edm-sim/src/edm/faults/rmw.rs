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
use crate::edm::sim::Sim;
use crate::edm::units::Unit;
use crate::edm::units::UnitKind;
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

impl Sim<'_> {
    /// Message `i` is issued: it takes the next issue number.
    pub(in crate::edm) fn rmw_issued(&mut self, i: u32) {
        if let Some(log) = self.rmw_log.as_mut() {
            log.issue_no[i as usize] = log.issued;
            log.issued += 1;
        }
    }

    /// Message `i`'s request is generated: it carries the issue number of
    /// the oldest unfinished message of its pair `pair` (itself at most).
    pub(in crate::edm) fn rmw_mark(&mut self, i: u32, pair: usize) {
        if let Some(log) = self.rmw_log.as_mut() {
            // (Lossy runs keep the memory-order rule's unfinished lists.)
            let oldest = self.unfinished.get(pair).and_then(|u| u.first());
            log.carried[i as usize] = log.issue_no[*oldest.unwrap_or(&i) as usize];
        }
    }

    /// Whether the forwarded request `request` is an RMW copy its memory
    /// node answers without applying it (its DRAM is not touched).
    pub(in crate::edm) fn rmw_replays(&self, request: &Unit) -> bool {
        self.rmw_log
            .as_ref()
            .is_some_and(|log| request.spec.op == Op::Rmw && log.verdict(request) != Verdict::Apply)
    }

    /// A forwarded request reaches its memory node intact: its mark is
    /// taken, and an RMW's copy applied, answered with the kept result, or
    /// refused.
    pub(in crate::edm) fn request_reaches_memory(&mut self, request: &Unit) {
        debug_assert_eq!(request.kind, UnitKind::ForwardedRequest);
        if self.rmw_log.is_none() || self.denied(request.msg) {
            return;
        }
        let counters = &mut self.counters.faults;
        let log = self.rmw_log.as_mut().expect("checked above");
        let (i, pair) = (request.msg as usize, log.pair(request));
        if request.spec.op == Op::Rmw {
            match log.verdict(request) {
                Verdict::Refuse => {
                    counters.rmw_refused += 1;
                    if !log.applied[i] {
                        counters.rmw_first_copy_refused += 1;
                    }
                }
                Verdict::Replay => counters.rmw_replayed += 1,
                Verdict::Apply => {
                    if log.applied[i] {
                        counters.rmw_applied_twice += 1;
                    }
                    log.applied[i] = true;
                    log.kept[pair].push(log.issue_no[i]);
                }
            }
        }
        let low = log.low_with(request);
        log.low[pair] = low;
        log.kept[pair].retain(|&no| no >= low);
        let kept = log.kept[pair].len() as u64;
        counters.rmw_results_kept_max = counters.rmw_results_kept_max.max(kept);
    }
}
