//! Per message, where faults and recovery stand: whether it ended
//! (completed, or timed out or given up), whether it stopped being active
//! at its pair, and with `data_recovery = "protocol"` a write's bytes its
//! host has sent (first copies), when its data was first all in memory and
//! when its host last sent data of it (`recovery.rs` and `outcome.rs` have
//! the rules).
//!
//! Invariants: each vector is kept only when a rule reads it (empty
//! otherwise); a message ends once and is released once; `applied_at` is
//! set once, when the write's data is first all in memory; `sent_bytes`
//! counts each chunk's first copy only, so it never exceeds the write's
//! bytes.
use crate::edm::faults::FaultConfig;
use crate::time::Ps;

pub(in crate::edm) struct MessageRecovery {
    /// Lossy links or a read timeout: per message, it ended.
    ended: Vec<bool>,
    /// Lossy links: per message, it stopped being active at its pair.
    released: Vec<bool>,
    /// The protocol's recovery: per write, bytes sent (first copies), when
    /// first all in memory (`Ps::MAX`: not yet), when data of it was last sent.
    sent_bytes: Vec<u32>,
    applied_at: Vec<Ps>,
    last_data: Vec<Ps>,
}

impl MessageRecovery {
    pub(in crate::edm) fn new(faults: &FaultConfig, messages: usize) -> Self {
        let kept = |on: bool| if on { messages } else { 0 };
        let protocol = faults.protocol_recovery();
        MessageRecovery {
            ended: vec![false; kept(faults.lossy() || faults.read_timeout_ns > 0)],
            released: vec![false; kept(faults.lossy())],
            sent_bytes: vec![0; kept(protocol)],
            applied_at: vec![Ps::MAX; kept(protocol)],
            last_data: vec![0; kept(protocol)],
        }
    }

    /// Whether messages' ends are followed (lossy links or a read timeout).
    #[inline(always)]
    pub(in crate::edm) fn tracks_ends(&self) -> bool {
        !self.ended.is_empty()
    }

    /// Whether message `i` ended (ends followed).
    #[inline]
    pub(in crate::edm) fn ended(&self, i: usize) -> bool {
        self.ended[i]
    }

    /// Message `i` completed (a no-op when ends are not followed).
    #[inline]
    pub(in crate::edm) fn completed(&mut self, i: usize) {
        if let Some(ended) = self.ended.get_mut(i) {
            *ended = true;
        }
    }

    /// Message `i` ends unanswered: false if it had ended already.
    pub(in crate::edm) fn end(&mut self, i: usize) -> bool {
        !std::mem::replace(&mut self.ended[i], true)
    }

    /// Message `i` stops being active at its pair: false if it had already
    /// (a write's last grant may come twice, a timeout may follow it).
    #[inline]
    pub(in crate::edm) fn release(&mut self, i: usize) -> bool {
        match self.released.get_mut(i) {
            Some(released) => !std::mem::replace(released, true),
            None => true,
        }
    }

    /// When write `i`'s data was first all in memory (`Ps::MAX`: not yet,
    /// or not followed).
    #[inline]
    pub(in crate::edm) fn applied_at(&self, i: usize) -> Ps {
        self.applied_at.get(i).copied().unwrap_or(Ps::MAX)
    }

    /// Write `i`'s data is all in memory at `at` for the first time.
    pub(in crate::edm) fn applied(&mut self, i: usize, at: Ps) {
        self.applied_at[i] = at;
    }

    /// When data of write `i` was last sent (or sent again).
    #[inline]
    pub(in crate::edm) fn last_data(&self, i: usize) -> Ps {
        self.last_data[i]
    }

    /// Write `i` is sent again at `now` (its retry timer restarts).
    pub(in crate::edm) fn resent(&mut self, i: usize, now: Ps) {
        self.last_data[i] = now;
    }

    /// Data of write `i` leaves its host, its last block at `end`; `first`:
    /// the chunk's first copy, of `bytes`.
    pub(in crate::edm) fn data_sent(&mut self, i: usize, end: Ps, first: bool, bytes: u32) {
        self.last_data[i] = self.last_data[i].max(end);
        if first {
            self.sent_bytes[i] += bytes;
        }
    }

    /// Bytes of write `i` its host has sent (first copies).
    #[inline]
    pub(in crate::edm) fn sent_bytes(&self, i: usize) -> u32 {
        self.sent_bytes[i]
    }
}
