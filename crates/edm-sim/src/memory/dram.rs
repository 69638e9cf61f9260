//! One memory node's DRAM: channels of banks under a closed-page policy,
//! each 64-byte line an access that waits for its bank and then for its
//! channel's data bus (docs/related.md, "Puri"). An access never starts
//! before it arrives.
use crate::time::Ps;
use std::collections::VecDeque;

/// Bytes one burst moves (a DDR4 x64 channel, burst length 8).
pub const LINE_BYTES: u64 = 64;

/// DDR4 timing and organisation of one memory node. Defaults: DDR4-3200AA
/// (22-22-22), as in Micron's 8Gb DDR4 SDRAM datasheet (MT40A1G8, speed
/// grade -062E): tRCD = tCL = tRP = 13.75 ns, tRAS = 32 ns, BL8 at
/// 1600 MHz = 2.5 ns; 16 banks (4 bank groups of 4); 2 channels of one rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DramConfig {
    /// Channels per memory node (0: no model, the fixed `dram_ps`).
    pub channels: u32,
    /// Banks per channel.
    pub banks: u32,
    pub trcd_ps: Ps,
    pub tcl_ps: Ps,
    pub trp_ps: Ps,
    pub tras_ps: Ps,
    /// One 64-byte burst on a channel's data bus.
    pub tburst_ps: Ps,
}

impl Default for DramConfig {
    fn default() -> Self {
        DramConfig {
            channels: 0,
            banks: 16,
            trcd_ps: 13_750,
            tcl_ps: 13_750,
            trp_ps: 13_750,
            tras_ps: 32_000,
            tburst_ps: 2_500,
        }
    }
}

impl DramConfig {
    pub fn enabled(&self) -> bool {
        self.channels > 0
    }

    /// A bank's cycle under the closed-page policy: activate, column access
    /// with auto-precharge (precharge no earlier than tRAS after the
    /// activate, nor before the burst is out), precharge.
    pub fn bank_cycle_ps(&self) -> Ps {
        self.tras_ps
            .max(self.trcd_ps + self.tcl_ps + self.tburst_ps)
            + self.trp_ps
    }

    /// A line's latency on an idle DRAM: activate, column access, burst.
    pub fn unloaded_ps(&self) -> Ps {
        self.trcd_ps + self.tcl_ps + self.tburst_ps
    }

    /// Peak bytes per second of one node with lines spread over every bank:
    /// the lower of its banks' and its buses' rates.
    pub fn bandwidth_bytes_per_s(&self) -> f64 {
        let per_bank = LINE_BYTES as f64 / (self.bank_cycle_ps() as f64 * 1e-12);
        let per_bus = LINE_BYTES as f64 / (self.tburst_ps as f64 * 1e-12);
        self.channels as f64 * (self.banks as f64 * per_bank).min(per_bus)
    }
}

/// One line's service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineService {
    /// Its activate (when its bank took it).
    pub start: Ps,
    /// Its burst's last beat on the bus.
    pub done: Ps,
}

/// How far behind the latest arrival seen a busy interval is forgotten: a
/// protocol hands in accesses out of arrival order by far less (EDM's
/// zero-queue rules book writes a circuit ahead).
const FORGET_PS: Ps = 1_000_000_000;

/// When one resource (a bank, a bus) is busy: intervals in time order.
#[derive(Clone, Debug, Default)]
struct Busy(VecDeque<(Ps, Ps)>);

impl Busy {
    /// The first start from `from` on with `len` free.
    fn first_fit(&self, from: Ps, len: Ps) -> Ps {
        let mut t = from;
        let first = self.0.partition_point(|&(_, end)| end <= from);
        for &(start, end) in self.0.range(first..) {
            if start >= t + len {
                break;
            }
            t = t.max(end);
        }
        t
    }

    /// Takes `[start, start + len)` (free: `first_fit` found it); returns where it went.
    fn take(&mut self, start: Ps, len: Ps) -> usize {
        let at = self.0.partition_point(|&(s, _)| s < start);
        self.0.insert(at, (start, start + len));
        at
    }

    fn forget_before(&mut self, t: Ps) {
        while self.0.front().is_some_and(|&(_, end)| end < t) {
            self.0.pop_front();
        }
    }
}

/// The state of one node's DRAM. Each line takes the first time its bank is
/// free for a whole cycle from its arrival, then the first time its
/// channel's bus is free for its burst from its column access: handed in
/// in arrival order this is first come, first served; handed in ahead of
/// time (EDM's booked writes) a line never waits for one that arrives later
/// unless that one already holds the time it needs.
#[derive(Clone, Debug)]
pub struct Dram {
    cfg: DramConfig,
    /// Per bank (channel-major), then per channel's data bus.
    banks: Vec<Busy>,
    buses: Vec<Busy>,
    latest: Ps,
}

impl Dram {
    pub fn new(cfg: &DramConfig) -> Self {
        assert!(cfg.enabled(), "a DRAM needs at least one channel");
        Dram {
            cfg: cfg.clone(),
            banks: vec![Busy::default(); (cfg.channels * cfg.banks) as usize],
            buses: vec![Busy::default(); cfg.channels as usize],
            latest: 0,
        }
    }

    /// The line holding byte `addr`: consecutive lines go to consecutive
    /// channels, then consecutive banks (so a long access spreads over all).
    fn place(&self, addr: u64) -> (usize, usize) {
        let line = addr / LINE_BYTES;
        let channels = self.cfg.channels as u64;
        let channel = (line % channels) as usize;
        let bank = ((line / channels) % self.cfg.banks as u64) as usize;
        (channel, channel * self.cfg.banks as usize + bank)
    }

    /// Serves the line at `addr`, arriving at `at`.
    pub fn line(&mut self, at: Ps, addr: u64) -> LineService {
        self.take_line(at, addr).0
    }

    /// [`Dram::line`], also returning the intervals it took (bank, bus) so
    /// that a trial can be undone.
    fn take_line(&mut self, at: Ps, addr: u64) -> (LineService, [(usize, usize); 2]) {
        let (channel, bank) = self.place(addr);
        let c = &self.cfg;
        let (cycle, burst, to_data) = (c.bank_cycle_ps(), c.tburst_ps, c.trcd_ps + c.tcl_ps);
        if at > self.latest {
            self.latest = at;
            let forget = at.saturating_sub(FORGET_PS);
            self.banks[bank].forget_before(forget);
            self.buses[channel].forget_before(forget);
        }
        let start = self.banks[bank].first_fit(at, cycle);
        let bank_at = self.banks[bank].take(start, cycle);
        let data = self.buses[channel].first_fit(start + to_data, burst);
        let bus_at = self.buses[channel].take(data, burst);
        (
            LineService {
                start,
                done: data + burst,
            },
            [(bank, bank_at), (channel, bus_at)],
        )
    }

    /// When each of `lines` (arrival, address) would be done, leaving the
    /// DRAM as it was.
    pub fn trial(&mut self, lines: impl Iterator<Item = (Ps, u64)>) -> Vec<Ps> {
        let latest = self.latest;
        let mut taken = Vec::new();
        let mut done = Vec::new();
        for (at, addr) in lines {
            let (s, t) = self.take_line(at, addr);
            done.push(s.done);
            taken.push(t);
        }
        for [(bank, bank_at), (bus, bus_at)] in taken.into_iter().rev() {
            self.banks[bank].0.remove(bank_at);
            self.buses[bus].0.remove(bus_at);
        }
        self.latest = latest;
        done
    }
}

/// The lines `[addr, addr + bytes)` touches, by their first byte.
pub fn lines(addr: u64, bytes: u64) -> impl Iterator<Item = u64> {
    let first = addr / LINE_BYTES;
    let last = (addr + bytes.max(1) - 1) / LINE_BYTES;
    (first..=last).map(|l| l * LINE_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn ddr4(channels: u32, banks: u32) -> DramConfig {
        DramConfig {
            channels,
            banks,
            ..DramConfig::default()
        }
    }

    #[test]
    fn an_idle_line_takes_activate_column_and_burst() {
        let c = ddr4(2, 16);
        assert_eq!(c.unloaded_ps(), 30_000);
        assert_eq!(c.bank_cycle_ps(), 45_750); // tRC of DDR4-3200AA
        let mut d = Dram::new(&c);
        assert_eq!(
            d.line(1_000, 0),
            LineService {
                start: 1_000,
                done: 31_000
            }
        );
        // The same bank again waits for its cycle; the next line is on the other channel.
        assert_eq!(d.line(1_000, 2 * 16 * 64).start, 1_000 + 45_750);
        assert_eq!(d.line(1_000, 64).done, 31_000);
    }

    /// One bank, Poisson arrivals of one line each: an M/D/1 queue with
    /// service tRC; its mean wait is rho S / (2 (1 - rho)).
    fn md1_wait_ratio(rho: f64, seed: u64) -> f64 {
        let c = ddr4(1, 1);
        let s = c.bank_cycle_ps() as f64;
        let mut d = Dram::new(&c);
        let mut rng = Rng::new(seed);
        let (mut now, mut wait, n) = (0.0f64, 0.0f64, 200_000);
        for _ in 0..n {
            now += rng.exponential(s / rho);
            let at = now.round() as Ps;
            wait += (d.line(at, 0).start - at) as f64;
        }
        let expected = rho * s / (2.0 * (1.0 - rho));
        wait / n as f64 / expected
    }

    #[test]
    fn one_bank_waits_as_an_md1_queue_at_low_and_high_load() {
        for (rho, tolerance) in [(0.2, 0.05), (0.8, 0.08)] {
            let ratio = md1_wait_ratio(rho, 11);
            assert!(
                (ratio - 1.0).abs() < tolerance,
                "rho {rho}: measured / M/D/1 = {ratio}"
            );
        }
    }

    /// Lines all there at time 0 drain at the stated bandwidth.
    fn drain_rate(c: &DramConfig, lines_n: u64) -> f64 {
        let mut d = Dram::new(c);
        let done = (0..lines_n).map(|l| d.line(0, l * 64).done).max().unwrap();
        (lines_n * 64) as f64 / (done as f64 * 1e-12)
    }

    #[test]
    fn a_backlog_drains_at_the_stated_bandwidth() {
        // Bank-bound: 2 x 16 banks of tRC 45.75 ns (44.8 GB/s) below 2 buses (51.2 GB/s).
        let banks = ddr4(2, 16);
        assert!((banks.bandwidth_bytes_per_s() / 44.77e9 - 1.0).abs() < 1e-3);
        let measured = drain_rate(&banks, 20_000);
        assert!(
            (measured / banks.bandwidth_bytes_per_s() - 1.0).abs() < 0.01,
            "{measured}"
        );
        // Bus-bound: with 64 banks per channel the buses (25.6 GB/s each) limit.
        let bus = ddr4(2, 64);
        assert!((bus.bandwidth_bytes_per_s() / 51.2e9 - 1.0).abs() < 1e-9);
        let measured = drain_rate(&bus, 20_000);
        assert!((measured / 51.2e9 - 1.0).abs() < 0.01, "{measured}");
    }

    #[test]
    fn a_line_handed_in_ahead_does_not_hold_back_an_earlier_one() {
        let c = ddr4(1, 1);
        let mut d = Dram::new(&c);
        d.line(1_000_000, 0);
        // Arrives earlier, fits before it.
        assert_eq!(d.line(0, 0).start, 0);
        // Does not fit before it: waits for its cycle.
        assert_eq!(
            d.line(1_000_000 - 10_000, 0).start,
            1_000_000 + c.bank_cycle_ps()
        );
        // A trial leaves no trace.
        let before = d.line(5_000_000, 0);
        let trial = d.trial([(5_000_000, 0), (5_000_000, 64)].into_iter());
        assert_eq!(trial[1], before.done + 2 * c.bank_cycle_ps());
        assert_eq!(d.line(5_000_000, 0).start, before.start + c.bank_cycle_ps());
    }

    #[test]
    fn lines_cover_the_bytes() {
        assert_eq!(lines(0, 64).collect::<Vec<_>>(), vec![0]);
        assert_eq!(lines(60, 8).collect::<Vec<_>>(), vec![0, 64]);
        assert_eq!(lines(128, 1).collect::<Vec<_>>(), vec![128]);
        assert_eq!(lines(64, 256).count(), 4);
    }
}
