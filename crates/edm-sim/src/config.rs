//! The fabric's configuration: the one switch, its links and PHYs, composed
//! with the memory nodes' models (DRAM, translation, protection), each
//! defined by its owner in `crate::memory`. EDM's own configuration is
//! `crate::edm::config`; the schema (`crate::schema`) validates both.
use crate::memory::dram::DramConfig;
use crate::memory::protection::ProtectionConfig;
use crate::memory::translate::Translate;
use crate::time::Ps;
use edm_proto::spec;

#[derive(Clone, Debug)]
pub struct FabricConfig {
    /// Hosts on the one switch.
    pub nodes: usize,
    /// 10, 25, 100 or 400.
    pub link_gbps: u32,
    /// Propagation per hop.
    pub prop_ps: Ps,
    /// Forward error correction, encode + decode per link traversal (0: none,
    /// the paper's Table 1; `spec::RS_FEC_100G_PS` for 802.3's RS-FEC at 100 Gb/s).
    pub fec_ps: Ps,
    /// PMA + PMD + transceiver, per traversal (twice per hop).
    pub phy_ps: Ps,
    /// PHY pipeline clock (Table 1's 2.56 ns).
    pub cycle_ps: Ps,
    /// Scheduler clock (default the PHY clock, as in the FPGA prototype; the
    /// paper's ASIC estimate is 3 GHz, 333 ps).
    pub scheduler_cycle_ps: Ps,
    /// The scheduler's request tree registered a level per cycle (its RTL's
    /// REGISTERED_TREE): an iteration of `spec::sw_pim_iter_cycles(nodes,
    /// true)` cycles instead of the paper's 3 (default false).
    pub scheduler_registered_tree: bool,
    /// DRAM access at the memory node (Table 1 excludes it; default 0).
    pub dram_ps: Ps,
    /// PCS cycles per link end (encoder and scrambler, or descrambler and
    /// decoder): the paper's 2 by default.
    pub pcs_pass_cycles: u32,
    /// The DRAM model at memory nodes (off by default: `dram_ps`, unlimited bandwidth).
    pub dram: DramConfig,
    /// Address translation at the memory node (Clio, issue 24); off by default.
    pub translate: Translate,
    /// Protection at the memory node (Clio): mappings per compute node; off by default.
    pub protection: ProtectionConfig,
}

impl Default for FabricConfig {
    fn default() -> Self {
        FabricConfig {
            nodes: 144,
            link_gbps: 100,
            prop_ps: spec::PROP_PS,
            fec_ps: 0,
            phy_ps: spec::PMA_PMD_XCVR_PS,
            cycle_ps: spec::CYCLE_PS,
            scheduler_cycle_ps: spec::CYCLE_PS,
            scheduler_registered_tree: false,
            dram_ps: 0,
            pcs_pass_cycles: spec::PCS_PASS_CYCLES,
            dram: Default::default(),
            translate: Translate::default(),
            protection: Default::default(),
        }
    }
}

impl FabricConfig {
    /// Time of one 66-bit block on a link.
    pub fn block_ps(&self) -> Ps {
        spec::block_ps(self.link_gbps).expect("validated link rate")
    }

    pub fn cycles(&self, n: u32) -> Ps {
        n as Ps * self.cycle_ps
    }

    /// The fixed latency of a memory access at a memory node: `dram_ps`, or
    /// with the DRAM model its idle one-line latency (what it adds beyond
    /// that is queueing, `crate::memory::MemoryPools`).
    pub fn memory_ps(&self) -> Ps {
        if self.dram.enabled() {
            self.dram.unloaded_ps()
        } else {
            self.dram_ps
        }
    }

    /// One link traversal's fixed delay for the first block: a PCS pass and a
    /// PHY at each end plus propagation (Table 1; serialization is added per block).
    pub fn hop_ps(&self) -> Ps {
        2 * self.cycles(self.pcs_pass_cycles) + self.link_ps()
    }

    /// One link below the PCS, first bit to first bit: a PHY at each end,
    /// propagation and FEC (every protocol's stack sits on this).
    pub fn link_ps(&self) -> Ps {
        2 * self.phy_ps + self.prop_ps + self.fec_ps
    }
}
