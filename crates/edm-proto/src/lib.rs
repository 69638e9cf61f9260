//! EDM wire protocol: constants ([`spec`]) and the reference codec, the
//! executable specification used as the golden model by the RTL tests and by
//! the simulator.
pub mod spec;
