//! The write outcome's bounded state (docs/protocol.md §4b, docs/faults.md
//! §4): the requesters' retry buffers and the memory nodes' duplicate
//! records, as the hardware keeps them.
//!
//! *Requester*, per (requester, memory node) pair: every message takes the
//! pair's next id when it is activated (its /N/ or request first leaves),
//! and stays unresolved until its write is acknowledged, its read or RMW
//! answered, or it is reported failed. A message is not activated while
//! the pair's oldest unresolved id is `unresolved_max` ids or more behind
//! the next one (the retry buffer is full), nor an RMW while
//! `rmw_results` RMWs of the pair date from the oldest unanswered one.
//!
//! *Memory node*, per source: the newest id seen, the seen state of the
//! `window` ids up to it (here the chunks' first-copy marks, `Sim::chunks`,
//! looked at only inside the window), and the results of the last
//! `rmw_results` RMWs applied. A copy `d` ids behind the newest is inside
//! the window (d < `window`), stale (refused, never applied: its message
//! was resolved) up to 2^8 − `unresolved_max`, and beyond that misread as a
//! new id (8-bit ids wrap), as the hardware would.
//!
//! Ids are counted without wrapping here; the distances are what the 8-bit
//! hardware compares. What the record cannot know (whether a refused copy
//! was its message's first, whether an RMW or chunk was applied before) is
//! checked against the truth and counted: targets 0.
use super::FaultCounters;
use std::collections::VecDeque;

/// 8-bit message ids (`NG_ID_W`): distances modulo this.
const ID_SPACE: u32 = 1 << edm_proto::spec::NG_ID_W;

/// No id yet (not activated).
const NO_ID: u32 = u32::MAX;

/// Where a copy's id falls in its source's window at the memory node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::edm) enum Place {
    /// Inside the window (or newer): the seen state decides.
    Inside,
    /// Behind the window: refused, never applied.
    Stale,
    /// So far behind that the 8-bit id reads as a new one.
    Misread,
}

/// What a memory node does with an RMW copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::edm) enum RmwVerdict {
    Apply,
    /// Answered with the kept result.
    Replay,
    /// Answered empty (DENIED), not applied: stale, or applied before with
    /// its result no longer kept.
    Refuse,
}

pub(in crate::edm) struct Outcomes {
    window: u32,
    unresolved_max: u32,
    rmw_results: usize,
    /// Per message: its id within its pair (`NO_ID` before activation),
    /// whether it is resolved, and (the truth, for the checks) whether an
    /// RMW was applied.
    id: Vec<u32>,
    resolved: Vec<bool>,
    rmw_applied: Vec<bool>,
    /// Requester side, per pair: the next id, the unresolved messages in
    /// id order (resolved ones leave from the front), the RMWs from the
    /// oldest unanswered one on.
    next_id: Vec<u32>,
    unresolved: Vec<VecDeque<u32>>,
    rmws: Vec<VecDeque<u32>>,
    /// Memory side, per pair: the newest id seen (+1; 0: none) and the ids
    /// of the RMW results kept.
    newest: Vec<u32>,
    kept: Vec<VecDeque<u32>>,
}

impl Outcomes {
    pub(in crate::edm) fn new(
        pairs: usize,
        messages: usize,
        window: u32,
        unresolved_max: u32,
        rmw_results: u32,
    ) -> Self {
        Outcomes {
            window,
            unresolved_max,
            rmw_results: rmw_results as usize,
            id: vec![NO_ID; messages],
            resolved: vec![false; messages],
            rmw_applied: vec![false; messages],
            next_id: vec![0; pairs],
            unresolved: vec![VecDeque::new(); pairs],
            rmws: vec![VecDeque::new(); pairs],
            newest: vec![0; pairs],
            kept: vec![VecDeque::new(); pairs],
        }
    }

    /// The pair's oldest unresolved message's id (the next id if none).
    fn oldest_unresolved(&mut self, pair: usize) -> u32 {
        let q = &mut self.unresolved[pair];
        while q.front().is_some_and(|&i| self.resolved[i as usize]) {
            q.pop_front();
        }
        q.front()
            .map_or(self.next_id[pair], |&i| self.id[i as usize])
    }

    /// Whether the pair's next message must wait: its retry buffer is full,
    /// or (an RMW) the record's RMW results would not cover the oldest
    /// unanswered RMW.
    pub(in crate::edm) fn must_wait(&mut self, pair: usize, rmw: bool) -> bool {
        if self.next_id[pair] - self.oldest_unresolved(pair) >= self.unresolved_max {
            return true;
        }
        if rmw {
            let q = &mut self.rmws[pair];
            while q.front().is_some_and(|&i| self.resolved[i as usize]) {
                q.pop_front();
            }
            return q.len() >= self.rmw_results;
        }
        false
    }

    /// Message `i` of `pair` is activated: it takes the pair's next id.
    pub(in crate::edm) fn activated(
        &mut self,
        i: u32,
        pair: usize,
        rmw: bool,
        counters: &mut FaultCounters,
    ) {
        if self.id[i as usize] != NO_ID {
            return;
        }
        self.id[i as usize] = self.next_id[pair];
        self.next_id[pair] += 1;
        self.unresolved[pair].push_back(i);
        if rmw {
            self.rmws[pair].push_back(i);
        }
        let span = (self.next_id[pair] - self.oldest_unresolved(pair)) as u64;
        counters.retry_buffer_max = counters.retry_buffer_max.max(span);
    }

    /// Message `i` is resolved at its requester: true the first time.
    pub(in crate::edm) fn resolve(&mut self, i: u32) -> bool {
        !std::mem::replace(&mut self.resolved[i as usize], true)
    }

    pub(in crate::edm) fn is_resolved(&self, i: u32) -> bool {
        self.resolved[i as usize]
    }

    /// A copy of message `i` (its write data or its request) reaches the
    /// memory node of `pair`: where it falls in the source's window, which
    /// moves on to it if it is newer.
    pub(in crate::edm) fn arrives(
        &mut self,
        i: u32,
        pair: usize,
        counters: &mut FaultCounters,
    ) -> Place {
        let id = self.id[i as usize];
        debug_assert_ne!(id, NO_ID, "a copy of a message never activated");
        if id + 1 > self.newest[pair] {
            self.newest[pair] = id + 1;
            return Place::Inside;
        }
        let behind = self.newest[pair] - 1 - id;
        if !self.resolved[i as usize] {
            counters.dup_span_max = counters.dup_span_max.max(behind as u64);
        }
        if behind < self.window {
            Place::Inside
        } else if behind < ID_SPACE - self.unresolved_max {
            counters.dup_stale_refused += 1;
            Place::Stale
        } else {
            Place::Misread
        }
    }

    /// An RMW copy (message `i` of `pair`) at its memory node, placed by
    /// [`Outcomes::arrives`]: applied, answered with its kept result, or
    /// refused. `replay` only asks (the DRAM model's trial booking).
    pub(in crate::edm) fn rmw_verdict(&self, i: u32, pair: usize, place: Place) -> RmwVerdict {
        let applied = self.rmw_applied[i as usize];
        match place {
            Place::Stale => RmwVerdict::Refuse,
            Place::Misread => RmwVerdict::Apply,
            Place::Inside if !applied => RmwVerdict::Apply,
            Place::Inside if self.kept[pair].contains(&self.id[i as usize]) => RmwVerdict::Replay,
            Place::Inside => RmwVerdict::Refuse,
        }
    }

    /// Records what [`Outcomes::rmw_verdict`] decided.
    pub(in crate::edm) fn rmw_done(
        &mut self,
        i: u32,
        pair: usize,
        verdict: RmwVerdict,
        counters: &mut FaultCounters,
    ) {
        let applied = self.rmw_applied[i as usize];
        match verdict {
            RmwVerdict::Refuse => {
                counters.rmw_refused += 1;
                if !applied {
                    counters.rmw_first_copy_refused += 1;
                } else if !self.resolved[i as usize] {
                    // Applied, its result gone, its requester still waiting.
                    counters.rmw_result_gone += 1;
                }
            }
            RmwVerdict::Replay => counters.rmw_replayed += 1,
            RmwVerdict::Apply => {
                if applied {
                    counters.rmw_applied_twice += 1;
                }
                self.rmw_applied[i as usize] = true;
                let kept = &mut self.kept[pair];
                kept.push_back(self.id[i as usize]);
                if kept.len() > self.rmw_results {
                    // The oldest id goes (ids arrive out of order).
                    let oldest = (0..kept.len()).min_by_key(|&k| kept[k]).expect("not empty");
                    kept.remove(oldest);
                }
                counters.rmw_results_kept_max =
                    counters.rmw_results_kept_max.max(kept.len() as u64);
            }
        }
    }
}
