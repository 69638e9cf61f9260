//! Batching (`EdmConfig::batch_bytes`): a write about to take a
//! notification takes the writes waiting behind it in its pair's queue into
//! one mega-message with one /N/; its members complete as its data arrives.
//!
//! Invariants: a message is a member of at most one batch, and the first
//! member of a batch is the message that names it; members are in their
//! queue's order, each with the offset just past its bytes in the
//! mega-message's data (increasing, the last the mega-message's size);
//! members complete in order, never twice.
use super::model::Edm;
use super::units::Msg;
use crate::workload::Op;
use std::collections::VecDeque;

pub(super) struct Batching {
    /// The largest mega-message's bytes (0: batching off).
    limit: u32,
    /// Per message (empty when off): the batch it names (`NO_BATCH`: none).
    batch_of: Vec<u32>,
    batches: Vec<Batch>,
}

/// No batch (a message on its own).
const NO_BATCH: u32 = u32::MAX;

/// A mega-message: its members in order, each with the offset just past its
/// bytes in the mega-message's data, and how many have completed.
#[derive(Clone, Debug, Default)]
struct Batch {
    members: Vec<(u32, u32)>,
    completed: usize,
}

impl Batching {
    pub(super) fn new(limit: u32, messages: usize) -> Self {
        Batching {
            limit,
            batch_of: vec![NO_BATCH; if limit > 0 { messages } else { 0 }],
            batches: Vec::new(),
        }
    }

    /// Write `i` (`m`), about to take a notification, takes with it the
    /// writes waiting behind it in its pair's queue `pending`, in order,
    /// while the whole fits `limit`; returns what the mega-message's one /N/
    /// announces. Reads and RMWs go alone: each request carries its own
    /// address and already is the notification (a mega-request would be a
    /// unit longer than the zero-queue rules keep room for).
    pub(super) fn fold(&mut self, pending: &mut VecDeque<(u32, Msg)>, i: u32, m: Msg) -> Msg {
        let limit = self.limit;
        if limit == 0 || m.op != Op::Write {
            return m;
        }
        let overhead = Edm::batch_overhead_bytes(Edm::data_kind(m));
        let mut members = vec![(i, m.size)];
        let mut size = m.size;
        let mut k = 0;
        while k < pending.len() && size < limit {
            let (j, other) = pending[k];
            if other.op == m.op && size + overhead + other.size <= limit {
                size += overhead + other.size;
                members.push((j, size));
                pending.remove(k);
            } else {
                k += 1;
            }
        }
        if members.len() == 1 {
            return m;
        }
        self.batch_of[i as usize] = self.batches.len() as u32;
        let count = members.len() as u16;
        self.batches.push(Batch {
            members,
            completed: 0,
        });
        Msg { size, count, ..m }
    }

    /// The batch message `i` names, if it names one.
    #[inline]
    pub(super) fn batch_of(&self, i: u32) -> Option<usize> {
        self.batch_of
            .get(i as usize)
            .filter(|&&b| b != NO_BATCH)
            .map(|&b| b as usize)
    }

    /// Batch `b`'s members, in order, with their ends in its data.
    #[inline]
    pub(super) fn members(&self, b: usize) -> &[(u32, u32)] {
        &self.batches[b].members
    }

    /// Mega-message `i`'s data has arrived up to `done_to` bytes: the
    /// members that complete with it (not completed before), in order.
    pub(super) fn arrived(&mut self, i: u32, done_to: u32) -> &[(u32, u32)] {
        let b = &mut self.batches[self.batch_of[i as usize] as usize];
        let from = b.completed;
        while b.completed < b.members.len() && b.members[b.completed].1 <= done_to {
            b.completed += 1;
        }
        &b.members[from..b.completed]
    }
}
