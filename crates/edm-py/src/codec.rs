//! The reference codec for Python (`edm._core`; wrapped by `python/edm/protocol/codec.py`).
//! Blocks are `(sync, payload)` tuples; messages cross as a tuple of fields in
//! the order of `edm.protocol.codec.Message`.
use edm_proto::control::{
    decode_control as decode_control_block, encode_control, implied_seq as implied_seq_of, Control,
    ControlKind,
};
use edm_proto::message::{self, Kind, Message};
use edm_proto::mux::{self, Event, Policy};
use edm_proto::{overhead, pcs, Block};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};
use std::fmt::Display;

create_exception!(
    _core,
    CodecError,
    PyValueError,
    "Input the EDM codec rejects; the message says why."
);

/// A block as Python sees it.
type PyBlock = (u8, u64);
/// (data, ctrl) of one XGMII transfer.
type PyWord = (u64, u8);

fn codec_error(e: impl Display) -> PyErr {
    CodecError::new_err(e.to_string())
}

fn to_blocks(blocks: &[PyBlock]) -> Vec<Block> {
    blocks.iter().map(|&b| Block::from(b)).collect()
}

fn from_blocks(blocks: &[Block]) -> Vec<PyBlock> {
    blocks.iter().map(|&b| b.into()).collect()
}

/// A non-negative integer that fits `T`, or CodecError naming the field.
fn narrow<T: TryFrom<u64>>(value: &Bound<'_, PyAny>, name: &str) -> PyResult<T> {
    value
        .extract::<u64>()
        .ok()
        .and_then(|v| T::try_from(v).ok())
        .ok_or_else(|| codec_error(format!("{name} = {value} is out of range")))
}

fn kind_named(name: &str) -> PyResult<Kind> {
    Kind::from_name(name).ok_or_else(|| codec_error(format!("unknown message kind {name:?}")))
}

fn message_tuple<'py>(py: Python<'py>, m: &Message) -> PyResult<Bound<'py, PyTuple>> {
    (
        m.kind.name(),
        m.src,
        m.dst,
        m.msg_id,
        m.len,
        m.addr,
        m.seq,
        m.last,
        m.op,
        m.arg0,
        m.arg1,
        PyBytes::new(py, &m.data),
    )
        .into_pyobject(py)
}

/// The blocks of a memory message given its fields (see `edm.protocol.codec.encode_message`).
#[pyfunction]
#[allow(clippy::too_many_arguments)] // one argument per message field
fn encode_message(
    kind: &str,
    src: &Bound<'_, PyAny>,
    dst: &Bound<'_, PyAny>,
    msg_id: &Bound<'_, PyAny>,
    length: &Bound<'_, PyAny>,
    addr: &Bound<'_, PyAny>,
    seq: &Bound<'_, PyAny>,
    last: &Bound<'_, PyAny>,
    op: &Bound<'_, PyAny>,
    arg0: &Bound<'_, PyAny>,
    arg1: &Bound<'_, PyAny>,
    data: &[u8],
) -> PyResult<Vec<PyBlock>> {
    let m = Message {
        kind: kind_named(kind)?,
        src: narrow(src, "src")?,
        dst: narrow(dst, "dst")?,
        msg_id: narrow(msg_id, "msg_id")?,
        len: narrow(length, "length")?,
        addr: narrow(addr, "addr")?,
        seq: narrow(seq, "seq")?,
        last: last.is_truthy()?,
        op: narrow(op, "op")?,
        arg0: narrow(arg0, "arg0")?,
        arg1: narrow(arg1, "arg1")?,
        data: data.to_vec(),
    };
    m.validate().map_err(codec_error)?;
    Ok(from_blocks(&message::encode(&m)))
}

/// The fields of the message carried by exactly these blocks (/MS/ /MD/* /MT/).
#[pyfunction]
fn decode_message<'py>(py: Python<'py>, blocks: Vec<PyBlock>) -> PyResult<Bound<'py, PyTuple>> {
    let m = message::decode(&to_blocks(&blocks)).map_err(codec_error)?;
    message_tuple(py, &m)
}

/// Blocks on the wire for a message of this kind ("RREQ", "WREQ", "RMWREQ",
/// "RRES") and header length (bytes to read for RREQ, payload bytes for WREQ/RRES).
#[pyfunction]
fn message_blocks(kind: &str, length: &Bound<'_, PyAny>) -> PyResult<usize> {
    Ok(message::message_blocks(
        kind_named(kind)?,
        narrow(length, "length")?,
    ))
}

fn control_block(
    kind: ControlKind,
    dst: &Bound<'_, PyAny>,
    msg_id: &Bound<'_, PyAny>,
    size: &Bound<'_, PyAny>,
    seq: &Bound<'_, PyAny>,
) -> PyResult<PyBlock> {
    let c = Control {
        kind,
        dst: narrow(dst, "dst")?,
        msg_id: narrow(msg_id, "msg_id")?,
        size: narrow(size, "size")?,
    };
    encode_control(&c, narrow(seq, "seq")?)
        .map(Block::into)
        .map_err(codec_error)
}

/// The /N/ block announcing `size` message bytes for `dst`, message `msg_id`;
/// `seq` is its number among the link's control blocks (docs/protocol.md §5a).
#[pyfunction]
fn encode_notification(
    dst: &Bound<'_, PyAny>,
    msg_id: &Bound<'_, PyAny>,
    size: &Bound<'_, PyAny>,
    seq: &Bound<'_, PyAny>,
) -> PyResult<PyBlock> {
    control_block(ControlKind::Notification, dst, msg_id, size, seq)
}

/// The /G/ block granting `size` bytes of message (`dst`, `msg_id`), number
/// `seq` among the link's control blocks.
#[pyfunction]
fn encode_grant(
    dst: &Bound<'_, PyAny>,
    msg_id: &Bound<'_, PyAny>,
    size: &Bound<'_, PyAny>,
    seq: &Bound<'_, PyAny>,
) -> PyResult<PyBlock> {
    control_block(ControlKind::Grant, dst, msg_id, size, seq)
}

/// The /A/ block telling `peer` which of the ids `base` .. `base` + 15 were
/// applied (bit k of `applied`: id base + k), number `seq` among the link's
/// control blocks (docs/protocol.md §4b).
#[pyfunction]
fn encode_ack(
    peer: &Bound<'_, PyAny>,
    base: &Bound<'_, PyAny>,
    applied: &Bound<'_, PyAny>,
    seq: &Bound<'_, PyAny>,
) -> PyResult<PyBlock> {
    control_block(ControlKind::Ack, peer, base, applied, seq)
}

/// ("N" | "G" | "A", dst, msg_id, size) of an /N/, /G/ or /A/ block numbered
/// `seq` on its link (an /A/'s size is its map of ids applied).
#[pyfunction]
fn decode_control(
    block: PyBlock,
    seq: &Bound<'_, PyAny>,
) -> PyResult<(&'static str, u16, u8, u16)> {
    let c = decode_control_block(block.into(), narrow(seq, "seq")?).map_err(codec_error)?;
    Ok((c.kind.name(), c.dst, c.msg_id, c.size))
}

/// The sequence number for which an /N/ or /G/ block's CRC-8 checks.
#[pyfunction]
fn implied_seq(block: PyBlock) -> u8 {
    implied_seq_of(block.into())
}

/// The blocks of one Ethernet frame (destination address .. FCS), /S/ in lane 0.
#[pyfunction]
fn encode_frame(frame: &[u8]) -> Vec<PyBlock> {
    from_blocks(&pcs::encode_frame(frame))
}

/// The bytes of the frame carried by exactly these consecutive blocks (/S/ .. /T/).
#[pyfunction]
fn decode_frame<'py>(py: Python<'py>, blocks: Vec<PyBlock>) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = pcs::decode_frame(&to_blocks(&blocks)).map_err(codec_error)?;
    Ok(PyBytes::new(py, &bytes))
}

/// Clause 49 encoding of XGMII (data, ctrl) words; lane i = data bits [8i+7:8i], ctrl bit i.
#[pyfunction]
fn xgmii_encode(words: Vec<PyWord>) -> PyResult<Vec<PyBlock>> {
    pcs::xgmii_encode(&words)
        .map(|b| from_blocks(&b))
        .map_err(codec_error)
}

/// Clause 49 decoding of blocks to XGMII (data, ctrl) words.
#[pyfunction]
fn xgmii_decode(blocks: Vec<PyBlock>) -> PyResult<Vec<PyWord>> {
    pcs::xgmii_decode(&to_blocks(&blocks)).map_err(codec_error)
}

/// Arrival slots, all 0 when not given.
fn arrival_times(times: Option<Vec<u64>>, count: usize, name: &str) -> PyResult<Vec<u64>> {
    let times = times.unwrap_or_else(|| vec![0; count]);
    if times.len() != count {
        return Err(codec_error(format!(
            "{name} has {} entries for {count} items",
            times.len()
        )));
    }
    Ok(times)
}

/// The line block stream: frames (bytes) and memory units (block lists)
/// multiplexed under `policy` ("fair" or "strict"), each arriving at the given
/// block slot (default 0), until everything is sent.
#[pyfunction]
#[pyo3(signature = (frames, units, policy = "fair", frame_times = None, unit_times = None))]
fn tx_mux(
    frames: Vec<Bound<'_, PyBytes>>,
    units: Vec<Vec<PyBlock>>,
    policy: &str,
    frame_times: Option<Vec<u64>>,
    unit_times: Option<Vec<u64>>,
) -> PyResult<Vec<PyBlock>> {
    let policy = Policy::from_name(policy)
        .ok_or_else(|| codec_error(format!("unknown policy {policy:?}")))?;
    let frame_times = arrival_times(frame_times, frames.len(), "frame_times")?;
    let unit_times = arrival_times(unit_times, units.len(), "unit_times")?;
    let frames: Vec<(u64, Vec<Block>)> = frame_times
        .into_iter()
        .zip(&frames)
        .map(|(t, f)| (t, pcs::encode_frame(f.as_bytes())))
        .collect();
    let units: Vec<(u64, Vec<Block>)> = unit_times
        .into_iter()
        .zip(&units)
        .map(|(t, u)| (t, to_blocks(u)))
        .collect();
    Ok(from_blocks(&mux::tx_mux(&frames, &units, policy)))
}

/// The RX demultiplexer: `push(block)` returns the events the block completes.
#[pyclass(name = "RxDemux", module = "edm._core")]
struct PyRxDemux(mux::RxDemux);

#[pymethods]
impl PyRxDemux {
    #[new]
    fn new() -> Self {
        PyRxDemux(mux::RxDemux::new())
    }

    /// Events: ("message", fields) | ("notification" | "grant" | "ack", dst, msg_id, size)
    /// | ("frame", bytes) | ("error", counter name).
    fn push<'py>(&mut self, py: Python<'py>, block: PyBlock) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        self.0
            .push(block.into())
            .iter()
            .map(|event| match event {
                Event::Message(m) => ("message", message_tuple(py, m)?).into_pyobject(py),
                Event::Control(c) => {
                    let name = match c.kind {
                        ControlKind::Notification => "notification",
                        ControlKind::Grant => "grant",
                        ControlKind::Ack => "ack",
                    };
                    (name, c.dst, c.msg_id, c.size).into_pyobject(py)
                }
                Event::Frame { bytes, .. } => ("frame", PyBytes::new(py, bytes)).into_pyobject(py),
                Event::Error(e) => ("error", e.name()).into_pyobject(py),
            })
            .collect()
    }

    /// The number of the /N/ or /G/ the receiver expects next on its link.
    #[getter]
    fn expected_seq(&self) -> u8 {
        self.0.control_rx.expected
    }

    /// Every counter by name.
    #[getter]
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (name, value) in self.0.counters.named() {
            d.set_item(name, value)?;
        }
        Ok(d)
    }
}

/// The self-synchronizing x^58+x^39+1 scrambler; state defaults to all ones.
#[pyclass(name = "Scrambler", module = "edm._core")]
struct PyScrambler(pcs::Scrambler);

#[pymethods]
impl PyScrambler {
    #[new]
    #[pyo3(signature = (state = None))]
    fn new(state: Option<u64>) -> Self {
        PyScrambler(state.map_or_else(pcs::Scrambler::default, pcs::Scrambler::new))
    }

    fn scramble(&mut self, payload: u64) -> u64 {
        self.0.scramble(payload)
    }

    #[getter]
    fn state(&self) -> u64 {
        self.0.state
    }
}

/// The matching descrambler; it locks to the sender after 58 bits.
#[pyclass(name = "Descrambler", module = "edm._core")]
struct PyDescrambler(pcs::Descrambler);

#[pymethods]
impl PyDescrambler {
    #[new]
    #[pyo3(signature = (state = None))]
    fn new(state: Option<u64>) -> Self {
        PyDescrambler(state.map_or_else(pcs::Descrambler::default, pcs::Descrambler::new))
    }

    fn descramble(&mut self, payload: u64) -> u64 {
        self.0.descramble(payload)
    }

    #[getter]
    fn state(&self) -> u64 {
        self.0.state
    }
}

/// Wire cost of an RREQ and a 64-byte WREQ in EDM versus Ethernet frames.
#[pyfunction]
fn overhead_table(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    overhead::overhead_table()
        .into_iter()
        .map(|r| {
            let d = PyDict::new(py);
            d.set_item("operation", r.operation)?;
            d.set_item("edm_blocks", r.edm_blocks)?;
            d.set_item("edm_bits", r.edm_bits)?;
            d.set_item("ethernet_frame_bytes", r.ethernet_frame_bytes)?;
            d.set_item("ethernet_wire_bytes", r.ethernet_wire_bytes)?;
            d.set_item("ethernet_bits", r.ethernet_bits)?;
            d.set_item("ethernet_blocks", r.ethernet_blocks)?;
            d.set_item("ratio", r.ratio)?;
            Ok(d)
        })
        .collect()
}

/// A request's address word for byte `vaddr` of address space `asid`.
#[pyfunction]
fn space_address(asid: &Bound<'_, PyAny>, vaddr: &Bound<'_, PyAny>) -> PyResult<u64> {
    let asid: u16 = narrow(asid, "asid")?;
    let vaddr: u64 = narrow(vaddr, "vaddr")?;
    message::space_address(asid, vaddr).ok_or_else(|| {
        codec_error(format!(
            "vaddr = {vaddr:#x} does not fit an address space ({:#x} bytes)",
            message::SPACE_BYTES
        ))
    })
}

/// The (asid, vaddr) a request's address word names.
#[pyfunction]
fn split_space_address(addr: &Bound<'_, PyAny>) -> PyResult<(u16, u64)> {
    Ok(message::split_space_address(narrow(addr, "addr")?))
}

/// Adds the codec's functions, classes and CodecError to `module`.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("CodecError", module.py().get_type::<CodecError>())?;
    module.add_class::<PyRxDemux>()?;
    module.add_class::<PyScrambler>()?;
    module.add_class::<PyDescrambler>()?;
    for function in [
        wrap_pyfunction!(encode_message, module)?,
        wrap_pyfunction!(decode_message, module)?,
        wrap_pyfunction!(message_blocks, module)?,
        wrap_pyfunction!(encode_notification, module)?,
        wrap_pyfunction!(encode_grant, module)?,
        wrap_pyfunction!(encode_ack, module)?,
        wrap_pyfunction!(decode_control, module)?,
        wrap_pyfunction!(implied_seq, module)?,
        wrap_pyfunction!(encode_frame, module)?,
        wrap_pyfunction!(decode_frame, module)?,
        wrap_pyfunction!(xgmii_encode, module)?,
        wrap_pyfunction!(xgmii_decode, module)?,
        wrap_pyfunction!(tx_mux, module)?,
        wrap_pyfunction!(overhead_table, module)?,
        wrap_pyfunction!(space_address, module)?,
        wrap_pyfunction!(split_space_address, module)?,
    ] {
        module.add_function(function)?;
    }
    Ok(())
}
