//! The memory nodes' /A/ senders (`outcome.rs` has the rules): per memory
//! node when its uplink may start its next /A/, per (requester, memory
//! node) pair the latest /A/: when it leaves, how many writes it carries
//! and whether it arrives.
//!
//! Invariants: a pair's /A/ carries at most `ACK_MAP_W` writes and only
//! writes ready by when it leaves; a node's /A/ start at least
//! `ACK_GAP_BLOCKS` blocks apart, a pair's at least `ACK_PAIR_GAP_BLOCKS`
//! after its previous one if that one carried two writes or more, not a full
//! map; the first /A/ of a pair (and of a node) after a quiet spell leaves
//! when its write is ready.
use crate::time::Ps;
use edm_proto::spec::ACK_MAP_W;

/// The memory nodes' /A/ senders.
pub(in crate::edm) struct Acks {
    /// Per memory node: when its uplink may start its next /A/.
    free: Vec<Ps>,
    /// Per (requester, memory node) pair: when its latest /A/ leaves (a
    /// write applied by then joins it), how many writes it carries, and
    /// whether it arrives (lossy links).
    leave: Vec<Ps>,
    members: Vec<u32>,
    arrives_ok: Vec<bool>,
}

/// Not yet a time: no /A/ of the pair so far.
const NEVER: Ps = Ps::MAX;

impl Acks {
    pub(in crate::edm) fn new(nodes: usize) -> Self {
        Acks {
            free: vec![0; nodes],
            leave: vec![NEVER; nodes * nodes],
            members: vec![0; nodes * nodes],
            arrives_ok: vec![false; nodes * nodes],
        }
    }

    /// A write of pair `pair` is acknowledged by memory node `node`, ready
    /// at `ready`: it joins the pair's /A/ not yet sent, or starts a new one
    /// (its node's uplink then busy `gap` after it, the pair `pair_gap`
    /// after it): Some(its start) if new.
    pub(in crate::edm) fn join(
        &mut self,
        pair: usize,
        node: u16,
        ready: Ps,
        (gap, pair_gap): (Ps, Ps),
    ) -> Option<Ps> {
        let previous = self.leave[pair];
        let joins = previous != NEVER && ready <= previous && self.members[pair] < ACK_MAP_W;
        let started = (!joins).then(|| {
            let node = node as usize;
            // A pair's /A/ waits for its pair's slot when the one before
            // carried two writes or more (the pair streams), not when it was
            // full (docs/protocol.md §4b): a pair writing faster than a map
            // per slot builds no backlog, a sparse one is not delayed.
            let held = previous != NEVER && (2..ACK_MAP_W).contains(&self.members[pair]);
            let pair_free = if held { previous + pair_gap } else { 0 };
            let leave = ready.max(self.free[node]).max(pair_free);
            self.free[node] = leave + gap;
            self.leave[pair] = leave;
            self.members[pair] = 0;
            leave
        });
        self.members[pair] += 1;
        started
    }

    /// Whether pair `pair`'s latest /A/ arrives (drawn when it starts).
    pub(in crate::edm) fn set_arrives(&mut self, pair: usize, ok: bool) {
        self.arrives_ok[pair] = ok;
    }

    /// Pair `pair`'s latest /A/: when it leaves, and whether it arrives.
    pub(in crate::edm) fn latest(&self, pair: usize) -> (Ps, bool) {
        (self.leave[pair], self.arrives_ok[pair])
    }
}
