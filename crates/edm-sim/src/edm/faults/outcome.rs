//! Every write gets an outcome (docs/protocol.md §4b): its memory node
//! acknowledges it with an /A/ control block (aggregated per pair, at most
//! one per `ACK_GAP_BLOCKS` of the node's uplink, a streaming pair's one per
//! `ACK_PAIR_GAP_BLOCKS`), its requester keeps it
//! in its retry buffer until then and sends it again, same id, when no /A/
//! came a retry timeout after its data; not acknowledged `give_up_ns` after
//! its issue, it is reported failed.
//!
//! An /A/ is counted, not booked on the links: one block in a gap of the
//! memory node's uplink and of the requester's downlink, as an /N/ or /G/.
//! Its fate is drawn on both links (every plane it goes on) when it is
//! started; the writes that join it share that fate. The /A/ senders'
//! state is `acks.rs`'s; the rules here are the run's (`Sim`).
use crate::edm::faults::chunks::NOT_KEPT;
use crate::edm::faults::dedup::Place;
use crate::edm::faults::Fate;
use crate::edm::sim::Sim;
use crate::edm::units::{Ev, Unit};
use crate::time::Ps;
use crate::workload::Op;
use edm_proto::spec::{ACK_GAP_BLOCKS, ACK_PAIR_GAP_BLOCKS};

impl Sim<'_> {
    /// Write `unit.msg`'s data is in memory at `applied` (`first`: for the
    /// first time; else a copy of a write applied before, which is
    /// acknowledged again: its /A/ may have been lost). Its memory node
    /// acknowledges it: in the pair's /A/ not yet sent, or in a new one.
    pub(in crate::edm) fn acknowledge(&mut self, applied: Ps, unit: &Unit, first: bool) {
        let (i, m) = (unit.msg, unit.spec);
        let pair = self.pair(m);
        if first && self.protocol {
            self.recovery.applied(i as usize, applied);
            let failed = self.records[i as usize].timed_out;
            if failed {
                // Reported failed before its data got there.
                self.counters.faults.writes_failed_applied += 1;
            }
        }
        let ready = applied + self.edm.c(self.edm.cfg.steps.gen_req);
        let block = self.edm.fabric.block_ps();
        let gaps = (
            ACK_GAP_BLOCKS as Ps * block,
            ACK_PAIR_GAP_BLOCKS as Ps * block,
        );
        if let Some(leave) = self.acks.join(pair, m.memory, ready, gaps) {
            self.counters.acks_sent += 1;
            if self.lossy {
                let ok = self.ack_crosses(leave, unit);
                self.acks.set_arrives(pair, ok);
            }
        }
        let (leave, arrives_ok) = self.acks.latest(pair);
        let arrives = leave + self.edm.ack_path_ps();
        if !self.lossy {
            // Nothing is lost: acknowledged on arrival, no event needed; the
            // memory-order rule and fences go by it.
            self.records[i as usize].acked_ps = Some(arrives);
            if m.count > 1 {
                // A mega-message: one /A/ for all its members' ids.
                let b = self
                    .batching
                    .batch_of(i)
                    .expect("a mega-message names its batch");
                for &(member, _) in self.batching.members(b) {
                    self.records[member as usize].acked_ps = Some(arrives);
                }
            }
            if self.ordering.tracked() {
                self.q.push(arrives, Ev::Finished(i, m));
            }
        } else if arrives_ok {
            self.q.push(arrives, Ev::AckIn(i));
        }
    }

    /// Whether an /A/ started at `leave` from `unit`'s memory node reaches
    /// its requester on some plane (drawn on both links of each plane the
    /// node sends it on).
    fn ack_crosses(&mut self, leave: Ps, unit: &Unit) -> bool {
        let (node, requester) = (unit.spec.memory, unit.spec.requester);
        let half = self.edm.ack_path_ps() / 2;
        let planes = self.mirror_planes(node, leave);
        let mut ok = false;
        self.on_planes(planes, |sim| {
            // (Counted apart from the other units' fates: `acks_lost`.)
            let arrives =
                [(node, leave), (requester, leave + half)]
                    .iter()
                    .all(|&(h, at)| match sim.cross_link(h, at, 1, true) {
                        Fate::Intact => true,
                        Fate::Undetected => {
                            sim.counters.faults.undetected += 1;
                            true
                        }
                        Fate::Dropped | Fate::LinkDown => false,
                    });
            ok |= arrives;
        });
        if !ok {
            self.counters.faults.acks_lost += 1;
        }
        ok
    }

    /// An /A/ naming write `i` reaches its requester at `now`.
    pub(in crate::edm) fn ack_arrives(&mut self, now: Ps, i: u32) -> bool {
        let record = &mut self.records[i as usize];
        if record.acked_ps.is_none() && !record.timed_out {
            record.acked_ps = Some(now);
        }
        self.resolved(now, i, true);
        true
    }

    /// Message `i` is resolved at its requester at `now` (a write
    /// acknowledged when `acked`, else failed; a read or RMW answered or
    /// failed): its retry-buffer entry is free, and a write finishes for
    /// the memory-order rule and fences.
    pub(in crate::edm) fn resolved(&mut self, now: Ps, i: u32, acked: bool) {
        let Some(outcomes) = self.outcomes.as_mut() else {
            return;
        };
        if !outcomes.resolve(i) {
            return;
        }
        let m = crate::edm::units::Msg::of(&self.msgs[i as usize]);
        if m.op == Op::Write {
            if acked {
                self.counters.faults.writes_acked += 1;
            }
            // (With the ideal NACK's bound it finished when in memory.)
            if self.ordering.tracked() && !self.finish_on_arrival() {
                self.finished(now, i, m);
            }
        }
        if self.protocol {
            let pair = self.pair(m);
            self.admit_waiting(now, pair);
        }
    }

    /// A write with all its data sent and no /A/ a retry timeout after its
    /// last data: sent again on the plane of `unit` (its /N/, same id).
    /// None if it is not such a write (the caller's usual retry rules
    /// apply). (Its `GiveUp` reports it failed `give_up_ns` after issue.)
    pub(in crate::edm) fn write_retry(&mut self, now: Ps, unit: Unit) -> Option<bool> {
        let i = unit.msg as usize;
        let outcomes = self.outcomes.as_ref()?;
        if unit.spec.op != Op::Write {
            return None;
        }
        if outcomes.is_resolved(unit.msg) {
            return Some(false);
        }
        if !self.host_sent_all(unit.msg) {
            return None;
        }
        let retry = self.edm.cfg.faults.retry_timeout_ps();
        let due = self.recovery.last_data(i) + retry;
        if now < due {
            self.q.push(due, Ev::NotifyCheck(unit));
            return Some(false);
        }
        if self.mirror_planes(unit.spec.requester, now) & 1 << self.plane.id == 0 {
            // Its host sees this plane's link down: not sent into it.
            self.q.push(now + retry, Ev::NotifyCheck(unit));
            return Some(false);
        }
        self.counters.faults.write_retries += 1;
        self.recovery.resent(i, now);
        let at = now + self.edm.c(self.edm.cfg.steps.gen_req);
        self.send_control(now, at, unit);
        self.q.push(now + retry, Ev::NotifyCheck(unit));
        Some(true)
    }

    /// Write `i` is reported failed (not acknowledged `give_up_ns` after
    /// its issue).
    pub(in crate::edm) fn write_fails(&mut self, now: Ps, i: u32) -> bool {
        if self.outcomes.as_ref().is_none_or(|o| o.is_resolved(i)) {
            return false;
        }
        self.records[i as usize].timed_out = true;
        self.counters.faults.failed += 1;
        self.counters.faults.writes_failed += 1;
        if self.recovery.applied_at(i as usize) != Ps::MAX {
            self.counters.faults.writes_failed_applied += 1;
        }
        let m = crate::edm::units::Msg::of(&self.msgs[i as usize]);
        self.release(now, i, m);
        self.resolved(now, i, false);
        true
    }

    /// Whether a copy of write data `unit` at its memory node is refused by
    /// the source's window (stale), counting a copy misread as new that
    /// applies a chunk again.
    pub(in crate::edm) fn window_refuses_data(&mut self, unit: &Unit) -> bool {
        let pair = self.pair(unit.spec);
        let Some(outcomes) = self.outcomes.as_mut() else {
            return false;
        };
        let place = outcomes.arrives(unit.msg, pair, &mut self.counters.faults);
        let kept = self.chunks[unit.chunk as usize].kept_from;
        match place {
            Place::Inside => false,
            Place::Stale => {
                if kept == NOT_KEPT && !outcomes.is_resolved(unit.msg) {
                    self.counters.faults.dup_first_copy_refused += 1;
                }
                true
            }
            Place::Misread => {
                if kept != NOT_KEPT {
                    self.counters.faults.writes_applied_twice += 1;
                }
                false
            }
        }
    }

    /// At the end of a run: every write's outcome, counted.
    pub(in crate::edm) fn settle_outcomes(&mut self) {
        let Some(outcomes) = self.outcomes.as_ref().filter(|_| self.protocol) else {
            return;
        };
        for (i, m) in self.msgs.iter().enumerate() {
            if m.op != Op::Write {
                continue;
            }
            let applied = self.recovery.applied_at(i) != Ps::MAX;
            let failed = self.records[i].timed_out;
            if !outcomes.is_resolved(i as u32) {
                self.counters.faults.writes_unresolved += 1;
            }
            if !applied && !failed {
                // Neither in memory nor reported: lost unseen (target 0).
                self.counters.faults.writes_lost += 1;
                self.records[i].lost = true;
            }
        }
    }
}
