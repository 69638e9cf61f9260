//! The rules that tie a configuration's fields together (each field's own
//! range is checked by `check.rs`).
use super::*;

impl RunConfig {
    /// The rules between fields.
    pub(super) fn check_together(&self) -> Result<(), ConfigError> {
        let refuse = |name: &str, why: String| {
            let f = field(name).expect("a field of the schema");
            Err(ConfigError::of(f, (f.get)(self), why))
        };
        let (e, b) = (&self.edm, &self.baselines);
        if self.memory_nodes >= self.fabric.nodes {
            return refuse("memory_nodes", "is not in 0..nodes-1".into());
        }
        if e.zero_queue && e.egress_feedback {
            return refuse(
                "egress_feedback",
                "has nothing to do with zero_queue = 1 (no circuit is late there); set one of them"
                    .into(),
            );
        }
        if e.zero_queue && e.background.enabled() && !e.background.preemption {
            return refuse(
                "zero_queue",
                "needs background_preemption = 1 when background_load > 0 (a frame on the wire would delay memory data)"
                    .into(),
            );
        }
        if (e.steps.grant_to_data as i64) + (e.steps.rreq_extra as i64) < 0 {
            return refuse(
                "rreq_extra_cycles",
                format!(
                    "makes a forwarded request's step negative (grant_to_data_cycles = {})",
                    e.steps.grant_to_data
                ),
            );
        }
        if e.faults.lossy() {
            // A retried chunk may overtake: the address rule keeps writes
            // to one address in order; a mega-message is one chunk of many.
            let name = if e.faults.ber > 0.0 {
                "ber"
            } else if e.faults.failures.is_empty() {
                "dual_switch"
            } else {
                "failures"
            };
            if e.memory_order != MemoryOrder::Address {
                let why = "needs memory_order = 'address' (retried chunks may overtake)";
                return refuse(name, why.into());
            }
            if e.batch_bytes > 0 {
                let why = "is modelled without batching (batch_bytes = 0)";
                return refuse(name, why.into());
            }
            let planes = if e.faults.dual_switch { 2 } else { 1 };
            for f in &e.faults.failures {
                if f.plane >= planes || f.host.is_some_and(|h| h as usize >= self.fabric.nodes) {
                    let event = format_failures(std::slice::from_ref(f));
                    return refuse(
                        "failures",
                        format!("names {event}, which this fabric has not"),
                    );
                }
            }
        }
        if self.closed_loop.enabled() {
            if e.faults.lossy() || e.faults.read_timeout_ns > 0 {
                let why = "is not modelled with faults (a message given up or timed out would stall its thread)";
                return refuse("closed_loop_threads", why.into());
            }
            if !self.generated() {
                let why = "needs a generated workload (a trace fixes its issue times)";
                return refuse("closed_loop_threads", why.into());
            }
        }
        if self.ideal.mode != "fixed" && (self.ideal.latency_ns > 0.0 || self.ideal.gbps > 0.0) {
            let why = "applies with ideal_fabric = 'fixed' only".to_string();
            let name = if self.ideal.latency_ns > 0.0 {
                "ideal_latency_ns"
            } else {
                "ideal_gbps"
            };
            return refuse(name, why);
        }
        if self.fabric.dram.enabled() && self.fabric.dram_ps != 0 {
            return refuse(
                "dram_ps",
                "must be 0 with dram_channels > 0 (the DRAM model gives the memory's latency)"
                    .into(),
            );
        }
        if self.fabric.dram.enabled() && e.faults.lossy() {
            return refuse(
                "dram_channels",
                "is not modelled with lossy links or the dual switch (ber, failures, dual_switch)"
                    .into(),
            );
        }
        if self.fabric.protection.enabled {
            // A denied chunk is not retried, a mega-message's members have
            // their own verdicts, a granted chunk never sent would stay in
            // the egress feedback, an ideal fabric has no memory node.
            let refused = [
                (
                    e.faults.lossy(),
                    "lossy links or the dual switch (ber, failures, dual_switch)",
                ),
                (e.batch_bytes > 0, "batching (batch_bytes > 0)"),
                (e.egress_feedback, "egress_feedback"),
                (self.ideal.mode != "off", "an ideal fabric (ideal_fabric)"),
                (
                    self.protocol == "ideal-srpt",
                    "protocol 'ideal-srpt' (no memory node)",
                ),
            ];
            if let Some((_, what)) = refused.iter().find(|(on, _)| *on) {
                return refuse("protection", format!("is not modelled with {what}"));
            }
        }
        if self.placement.policy != Policy::Uniform && !self.generated() {
            return refuse(
                "placement",
                "applies to generated workloads only (a trace names its memory nodes)".into(),
            );
        }
        if e.start_delay && !e.zero_queue {
            return refuse("start_delay", "applies with zero_queue = 1 only".into());
        }
        if e.background.enabled() && !EDM_PROTOCOLS.contains(&self.protocol.as_str()) {
            return refuse(
                "background_load",
                format!("is only modelled for EDM, not '{}'", self.protocol),
            );
        }
        if b.dcqcn_kmax_bytes != 0 && b.dcqcn_kmin_bytes > b.dcqcn_kmax_bytes {
            return refuse(
                "dcqcn_kmin_bytes",
                format!("exceeds dcqcn_kmax_bytes = {}", b.dcqcn_kmax_bytes),
            );
        }
        // A buffer or threshold must hold a few full frames (the bound
        // depends on the framing, so it is no range of the field's kind).
        let mtu = crate::baselines::mtu_wire_bytes();
        for (name, value, frames, count) in [
            ("pfc_xoff_bytes", b.pfc_xoff_bytes, 3, "three"),
            ("switch_buffer_bytes", b.switch_buffer_bytes, 2, "two"),
        ] {
            if value != 0 && value < frames * mtu {
                let f = field(name).expect("a field of the schema");
                let why = format!(
                    "{name}: {value} is below {count} MTU frames ({})",
                    frames * mtu
                );
                return Err(ConfigError::about(f.name, why));
            }
        }
        Ok(())
    }
}
