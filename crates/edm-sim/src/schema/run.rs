//! What a configuration builds: its protocol's model (or the ideal fabric),
//! its generated workload, closed-loop threads and region placement.
use super::*;

impl RunConfig {
    /// The protocol's model on this fabric, or the ideal fabric `ideal_fabric` names.
    pub fn model(&self) -> Box<dyn Protocol> {
        let latency = match self.ideal.mode.as_str() {
            "unloaded" => IdealLatency::Unloaded(self.fabric_model()),
            "fixed" => IdealLatency::Fixed {
                latency_ps: (self.ideal.latency_ns * 1000.0).round() as Ps,
                gbps: self.ideal.gbps,
            },
            _ => return self.fabric_model(),
        };
        Box::new(IdealFabric::new(latency))
    }

    /// The protocol's own model on this fabric.
    fn fabric_model(&self) -> Box<dyn Protocol> {
        if EDM_PROTOCOLS.contains(&self.protocol.as_str()) {
            return Box::new(Edm::new(self.fabric.clone(), self.edm.clone()));
        }
        baseline_with(&self.protocol, &self.fabric, &self.baselines).expect("a resolved protocol")
    }

    /// Whether the workload is made by the open-loop generator (a named one
    /// or a size-CDF file; else it names a trace).
    pub fn generated(&self) -> bool {
        WorkloadKind::of(&self.workload) != WorkloadKind::TraceFile
    }

    /// The open-loop generator of a generated workload; `cdf_text` is a
    /// size-CDF file's text, None for an application (its shipped CDF,
    /// [`crate::workload::app_cdf_text`]) and unused for `micro`.
    pub fn open_loop(&self, cdf_text: Option<&str>) -> Result<OpenLoop, String> {
        let cdf_text = cdf_text.or_else(|| crate::workload::app_cdf_text(&self.workload));
        let sizes = match (self.workload.as_str(), cdf_text) {
            ("micro", _) => SizeCdf::fixed(self.message_bytes),
            (name, Some(text)) => SizeCdf::from_text(text, CDF_UNIT_BYTES).map_err(|e| {
                if GENERATED_WORKLOADS.contains(&name) {
                    format!("CDF_{name}.txt: {e}")
                } else {
                    format!("{name}: {e}")
                }
            })?,
            (name, None) => return Err(format!("workload {name:?}: no size CDF given")),
        };
        let gen = OpenLoop {
            nodes: self.fabric.nodes,
            roles: match self.memory_nodes {
                0 => Roles::AllToAll,
                memory => Roles::Split { memory },
            },
            link_gbps: self.fabric.link_gbps,
            load: self.load,
            write_ratio: self.write_ratio,
            sizes,
            messages: self.messages,
            seed: self.seed,
        };
        RunConfig::validate_open_loop(&gen)?;
        Ok(gen)
    }

    /// Runs `messages` (issue times ignored) as this configuration's
    /// closed-loop threads on its model.
    pub fn run_closed_loop(
        &self,
        messages: &[MessageSpec],
        progress: &mut dyn FnMut(u64, u64),
    ) -> ClosedLoopRun {
        crate::engine::closed_loop::run(
            &mut *self.model(),
            messages,
            &self.closed_loop,
            self.seed,
            progress,
        )
    }

    /// The memory nodes of a generated workload.
    pub fn memory_node_ids(&self) -> Vec<u16> {
        let n = self.fabric.nodes as u16;
        match self.memory_nodes {
            0 => (0..n).collect(),
            m => (n - m as u16..n).collect(),
        }
    }

    /// Points a generated workload's messages at the regions the memory
    /// manager places (`placement`; uniform leaves them as they are).
    pub fn place(&self, msgs: &mut [MessageSpec]) -> crate::memory::placement::Layout {
        crate::memory::placement::place(msgs, &self.placement, &self.memory_node_ids(), self.seed)
    }

    /// With protection on, points a workload's messages into the compute
    /// nodes' mappings, some outside (`memory::protection::aim`).
    pub fn protect(&self, msgs: &mut [MessageSpec]) -> Result<(), String> {
        let p = &self.fabric.protection;
        if !p.enabled {
            return Ok(());
        }
        crate::memory::protection::aim(msgs, p, self.fabric.nodes)
    }

    /// The latency of `message` alone in the network under this protocol.
    pub fn alone_ps(&self, message: &MessageSpec) -> Ps {
        self.model().alone_ps(message)
    }
}
