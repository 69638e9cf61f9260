//! Clio's protection at the memory node (docs/related.md "Clio"): compute
//! nodes own mappings (address-space regions on memory nodes, read-only or
//! writable) and a memory node serves only the accesses inside the
//! requester's mappings, by the rules of `rtl/host/edm_mem_translate.sv` and
//! its model `python/edm/related/clio_model.py`: an access is denied when its
//! page has no mapping in its space, when it writes (WREQ, RMWREQ) a
//! read-only page, or when its bytes cross a page boundary. Every protocol
//! calls [`Protection::check`] once per request as it reaches its memory
//! node; what a denial does (an empty response, a dropped write) is the
//! protocol's, as in the RTL (`edm_mem_node.sv`): a denied RREQ or RMWREQ is
//! answered with an empty RRES (STATUS_DENIED) and reads no DRAM; a denied
//! WREQ is never written and answered by nothing.
//!
//! The layout: every compute node has one address space on every other node
//! (its ASID its port + 1; ASID 0 is no one's), with `regions` regions of 1
//! to [`MAX_REGION_PAGES`] pages, one unmapped page between regions (and page
//! 0 unmapped), the first region writable, each other read-only with
//! probability `read_only`. Frames are handed out in order per memory node.
//! [`aim`] points a workload's messages into those mappings, a fraction
//! `outside` of them at an access the rules deny.
use crate::rng::Rng;
use crate::workload::{MessageSpec, Op};
use edm_proto::spec::ADDR_ASID_LSB;
use std::collections::HashMap;

/// Most pages of one region.
pub const MAX_REGION_PAGES: u64 = 8;
const VA_MASK: u64 = (1 << ADDR_ASID_LSB) - 1;

/// The protection fields of a run (`protection*` in the schema); off by default.
#[derive(Clone, Debug, PartialEq)]
pub struct ProtectionConfig {
    pub enabled: bool,
    /// Share of messages [`aim`] points at an access the rules deny.
    pub outside: f64,
    /// Regions each compute node maps on each memory node.
    pub regions: u32,
    /// log2 of the page size.
    pub page_bits: u32,
    /// Share of regions (after each space's first) mapped read-only.
    pub read_only: f64,
    pub seed: u64,
}

impl Default for ProtectionConfig {
    fn default() -> Self {
        ProtectionConfig {
            enabled: false,
            outside: 0.05,
            regions: 4,
            page_bits: 21,
            read_only: 0.25,
            seed: 0,
        }
    }
}

/// The address word of byte `vaddr` of space `asid` (docs/protocol.md §3.4).
pub fn space_address(asid: u16, vaddr: u64) -> u64 {
    (asid as u64) << ADDR_ASID_LSB | (vaddr & VA_MASK)
}

/// The address space compute node `node` has on every memory node.
pub fn asid_of(node: u16) -> u16 {
    node + 1
}

/// A mapped range of one address space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Region {
    pub vaddr: u64,
    pub pages: u64,
    pub writable: bool,
}

/// A page-table entry: (frame, writable).
type Pte = (u64, bool);

/// Every mapping of a run: per memory node, each space's regions (what the
/// compute side allocated) and the page table built from them (what the
/// memory node looks up, like the RTL's hash page table).
#[derive(Clone, Debug)]
pub struct Layout {
    pub page_bits: u32,
    nodes: usize,
    /// `regions[memory * nodes + requester]`.
    regions: Vec<Vec<Region>>,
    /// Per memory node: `(asid << 48 | vpn)` to its entry.
    tables: Vec<HashMap<u64, Pte>>,
}

impl Layout {
    /// The mappings of `nodes` nodes, drawn from `cfg.seed`.
    pub fn new(cfg: &ProtectionConfig, nodes: usize) -> Layout {
        let mut rng = Rng::fork(cfg.seed, 0xC110_0001);
        let mut layout = Layout {
            page_bits: cfg.page_bits,
            nodes,
            regions: vec![Vec::new(); nodes * nodes],
            tables: vec![HashMap::new(); nodes],
        };
        for memory in 0..nodes {
            let mut frame = 0;
            for requester in (0..nodes).filter(|&r| r != memory) {
                let asid = asid_of(requester as u16);
                let mut vpn = 1; // page 0 stays unmapped
                for k in 0..cfg.regions {
                    let pages = 1 + rng.below(MAX_REGION_PAGES);
                    let writable = k == 0 || rng.uniform() >= cfg.read_only;
                    for p in vpn..vpn + pages {
                        layout.tables[memory].insert(page_key(asid, p), (frame, writable));
                        frame += 1;
                    }
                    layout.regions[memory * nodes + requester].push(Region {
                        vaddr: vpn << cfg.page_bits,
                        pages,
                        writable,
                    });
                    vpn += pages + 1; // an unmapped page after each region
                }
            }
        }
        layout
    }

    pub fn page_bytes(&self) -> u64 {
        1 << self.page_bits
    }

    /// Every page-table entry, `(memory node, asid, vpn, frame, writable)`,
    /// sorted: what another model of the memory node installs to be checked
    /// against this one (tests/test_related_clio.py).
    pub fn entries(&self) -> Vec<(u16, u16, u64, u64, bool)> {
        let mut out: Vec<_> = (self.tables.iter().enumerate())
            .flat_map(|(memory, table)| {
                table.iter().map(move |(&key, &(frame, writable))| {
                    let asid = (key >> ADDR_ASID_LSB) as u16;
                    (memory as u16, asid, key & VA_MASK, frame, writable)
                })
            })
            .collect();
        out.sort_unstable();
        out
    }

    /// The regions `requester` has on `memory`.
    pub fn regions(&self, memory: u16, requester: u16) -> &[Region] {
        let (m, r) = (memory as usize, requester as usize);
        if m >= self.nodes || r >= self.nodes {
            return &[];
        }
        &self.regions[m * self.nodes + r]
    }

    /// The memory node's verdict (the RTL's order: the page boundary, the
    /// page table, the write permission): the physical address, or None.
    pub fn translate(&self, memory: u16, addr: u64, bytes: u64, write: bool) -> Option<u64> {
        let (asid, va) = ((addr >> ADDR_ASID_LSB) as u16, addr & VA_MASK);
        let offset = va & (self.page_bytes() - 1);
        if bytes > 0 && offset + bytes > self.page_bytes() {
            return None;
        }
        let &(frame, writable) = self
            .tables
            .get(memory as usize)?
            .get(&page_key(asid, va >> self.page_bits))?;
        (writable || !write).then_some(frame << self.page_bits | offset)
    }

    /// The same verdict from the regions themselves (the ground truth the
    /// counters check the page table against): inside one region of the
    /// space's owner that allows it, and inside one page.
    pub fn allowed(&self, memory: u16, addr: u64, bytes: u64, write: bool) -> bool {
        let (asid, va) = ((addr >> ADDR_ASID_LSB) as u16, addr & VA_MASK);
        let page = self.page_bytes();
        let one_page = bytes == 0 || va / page == (va + bytes - 1) / page;
        asid != 0
            && one_page
            && self.regions(memory, asid - 1).iter().any(|r| {
                r.vaddr <= va && va + bytes <= r.vaddr + r.pages * page && (r.writable || !write)
            })
    }
}

fn page_key(asid: u16, vpn: u64) -> u64 {
    (asid as u64) << ADDR_ASID_LSB | vpn
}

/// Whether a message changes memory (a WREQ or RMWREQ: denied on a read-only page).
pub fn writes(m: &MessageSpec) -> bool {
    m.op != Op::Read
}

/// What the protection counted in a run (all 0 with it off).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProtectionStats {
    /// Requests checked at their memory node.
    pub checked: u64,
    /// Denied reads and RMWs (answered empty, STATUS_DENIED) and writes (dropped).
    pub denied_reads: u64,
    pub denied_writes: u64,
    /// Served though the regions forbid it, denied though they allow it:
    /// the page table against the ground truth (0 by construction).
    pub served_outside: u64,
    pub denied_inside: u64,
}

/// A memory node's verdict on one request.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Access {
    /// Served at this physical address (what the DRAM sees).
    Served(u64),
    Denied,
}

impl Access {
    pub fn denied(self) -> bool {
        self == Access::Denied
    }
}

/// The memory nodes' protection in a run: the one hook every protocol calls.
#[derive(Clone, Debug)]
pub struct Protection {
    pub layout: Layout,
    pub stats: ProtectionStats,
}

impl Protection {
    /// The protection of `nodes` nodes, or None with it off.
    pub fn new(cfg: &ProtectionConfig, nodes: usize) -> Option<Protection> {
        cfg.enabled.then(|| Protection {
            layout: Layout::new(cfg, nodes),
            stats: ProtectionStats::default(),
        })
    }

    /// Request `m` reaches its memory node: served (where) or denied, counted.
    pub fn check(&mut self, m: &MessageSpec) -> Access {
        let (addr, end) = m.range();
        let write = writes(m);
        let phys = self.layout.translate(m.memory, addr, end - addr, write);
        let allowed = self.layout.allowed(m.memory, addr, end - addr, write);
        let s = &mut self.stats;
        s.checked += 1;
        s.served_outside += u64::from(phys.is_some() && !allowed);
        s.denied_inside += u64::from(phys.is_none() && allowed);
        match phys {
            Some(p) => Access::Served(p),
            None => {
                if m.op == Op::Write {
                    s.denied_writes += 1;
                } else {
                    s.denied_reads += 1;
                }
                Access::Denied
            }
        }
    }
}

/// Points every message at its requester's mappings on its memory node: a
/// page of a region that allows it, at an offset where it stays in the page
/// (8-byte aligned); with probability `cfg.outside` at an access the rules
/// deny instead: past a region's end (its unmapped page), into a space no one
/// has, a write into a read-only region, or across a page boundary inside a
/// region. Seeded by `cfg.seed` alone. Fails on a message larger than a page
/// (every access of it would cross one).
pub fn aim(msgs: &mut [MessageSpec], cfg: &ProtectionConfig, nodes: usize) -> Result<(), String> {
    let layout = Layout::new(cfg, nodes);
    let page = layout.page_bytes();
    let mut rng = Rng::fork(cfg.seed, 0xC110_0002);
    for (i, m) in msgs.iter_mut().enumerate() {
        let len = m.range().1 - m.range().0;
        if len > page {
            return Err(format!(
                "protection_page_bits: message {i} has {len} bytes, more than a page \
                 ({page} bytes): every access of it would cross a page and be denied"
            ));
        }
        let regions = layout.regions(m.memory, m.requester);
        let asid = asid_of(m.requester);
        if regions.is_empty() {
            // (A message to its own node: no space there; denied.)
            m.addr = space_address(asid, 0);
            continue;
        }
        let write = writes(m);
        let offset = |rng: &mut Rng| (rng.below(page - len + 1)) & !7;
        let outside = rng.uniform() < cfg.outside;
        m.addr = if !outside {
            let allowing: Vec<&Region> = regions.iter().filter(|r| r.writable || !write).collect();
            let r = allowing[rng.below(allowing.len() as u64) as usize];
            let p = rng.below(r.pages);
            space_address(asid, r.vaddr + p * page + offset(&mut rng))
        } else {
            let r = regions[rng.below(regions.len() as u64) as usize];
            let read_only = regions.iter().find(|r| !r.writable);
            match rng.below(4) {
                1 => space_address(0, r.vaddr + offset(&mut rng)),
                2 if write && read_only.is_some() => {
                    space_address(asid, read_only.unwrap().vaddr + offset(&mut rng))
                }
                3 if len >= 2 && r.pages >= 2 => space_address(asid, r.vaddr + page - len / 2),
                _ => space_address(asid, r.vaddr + r.pages * page + offset(&mut rng)),
            }
        };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(seed: u64) -> ProtectionConfig {
        ProtectionConfig {
            enabled: true,
            page_bits: 12,
            seed,
            ..Default::default()
        }
    }

    #[test]
    fn the_page_table_agrees_with_the_regions_on_random_addresses() {
        // Random spaces and addresses, most of them near a mapping's edges.
        for seed in 0..5 {
            let layout = Layout::new(&cfg(seed), 5);
            let mut rng = Rng::new(seed);
            let (mut served, mut denied) = (0, 0);
            for _ in 0..20_000 {
                let memory = rng.below(5) as u16;
                let asid = rng.below(7) as u16;
                let va = rng.below(60 << 12);
                let bytes = [0, 1, 8, 64, 4096, 5000][rng.below(6) as usize];
                let write = rng.below(2) == 1;
                let addr = space_address(asid, va);
                let phys = layout.translate(memory, addr, bytes, write);
                assert_eq!(phys.is_some(), layout.allowed(memory, addr, bytes, write));
                if let Some(p) = phys {
                    assert_eq!(p & 4095, va & 4095, "the offset in the page is kept");
                    served += 1;
                } else {
                    denied += 1;
                }
            }
            assert!(served > 1000 && denied > 1000, "{served} {denied}");
        }
    }

    #[test]
    fn each_rule_denies_what_the_rtl_denies() {
        let layout = Layout::new(&cfg(3), 3);
        let r = layout.regions(2, 0);
        let asid = asid_of(0);
        let writable = r[0];
        assert!(writable.writable);
        let at = |va| space_address(asid, va);
        assert!(layout.translate(2, at(writable.vaddr), 64, true).is_some());
        // Past the region's last page: its unmapped guard page.
        let end = writable.vaddr + writable.pages * 4096;
        assert_eq!(layout.translate(2, at(end), 8, false), None);
        assert_eq!(layout.translate(2, at(0), 8, false), None, "page 0");
        // Across a page boundary, even inside the region.
        assert_eq!(
            layout.translate(2, at(writable.vaddr + 4090), 8, false),
            None
        );
        // Another node's space on this memory node is another table entry,
        // and ASID 0 (or the memory node's own) is no one's.
        assert_eq!(
            layout.translate(2, space_address(0, writable.vaddr), 8, false),
            None
        );
        assert!(layout.regions(2, 2).is_empty());
        // A read-only region takes reads, not writes.
        let ro = Layout::new(
            &ProtectionConfig {
                read_only: 1.0,
                ..cfg(3)
            },
            3,
        );
        let r1 = ro.regions(2, 0)[1];
        assert!(!r1.writable);
        assert!(ro.translate(2, at(r1.vaddr), 8, false).is_some());
        assert_eq!(ro.translate(2, at(r1.vaddr), 8, true), None);
    }

    #[test]
    fn aim_puts_the_outside_share_outside_and_fails_on_a_message_over_a_page() {
        let nodes = 6;
        let mut rng = Rng::new(9);
        let mut msgs: Vec<MessageSpec> = (0..20_000)
            .map(|_| {
                let requester = rng.below(nodes) as u16;
                MessageSpec {
                    op: [Op::Read, Op::Write, Op::Rmw][rng.below(3) as usize],
                    requester,
                    memory: ((requester as u64 + 1 + rng.below(nodes - 1)) % nodes) as u16,
                    size: [8, 64, 1000, 4096][rng.below(4) as usize],
                    ..Default::default()
                }
            })
            .collect();
        let c = ProtectionConfig {
            outside: 0.3,
            ..cfg(5)
        };
        aim(&mut msgs, &c, nodes as usize).unwrap();
        let mut p = Protection::new(&c, nodes as usize).unwrap();
        let denied = msgs.iter().filter(|m| p.check(m).denied()).count() as f64;
        // Some outside aims cannot apply (a read aimed at a read-only
        // region's write rule falls back to the guard page): still denied.
        assert!((denied / msgs.len() as f64 - 0.3).abs() < 0.02, "{denied}");
        assert_eq!((p.stats.served_outside, p.stats.denied_inside), (0, 0));
        msgs[7].size = 4097;
        msgs[7].op = Op::Read;
        let e = aim(&mut msgs, &c, nodes as usize).unwrap_err();
        assert!(e.contains("message 7 has 4097 bytes"), "{e}");
    }
}
