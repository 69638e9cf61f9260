//! EDM (§3): hosts notify, the switch's priority-PIM scheduler grants chunks,
//! granted data follows a virtual circuit. Latencies per step are Table 1's
//! cycle counts (`edm_proto::spec`), so one message alone costs exactly the
//! Table 1 budget plus the serialization of its blocks (see `alone_ps`).
//!
//! The rooms: `model.rs` (the model: configuration, timing, counters),
//! `sim.rs` (one run: state, event handling, links) and the parts it owns
//! (`ordering.rs` fences and memory order, `batching.rs` mega-messages,
//! `records.rs` records and the completion log, `memory_nodes.rs` DRAMs and
//! protection), `units.rs` (messages, units and events as they travel),
//! `hosts.rs` (when a message may go, what hosts do), `switch.rs` (notifications, the
//! scheduler's iterations, grants), `scheduler/` (the priority-PIM matcher
//! the RTL is checked against), `placement.rs` (zero-queue mode: timelines
//! and where circuits go), `plane.rs` (a switch plane: its links, switch and
//! scheduler; two with the dual switch), `link.rs` (a link with /N/ and /G/ insertion),
//! `config.rs` (EDM's configuration), `alone.rs` (a message's latency alone, in closed form), `faults.rs` and
//! `faults/` (bit errors, read timeouts, and the timers and retries that
//! recover).
mod alone;
mod batching;
pub mod config;
pub mod faults;
mod hosts;
pub mod link;
mod memory_nodes;
mod model;
mod ordering;
pub mod placement;
mod plane;
mod records;
pub mod scheduler;
mod sim;
mod switch;
mod units;

use crate::engine::{Feed, Outcome, Progress, Protocol, RecordSink, Totals};
use crate::time::Ps;
use crate::workload::MessageSpec;
use sim::Sim;
use std::sync::LazyLock;
use units::Msg;

pub use model::{Edm, EdmCounters, Transmission};
pub use units::UnitKind;

impl Totals {
    /// EDM's counters of this run (all 0 for another protocol's run).
    pub fn edm(&self) -> &EdmCounters {
        static NONE: LazyLock<EdmCounters> = LazyLock::new(EdmCounters::default);
        self.counters().unwrap_or(&NONE)
    }
}

impl Edm {
    /// [`Protocol::run`], also returning every unit each link sent, in the
    /// order they were decided (for checking the model's timing from outside).
    pub fn run_traced(&self, messages: &[MessageSpec]) -> (Outcome, Vec<Transmission>) {
        let mut sim = Sim::new(self, messages);
        sim.trace = Some(Vec::new());
        sim.run(Feed::Open(messages), &mut |_, _| {})
    }
}

impl Protocol for Edm {
    fn name(&self) -> &'static str {
        "edm"
    }

    /// The closed forms of `alone.rs`.
    fn alone_ps(&self, m: &MessageSpec) -> Ps {
        let m = Msg::of(m);
        if self.cfg.zero_queue {
            self.alone_zero_queue_ps(m)
        } else {
            self.alone_paper_ps(m)
        }
    }

    fn run(&mut self, feed: Feed, progress: Progress) -> Outcome {
        // The configuration schema refuses faults with a closed loop: a
        // message given up or timed out would stall its thread.
        assert!(
            matches!(feed, Feed::Open(_)) || !self.cfg.faults.dual_switch,
            "closed loops run without faults"
        );
        Sim::new(self, feed.messages()).run(feed, progress).0
    }

    fn run_streamed(
        &mut self,
        messages: &[MessageSpec],
        progress: Progress,
        sink: &mut RecordSink,
    ) -> Outcome {
        Sim::new(self, messages).run_streamed(progress, sink)
    }
}
