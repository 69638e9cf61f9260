//! What moves through one EDM run (`sim.rs`): a message's handle (`Msg`),
//! the units on the links and the events that carry them (`Ev`).
use crate::workload::{MessageSpec, Op};

/// What a unit on a link is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnitKind {
    /// /N/ for a write.
    Notify,
    /// An RREQ or RMWREQ from the requester (the implicit notification).
    Request,
    /// /G/ to a data source.
    Grant,
    /// The RREQ/RMWREQ forwarded to the memory node: the response's first grant.
    ForwardedRequest,
    /// One chunk of WREQ or RRES data.
    Data,
}

/// What the handlers need of a message, carried by its units (so that events
/// need not look the message up: a cache miss per event on large workloads).
#[derive(Clone, Copy, Debug)]
pub(super) struct Msg {
    /// Payload bytes; for a mega-message, its members' bytes and the headers
    /// between them (`Batching::fold`).
    pub(super) size: u32,
    pub(super) requester: u16,
    pub(super) memory: u16,
    /// Messages it carries (more than 1: a mega-message).
    pub(super) count: u16,
    pub(super) op: Op,
}

impl Msg {
    pub(super) fn of(m: &MessageSpec) -> Msg {
        Msg {
            size: m.size,
            requester: m.requester,
            memory: m.memory,
            count: 1,
            op: m.op,
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Unit {
    pub(super) kind: UnitKind,
    pub(super) msg: u32,
    pub(super) spec: Msg,
    /// Data bytes granted or carried.
    pub(super) bytes: u32,
    pub(super) last: bool,
    pub(super) blocks: u32,
    /// With lossy links: the chunk it grants or carries (`Sim::chunks`,
    /// retries keep the first grant's); else `NO_CHUNK`.
    pub(super) chunk: u32,
    /// The switch plane it travels on (0; 1: the dual switch's second).
    pub(super) plane: u8,
}

/// A unit that is no granted chunk (or links that lose nothing).
pub(super) const NO_CHUNK: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
pub(super) enum Ev {
    Issue(u32),
    HostSend(u16, Unit),
    /// Plane `.0`'s link of host `.1` (up, or the switch egress down to it)
    /// may send its next unit.
    UplinkFree(u8, u16),
    DownlinkFree(u8, u16),
    /// First block of a unit at the switch from host `.0`.
    SwitchIn(u16, Unit),
    /// A unit ready at the switch egress toward host `.0`.
    SwitchOut(u16, Unit),
    /// Last block of a unit at host `.0`.
    HostIn(u16, Unit),
    /// Plane `.0`'s scheduler looks for an iteration to run.
    SchedulerTick(u8),
    /// Zero-queue mode: host `.1` looks again at its /N/ and requests
    /// waiting for plane `.0`.
    HostControl(u8, u16),
    /// Message (or mega-message) `.0` has finished at its requester: a
    /// write's last data block has left it, a read's response has arrived.
    Finished(u32, Msg),
    /// Plane `.0`'s scheduler looks at notifications that became visible
    /// (see `Plane::notify_wakes`).
    NotifyTick(u8),
    /// Lossy links: the requester looks whether the /N/ or request `.0`
    /// has been granted, else sends it again.
    NotifyCheck(Unit),
    /// Lossy links: the switch looks whether grant `.0`'s chunk arrived
    /// intact, else grants it again.
    ChunkCheck(Unit),
    /// Read or RMW `.0`'s timeout.
    ReadTimeout(u32),
    /// Lossy links: message `.0` is given up unless completed.
    GiveUp(u32),
    /// Lossy links: an /A/ acknowledging write `.0` reaches its requester.
    AckIn(u32),
    /// Plane `.0`'s switch fails: it drops what it holds (docs/faults.md §4).
    SwitchFails(u8),
    /// Plane `.0`'s switch sees its port to host `.1` go down (`.2`) or
    /// come back: it refuses the demand to and from it meanwhile.
    PortSeen(u8, u16, bool),
}

impl Ev {
    /// The switch plane the event happens on (None: at a host, on none).
    #[inline(always)]
    pub(super) fn plane(&self) -> Option<u8> {
        match *self {
            Ev::HostSend(_, u)
            | Ev::SwitchIn(_, u)
            | Ev::SwitchOut(_, u)
            | Ev::HostIn(_, u)
            | Ev::NotifyCheck(u)
            | Ev::ChunkCheck(u) => Some(u.plane),
            Ev::UplinkFree(p, _)
            | Ev::DownlinkFree(p, _)
            | Ev::HostControl(p, _)
            | Ev::SchedulerTick(p)
            | Ev::NotifyTick(p)
            | Ev::SwitchFails(p)
            | Ev::PortSeen(p, ..) => Some(p),
            Ev::Issue(_) | Ev::Finished(..) | Ev::ReadTimeout(_) | Ev::GiveUp(_) | Ev::AckIn(_) => {
                None
            }
        }
    }
}
