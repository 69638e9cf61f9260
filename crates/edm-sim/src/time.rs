//! The simulator's unit of time. A leaf: it imports nothing of the crate, so
//! every module may name it without an import circle (issue #39).

/// Picoseconds: the simulator's exact unit of time.
pub type Ps = u64;
