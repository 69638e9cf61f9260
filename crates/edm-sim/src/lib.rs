//! EDM rack-scale fabric simulator (see docs/simulator.md): a deterministic
//! event-driven engine, EDM's scheduler and host/switch model, and workloads.
pub mod background;
pub mod baselines;
pub mod config;
pub mod edm;
pub mod engine;
pub mod packet;
pub mod rng;
pub use edm::scheduler;
pub mod workload;

pub use edm_proto::spec;
