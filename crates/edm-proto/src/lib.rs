//! EDM wire protocol: constants ([`spec`]) and the reference codec, the
//! executable specification used as the golden model by the RTL tests and by
//! the simulator.
pub mod block;
pub mod control;
pub mod crc;
pub mod message;
pub mod mux;
pub mod overhead;
pub mod pcs;
pub mod spec;

pub use block::{Block, BlockClass};
pub use control::{Control, ControlKind};
pub use message::{Kind, Message};
