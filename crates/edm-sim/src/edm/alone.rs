//! The latency of one EDM message alone in the network, in closed form:
//! the denominator of every slowdown, and a check on the simulation (a
//! message alone must take exactly this long; tests/edm.rs).
use super::model::Edm;
use super::placement::place_circuit;
use super::units::Msg;
use crate::time::Ps;
use crate::workload::Op;
use edm_proto::message::message_blocks;

impl Edm {
    /// [`crate::engine::Protocol::alone_ps`] under the paper's rules: the same steps the
    /// simulation takes, with no other traffic: the request or
    /// notification reaches the switch, waits the insert latency, one PIM
    /// iteration grants, and each chunk follows; later chunks are granted one
    /// iteration after the ports' release (`wire - iteration` after a grant).
    pub(super) fn alone_paper_ps(&self, m: Msg) -> Ps {
        let f = &self.fabric;
        let block = f.block_ps();
        let hop = f.hop_ps();
        let iteration = self.iteration_ps();
        let kind = Self::data_kind(m);
        let mut remaining = Self::data_bytes(m);
        let visible =
            self.c(self.cfg.steps.gen_req) + hop + self.notification_delay(m.op != Op::Write);
        let mut grant = visible + iteration;
        let mut first = true;
        let (mut uplink_free, mut downlink_free) = (0, 0);
        loop {
            let bytes = remaining.min(self.cfg.chunk_bytes);
            remaining -= bytes;
            let blocks = message_blocks(kind, bytes as u16) as Ps;
            let to_source = grant + self.c(self.cfg.steps.sw_gen_grant) + hop;
            let at_source = if first && m.op != Op::Write {
                to_source + (Self::request_blocks(m) as Ps - 1) * block + self.grant_to_data(true)
            } else {
                to_source + self.grant_to_data(false)
            };
            let send = at_source.max(uplink_free);
            uplink_free = send + blocks * block;
            let egress = (send + hop + self.c(self.cfg.steps.sw_forward)).max(downlink_free);
            downlink_free = egress + blocks * block;
            let last_block = egress + hop + (blocks - 1) * block;
            if remaining == 0 {
                return last_block + self.proc_data(m);
            }
            let extra = if first && m.op != Op::Write {
                self.first_response_extra(m)
            } else {
                0
            };
            let release = (grant + extra + blocks * block).saturating_sub(iteration);
            // The next iteration starts at the release, once the scheduler
            // may use the ports again: a whole iteration after this one's
            // start (pipelined, they are masked while it is in flight).
            grant = release.max(grant) + iteration;
            first = false;
        }
    }

    /// [`crate::engine::Protocol::alone_ps`] under the zero-queue rules: the same steps, with
    /// each chunk's circuit placed as the engine places it (`place_circuit`,
    /// the guards), and the next chunk granted at the first iteration its
    /// ports are eligible (`circuit_lag` before their release).
    pub(super) fn alone_zero_queue_ps(&self, m: Msg) -> Ps {
        let f = &self.fabric;
        let block = f.block_ps();
        let hop = f.hop_ps();
        let iteration = self.iteration_ps();
        let early = self.early_grant_ps();
        let kind = Self::data_kind(m);
        let mut remaining = Self::data_bytes(m);
        let visible =
            self.c(self.cfg.steps.gen_req) + hop + self.notification_delay(m.op != Op::Write);
        // The iteration deciding the next chunk starts at `decided`.
        let mut decided = visible;
        let mut first = true;
        // The message alone: its grants go on one egress, its data on an
        // uplink and another egress.
        let src_egress = self.egress_timeline();
        let mut uplink = self.uplink_timeline();
        let mut egress = self.egress_timeline();
        let mut pair_end = 0;
        loop {
            let bytes = remaining.min(self.cfg.chunk_bytes);
            remaining -= bytes;
            let wire = message_blocks(kind, bytes as u16) as Ps * block;
            let forwarded = first && m.op != Op::Write;
            let control_blocks = if forwarded {
                Self::request_blocks(m)
            } else {
                1
            };
            let (to_data, to_egress) = self.circuit_delays(control_blocks, forwarded);
            let generated = decided + iteration + self.c(self.cfg.steps.sw_gen_grant);
            // (What ended before this grant cannot matter: keeps long messages linear.)
            uplink.prune(decided);
            egress.prune(decided);
            let (_, up, at_egress) = place_circuit(
                &src_egress,
                &uplink,
                &egress,
                generated,
                pair_end,
                control_blocks as Ps * block,
                wire,
                to_data,
                to_egress,
                self.start_delay(),
            );
            uplink.book_data(up, wire);
            egress.book_data(at_egress, wire);
            pair_end = up + wire;
            if remaining == 0 {
                return at_egress + hop + wire - block + self.proc_data(m);
            }
            let extra = if forwarded {
                self.first_response_extra(m)
            } else {
                0
            };
            let release = self.zero_queue_release(at_egress + wire, decided + extra + wire);
            // The engine looks again when the ports may be used early, or, if
            // that has passed, at their release; never during an iteration.
            let look = if release.saturating_sub(early) > decided {
                release - early
            } else {
                release
            };
            decided = look.max(decided + iteration);
            first = false;
        }
    }
}
