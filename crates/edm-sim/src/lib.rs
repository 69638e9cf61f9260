//! EDM rack-scale fabric simulator (see docs/simulator.md).
pub use edm_proto::spec;
