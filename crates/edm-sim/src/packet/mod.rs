//! The packet-switched fabric the baselines run on (docs/simulator.md,
//! "Baselines"): hosts with one NIC uplink each, one output-queued layer-2
//! switch with finite per-egress buffers, ECN marking, drops, optional PFC,
//! and an input-queued credit mode for CXL. A baseline is a [`Transport`]: it
//! moves *flows* (the byte streams of requests, write data and responses)
//! between hosts; the fabric turns messages into flows and flows into
//! completions, so every baseline has the same message semantics as EDM.
//!
//! The rooms: this file (packets, flows, framing, the fabric's settings,
//! the [`Transport`] trait), `net.rs` (uplinks and the switch), `run.rs`
//! (a run on the engine, latencies alone), and one file per transport
//! family: `window.rs` (DCTCP, pFabric), `dcqcn.rs` (PFC + DCQCN), `ird.rs`
//! (receiver-driven), `fastpass.rs` (central arbiter), `cxl.rs` (credits).
pub mod cxl;
pub mod dcqcn;
pub mod fastpass;
pub mod ird;
mod net;
mod run;
pub mod window;

pub use net::Net;
pub use run::{fill_alone, simulate, AloneCache};

use crate::engine::Totals;
use crate::time::Ps;
use crate::workload::{MessageSpec, Op};
use edm_proto::spec::*;
use std::sync::LazyLock;

/// What a packet is to the fabric: data is queued, dropped and marked;
/// control packets (ACKs, credits, CNPs, requests to an arbiter) too, except
/// that they are never the drop victim of a priority queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    Data,
    Ack,
    Control,
    /// PFC PAUSE (aux 1) or RESUME (aux 0), made by the switch itself.
    Pause,
}

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub src: u16,
    pub dst: u16,
    pub kind: PacketKind,
    /// Bytes on the wire (frame, preamble and inter-frame gap, or one flit).
    pub wire: u32,
    /// Flow payload bytes carried.
    pub payload: u32,
    pub flow: u32,
    pub seq: u32,
    /// Switch priority (smaller first) where the queue discipline uses it.
    pub prio: u64,
    /// ECN congestion-experienced mark.
    pub ce: bool,
    /// Transport-specific field (ACK number, echoed mark, grant size ...).
    pub aux: u64,
    /// Second transport-specific field.
    pub aux2: u64,
}

impl Packet {
    pub fn new(src: u16, dst: u16, kind: PacketKind, wire: u32) -> Packet {
        Packet {
            src,
            dst,
            kind,
            wire,
            payload: 0,
            flow: u32::MAX,
            seq: 0,
            prio: 0,
            ce: false,
            aux: 0,
            aux2: 0,
        }
    }
}

/// The role of a flow in its message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowRole {
    /// RREQ / RMWREQ: requester to memory node; its arrival starts the response.
    Request,
    /// WREQ data: requester to memory node; its arrival completes the message.
    Write,
    /// RRES: memory node to requester; its arrival completes the message.
    Response,
}

#[derive(Clone, Copy, Debug)]
pub struct Flow {
    pub src: u16,
    pub dst: u16,
    /// Bytes the transport must deliver (memory header + data).
    pub bytes: u32,
    pub msg: u32,
    pub role: FlowRole,
    pub start_ps: Ps,
}

/// ECN marking at a switch egress, decided when a packet is enqueued.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ecn {
    Off,
    /// Mark when the queue holds more than `k` bytes (DCTCP).
    Step {
        k: u64,
    },
    /// RED: probability rising linearly from 0 at `kmin` to `pmax` at `kmax`,
    /// 1 above (DCQCN).
    Red {
        kmin: u64,
        kmax: u64,
        pmax: f64,
    },
}

/// How a switch egress orders its queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Discipline {
    /// First in, first out; tail drop.
    Fifo,
    /// Smallest `prio` first; when full, drop the largest-`prio` packet
    /// (pFabric).
    Priority,
}

/// Priority flow control per ingress port (IEEE 802.1Qbb, one class).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pfc {
    /// Bytes from one ingress held in the switch above which it is paused.
    pub xoff: u64,
    /// ... and below which it is resumed.
    pub xon: u64,
}

/// How bytes are framed on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// Ethernet: `header` transport/network bytes per packet, at most `mss`
    /// payload bytes, minimum frame, preamble and inter-frame gap.
    Ethernet { header: u32, mss: u32 },
    /// Fixed flits of `bytes` on the wire carrying `payload` bytes (CXL).
    Flit { bytes: u32, payload: u32 },
}

impl Framing {
    /// Wire bytes of a packet carrying `payload` bytes (0: a control packet).
    pub fn wire(&self, payload: u32) -> u32 {
        match *self {
            Framing::Ethernet { header, .. } => {
                let frame =
                    (payload + header + ETH_HEADER_BYTES + ETH_FCS_BYTES).max(ETH_MIN_FRAME_BYTES);
                frame + ETH_PREAMBLE_BYTES + ETH_IFG_BYTES
            }
            Framing::Flit { bytes, .. } => bytes,
        }
    }

    pub fn mss(&self) -> u32 {
        match *self {
            Framing::Ethernet { mss, .. } => mss,
            Framing::Flit { payload, .. } => payload,
        }
    }

    /// Packets a flow of `bytes` is cut into.
    pub fn packets(&self, bytes: u32) -> u32 {
        bytes.div_ceil(self.mss()).max(1)
    }

    /// Payload of packet `seq` of a flow of `bytes`.
    pub fn payload(&self, bytes: u32, seq: u32) -> u32 {
        let mss = self.mss();
        (bytes - (seq * mss).min(bytes)).min(mss)
    }
}

/// The fabric a packet baseline runs on: latencies (Table 1), framing and
/// the switch's buffering policy. Defaults and sources: docs/simulator.md.
#[derive(Clone, Debug)]
pub struct PacketConfig {
    /// Transport stack, once at the sender and once at the receiver of every packet.
    pub host_stack_ps: Ps,
    /// MAC + PCS at a host, per packet at each end.
    pub host_nic_ps: Ps,
    /// From a packet's last bit at the switch to eligible at its egress (ingress
    /// MAC + PCS + forwarding pipeline), store and forward.
    pub switch_in_ps: Ps,
    /// Egress MAC + PCS.
    pub switch_out_ps: Ps,
    pub framing: Framing,
    /// Per egress port; 0 = unbounded.
    pub buffer_bytes: u64,
    pub ecn: Ecn,
    pub discipline: Discipline,
    pub pfc: Option<Pfc>,
    /// CXL: input-queued switch with this many flit credits per ingress port,
    /// returned hop by hop; no drops; each egress serves ingress heads round robin.
    pub credits: Option<u32>,
    /// Fastpass: one more switch port (index `nodes`) for the arbiter.
    pub arbiter_port: bool,
    /// Seed for the switch's random choices (RED marking).
    pub seed: u64,
}

impl PacketConfig {
    /// Raw Ethernet: MAC + PHY only, layer-2 forwarding (Table 1).
    pub fn raw_ethernet() -> PacketConfig {
        PacketConfig {
            host_stack_ps: 0,
            host_nic_ps: ETH_MAC_PS + ETH_PCS_PS,
            switch_in_ps: ETH_MAC_PS + ETH_PCS_PS + L2_FORWARD_PS,
            switch_out_ps: ETH_MAC_PS + ETH_PCS_PS,
            framing: Framing::Ethernet {
                header: RAW_TRANSPORT_HEADER_BYTES,
                mss: ETH_MTU_PAYLOAD_BYTES - RAW_TRANSPORT_HEADER_BYTES,
            },
            buffer_bytes: 0,
            ecn: Ecn::Off,
            discipline: Discipline::Fifo,
            pfc: None,
            credits: None,
            arbiter_port: false,
            seed: 1,
        }
    }
}

/// Counters every packet baseline reports.
#[derive(Clone, Debug, Default)]
pub struct PacketStats {
    pub drops: u64,
    pub ecn_marks: u64,
    pub pauses: u64,
    pub max_queue_bytes: u64,
    /// Most bytes from one ingress held in the switch (PFC accounting).
    pub max_ingress_bytes: u64,
    pub retransmissions: u64,
    pub timeouts: u64,
    /// Time-averaged bytes queued at the egress with the largest average.
    pub mean_queue_bytes_busiest: f64,
}

impl Totals {
    /// The packet fabric's counters of this run (all 0 for another protocol's run).
    pub fn packet(&self) -> &PacketStats {
        static NONE: LazyLock<PacketStats> = LazyLock::new(PacketStats::default);
        self.counters().unwrap_or(&NONE)
    }
}

/// Bytes of a message's request, write-data and response flows: the same
/// memory header EDM's messages carry (docs/protocol.md), over each transport.
pub fn request_bytes(m: &MessageSpec) -> u32 {
    match m.op {
        Op::Read => HDR_BYTES + RREQ_EXT_BYTES,
        Op::Write => HDR_BYTES + WREQ_EXT_BYTES + m.size,
        Op::Rmw => HDR_BYTES + RMW_EXT_BYTES,
    }
}

pub fn response_bytes(m: &MessageSpec) -> u32 {
    HDR_BYTES
        + RRES_EXT_BYTES
        + match m.op {
            Op::Rmw => RMW_RESULT_BYTES,
            _ => m.size,
        }
}

/// The data packets of `flow` (`f`), each with its byte offset in `aux`.
pub fn flow_packets(framing: Framing, flow: u32, f: &Flow) -> impl Iterator<Item = Packet> {
    let (src, dst, bytes) = (f.src, f.dst, f.bytes);
    (0..framing.packets(bytes)).map(move |i| {
        data_packet(
            framing,
            src,
            dst,
            flow,
            i * framing.mss(),
            framing.payload(bytes, i),
        )
    })
}

/// One data packet of `flow` carrying `payload` bytes from byte `offset`.
pub fn data_packet(
    framing: Framing,
    src: u16,
    dst: u16,
    flow: u32,
    offset: u32,
    payload: u32,
) -> Packet {
    let mut p = Packet::new(src, dst, PacketKind::Data, framing.wire(payload));
    p.payload = payload;
    p.flow = flow;
    p.aux = offset as u64;
    p
}

/// Whether `p` (made by [`data_packet`]) carries the last byte of its flow `f`.
pub fn ends_flow(p: &Packet, f: &Flow) -> bool {
    p.aux as u32 + p.payload == f.bytes
}

/// A baseline: how flows cross the packet fabric.
pub trait Transport {
    fn name(&self) -> &'static str;
    /// The packet fabric it runs on.
    fn packet_config(&self) -> &PacketConfig;
    /// Flow `flow` is ready at its source.
    fn on_flow(&mut self, net: &mut Net, now: Ps, flow: u32);
    /// Host `h`'s uplink is free: the packet to send now, if any. (A host
    /// paused by PFC or out of CXL credits is not asked.)
    fn next_packet(&mut self, net: &mut Net, now: Ps, h: u16) -> Option<Packet>;
    /// A packet reached host `h` (after its receive stack).
    fn on_packet(&mut self, net: &mut Net, now: Ps, h: u16, p: Packet);
    fn on_timer(&mut self, net: &mut Net, now: Ps, h: u16, token: u64);
    /// Fresh state for a new run.
    fn reset(&mut self, nodes: usize);
}
