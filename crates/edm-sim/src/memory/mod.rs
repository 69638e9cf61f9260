//! Rack memory pools (Puri et al., docs/related.md "Puri"): the DRAM at each
//! memory node (`dram.rs`) behind the one interface every protocol calls
//! when an access reaches memory ([`MemoryPools`]), and the rack memory
//! manager that places each compute node's regions on memory nodes
//! (`placement.rs`).
pub mod dram;
pub mod placement;

use crate::config::Ps;
pub use dram::{Dram, DramConfig, LINE_BYTES};

/// Waits above this many ns share the histogram's last bucket (the max is exact).
const WAIT_BUCKETS_NS: usize = 100_000;

/// What the DRAMs counted in a run (all 0 with the model off).
#[derive(Clone, Debug, Default)]
pub struct MemoryStats {
    /// 64-byte lines served, per node (0 for nodes that are no memory).
    pub node_lines: Vec<u64>,
    /// Per line: how long it waited beyond its idle latency (for its bank
    /// and its channel's bus), summed, at most, and by whole ns.
    pub wait_sum_ps: u128,
    pub wait_max_ps: Ps,
    wait_hist_ns: Vec<u64>,
    /// EDM's zero-queue booking: responses whose circuit was booked to
    /// start before their DRAM read ended (must stay 0).
    pub late_responses: u64,
}

impl MemoryStats {
    pub fn lines(&self) -> u64 {
        self.node_lines.iter().sum()
    }

    pub fn wait_mean_ps(&self) -> f64 {
        match self.lines() {
            0 => 0.0,
            n => self.wait_sum_ps as f64 / n as f64,
        }
    }

    /// The `q` quantile of the lines' waits, to the ns below.
    pub fn wait_quantile_ps(&self, q: f64) -> Ps {
        let n = self.lines();
        if n == 0 {
            return 0;
        }
        let rank = ((n - 1) as f64 * q).round() as u64;
        let mut seen = 0;
        for (ns, &count) in self.wait_hist_ns.iter().enumerate() {
            seen += count;
            if seen > rank {
                return (ns as Ps * 1000).min(self.wait_max_ps);
            }
        }
        self.wait_max_ps
    }

    /// Lines of the busiest memory node over the mean of the memory nodes
    /// that served any (1: balanced).
    pub fn imbalance(&self) -> f64 {
        let used: Vec<u64> = self.node_lines.iter().copied().filter(|&n| n > 0).collect();
        if used.is_empty() {
            return 0.0;
        }
        let mean = used.iter().sum::<u64>() as f64 / used.len() as f64;
        *used.iter().max().unwrap() as f64 / mean
    }

    fn count(&mut self, node: usize, wait: Ps) {
        self.node_lines[node] += 1;
        self.wait_sum_ps += wait as u128;
        self.wait_max_ps = self.wait_max_ps.max(wait);
        let bucket = ((wait / 1000) as usize).min(WAIT_BUCKETS_NS - 1);
        self.wait_hist_ns[bucket] += 1;
    }
}

/// The DRAMs of every node of a run: what a protocol calls when a request
/// or a write's data reaches a memory node. Accesses are served in the
/// order the protocol hands them in.
#[derive(Clone, Debug)]
pub struct MemoryPools {
    cfg: DramConfig,
    drams: Vec<Option<Dram>>,
    pub stats: MemoryStats,
}

impl MemoryPools {
    /// The DRAMs of `nodes` nodes, or None with the model off.
    pub fn new(cfg: &DramConfig, nodes: usize) -> Option<Self> {
        cfg.enabled().then(|| MemoryPools {
            cfg: cfg.clone(),
            drams: vec![None; nodes],
            stats: MemoryStats {
                node_lines: vec![0; nodes],
                wait_hist_ns: vec![0; WAIT_BUCKETS_NS],
                ..Default::default()
            },
        })
    }

    /// A line's latency on an idle DRAM: the fixed part of every access,
    /// which the protocols' alone latencies count.
    pub fn unloaded_ps(&self) -> Ps {
        self.cfg.unloaded_ps()
    }

    fn dram(&mut self, node: u16) -> &mut Dram {
        let cfg = &self.cfg;
        self.drams[node as usize].get_or_insert_with(|| Dram::new(cfg))
    }

    /// Bytes `[addr, addr + bytes)` of `node` are accessed from `at`: when
    /// its first `head` bytes are done (all lines are queued now).
    fn access(&mut self, node: u16, at: Ps, addr: u64, bytes: u64, head: u64) -> Ps {
        let unloaded = self.cfg.unloaded_ps();
        let head_end = addr + head.clamp(1, bytes.max(1));
        let mut head_done = at;
        for line in dram::lines(addr, bytes) {
            let s = self.dram(node).line(at, line);
            self.stats.count(node as usize, s.done - at - unloaded);
            if line < head_end {
                head_done = head_done.max(s.done);
            }
        }
        head_done
    }

    /// A read of `bytes` at `addr` reaches `node`'s memory at `at`: when its
    /// first `head` bytes (what the response sends first) are read. The
    /// response may leave no earlier.
    pub fn read(&mut self, node: u16, at: Ps, addr: u64, bytes: u64, head: u64) -> Ps {
        self.access(node, at, addr, bytes, head)
    }

    /// What [`MemoryPools::read`] would return, without serving it.
    pub fn peek_read(&mut self, node: u16, at: Ps, addr: u64, bytes: u64, head: u64) -> Ps {
        let head_end = addr + head.clamp(1, bytes.max(1));
        let head_lines = dram::lines(addr, bytes).take_while(|&line| line < head_end);
        self.dram(node).trial(at, head_lines)
    }

    /// A write's data reaches `node` at `at`. Writes are posted (the memory
    /// controller takes them into its queue; a write is complete on
    /// arrival, as without the model), but occupy banks and buses. Returns
    /// when it is written.
    pub fn write(&mut self, node: u16, at: Ps, addr: u64, bytes: u64) -> Ps {
        self.access(node, at, addr, bytes, bytes)
    }

    /// When a response may leave that would leave `fixed` after `arrived`
    /// with a memory of fixed latency `unloaded_ps`, if its head is read at
    /// `ready`: later by however much the DRAM took beyond its idle latency.
    pub fn response_at(&self, arrived: Ps, fixed: Ps, ready: Ps) -> Ps {
        arrived + fixed + (ready - arrived).saturating_sub(self.unloaded_ps())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_report_their_head_and_stats_count_every_line() {
        let cfg = DramConfig {
            channels: 1,
            banks: 4,
            ..DramConfig::default()
        };
        let mut pools = MemoryPools::new(&cfg, 3).unwrap();
        assert!(
            MemoryPools::new(&DramConfig::default(), 3).is_none(),
            "off by default"
        );
        let peek = pools.peek_read(2, 0, 0, 512, 64);
        assert_eq!(pools.read(2, 0, 0, 512, 64), peek);
        assert_eq!(peek, cfg.unloaded_ps());
        assert_eq!(pools.stats.node_lines, vec![0, 0, 8]);
        // 8 lines on 4 banks of one bus: each later burst waits for the bus or a bank.
        assert!(pools.stats.wait_max_ps >= cfg.bank_cycle_ps());
        assert_eq!(pools.stats.wait_quantile_ps(0.0), 0);
        assert!(pools.stats.wait_quantile_ps(1.0) <= pools.stats.wait_max_ps);
        assert_eq!(
            pools.response_at(100, 40_000, 100 + cfg.unloaded_ps()),
            40_100
        );
        assert_eq!(
            pools.response_at(100, 40_000, 100 + cfg.unloaded_ps() + 5),
            40_105
        );
    }
}
