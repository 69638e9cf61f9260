//! EDM rack-scale fabric simulator (see docs/simulator.md, "Layout"): one
//! deterministic event-driven engine (`engine`) that EDM (`edm`) and the
//! packet baselines (`packet`, `baselines`) plug into, and workloads.
pub mod background;
pub mod baselines;
pub mod config;
pub mod edm;
pub mod engine;
pub mod ideal_srpt;
pub mod memory;
pub mod packet;
pub mod rng;
pub mod schema;
pub mod time;
pub mod workload;

/// EDM's reference scheduler on its own (what `edm.sim.Scheduler` steps).
pub use edm::scheduler;
pub use edm_proto::spec;
