//! The memory nodes' record of RMWs applied (docs/faults.md §4): a request
//! may reach its memory node more than once (the dual switch's other plane,
//! a chunk granted again), and an RMW must change memory once. As the RTL's
//! `edm_dup_filter` (rtl/host/edm_dup_filter.sv) keeps the results of each
//! source's last RMWs, a memory node keeps per requester the ids of the last
//! `RMW_RESULTS_KEPT` RMWs it applied and answers a copy of one of them with
//! the first copy's result, without applying it. The simulator holds no
//! memory contents: it counts, and checks against every RMW applied so far
//! (`rmw_applied_twice`, target 0), that no copy it did not recognise was
//! one applied before.
use crate::edm::sim::Sim;
use crate::edm::units::Unit;
use crate::edm::UnitKind;
use crate::workload::Op;
use std::collections::VecDeque;

/// RMW ids a memory node keeps per requester (as `edm_dup_filter`'s results
/// ring, 2^RESULTS_LOG2; its default is 4).
const RMW_RESULTS_KEPT: usize = 4;

pub(in crate::edm) struct RmwLog {
    nodes: usize,
    /// Per (memory node, requester): the RMWs applied last, oldest first.
    kept: Vec<VecDeque<u32>>,
    /// Per message: applied (what the check counts against, not what the
    /// memory node knows).
    applied: Vec<bool>,
}

impl RmwLog {
    pub(in crate::edm) fn new(nodes: usize, messages: usize) -> Self {
        RmwLog {
            nodes,
            kept: vec![VecDeque::new(); nodes * nodes],
            applied: vec![false; messages],
        }
    }

    fn ring(&self, unit: &Unit) -> usize {
        unit.spec.memory as usize * self.nodes + unit.spec.requester as usize
    }
}

impl Sim<'_> {
    /// Whether the forwarded request `request` is an RMW its memory node
    /// would answer with a kept result (its DRAM is not touched).
    pub(in crate::edm) fn rmw_replays(&self, request: &Unit) -> bool {
        self.rmw_log.as_ref().is_some_and(|log| {
            request.spec.op == Op::Rmw && log.kept[log.ring(request)].contains(&request.msg)
        })
    }

    /// A forwarded request reaches its memory node intact: an RMW's copy is
    /// applied, or recognised and answered with the first copy's result.
    pub(in crate::edm) fn request_reaches_memory(&mut self, request: &Unit) {
        debug_assert_eq!(request.kind, UnitKind::ForwardedRequest);
        if request.spec.op != Op::Rmw || self.rmw_log.is_none() || self.denied(request.msg) {
            return;
        }
        let replays = self.rmw_replays(request);
        let counters = &mut self.totals.edm.faults;
        let log = self.rmw_log.as_mut().expect("checked above");
        if replays {
            counters.rmw_replayed += 1;
            return;
        }
        let applied = &mut log.applied[request.msg as usize];
        if *applied {
            counters.rmw_applied_twice += 1;
        }
        *applied = true;
        let ring = log.ring(request);
        let kept = &mut log.kept[ring];
        if kept.len() == RMW_RESULTS_KEPT {
            kept.pop_front();
        }
        kept.push_back(request.msg);
    }
}
