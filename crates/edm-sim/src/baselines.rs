//! The paper's six baselines (§4.3) with their default parameters, each a
//! [`Transport`] on the one packet fabric (`packet`), wrapped as a
//! [`Protocol`] like EDM. Every default and its source: docs/simulator.md,
//! "Baselines". Slowdowns divide by each message's latency alone in the
//! network under the same protocol, measured by running it alone.
use crate::config::FabricConfig;
use crate::engine::{Feed, Outcome, Progress, Protocol};
use crate::packet::cxl::{Cxl, CxlConfig};
use crate::packet::dcqcn::{Dcqcn, DcqcnConfig};
use crate::packet::fastpass::{Fastpass, FastpassConfig};
use crate::packet::ird::{Ird, IrdConfig};
use crate::packet::window::{WindowConfig, WindowLaw, WindowTransport};
use crate::packet::*;
use crate::time::Ps;
use crate::workload::MessageSpec;
use edm_proto::spec::*;

/// The baselines by name, in the paper's order, then the ideal reference
/// (`ideal-srpt`, [`crate::ideal_srpt`]); the schema's protocol list is EDM's
/// two then these.
pub const BASELINES: &[&str] = &[
    "dctcp",
    "ird",
    "pfabric",
    "pfc_dcqcn",
    "cxl",
    "fastpass",
    "ideal-srpt",
];

/// Per-egress switch buffer (bytes): ~25 MB shared over 128 x 100G ports,
/// statically partitioned.
pub const SWITCH_BUFFER_BYTES: u64 = 200_000;

/// Overrides of the baselines' defaults for sweeps; 0 keeps a default
/// (checked by `crate::schema::RunConfig::validate_baselines`).
/// Each field applies to the protocols its name or comment says and is
/// ignored by the others (so one grid can span every protocol).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BaselineParams {
    /// Per-egress switch buffer of dctcp, pfabric and pfc_dcqcn.
    pub switch_buffer_bytes: u64,
    /// DCTCP's marking threshold K.
    pub dctcp_k_bytes: u64,
    /// DCTCP's initial window, in packets.
    pub dctcp_init_cwnd: u64,
    /// DCTCP: one ACK per this many packets (delayed ACKs above 1).
    pub dctcp_ack_every: u32,
    /// pFabric's fixed window, in packets.
    pub pfabric_window_packets: u64,
    /// DCQCN's RED marking: Kmin, Kmax (bytes) and Pmax.
    pub dcqcn_kmin_bytes: u64,
    pub dcqcn_kmax_bytes: u64,
    pub dcqcn_pmax: f64,
    /// PFC's per-ingress Xoff threshold (Xon is two MTUs below it).
    pub pfc_xoff_bytes: u64,
    /// CXL flit credits per switch ingress port.
    pub cxl_credits: u32,
    /// IRD: bytes a receiver may have granted and not yet received.
    pub ird_window_bytes: u64,
}

/// Wire bytes of a full-size raw Ethernet frame (buffers and thresholds must
/// hold a few).
pub fn mtu_wire_bytes() -> u64 {
    let framing = ethernet(0, RAW_TRANSPORT_HEADER_BYTES).framing;
    framing.wire(framing.mss()) as u64
}

fn or<T: PartialEq + Default>(value: T, default: T) -> T {
    if value == T::default() {
        default
    } else {
        value
    }
}

/// Round trip of an MTU packet and its ACK on `cfg`, unloaded.
pub fn base_rtt_ps(fabric: &FabricConfig, cfg: &PacketConfig) -> Ps {
    let byte = fabric.block_ps() / 8;
    let link = fabric.link_ps();
    let path =
        2 * (cfg.host_stack_ps + cfg.host_nic_ps + link) + cfg.switch_in_ps + cfg.switch_out_ps;
    let mtu = cfg.framing.wire(cfg.framing.mss()) as Ps;
    let ack = cfg.framing.wire(0) as Ps;
    2 * path + 2 * (mtu + ack) * byte
}

/// Bandwidth-delay product in bytes.
pub fn bdp_bytes(fabric: &FabricConfig, cfg: &PacketConfig) -> u64 {
    base_rtt_ps(fabric, cfg) * fabric.link_gbps as u64 / 8000
}

fn ethernet(stack_ps: Ps, header: u32) -> PacketConfig {
    PacketConfig {
        host_stack_ps: stack_ps,
        framing: Framing::Ethernet {
            header,
            mss: ETH_MTU_PAYLOAD_BYTES - header,
        },
        ..PacketConfig::raw_ethernet()
    }
}

pub fn dctcp_config(fabric: &FabricConfig, p: &BaselineParams) -> WindowConfig {
    let mut net = ethernet(TCP_STACK_PS, TCPIP_HEADER_BYTES);
    let bdp = bdp_bytes(fabric, &net);
    net.buffer_bytes = or(p.switch_buffer_bytes, SWITCH_BUFFER_BYTES);
    // DCTCP's guideline K > C x RTT / 7.
    net.ecn = Ecn::Step {
        k: or(p.dctcp_k_bytes, bdp.div_ceil(7)),
    };
    WindowConfig {
        net: net.clone(),
        law: WindowLaw::Dctcp { g: 1.0 / 16.0 },
        init_cwnd: or(p.dctcp_init_cwnd, 10) as f64,
        max_cwnd: 1e9,
        rto_ps: 4 * base_rtt_ps(fabric, &net),
        ack_every: or(p.dctcp_ack_every, 1),
        per_flow: false,
        srpt_priority: false,
    }
}

pub fn pfabric_config(fabric: &FabricConfig, p: &BaselineParams) -> WindowConfig {
    let mut net = ethernet(0, TCPIP_HEADER_BYTES);
    let bdp = bdp_bytes(fabric, &net);
    let mss = net.framing.mss() as u64;
    // pFabric: about two BDPs of buffer per port, a window of one BDP, RTO of ~3 RTTs.
    net.buffer_bytes = or(p.switch_buffer_bytes, 2 * bdp);
    net.discipline = Discipline::Priority;
    let window = or(p.pfabric_window_packets, bdp.div_ceil(mss)) as f64;
    WindowConfig {
        net: net.clone(),
        law: WindowLaw::Fixed,
        init_cwnd: window,
        max_cwnd: window,
        rto_ps: 3 * base_rtt_ps(fabric, &net),
        ack_every: 1,
        per_flow: true,
        srpt_priority: true,
    }
}

pub fn dcqcn_config(fabric: &FabricConfig, p: &BaselineParams) -> DcqcnConfig {
    let mut net = ethernet(ROCE_STACK_PS, ROCE_HEADER_BYTES);
    let scale = fabric.link_gbps as f64 / 40.0; // DCQCN's parameters are for 40 Gbps
    let mtu_wire = net.framing.wire(net.framing.mss()) as u64;
    net.buffer_bytes = or(p.switch_buffer_bytes, SWITCH_BUFFER_BYTES);
    net.ecn = Ecn::Red {
        kmin: or(p.dcqcn_kmin_bytes, 5_000),
        kmax: or(p.dcqcn_kmax_bytes, 200_000),
        pmax: or(p.dcqcn_pmax, 0.01),
    };
    let xoff = or(p.pfc_xoff_bytes, 64_000);
    net.pfc = Some(Pfc {
        xoff,
        xon: xoff - 2 * mtu_wire,
    });
    DcqcnConfig {
        net,
        g: 1.0 / 256.0,
        alpha_period_ps: 55_000_000,
        increase_period_ps: 55_000_000,
        increase_bytes: 10_000_000,
        fast_recovery_steps: 5,
        rai_bps: 40e6 * scale,
        rhai_bps: 400e6 * scale,
        min_rate_bps: 100e6,
        cnp_interval_ps: 50_000_000,
    }
}

pub fn ird_config(fabric: &FabricConfig, p: &BaselineParams) -> IrdConfig {
    let net = ethernet(0, RAW_TRANSPORT_HEADER_BYTES);
    let bdp = bdp_bytes(fabric, &net);
    IrdConfig {
        net,
        max_outstanding: or(p.ird_window_bytes, bdp) as u32,
    }
}

pub fn cxl_config(_fabric: &FabricConfig, p: &BaselineParams) -> CxlConfig {
    CxlConfig {
        net: PacketConfig {
            host_stack_ps: 0,
            host_nic_ps: ETH_MAC_PS + ETH_PCS_PS,
            switch_in_ps: CXL_SWITCH_HOP_PS,
            switch_out_ps: 0,
            framing: Framing::Flit {
                bytes: CXL_FLIT_BYTES,
                payload: CXL_FLIT_PAYLOAD_BYTES,
            },
            credits: Some(or(p.cxl_credits, CXL_DEFAULT_CREDITS)),
            ..PacketConfig::raw_ethernet()
        },
    }
}

/// Flit credits per switch ingress port: twice the credit loop at 100 Gbps.
pub const CXL_DEFAULT_CREDITS: u32 = 64;

pub fn fastpass_config(_fabric: &FabricConfig) -> FastpassConfig {
    FastpassConfig {
        net: PacketConfig {
            arbiter_port: true,
            ..ethernet(0, RAW_TRANSPORT_HEADER_BYTES)
        },
    }
}

/// A packet baseline as a [`Protocol`].
pub struct PacketProtocol<T: Transport> {
    fabric: FabricConfig,
    make: Box<dyn Fn() -> T>,
    alone: AloneCache,
    name: &'static str,
}

impl<T: Transport> PacketProtocol<T> {
    pub fn new(fabric: FabricConfig, make: impl Fn() -> T + 'static) -> Self {
        let name = make().name();
        PacketProtocol {
            fabric,
            make: Box::new(make),
            alone: AloneCache::default(),
            name,
        }
    }
}

impl<T: Transport> Protocol for PacketProtocol<T> {
    fn run(&mut self, feed: Feed, progress: Progress) -> Outcome {
        let messages = feed.messages();
        let mut t = (self.make)();
        let mut out = simulate(&mut t, &self.fabric, feed, progress);
        fill_alone(&mut out, &self.alone, &self.make, &self.fabric, messages);
        out
    }

    fn alone_ps(&self, m: &MessageSpec) -> Ps {
        self.alone.get(&self.make, &self.fabric, m)
    }

    fn name(&self) -> &'static str {
        self.name
    }
}

/// The baseline called `name` with its defaults, or None.
pub fn baseline(name: &str, fabric: &FabricConfig) -> Option<Box<dyn Protocol>> {
    baseline_with(name, fabric, &BaselineParams::default())
}

/// The baseline called `name` with the overrides in `p`, or None.
pub fn baseline_with(
    name: &str,
    fabric: &FabricConfig,
    p: &BaselineParams,
) -> Option<Box<dyn Protocol>> {
    let f = fabric.clone();
    Some(match name {
        "dctcp" => {
            let c = dctcp_config(&f, p);
            Box::new(PacketProtocol::new(f, move || {
                WindowTransport::new("dctcp", c.clone())
            }))
        }
        "pfabric" => {
            let c = pfabric_config(&f, p);
            Box::new(PacketProtocol::new(f, move || {
                WindowTransport::new("pfabric", c.clone())
            }))
        }
        "pfc_dcqcn" => {
            let c = dcqcn_config(&f, p);
            let gbps = f.link_gbps;
            Box::new(PacketProtocol::new(f, move || Dcqcn::new(c.clone(), gbps)))
        }
        "ird" => {
            let c = ird_config(&f, p);
            Box::new(PacketProtocol::new(f, move || Ird::new(c.clone())))
        }
        "cxl" => {
            let c = cxl_config(&f, p);
            Box::new(PacketProtocol::new(f, move || Cxl::new(c.clone())))
        }
        "fastpass" => {
            let c = fastpass_config(&f);
            Box::new(PacketProtocol::new(f, move || Fastpass::new(c.clone())))
        }
        "ideal-srpt" => Box::new(crate::ideal_srpt::IdealSrpt::new(f)),
        _ => return None,
    })
}
