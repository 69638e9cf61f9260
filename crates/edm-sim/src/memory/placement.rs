//! The rack memory manager (Puri et al. §IV): each compute node's memory is
//! regions (allocation chunks) that the manager places on memory nodes,
//! each when the node first touches it. A message goes to a region of its
//! requester, drawn by a skewed popularity (a few hot regions per node), so
//! where the hot regions land decides how evenly the memory nodes' DRAMs
//! are loaded. Policies: random, round-robin, and Puri's smart-idle.
use crate::memory::dram::lines;
use crate::rng::Rng;
use crate::time::Ps;
use crate::workload::MessageSpec;

/// How the manager picks a memory node for a new region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// No manager: every message goes to its own uniformly drawn memory
    /// node and address (the open-loop generator's; the default).
    Uniform,
    /// A memory node drawn uniformly (seeded).
    Random,
    /// The memory nodes in turn, rack-wide.
    RoundRobin,
    /// Puri's smart-idle: of the ceil(log2 n) memory nodes with the lowest
    /// access factor (this window's accesses plus a third of the previous
    /// three windows', a window lasting from one allocation to the next),
    /// the one with the fewest bytes allocated.
    SmartIdle,
}

pub const POLICIES: &[&str] = &["uniform", "random", "round-robin", "smart-idle"];

impl Policy {
    pub fn from_name(name: &str) -> Option<Policy> {
        match name {
            "uniform" => Some(Policy::Uniform),
            "random" => Some(Policy::Random),
            "round-robin" => Some(Policy::RoundRobin),
            "smart-idle" => Some(Policy::SmartIdle),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        POLICIES[self as usize]
    }
}

/// The manager's configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct PlacementConfig {
    pub policy: Policy,
    /// Regions each compute node touches.
    pub regions_per_node: u32,
    /// Bytes of one region (Puri: 4 MB allocations).
    pub region_bytes: u64,
    /// Zipf exponent of a node's region popularity (0: all alike).
    pub skew: f64,
}

impl Default for PlacementConfig {
    fn default() -> Self {
        PlacementConfig {
            policy: Policy::Uniform,
            regions_per_node: 8,
            region_bytes: 4 << 20,
            skew: 1.0,
        }
    }
}

/// Where the regions went and what they carried.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layout {
    /// Per node: regions placed on it, and 64-byte lines the messages to it touch.
    pub regions: Vec<u32>,
    pub lines: Vec<u64>,
    /// Per node: bytes the messages to it carry.
    pub bytes: Vec<u64>,
    /// When each region was allocated (issue time of its first message), in order.
    pub allocations: Vec<Ps>,
}

/// Windows of access counts a node's access factor looks back over.
const WINDOWS: usize = 4;

struct Manager {
    policy: Policy,
    memory: Vec<u16>,
    rng: Rng,
    next: usize,
    allocated: Vec<u64>,
    /// Per memory node (index into `memory`): this window's lines, then the
    /// previous windows', newest first.
    windows: Vec<[u64; WINDOWS]>,
}

impl Manager {
    /// The memory node for a new region of `requester` (never itself).
    fn pick(&mut self, requester: u16) -> usize {
        let n = self.memory.len();
        let allowed = |i: usize| self.memory[i] != requester;
        let choice = match self.policy {
            Policy::Uniform => unreachable!("no regions without a manager"),
            Policy::Random => loop {
                let i = self.rng.below(n as u64) as usize;
                if allowed(i) {
                    break i;
                }
            },
            Policy::RoundRobin => loop {
                let i = self.next % n;
                self.next += 1;
                if allowed(i) {
                    break i;
                }
            },
            Policy::SmartIdle => {
                // Access factors scaled by 3 to stay in integers.
                let factor = |w: &[u64; WINDOWS]| 3 * w[0] + w[1..].iter().sum::<u64>();
                let mut idle: Vec<usize> = (0..n).filter(|&i| allowed(i)).collect();
                idle.sort_by_key(|&i| (factor(&self.windows[i]), i));
                let set = (usize::BITS - (n.max(2) - 1).leading_zeros()) as usize;
                idle.truncate(set.max(1));
                *idle
                    .iter()
                    .min_by_key(|&&i| (self.allocated[i], factor(&self.windows[i]), i))
                    .expect("another memory node")
            }
        };
        // A new window starts at every allocation.
        for w in &mut self.windows {
            w.rotate_right(1);
            w[0] = 0;
        }
        choice
    }
}

/// Places the regions of every requester of `msgs` (in issue order) on the
/// nodes `memory` by `cfg.policy`, and points each message at its region:
/// its memory node and an address in the region, 64-byte aligned, drawn
/// from its own stream of `seed`. Returns the layout. With
/// `Policy::Uniform` the messages are left as they are.
pub fn place(msgs: &mut [MessageSpec], cfg: &PlacementConfig, memory: &[u16], seed: u64) -> Layout {
    let nodes = msgs
        .iter()
        .map(|m| m.requester.max(m.memory) as usize + 1)
        .chain(memory.iter().map(|&m| m as usize + 1))
        .max()
        .unwrap_or(0);
    let mut layout = Layout {
        regions: vec![0; nodes],
        lines: vec![0; nodes],
        bytes: vec![0; nodes],
        allocations: Vec::new(),
    };
    if cfg.policy == Policy::Uniform {
        for m in msgs.iter() {
            layout.lines[m.memory as usize] += lines(m.addr, m.range().1 - m.addr).count() as u64;
            layout.bytes[m.memory as usize] += m.size as u64;
        }
        return layout;
    }
    let r = cfg.regions_per_node as usize;
    let mut cumulative = Vec::with_capacity(r);
    let mut total = 0.0;
    for k in 0..r {
        total += 1.0 / ((k + 1) as f64).powf(cfg.skew);
        cumulative.push(total);
    }
    let mut draw = Rng::fork(seed, 0x9E61_0000);
    let mut manager = Manager {
        policy: cfg.policy,
        memory: memory.to_vec(),
        rng: Rng::fork(seed, 0x9E61_0001),
        next: 0,
        allocated: vec![0; memory.len()],
        windows: vec![[0; WINDOWS]; memory.len()],
    };
    // (memory index, base address) of each requester's regions.
    let mut regions: Vec<Option<(usize, u64)>> = vec![None; nodes * r];
    for m in msgs.iter_mut() {
        let u = draw.uniform() * total;
        let k = cumulative.partition_point(|&c| c <= u).min(r - 1);
        let slot = m.requester as usize * r + k;
        let (i, base) = *regions[slot].get_or_insert_with(|| {
            let i = manager.pick(m.requester);
            let base = manager.allocated[i];
            manager.allocated[i] += cfg.region_bytes;
            layout.regions[memory[i] as usize] += 1;
            layout.allocations.push(m.issue_ps);
            (i, base)
        });
        let len = m.range().1 - m.addr;
        let slots = cfg.region_bytes.saturating_sub(len) / 64 + 1;
        m.memory = memory[i];
        m.addr = base + draw.below(slots) * 64;
        let touched = lines(m.addr, len).count() as u64;
        manager.windows[i][0] += touched;
        layout.lines[m.memory as usize] += touched;
        layout.bytes[m.memory as usize] += m.size as u64;
    }
    layout
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{OpenLoop, Roles, SizeCdf};

    fn workload(seed: u64) -> (Vec<MessageSpec>, Vec<u16>) {
        let gen = OpenLoop {
            nodes: 24,
            roles: Roles::Split { memory: 6 },
            link_gbps: 100,
            load: 0.3,
            write_ratio: 0.5,
            sizes: SizeCdf::fixed(64),
            messages: 20_000,
            seed,
        };
        (gen.generate(), (18..24).collect())
    }

    fn layout(policy: Policy, seed: u64) -> Layout {
        let (mut msgs, memory) = workload(seed);
        let cfg = PlacementConfig {
            policy,
            regions_per_node: 16,
            skew: 1.2,
            ..Default::default()
        };
        place(&mut msgs, &cfg, &memory, seed)
    }

    /// Lines of the busiest memory node over the mean.
    fn peak(l: &Layout) -> f64 {
        let used = &l.lines[18..];
        *used.iter().max().unwrap() as f64 / (used.iter().sum::<u64>() as f64 / used.len() as f64)
    }

    #[test]
    fn round_robin_balances_regions_and_bytes_are_conserved() {
        let (msgs, _) = workload(3);
        let l = layout(Policy::RoundRobin, 3);
        let placed = &l.regions[18..];
        assert_eq!(placed.iter().sum::<u32>(), 18 * 16, "every region once");
        assert!(
            placed.iter().max().unwrap() - placed.iter().min().unwrap() <= 1,
            "{placed:?}"
        );
        assert!(l.regions[..18].iter().all(|&r| r == 0));
        let bytes: u64 = msgs.iter().map(|m| m.size as u64).sum();
        for policy in [
            Policy::Uniform,
            Policy::Random,
            Policy::RoundRobin,
            Policy::SmartIdle,
        ] {
            assert_eq!(
                layout(policy, 3).bytes.iter().sum::<u64>(),
                bytes,
                "{policy:?}"
            );
        }
    }

    #[test]
    fn placement_is_deterministic_and_addresses_stay_in_their_region() {
        for policy in [Policy::Random, Policy::SmartIdle] {
            let (mut a, memory) = workload(5);
            let (mut b, _) = workload(5);
            let cfg = PlacementConfig {
                policy,
                ..Default::default()
            };
            assert_eq!(
                place(&mut a, &cfg, &memory, 5),
                place(&mut b, &cfg, &memory, 5)
            );
            assert_eq!(a, b);
            let allocated = 18 * 8 * cfg.region_bytes;
            assert!(a
                .iter()
                .all(|m| memory.contains(&m.memory) && m.addr % 64 == 0));
            assert!(a.iter().all(|m| m.addr + m.size as u64 <= allocated));
        }
    }

    /// The skewed load stated: 18 compute nodes, 6 memory nodes, 16 regions
    /// per node of Zipf(1.2) popularity, 64 B messages, seeds 1-10. Smart-idle
    /// never loads its busiest memory node more than random does.
    #[test]
    fn smart_idle_is_never_worse_than_random_on_a_skewed_load() {
        for seed in 1..=10 {
            let (random, smart) = (
                layout(Policy::Random, seed),
                layout(Policy::SmartIdle, seed),
            );
            assert!(
                peak(&smart) <= peak(&random),
                "seed {seed}: {} > {}",
                peak(&smart),
                peak(&random)
            );
        }
    }
}
