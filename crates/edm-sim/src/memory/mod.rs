//! Rack memory pools (Puri et al., docs/related.md "Puri"): the DRAM at each
//! memory node (`dram.rs`) behind the one interface every protocol calls
//! when an access reaches memory ([`MemoryPools`]), and the rack memory
//! manager that places each compute node's regions on memory nodes
//! (`placement.rs`); beside them Clio's protection, the check every protocol
//! calls when a request reaches its memory node (`protection.rs`).
pub mod dram;
pub mod placement;
pub mod protection;
pub mod translate;

use crate::time::Ps;
pub use dram::{Dram, DramConfig, LINE_BYTES};

/// The wait histogram: whole ns below 1024 ns, above that 512 buckets per
/// doubling (within 0.2 %).
const EXACT_NS: u64 = 1024;
const PER_DOUBLING: u64 = 512;
const WAIT_BUCKETS: usize = (EXACT_NS + 54 * PER_DOUBLING) as usize;

fn bucket_of(ns: u64) -> usize {
    if ns < EXACT_NS {
        return ns as usize;
    }
    let doubling = 63 - ns.leading_zeros() as u64; // at least 10
    let within = (ns >> (doubling - 9)) & (PER_DOUBLING - 1);
    (EXACT_NS + (doubling - 10) * PER_DOUBLING + within) as usize
}

/// The least wait (ns) of a bucket.
fn bucket_floor_ns(bucket: usize) -> u64 {
    let b = bucket as u64;
    if b < EXACT_NS {
        return b;
    }
    let (doubling, within) = (
        (b - EXACT_NS) / PER_DOUBLING + 10,
        (b - EXACT_NS) % PER_DOUBLING,
    );
    (PER_DOUBLING + within) << (doubling - 9)
}

/// What the DRAMs counted in a run (all 0 with the model off).
#[derive(Clone, Debug, Default)]
pub struct MemoryStats {
    /// 64-byte lines served, per node (0 for nodes that are no memory).
    pub node_lines: Vec<u64>,
    /// Per line: how long it waited beyond its idle latency (for its bank
    /// and its channel's bus), summed, at most, and in a histogram.
    pub wait_sum_ps: u128,
    pub wait_max_ps: Ps,
    wait_hist: Vec<u64>,
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

    /// The `q` quantile of the lines' waits, to the ns below (within 0.2 %
    /// above 1 us).
    pub fn wait_quantile_ps(&self, q: f64) -> Ps {
        let n = self.lines();
        if n == 0 {
            return 0;
        }
        let rank = ((n - 1) as f64 * q).round() as u64;
        let mut seen = 0;
        for (bucket, &count) in self.wait_hist.iter().enumerate() {
            seen += count;
            if seen > rank {
                return (bucket_floor_ns(bucket) * 1000).min(self.wait_max_ps);
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
        self.wait_hist[bucket_of(wait / 1000).min(WAIT_BUCKETS - 1)] += 1;
    }
}

/// The DRAMs of every node of a run: what a protocol calls when a request
/// or a write's data reaches a memory node. A memory node hands an
/// access's lines to its DRAM at its link's rate (a line per 64 bytes of
/// wire time: what it can send or has received), so one large access does
/// not hold its DRAM longer than its link needs it.
#[derive(Clone, Debug)]
pub struct MemoryPools {
    cfg: DramConfig,
    drams: Vec<Option<Dram>>,
    /// Wire time of one 64-byte line on a memory node's link.
    line_ps: Ps,
    pub stats: MemoryStats,
}

impl MemoryPools {
    /// The DRAMs of `nodes` nodes whose links send 64 bytes in `line_ps`,
    /// or None with the model off.
    pub fn new(cfg: &DramConfig, nodes: usize, line_ps: Ps) -> Option<Self> {
        cfg.enabled().then(|| MemoryPools {
            cfg: cfg.clone(),
            drams: vec![None; nodes],
            line_ps,
            stats: MemoryStats {
                node_lines: vec![0; nodes],
                wait_hist: vec![0; WAIT_BUCKETS],
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

    /// The lines of `[addr, addr + bytes)`, each with when it is handed to
    /// the DRAM: from `at`, one per line time.
    fn paced(&self, at: Ps, addr: u64, bytes: u64) -> impl Iterator<Item = (Ps, u64)> {
        let line_ps = self.line_ps;
        dram::lines(addr, bytes)
            .enumerate()
            .map(move |(k, line)| (at + k as Ps * line_ps, line))
    }

    /// When the access from `at` can stream at the link's rate without
    /// running dry, given when each of its lines is done: the latest of
    /// each line's done time less its place in the stream.
    fn ready(&self, at: Ps, done: impl Iterator<Item = (Ps, Ps)>) -> Ps {
        done.map(|(handed, done)| done - (handed - at))
            .max()
            .unwrap_or(at)
    }

    /// Bytes `[addr, addr + bytes)` of `node` are accessed from `at`.
    fn access(&mut self, node: u16, at: Ps, addr: u64, bytes: u64) -> Ps {
        let unloaded = self.cfg.unloaded_ps();
        let mut done = Vec::new();
        for (handed, line) in self.paced(at, addr, bytes).collect::<Vec<_>>() {
            let s = self.dram(node).line(handed, line);
            self.stats.count(node as usize, s.done - handed - unloaded);
            done.push((handed, s.done));
        }
        self.ready(at, done.into_iter())
    }

    /// A read of `bytes` at `addr` reaches `node`'s memory at `at`: from
    /// when its data can stream out at the link's rate (`unloaded_ps`
    /// after `at` on an idle DRAM). Its response may start no earlier.
    pub fn read(&mut self, node: u16, at: Ps, addr: u64, bytes: u64) -> Ps {
        self.access(node, at, addr, bytes)
    }

    /// What [`MemoryPools::read`] would return, without serving it.
    pub fn peek_read(&mut self, node: u16, at: Ps, addr: u64, bytes: u64) -> Ps {
        let lines: Vec<(Ps, u64)> = self.paced(at, addr, bytes).collect();
        let done = self.dram(node).trial(lines.iter().copied());
        self.ready(at, lines.iter().map(|l| l.0).zip(done))
    }

    /// A write's data reaches `node` from `at`. Writes are posted (the
    /// memory controller takes them into its queue; a write is complete on
    /// arrival, as without the model), but occupy banks and buses.
    pub fn write(&mut self, node: u16, at: Ps, addr: u64, bytes: u64) {
        self.access(node, at, addr, bytes);
    }

    /// When a response may leave that would leave `fixed` after `arrived`
    /// with a memory of fixed latency `unloaded_ps`, if its data can stream
    /// from `ready`: later by however much the DRAM took beyond its idle latency.
    pub fn response_at(&self, arrived: Ps, fixed: Ps, ready: Ps) -> Ps {
        arrived + fixed + (ready - arrived).saturating_sub(self.unloaded_ps())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_histogram_keeps_ns_then_0_2_percent() {
        for ns in [
            0,
            1,
            1023,
            1024,
            1025,
            2047,
            2048,
            123_456,
            99_999_999,
            u32::MAX as u64,
        ] {
            let floor = bucket_floor_ns(bucket_of(ns));
            assert!(floor <= ns && ns - floor <= ns / 500, "{ns}: {floor}");
            assert!(bucket_of(ns) < WAIT_BUCKETS);
        }
        assert!((0..5000).all(|ns| bucket_of(ns) <= bucket_of(ns + 1)));
    }

    #[test]
    fn reads_stream_at_the_link_rate_and_stats_count_every_line() {
        let cfg = DramConfig {
            channels: 1,
            banks: 4,
            ..DramConfig::default()
        };
        let line_ps = 5_120; // 64 bytes at 100 Gb/s
        let mut pools = MemoryPools::new(&cfg, 3, line_ps).unwrap();
        assert!(
            MemoryPools::new(&DramConfig::default(), 3, line_ps).is_none(),
            "off by default"
        );
        // 4 lines on 4 banks: each handed in a line time after the one
        // before, each done 30 ns later: the stream starts 30 ns after `at`.
        let peek = pools.peek_read(2, 0, 0, 256);
        assert_eq!(pools.read(2, 0, 0, 256), peek);
        assert_eq!(peek, cfg.unloaded_ps());
        assert_eq!(pools.stats.wait_max_ps, 0);
        // 8 more lines on the same 4 banks: the 5th (handed in 4 line times
        // in) is its bank's third line, so waits two bank cycles; the
        // stream waits for it.
        let late = pools.read(2, 0, 0, 512);
        assert_eq!(
            late,
            2 * cfg.bank_cycle_ps() + cfg.unloaded_ps() - 4 * line_ps
        );
        assert_eq!(pools.stats.node_lines, vec![0, 0, 12]);
        assert_eq!(pools.stats.wait_quantile_ps(0.0), 0);
        let (top, max) = (pools.stats.wait_quantile_ps(1.0), pools.stats.wait_max_ps);
        assert!(top <= max && top + 1000 > max, "{top} {max}");
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
