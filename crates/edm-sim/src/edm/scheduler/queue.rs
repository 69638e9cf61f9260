//! The scheduler's notification queues as data: entries, per-destination
//! queues sorted by priority, per-pair FIFO lists (the scheduler's methods
//! in `mod.rs` notify and reveal; this file names no scheduler).
use crate::edm::config::Priority;
use crate::time::Ps;
use edm_proto::message::Kind;
use std::collections::VecDeque;

/// No entry (end of a pair's list, an empty pair).
pub(super) const NONE: u32 = u32::MAX;

/// A waiting message: 32 bytes, so that the entries an iteration touches
/// share cache lines (when it became visible is kept in its destination's
/// `unrevealed` queue, the only place that needs it).
#[derive(Clone, Debug)]
pub(super) struct Entry {
    pub(super) msg: u32,
    pub(super) src: u16,
    pub(super) dst: u16,
    pub(super) remaining: u32,
    /// Extra delay of the first chunk's data (a read's forwarded RREQ path).
    pub(super) first_extra_ps: u32,
    /// Arrival order (FCFS priority and tie-break).
    pub(super) order: u64,
    /// The next entry of the same source-destination pair (arrival order).
    pub(super) next: u32,
    pub(super) granted: bool,
    /// WREQ or RRES: the kind of the data units, for their wire time.
    pub(super) kind: Kind,
    /// Chunks granted so far (LAS priority; saturates).
    pub(super) attained_chunks: u16,
}

/// A priority key: the pair (major, minor) as one integer, `major << 64 |
/// minor`, so it orders exactly as the pair does (lexicographically) and
/// compares without branching.
pub(super) type Key = u128;

pub(super) fn key_of(major: u64, minor: u64) -> Key {
    (major as Key) << 64 | minor as Key
}

/// The major part of a key (SRPT: the remaining bytes).
pub(super) fn key_major(key: Key) -> u64 {
    (key >> 64) as u64
}

impl Entry {
    pub(super) fn key(&self, priority: Priority) -> Key {
        match priority {
            Priority::Srpt => key_of(self.remaining as u64, self.order),
            Priority::Fcfs => key_of(self.order, 0),
            Priority::Las => key_of(self.attained_chunks as u64, self.order),
        }
    }

    /// How far before the ports' release it may be granted (see `iterate`).
    pub(super) fn lead(&self) -> Ps {
        if self.granted {
            0
        } else {
            self.first_extra_ps as Ps
        }
    }
}

/// A destination's notification queue, organised so that an iteration finds
/// its best eligible entry without scanning it. The queue in arrival order is
/// `unrevealed` followed, per source, by that pair's list; only each pair's
/// oldest entry (its head, `Scheduler::pair_first`) can be granted. `heads`
/// holds every revealed entry sorted by priority key, and an iteration takes
/// the first that is its pair's head and eligible. (Keeping only the pairs'
/// heads there would insert the next entry of a pair, at a random place,
/// whenever its head ends; this way, with FCFS or equal sizes, entries only
/// join at the back and leave near the front.)
#[derive(Clone, Debug, Default)]
pub(super) struct Queue {
    /// Arrived but not yet revealed, in arrival order, with when each becomes
    /// visible. An entry is revealed
    /// once every entry that arrived before it at this destination is visible:
    /// the original model scanned the queue up to its first invisible entry.
    pub(super) unrevealed: VecDeque<(u32, Ps)>,
    /// Every revealed entry, by key (keys are unique: they contain the
    /// arrival order). A deque: entries leave mostly near the front (the best
    /// eligible) and arrive mostly near the back (new, later entries), and
    /// its insert and remove shift the shorter side.
    pub(super) heads: VecDeque<Head>,
    pub(super) len: usize,
}

/// A revealed entry, as its destination's queue keeps it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Head {
    pub(super) key: Key,
    pub(super) src: u16,
    pub(super) entry: u32,
    /// The entry's [`Entry::lead`].
    pub(super) lead: Ps,
}

impl Head {
    /// No entry (an empty queue's `Front`).
    pub(super) const NONE: Head = Head {
        key: 0,
        src: 0,
        entry: NONE,
        lead: 0,
    };
}

/// A destination's first revealed entry (`heads[0]`, or `Head::NONE`) and
/// how many it has revealed: a copy kept in a dense array, so that an
/// iteration reads one line per destination.
#[derive(Clone, Copy, Debug)]
pub(super) struct Front {
    pub(super) head: Head,
    pub(super) len: u32,
}

impl Default for Front {
    fn default() -> Self {
        Front {
            head: Head::NONE,
            len: 0,
        }
    }
}
