//! What the hosts and the switch do about faults: the timers and
//! idempotent retries, read timeouts and give-up, failed links, and the
//! dual switch's two planes.
use super::{Fate, Faults};
use crate::config::Ps;
use crate::edm::scheduler::Grant;
use crate::edm::sim::{Chunk, Sim};
use crate::edm::units::{Ev, Msg, Unit, NO_CHUNK};
use crate::edm::{Edm, UnitKind};
use crate::engine::{Outcome, Record};
use crate::workload::{MessageSpec, Op};

impl Edm {
    /// The dual switch (paper §3.3): each host mirrors every memory message
    /// on two planes, each with its own links, switch and scheduler seeing
    /// the same demand; the receiver keeps the first copy. Modelled as two
    /// runs: the first plane on its own, then the second, whose hosts stop
    /// retrying a message once the first plane delivered it. (Each plane's
    /// hosts apply their rules to their own copies: a message held back on
    /// one plane is not released by the other's earlier delivery, which
    /// can only make the model slower than the design.)
    pub(in crate::edm) fn run_dual(
        &self,
        messages: &[MessageSpec],
        progress: &mut dyn FnMut(u64, u64),
    ) -> Outcome {
        let first = Sim::new(self, messages).run(progress).0;
        let delivered: Vec<Option<Ps>> = first.records.iter().map(|r| r.complete_ps).collect();
        let mut sim = Sim::new(self, messages);
        sim.faults = Faults::new(&self.cfg.faults, 1, self.fabric.nodes);
        sim.mirror = Some(&delivered);
        let second = sim.run(progress).0;
        merge_planes(messages, first, second)
    }
}

/// One outcome of a dual switch's two planes: each message at its first
/// copy; counters added, utilisation the busier plane's.
fn merge_planes(messages: &[MessageSpec], first: Outcome, second: Outcome) -> Outcome {
    let mut totals = first.totals.clone();
    let other = &second.totals;
    totals.events += other.events;
    totals.end_ps = totals.end_ps.max(other.end_ps);
    totals.uplink_util_max = totals.uplink_util_max.max(other.uplink_util_max);
    totals.uplink_util_mean = totals.uplink_util_mean.max(other.uplink_util_mean);
    totals.downlink_util_max = totals.downlink_util_max.max(other.downlink_util_max);
    totals.downlink_util_mean = totals.downlink_util_mean.max(other.downlink_util_mean);
    totals.edm.faults.add(&other.edm.faults);
    totals.delivered_bytes = 0;
    let records = first
        .records
        .iter()
        .zip(&second.records)
        .zip(messages)
        .map(|((a, b), m)| {
            let complete_ps = match (a.complete_ps, b.complete_ps) {
                (Some(x), Some(y)) => {
                    totals.edm.faults.mirror_copies_discarded += 1;
                    Some(x.min(y))
                }
                (x, y) => x.or(y),
            };
            if complete_ps.is_some() {
                totals.delivered_bytes += Edm::data_bytes(Msg::of(m)) as u64;
            }
            Record {
                complete_ps,
                alone_ps: a.alone_ps,
                timed_out: complete_ps.is_none() && (a.timed_out || b.timed_out),
            }
        })
        .collect::<Vec<Record>>();
    // A plane's give-ups and timeouts are not losses if the other plane
    // delivered: what counts is what neither delivered.
    totals.edm.faults.timed_out = 0;
    totals.edm.faults.failed = records.iter().filter(|r| r.complete_ps.is_none()).count() as u64;
    Outcome { records, totals }
}

impl Sim<'_> {
    /// The timers of a message whose /N/ or request its host sends at `at`:
    /// the retry of an ungranted notification, a read's timeout.
    pub(in crate::edm) fn arm_timers(&mut self, at: Ps, unit: Unit) {
        if self.lossy {
            let check = at + self.edm.cfg.faults.retry_timeout_ps();
            self.q.push(check, Ev::NotifyCheck(unit));
            let give_up = self.edm.cfg.faults.give_up_ns * 1000;
            if give_up > 0 {
                // Not before now: a message activated after its deadline
                // (it waited behind X active ones) gives up at once, in
                // time order (an event in the past would turn time back).
                let issued = self.msgs[unit.msg as usize].issue_ps;
                self.q.push((issued + give_up).max(at), Ev::GiveUp(unit.msg));
            }
        }
        if self.read_timeout > 0 && unit.spec.op != Op::Write {
            self.q
                .push(at + self.read_timeout, Ev::ReadTimeout(unit.msg));
        }
    }

    /// An /N/ or request reaches the switch: false if it was hit (dropped)
    /// or the switch already holds its message (a retry: ignored, so the
    /// demand is counted once).
    pub(in crate::edm) fn notification_accepted(&mut self, now: Ps, unit: Unit) -> bool {
        if !self.crosses(unit.spec.requester, now, unit.blocks, true) {
            return false;
        }
        let seen = &mut self.at_switch[unit.msg as usize];
        if *seen {
            self.totals.edm.faults.duplicate_notifications += 1;
            return false;
        }
        *seen = true;
        true
    }

    /// One link's errors on a unit: false if its receiver drops it.
    fn crosses(&mut self, host: u16, at: Ps, blocks: u32, control: bool) -> bool {
        let fate = self.faults.cross_link(host, at, blocks, control);
        self.count(fate, control)
    }

    /// Counts a unit's fate: false if it is lost.
    fn count(&mut self, fate: Fate, control: bool) -> bool {
        let counters = &mut self.totals.edm.faults;
        counters.links_disabled = self.faults.links_disabled;
        match fate {
            Fate::Intact => true,
            Fate::LinkDown => {
                counters.link_down_drops += 1;
                false
            }
            Fate::Dropped => {
                if control {
                    counters.control_corrupted += 1;
                } else {
                    counters.data_corrupted += 1;
                }
                false
            }
            Fate::Undetected => {
                counters.undetected += 1;
                true
            }
        }
    }

    /// A forwarded request (down to the memory node) or a data unit (up to
    /// the switch, down to its destination) arrives: false if a link's
    /// errors made its receiver drop it.
    /// `to` is the host it is going down to, `at` when.
    pub(in crate::edm) fn arrives_intact(&mut self, to: u16, at: Ps, unit: &Unit) -> bool {
        match unit.kind {
            UnitKind::Data => {
                // A unit hit on the uplink is dropped at its receiver as
                // well (the switch forwards cut-through): one draw per link;
                // the worse fate counts.
                let (src, _) = Edm::data_path(unit.spec);
                let up = self.faults.cross_link(src, at, unit.blocks, false);
                let down = self.faults.cross_link(to, at, unit.blocks, false);
                let worst = [Fate::LinkDown, Fate::Dropped, Fate::Undetected]
                    .into_iter()
                    .find(|f| up == *f || down == *f)
                    .unwrap_or(Fate::Intact);
                self.count(worst, false)
            }
            _ => self.crosses(to, at, unit.blocks, true),
        }
    }

    /// A /G/ reaches its source: None if dropped, else whether it is the
    /// first copy of its chunk's grant there.
    pub(in crate::edm) fn grant_arrives(&mut self, to: u16, at: Ps, unit: &Unit) -> Option<bool> {
        if !self.crosses(to, at, unit.blocks, true) {
            return None;
        }
        if unit.kind == UnitKind::Grant {
            // (A forwarded request reaches the memory node, not the requester.)
            self.heard[unit.msg as usize] = true;
        }
        let chunk = &mut self.chunks[unit.chunk as usize];
        let first = !chunk.grant_heard;
        chunk.grant_heard = true;
        if !first {
            self.totals.edm.faults.duplicate_grants += 1;
        }
        Some(first)
    }

    /// Whether a data unit arriving at its destination is taken: not for a
    /// message that ended (timed out), not a second copy of a chunk.
    pub(in crate::edm) fn take_data(&mut self, unit: &Unit) -> bool {
        let i = unit.msg as usize;
        if self.lossy {
            self.heard[i] = true;
        }
        if self.ended[i] {
            self.totals.edm.faults.late_data += 1;
            return false;
        }
        if self.lossy {
            let chunk = &mut self.chunks[unit.chunk as usize];
            if chunk.delivered {
                self.totals.edm.faults.duplicate_data += 1;
                return false;
            }
            chunk.delivered = true;
        }
        true
    }

    /// The chunk grant `g` grants, with its `last` flag: a new chunk, or the
    /// one its notification grants again (then `last` only if no copy of
    /// that chunk's last grant reached the source yet).
    pub(in crate::edm) fn grant_chunk(&mut self, g: &Grant) -> (u32, bool) {
        let again = self.queued_chunk[g.msg as usize];
        if again != NO_CHUNK {
            let c = self.chunks[again as usize];
            return (again, c.last && !c.grant_heard);
        }
        self.chunks.push(Chunk {
            delivered: false,
            grant_heard: false,
            last: g.last,
        });
        ((self.chunks.len() - 1) as u32, g.last)
    }

    /// The requester's retry timer: an /N/ or request not granted yet is
    /// sent again (the switch ignores it if it holds the message already).
    pub(in crate::edm) fn notify_check(&mut self, now: Ps, unit: Unit) -> bool {
        let i = unit.msg as usize;
        if self.ended[i] || self.heard[i] || self.mirror_done(i, now) {
            return false;
        }
        self.totals.edm.faults.notify_retries += 1;
        // Generated again, as a new one is (so the uplink's control blocks
        // stay in time order behind those of messages issued just before).
        let at = now + self.edm.c(self.edm.cfg.steps.gen_req);
        self.send_control(now, at, unit);
        let check = now + self.edm.cfg.faults.retry_timeout_ps();
        self.q.push(check, Ev::NotifyCheck(unit));
        true
    }

    /// The switch's timer on a grant: if no copy of its chunk arrived
    /// intact (the grant, the forwarded request or the data was hit), the
    /// circuit is given up and the chunk's demand queued again, same
    /// message, same chunk.
    pub(in crate::edm) fn chunk_check(&mut self, now: Ps, grant: Unit) -> bool {
        let i = grant.msg as usize;
        if self.chunks[grant.chunk as usize].delivered || self.ended[i] || self.mirror_done(i, now)
        {
            return false;
        }
        self.totals.edm.faults.chunk_retries += 1;
        let m: Msg = grant.spec;
        let id = self.enqueue_chunk(grant.msg, m, grant.chunk);
        let visible = now + self.edm.notification_delay(false);
        let (src, dst) = Edm::data_path(m);
        let first_extra = if m.op == Op::Write {
            0
        } else {
            self.edm.first_response_extra(m)
        };
        self.sched.notify(
            visible,
            src,
            dst,
            id,
            grant.bytes,
            Edm::data_kind(m),
            first_extra,
        );
        self.wake_on_notification(visible);
        true
    }

    /// A read's or RMW's timeout: unless answered, it finishes with a NULL
    /// response (later data for it is ignored).
    pub(in crate::edm) fn read_timeout(&mut self, now: Ps, i: u32) -> bool {
        self.end_unanswered(now, i, false)
    }

    /// A message not completed `give_up_ns` after its issue is reported
    /// failed and no longer retried.
    pub(in crate::edm) fn give_up(&mut self, now: Ps, i: u32) -> bool {
        self.end_unanswered(now, i, true)
    }

    fn end_unanswered(&mut self, now: Ps, i: u32, give_up: bool) -> bool {
        if self.ended[i as usize] {
            return false;
        }
        self.ended[i as usize] = true;
        if self.mirror_done(i as usize, now) {
            // Delivered by the other plane: its host is done with it.
        } else if give_up {
            self.records[i as usize].timed_out = true;
            self.totals.edm.faults.failed += 1;
        } else {
            self.records[i as usize].timed_out = true;
            self.totals.edm.faults.timed_out += 1;
        }
        let m = Msg::of(&self.msgs[i as usize]);
        self.release(now, i, m);
        if self.track_finish {
            self.finished(now, i);
        }
        true
    }

    /// Message `i` stops being active at its pair (once: a write's last
    /// grant may come twice, a timeout may follow it).
    pub(in crate::edm) fn release(&mut self, now: Ps, i: u32, m: Msg) {
        if let Some(released) = self.released.get_mut(i as usize) {
            if *released {
                return;
            }
            *released = true;
        }
        self.deactivate(now, m);
    }

    /// Dual switch, second plane: whether the first plane delivered
    /// message `i` by `at` (its receiver keeps that copy).
    pub(in crate::edm) fn mirror_done(&self, i: usize, at: Ps) -> bool {
        self.mirror
            .is_some_and(|done| done[i].is_some_and(|t| t <= at))
    }
}
