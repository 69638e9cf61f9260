//! What a switch drops when it fails or sees a port go down (docs/faults.md
//! §4). A failed switch forgets everything it held: its scheduler's demand
//! and its own timers (a switch that comes back starts empty). A switch
//! that sees its port to a host down (its PHY, `link_detect_ns` after the
//! link went, as the host sees it) drops the demand to and from that port
//! and refuses new demand for it until it sees the port back: nothing is
//! granted into a dead port, and no backlog of it is granted when the port
//! comes back (second copies that old could pass the memory nodes' finite
//! duplicate record, `dedup.rs`). Either way the requesters get
//! their demand to the switch again by re-sending it, as after a lost /N/:
//! their timers look while a message is unfinished and re-send it when they
//! heard nothing of it on that plane for a whole retry period (`recovery.rs`).
use crate::edm::faults::Failure;
use crate::edm::model::Edm;
use crate::edm::sim::Sim;
use crate::edm::units::{Ev, Msg};
use crate::time::Ps;

impl Sim<'_> {
    /// Queues the failure events of the configuration: a switch failing, a
    /// switch seeing a port go down and come back.
    pub(in crate::edm) fn schedule_failures(&mut self) {
        let faults = &self.edm.cfg.faults;
        let detect = faults.link_detect_ps();
        let planes = if self.mirrored() { 2 } else { 1 };
        // (The configuration refuses the others, naming the field.)
        let exists = |f: &Failure| f.plane < planes && f.host.is_none_or(|h| (h as usize) < self.n);
        for f in faults
            .failures
            .iter()
            .filter(|f| f.ber.is_none() && exists(f))
        {
            let (down, up) = (f.down_ns * 1000, f.up_ns.map(|u| u * 1000));
            match f.host {
                None => self.q.push(down, Ev::SwitchFails(f.plane)),
                Some(h) => {
                    self.q.push(down + detect, Ev::PortSeen(f.plane, h, true));
                    if let Some(up) = up {
                        self.q.push(up + detect, Ev::PortSeen(f.plane, h, false));
                    }
                }
            }
        }
    }

    /// The current plane's switch fails: it drops all it holds.
    pub(in crate::edm) fn switch_fails(&mut self, now: Ps) -> bool {
        let dropped = self.plane.sched.drop_entries(|_, _| true);
        self.counters.faults.demand_dropped += dropped.len() as u64;
        let plane = &mut self.plane;
        plane.queued.clear();
        plane.queued_free.clear();
        plane.queued_chunk.clear();
        plane.at_switch.fill(false);
        plane.chunks_granted.fill(0);
        plane.switch_failed_at = Some(now);
        plane.iterations_since_wake = 0;
        false
    }

    /// The current plane's switch sees its port to host `h` go down (or
    /// come back): going down, it drops the demand to and from it.
    pub(in crate::edm) fn port_seen(&mut self, h: u16, down: bool) -> bool {
        let seen = &mut self.plane.port_seen_down[h as usize];
        if !down {
            *seen = seen.saturating_sub(1);
            return false;
        }
        *seen += 1;
        if *seen == 1 {
            let dropped = self.plane.sched.drop_entries(|s, d| s == h || d == h);
            self.counters.faults.demand_dropped += dropped.len() as u64;
            for id in dropped {
                let (i, _) = self.plane.queued[id as usize];
                self.plane.queued_free.push(id);
                self.forget(i);
            }
        }
        false
    }

    /// The BER monitor disabled host `h`'s link on the current plane at
    /// `at`: the switch sees the port down `link_detect_ns` later.
    pub(in crate::edm) fn link_disabled(&mut self, h: u16, at: Ps) {
        let seen = at + self.edm.cfg.faults.link_detect_ps();
        self.q.push(seen, Ev::PortSeen(self.plane.id, h, true));
    }

    /// Whether the current plane's switch refuses demand for message `m`:
    /// it sees a port of its data path down.
    pub(in crate::edm) fn refuses(&self, m: Msg) -> bool {
        let (src, dst) = Edm::data_path(m);
        let seen = &self.plane.port_seen_down;
        seen[src as usize] > 0 || seen[dst as usize] > 0
    }

    /// Whether the current plane's switch is down at `now` or failed after
    /// it set a timer at `set` (the timer went with it).
    pub(in crate::edm) fn timer_void(&self, now: Ps, set: Ps) -> bool {
        self.plane.switch_failed_at.is_some_and(|t| t >= set) || self.plane.faults.switch_down(now)
    }

    /// The current plane's switch no longer holds message `i`: a re-sent
    /// /N/ or request is taken as new, and its grants start again from its
    /// first chunk (the receiver keeps the first copy of each).
    pub(in crate::edm) fn forget(&mut self, i: u32) {
        self.plane.at_switch[i as usize] = false;
        if let Some(k) = self.plane.chunks_granted.get_mut(i as usize) {
            *k = 0;
        }
    }
}
