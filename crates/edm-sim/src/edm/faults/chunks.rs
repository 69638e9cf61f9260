//! Lossy links: every chunk granted, with what the receiver, the source and
//! the switch have seen of it (`recovery.rs` has the rules). A retry shares
//! its first grant's chunk; with the dual switch, or a switch that may drop
//! demand (`Plane::chunks_named`), a message's k-th chunk is one chunk on
//! every plane and every demand (`by_message`).
//!
//! Invariants: ids are dense, in grant order, never reused; the receiver
//! keeps the first intact copy of a chunk's data (`kept_from`) and no other.
use crate::time::Ps;

pub(in crate::edm) struct Chunks {
    all: Vec<Chunk>,
    /// Per message (chunks named; else empty): its chunks' ids in message order.
    by_message: Vec<Vec<u32>>,
}

/// A granted chunk, with lossy links.
#[derive(Clone, Copy, Debug)]
pub(in crate::edm) struct Chunk {
    /// The plane whose copy of its data the receiver kept (`NOT_KEPT`: no
    /// copy arrived intact yet; later copies are discarded).
    pub(in crate::edm) kept_from: u8,
    /// Per plane, a copy of its grant reached the source.
    pub(in crate::edm) grant_heard: [bool; 2],
    /// It is its message's last grant (the write stops being active when it is heard).
    pub(in crate::edm) last: bool,
    /// `data_recovery = "protocol"`: per plane, when a copy of its data last
    /// reached the switch (the switch is done with the grants before);
    /// whether its host sent it.
    pub(in crate::edm) passed: [Ps; 2],
    pub(in crate::edm) sent: bool,
}

/// `Chunk::kept_from` of a chunk no copy of which arrived yet.
pub(in crate::edm) const NOT_KEPT: u8 = u8::MAX;

impl Chunk {
    pub(in crate::edm) fn delivered(&self) -> bool {
        self.kept_from != NOT_KEPT
    }
}

impl Chunks {
    /// `named`: a message's chunks are named by their place in it.
    pub(in crate::edm) fn new(named: bool, messages: usize) -> Self {
        Chunks {
            all: Vec::new(),
            by_message: vec![Vec::new(); if named { messages } else { 0 }],
        }
    }

    /// Whether a message's chunks are named by their place in it.
    #[inline]
    pub(in crate::edm) fn named(&self) -> bool {
        !self.by_message.is_empty()
    }

    /// How many of message `i`'s chunks have ids (chunks named).
    #[inline]
    pub(in crate::edm) fn named_count(&self, i: usize) -> usize {
        self.by_message[i].len()
    }

    /// The chunk a new grant of message `i` grants: its `k`th chunk's id
    /// if that chunk has one already (chunks named, `k` given), else a new
    /// chunk's (its message's last if `last`).
    pub(in crate::edm) fn granted(&mut self, i: usize, k: Option<usize>, last: bool) -> u32 {
        if let Some(k) = k {
            if let Some(&named) = self.by_message[i].get(k) {
                return named;
            }
            self.by_message[i].push(self.all.len() as u32);
        }
        self.all.push(Chunk {
            kept_from: NOT_KEPT,
            grant_heard: [false; 2],
            last,
            passed: [0; 2],
            sent: false,
        });
        (self.all.len() - 1) as u32
    }

    /// Chunk `id`, if granted.
    #[inline]
    pub(in crate::edm) fn get(&self, id: usize) -> Option<&Chunk> {
        self.all.get(id)
    }
}

impl std::ops::Index<usize> for Chunks {
    type Output = Chunk;
    #[inline]
    fn index(&self, id: usize) -> &Chunk {
        &self.all[id]
    }
}

impl std::ops::IndexMut<usize> for Chunks {
    #[inline]
    fn index_mut(&mut self, id: usize) -> &mut Chunk {
        &mut self.all[id]
    }
}
