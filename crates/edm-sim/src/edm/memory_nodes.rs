//! The memory nodes as one run sees them: their DRAMs
//! (`FabricConfig::dram`; None: a fixed latency) and their protection
//! (`FabricConfig::protection`; None: off), with what each message has done
//! there.
//!
//! Invariants: a message's verdict is drawn once, the first time its request
//! or data reaches its node, and never changes; a denied message never
//! touches the DRAM; a write's chunks go to consecutive addresses from its
//! base (`offset` counts the bytes handed to the DRAM so far).
use super::model::Edm;
use super::units::Unit;
use crate::engine::Totals;
use crate::memory::protection::{Access, Protection};
use crate::memory::MemoryPools;
use crate::time::Ps;
use crate::workload::{MessageSpec, Op};

pub(super) struct MemoryNodes {
    dram: Option<MemoryPools>,
    /// Per message (DRAM on; else empty): the bytes of it handed to the DRAM.
    offset: Vec<u32>,
    protection: Option<Protection>,
    /// Per message (protection on; else empty): its node's verdict, once drawn.
    verdicts: Vec<Option<Access>>,
}

impl MemoryNodes {
    pub(super) fn new(edm: &Edm, messages: usize) -> Self {
        let f = &edm.fabric;
        let n = f.nodes;
        MemoryNodes {
            dram: MemoryPools::new(&f.dram, n, 8 * f.block_ps()),
            offset: vec![0; if f.dram.enabled() { messages } else { 0 }],
            protection: Protection::new(&f.protection, n),
            verdicts: vec![None; if f.protection.enabled { messages } else { 0 }],
        }
    }

    /// Whether the DRAMs are modelled (else a fixed latency).
    #[inline(always)]
    pub(super) fn has_dram(&self) -> bool {
        self.dram.is_some()
    }

    /// Message `i`'s verdict at its memory node (checked the first time its
    /// request or data gets there), or None with protection off.
    pub(super) fn access(&mut self, i: u32, msgs: &[MessageSpec]) -> Option<Access> {
        let protection = self.protection.as_mut()?;
        let verdict = &mut self.verdicts[i as usize];
        Some(*verdict.get_or_insert_with(|| protection.check(&msgs[i as usize])))
    }

    /// Whether message `i`'s memory node denied it.
    #[inline]
    pub(super) fn denied(&self, i: u32) -> bool {
        self.verdicts.get(i as usize) == Some(&Some(Access::Denied))
    }

    /// When forwarded request `request`'s response's first chunk leaves its
    /// memory node, its last block having arrived at `arrived` and its
    /// response leaving `fixed` later without a DRAM (with the DRAM model,
    /// once the response can stream from it; an RMW's write follows its
    /// read). With `trial`, the DRAM is left as it was.
    pub(super) fn response_at(
        &mut self,
        edm: &Edm,
        msgs: &[MessageSpec],
        request: &Unit,
        (arrived, fixed): (Ps, Ps),
        trial: bool,
    ) -> Ps {
        let verdict = self.access(request.msg, msgs);
        let Some(memory) = &mut self.dram else {
            return arrived + fixed;
        };
        let addr = match verdict {
            Some(Access::Denied) => return arrived + fixed,
            Some(Access::Served(phys)) => phys,
            None => msgs[request.msg as usize].addr,
        };
        let spec = &msgs[request.msg as usize];
        let (node, bytes) = (request.spec.memory, Edm::data_bytes(request.spec) as u64);
        // Translation (Clio) comes before the DRAM read, at the bound the switch plans for.
        let translated = edm.fabric.translate.bound_ps();
        let (arrived, fixed) = (arrived + translated, fixed - translated);
        let ready = if trial {
            memory.peek_read(node, arrived, addr, bytes)
        } else {
            let ready = memory.read(node, arrived, addr, bytes);
            if spec.op == Op::Rmw {
                memory.write(node, ready, addr, bytes);
            }
            ready
        };
        memory.response_at(arrived, fixed, ready)
    }

    /// A write's data unit reaches its memory node at `at` (posted: only
    /// the DRAM's queue sees it). (A denied write is dropped: never written.)
    pub(super) fn write(&mut self, at: Ps, unit: &Unit, msgs: &[MessageSpec]) {
        if self.dram.is_none() {
            // Only the verdict (if any) to draw: the address, a read of the
            // whole workload (a cache miss per write), is not needed.
            self.access(unit.msg, msgs);
            return;
        }
        let base = match self.access(unit.msg, msgs) {
            Some(Access::Denied) => return,
            Some(Access::Served(phys)) => phys,
            None => msgs[unit.msg as usize].addr,
        };
        if let Some(memory) = &mut self.dram {
            let i = unit.msg as usize;
            let addr = base + self.offset[i] as u64;
            self.offset[i] += unit.bytes;
            memory.write(unit.spec.memory, at, addr, unit.bytes as u64);
        }
    }

    /// The run's end: the DRAMs' and protection's statistics into `totals`.
    pub(super) fn report(&mut self, totals: &mut Totals) {
        if let Some(memory) = self.dram.take() {
            totals.memory = memory.stats;
        }
        if let Some(protection) = self.protection.take() {
            totals.protection = protection.stats;
        }
    }
}
