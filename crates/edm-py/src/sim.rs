//! The simulator for Python (`edm._core`; wrapped by `python/edm/sim/`).
//! Configuration arrives as plain dicts already validated and defaulted by
//! `edm.sim.config`; results leave as columns for a pandas DataFrame.
use edm_proto::message::Kind;
use edm_sim::background::BackgroundConfig;
use edm_sim::baselines::{baseline_with, BaselineParams, BASELINES};
use edm_sim::config::{EdmConfig, FabricConfig, MemoryOrder, Priority, Ps};
use edm_sim::edm::Edm;
use edm_sim::engine::Protocol;
use edm_sim::scheduler::Scheduler as CoreScheduler;
use edm_sim::workload::{assign_addresses, MessageSpec, Op, OpenLoop, Roles, SizeCdf};
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyDict};

fn get<'py, T: FromPyObject<'py>>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<T> {
    d.get_item(key)?
        .ok_or_else(|| PyKeyError::new_err(format!("missing config field {key:?}")))?
        .extract()
        .map_err(|e| PyValueError::new_err(format!("config field {key:?}: {e}")))
}

fn priority(name: &str) -> PyResult<Priority> {
    Priority::from_name(name)
        .ok_or_else(|| PyValueError::new_err(format!("priority: {name:?} is not srpt or fcfs")))
}

fn fabric_config(d: &Bound<'_, PyDict>) -> PyResult<FabricConfig> {
    let f = FabricConfig {
        nodes: get(d, "nodes")?,
        link_gbps: get(d, "link_gbps")?,
        prop_ps: get(d, "prop_ps")?,
        phy_ps: get(d, "phy_ps")?,
        cycle_ps: get(d, "cycle_ps")?,
        scheduler_cycle_ps: get(d, "scheduler_cycle_ps")?,
        dram_ps: get(d, "dram_ps")?,
    };
    f.validate().map_err(PyValueError::new_err)?;
    Ok(f)
}

fn edm_config(d: &Bound<'_, PyDict>) -> PyResult<EdmConfig> {
    let c = EdmConfig {
        chunk_bytes: get(d, "chunk_bytes")?,
        max_active_notifs: get(d, "max_active_notifs")?,
        priority: priority(&get::<String>(d, "priority")?)?,
        max_iterations: get(d, "max_iterations")?,
        priority_hold: get(d, "priority_hold")?,
        egress_feedback: get_or_default::<u32>(d, "egress_feedback")? != 0,
        zero_queue: get_or_default::<u32>(d, "zero_queue")? != 0,
        start_delay: get_or_default::<u32>(d, "start_delay")? != 0,
        early_grant_ps: match get_or_default::<i64>(d, "early_grant_ps")? {
            e if e < 0 => None,
            e => Some(e as Ps),
        },
        memory_order: match d.get_item("memory_order")? {
            None => MemoryOrder::Pair,
            Some(v) => {
                let name: String = v.extract()?;
                MemoryOrder::from_name(&name).ok_or_else(|| {
                    PyValueError::new_err(format!("memory_order: {name:?} is not pair or address"))
                })?
            }
        },
        pipelined_matching: get_or_default::<u32>(d, "pipelined_matching")? != 0,
        batch_bytes: get_or_default(d, "batch_bytes")?,
        background: BackgroundConfig {
            load: get_or_default(d, "background_load")?,
            frame_bytes: get_or_default::<u32>(d, "background_frame_bytes")?.max(64),
            preemption: get_or_default::<u32>(d, "background_preemption")? != 0,
            seed: get_or_default(d, "seed")?,
        },
    };
    c.validate().map_err(PyValueError::new_err)?;
    Ok(c)
}

/// A field of `d` if present, else its type's default (0: the protocol's own).
fn get_or_default<'py, T: FromPyObject<'py> + Default>(
    d: &Bound<'py, PyDict>,
    key: &str,
) -> PyResult<T> {
    if d.contains(key)? {
        get(d, key)
    } else {
        Ok(T::default())
    }
}

/// Overrides of the baselines' defaults (docs/simulator.md, "Baselines").
fn baseline_params(d: &Bound<'_, PyDict>) -> PyResult<BaselineParams> {
    let p = BaselineParams {
        switch_buffer_bytes: get_or_default(d, "switch_buffer_bytes")?,
        dctcp_k_bytes: get_or_default(d, "dctcp_k_bytes")?,
        dctcp_init_cwnd: get_or_default(d, "dctcp_init_cwnd")?,
        dctcp_ack_every: get_or_default(d, "dctcp_ack_every")?,
        pfabric_window_packets: get_or_default(d, "pfabric_window_packets")?,
        dcqcn_kmin_bytes: get_or_default(d, "dcqcn_kmin_bytes")?,
        dcqcn_kmax_bytes: get_or_default(d, "dcqcn_kmax_bytes")?,
        dcqcn_pmax: get_or_default(d, "dcqcn_pmax")?,
        pfc_xoff_bytes: get_or_default(d, "pfc_xoff_bytes")?,
        cxl_credits: get_or_default(d, "cxl_credits")?,
        ird_window_bytes: get_or_default(d, "ird_window_bytes")?,
    };
    p.validate().map_err(PyValueError::new_err)?;
    Ok(p)
}

fn op_from_code(code: u8) -> PyResult<Op> {
    match code {
        0 => Ok(Op::Read),
        1 => Ok(Op::Write),
        2 => Ok(Op::Rmw),
        _ => Err(PyValueError::new_err(format!(
            "op code {code} is not 0 (read), 1 (write) or 2 (rmw)"
        ))),
    }
}

fn op_code(op: Op) -> u8 {
    match op {
        Op::Read => 0,
        Op::Write => 1,
        Op::Rmw => 2,
    }
}

/// Columns cross to and from Python as raw bytes in native byte order (what
/// numpy's `tobytes()` writes and `np.frombuffer` reads): one copy, no
/// per-element Python objects.
fn column<const W: usize, T>(name: &str, bytes: &[u8], from: fn([u8; W]) -> T) -> PyResult<Vec<T>> {
    let chunks = bytes.chunks_exact(W);
    if !chunks.remainder().is_empty() {
        return Err(PyValueError::new_err(format!(
            "{name}: {} bytes is not a whole number of {W}-byte values",
            bytes.len()
        )));
    }
    Ok(chunks
        .map(|c| from(c.try_into().expect("chunks_exact")))
        .collect())
}

/// `n` values of `W` bytes each, written by `at(i)`, as a (writable) bytearray.
fn to_bytes<'py, const W: usize>(
    py: Python<'py>,
    n: usize,
    at: impl Fn(usize) -> [u8; W],
) -> PyResult<Bound<'py, PyByteArray>> {
    PyByteArray::new_with(py, n * W, |buf| {
        for (i, c) in buf.chunks_exact_mut(W).enumerate() {
            c.copy_from_slice(&at(i));
        }
        Ok(())
    })
}

/// A workload as columns of bytes (see [`column`]): op codes (u8), requesters
/// and memory nodes (u16), sizes (u32), issue times (u64).
type Columns<'py> = (
    Bound<'py, PyByteArray>,
    Bound<'py, PyByteArray>,
    Bound<'py, PyByteArray>,
    Bound<'py, PyByteArray>,
    Bound<'py, PyByteArray>,
);

/// Most messages one generated workload may hold (about 32 bytes each in
/// memory): past it a typo would abort the process on allocation.
const MAX_MESSAGES: usize = 100_000_000;

/// The open-loop workload described by `w` (sizes as CDF points in `unit` bytes).
#[pyfunction]
fn generate_open_loop<'py>(py: Python<'py>, w: &Bound<'py, PyDict>) -> PyResult<Columns<'py>> {
    let memory_nodes: usize = get(w, "memory_nodes")?;
    let nodes: usize = get(w, "nodes")?;
    let max_ports = edm_proto::spec::MAX_PORTS as usize;
    if !(2..=max_ports).contains(&nodes) {
        return Err(PyValueError::new_err(format!(
            "nodes: {nodes} is not in 2..{max_ports}"
        )));
    }
    let messages: usize = get(w, "messages")?;
    if !(1..=MAX_MESSAGES).contains(&messages) {
        return Err(PyValueError::new_err(format!(
            "messages: {messages} is not in 1..{MAX_MESSAGES}"
        )));
    }
    let sizes = SizeCdf::new(get(w, "cdf")?, get(w, "unit")?).map_err(PyValueError::new_err)?;
    let gen = OpenLoop {
        nodes,
        roles: if memory_nodes == 0 {
            Roles::AllToAll
        } else {
            Roles::Split {
                memory: memory_nodes,
            }
        },
        link_gbps: get(w, "link_gbps")?,
        load: get(w, "load")?,
        write_ratio: get(w, "write_ratio")?,
        sizes,
        messages,
        seed: get(w, "seed")?,
    };
    gen.validate().map_err(PyValueError::new_err)?;
    let msgs = gen.generate();
    let n = msgs.len();
    Ok((
        to_bytes(py, n, |i| [op_code(msgs[i].op)])?,
        to_bytes(py, n, |i| msgs[i].requester.to_ne_bytes())?,
        to_bytes(py, n, |i| msgs[i].memory.to_ne_bytes())?,
        to_bytes(py, n, |i| msgs[i].size.to_ne_bytes())?,
        to_bytes(py, n, |i| msgs[i].issue_ps.to_ne_bytes())?,
    ))
}

/// The protocol called `name` (EDM or a baseline) on this fabric; `params`
/// holds EDM's fields and any baseline overrides.
fn protocol(
    name: &str,
    f: FabricConfig,
    params: &Bound<'_, PyDict>,
) -> PyResult<Box<dyn Protocol>> {
    if name == "edm" {
        return Ok(Box::new(Edm::new(f, edm_config(params)?)));
    }
    baseline_with(name, &f, &baseline_params(params)?).ok_or_else(|| {
        PyValueError::new_err(format!(
            "protocol: {name:?} is not edm or one of {:?}",
            BASELINES
        ))
    })
}

/// Latency (ps) of one message alone in the network under `name`.
#[pyfunction]
fn alone_ps(
    name: &str,
    fabric: &Bound<'_, PyDict>,
    params: &Bound<'_, PyDict>,
    op: u8,
    size: u32,
) -> PyResult<Ps> {
    let f = fabric_config(fabric)?;
    let p = protocol(name, f, params)?;
    let m = MessageSpec {
        op: op_from_code(op)?,
        requester: 0,
        memory: 1,
        size,
        issue_ps: 0,
        ..Default::default()
    };
    Ok(p.alone_ps(&m))
}

/// Runs protocol `name` on the messages given as columns (sorted by issue
/// time); returns (complete_ps with -1 for unfinished, alone_ps, totals dict).
#[pyfunction]
#[pyo3(signature = (name, fabric, params, op, requester, memory, size, issue_ps, progress=None, addr=None, fence=None))]
#[allow(clippy::too_many_arguments)]
fn run_protocol<'py>(
    py: Python<'py>,
    name: &str,
    fabric: &Bound<'py, PyDict>,
    params: &Bound<'py, PyDict>,
    op: &[u8],
    requester: &[u8],
    memory: &[u8],
    size: &[u8],
    issue_ps: &[u8],
    progress: Option<PyObject>,
    addr: Option<&[u8]>,
    fence: Option<&[u8]>,
) -> PyResult<(
    Bound<'py, PyByteArray>,
    Bound<'py, PyByteArray>,
    Bound<'py, PyDict>,
)> {
    let f = fabric_config(fabric)?;
    let requester = column("requester", requester, u16::from_ne_bytes)?;
    let memory = column("memory", memory, u16::from_ne_bytes)?;
    let size = column("size", size, u32::from_ne_bytes)?;
    let issue_ps = column("issue_ps", issue_ps, Ps::from_ne_bytes)?;
    let addr = addr
        .map(|a| column("addr", a, u64::from_ne_bytes))
        .transpose()?;
    let n = op.len();
    if addr.as_ref().is_some_and(|a| a.len() != n) || fence.is_some_and(|f| f.len() != n) {
        return Err(PyValueError::new_err("message columns differ in length"));
    }
    if [requester.len(), memory.len(), size.len(), issue_ps.len()]
        .iter()
        .any(|&l| l != n)
    {
        return Err(PyValueError::new_err("message columns differ in length"));
    }
    let mut msgs = Vec::with_capacity(n);
    for i in 0..n {
        let m = MessageSpec {
            op: op_from_code(op[i])?,
            requester: requester[i],
            memory: memory[i],
            size: size[i],
            issue_ps: issue_ps[i],
            addr: addr.as_ref().map_or(0, |a| a[i]),
            fence: fence.is_some_and(|f| f[i] != 0),
        };
        if m.requester as usize >= f.nodes
            || m.memory as usize >= f.nodes
            || m.requester == m.memory
        {
            return Err(PyValueError::new_err(format!(
                "message {i}: requester {} and memory {} must be distinct nodes below {}",
                m.requester, m.memory, f.nodes
            )));
        }
        if m.size == 0 {
            return Err(PyValueError::new_err(format!(
                "message {i}: size must be positive"
            )));
        }
        if i > 0 && m.issue_ps < msgs.last().map_or(0, |p: &MessageSpec| p.issue_ps) {
            return Err(PyValueError::new_err(format!(
                "message {i}: not sorted by issue time"
            )));
        }
        msgs.push(m);
    }
    if addr.is_none() {
        // Addresses drawn from their own stream of the run's seed.
        let space: u64 = get_or_default(params, "address_space_bytes")?;
        let seed: u64 = get_or_default(params, "seed")?;
        assign_addresses(&mut msgs, space.max(64), seed);
    }
    let mut model = protocol(name, f, params)?;
    let mut callback_error = None;
    let mut report = |done: u64, total: u64| {
        if let (Some(cb), None) = (&progress, &callback_error) {
            if let Err(e) = cb.call1(py, (done, total)) {
                callback_error = Some(e);
            }
        }
    };
    let out = model.run(&msgs, &mut report);
    if let Some(e) = callback_error {
        return Err(e);
    }
    let t = &out.totals;
    let totals = PyDict::new(py);
    totals.set_item("events", t.events)?;
    totals.set_item("end_ps", t.end_ps)?;
    totals.set_item("uplink_util_mean", t.uplink_util_mean)?;
    totals.set_item("uplink_util_max", t.uplink_util_max)?;
    totals.set_item("downlink_util_mean", t.downlink_util_mean)?;
    totals.set_item("downlink_util_max", t.downlink_util_max)?;
    totals.set_item("max_switch_data_queue", t.max_switch_data_queue)?;
    totals.set_item("max_switch_data_wait_ps", t.max_switch_data_wait_ps)?;
    totals.set_item("switch_data_conflicts", t.edm.switch_data_conflicts)?;
    totals.set_item("max_grant_wait_ps", t.edm.max_grant_wait_ps)?;
    totals.set_item("max_request_wait_ps", t.edm.max_request_wait_ps)?;
    totals.set_item("max_notification_queue", t.edm.max_notification_queue)?;
    totals.set_item("scheduler_iterations", t.edm.scheduler_iterations)?;
    totals.set_item("delivered_bytes", t.delivered_bytes)?;
    totals.set_item("drops", t.packet.drops)?;
    totals.set_item("ecn_marks", t.packet.ecn_marks)?;
    totals.set_item("pauses", t.packet.pauses)?;
    totals.set_item("retransmissions", t.packet.retransmissions)?;
    totals.set_item("timeouts", t.packet.timeouts)?;
    totals.set_item("max_switch_queue_bytes", t.packet.max_queue_bytes)?;
    totals.set_item("max_ingress_bytes", t.packet.max_ingress_bytes)?;
    let fr = &t.edm.frames;
    let mut delays = fr.delays_ps.clone();
    delays.sort_unstable();
    let pct = |q: f64| -> f64 {
        if delays.is_empty() {
            f64::NAN
        } else {
            delays[((delays.len() - 1) as f64 * q).round() as usize] as f64
        }
    };
    totals.set_item("background_frames", fr.frames)?;
    totals.set_item(
        "frame_delay_mean_ps",
        if delays.is_empty() {
            f64::NAN
        } else {
            delays.iter().sum::<Ps>() as f64 / delays.len() as f64
        },
    )?;
    totals.set_item("frame_delay_p99_ps", pct(0.99))?;
    totals.set_item("memory_frame_waits", fr.memory_waits)?;
    totals.set_item("memory_frame_wait_total_ps", fr.memory_wait_total_ps)?;
    totals.set_item("memory_frame_wait_max_ps", fr.memory_wait_max_ps)?;
    let r = &out.records;
    Ok((
        to_bytes(py, r.len(), |i| {
            r[i].complete_ps.map_or(-1, |c| c as i64).to_ne_bytes()
        })?,
        to_bytes(py, r.len(), |i| r[i].alone_ps.to_ne_bytes())?,
        totals,
    ))
}

/// EDM's priority-PIM scheduler alone, stepped one scheduler cycle at a time
/// (the reference model for the RTL switch).
#[pyclass]
struct Scheduler {
    inner: CoreScheduler,
    ports: usize,
    cycle_ps: Ps,
    now: Ps,
    busy_until: Ps,
    in_flight: Vec<(Ps, u16, u16, u32, u32)>,
}

#[pymethods]
impl Scheduler {
    #[new]
    #[pyo3(signature = (ports, policy="srpt", chunk_bytes=256, link_gbps=100, cycle_ps=edm_proto::spec::CYCLE_PS, priority_hold=0, pipelined_matching=false, pair_order=true))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        ports: usize,
        policy: &str,
        chunk_bytes: u32,
        link_gbps: u32,
        cycle_ps: Ps,
        priority_hold: u32,
        pipelined_matching: bool,
        pair_order: bool,
    ) -> PyResult<Self> {
        let max_ports = edm_proto::spec::MAX_PORTS as usize;
        if !(2..=max_ports).contains(&ports) {
            return Err(PyValueError::new_err(format!(
                "ports: {ports} is not in 2..{max_ports}"
            )));
        }
        if chunk_bytes == 0 {
            return Err(PyValueError::new_err("chunk_bytes: 0 must be positive"));
        }
        if cycle_ps == 0 {
            return Err(PyValueError::new_err("cycle_ps: 0 must be positive"));
        }
        let block_ps = edm_proto::spec::block_ps(link_gbps).ok_or_else(|| {
            PyValueError::new_err(format!("link_gbps: {link_gbps} is not 10, 25, 100 or 400"))
        })?;
        let iteration = edm_proto::spec::SW_PIM_ITER_CYCLES as Ps * cycle_ps;
        let mut inner =
            CoreScheduler::new(ports, priority(policy)?, chunk_bytes, iteration, block_ps);
        // Not the paper's design; the RTL scheduler has it as HOLD (docs/simulator.md, "Priority hold").
        inner.hold_for_shorter(priority_hold);
        // EDM's own rules beside the paper's (docs/simulator.md).
        if pipelined_matching {
            inner.pipeline(cycle_ps);
        }
        if !pair_order {
            inner.without_pair_order();
        }
        Ok(Scheduler {
            inner,
            ports,
            cycle_ps,
            now: 0,
            busy_until: 0,
            in_flight: Vec::new(),
        })
    }

    /// A notification arriving this cycle (visible after the insert latency).
    #[pyo3(signature = (src, dst, msg_id, size, kind="WREQ"))]
    fn notify(&mut self, src: u16, dst: u16, msg_id: u32, size: u32, kind: &str) -> PyResult<()> {
        let kind = match kind {
            "WREQ" => Kind::Wreq,
            "RRES" => Kind::Rres,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "kind: {kind:?} is not WREQ or RRES"
                )))
            }
        };
        let ports = self.ports;
        if src as usize >= ports || dst as usize >= ports || src == dst {
            return Err(PyValueError::new_err(format!(
                "src {src} and dst {dst} must be distinct ports below {ports}"
            )));
        }
        if size == 0 {
            return Err(PyValueError::new_err("size: 0 must be positive"));
        }
        let visible = self.now + edm_proto::spec::SW_NQ_INSERT_CYCLES as Ps * self.cycle_ps;
        self.inner.notify(visible, src, dst, msg_id, size, kind, 0);
        Ok(())
    }

    /// Runs one scheduler cycle; returns the grants issued at its end as
    /// (src, dst, msg_id, bytes).
    fn step(&mut self) -> Vec<(u16, u16, u32, u32)> {
        if self.now >= self.busy_until && !self.inner.is_empty() {
            let it = self.inner.iterate(self.now);
            self.busy_until = self.now + self.inner.issue_interval_ps();
            self.in_flight.extend(
                it.grants
                    .iter()
                    .map(|g| (g.at, g.src, g.dst, g.msg, g.bytes)),
            );
        }
        self.now += self.cycle_ps;
        let now = self.now;
        let (due, later): (Vec<_>, Vec<_>) = self.in_flight.drain(..).partition(|g| g.0 <= now);
        self.in_flight = later;
        due.into_iter()
            .map(|(_, s, d, m, b)| (s, d, m, b))
            .collect()
    }

    /// The current cycle.
    #[getter]
    fn cycle(&self) -> u64 {
        self.now / self.cycle_ps
    }
}

/// EDM's scheduling levers of a configuration, as Python's config names them.
fn rules<'py>(py: Python<'py>, c: &EdmConfig) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item(
        "memory_order",
        match c.memory_order {
            MemoryOrder::Pair => "pair",
            MemoryOrder::Address => "address",
        },
    )?;
    d.set_item("pipelined_matching", c.pipelined_matching as u32)?;
    d.set_item("batch_bytes", c.batch_bytes)?;
    d.set_item("priority_hold", c.priority_hold)?;
    d.set_item("zero_queue", c.zero_queue as u32)?;
    d.set_item("start_delay", c.start_delay as u32)?;
    d.set_item("egress_feedback", c.egress_feedback as u32)?;
    Ok(d)
}

/// The levers' values of EDM's own rules (protocol "edm"): defined once, in
/// `EdmConfig::edm_rules`.
#[pyfunction]
fn edm_rules(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    rules(py, &EdmConfig::edm_rules())
}

/// The levers' values of the paper's rules (protocol "edm-paper").
#[pyfunction]
fn paper_rules(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    rules(py, &EdmConfig::paper())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(edm_rules, m)?)?;
    m.add_function(wrap_pyfunction!(paper_rules, m)?)?;
    m.add_function(wrap_pyfunction!(generate_open_loop, m)?)?;
    m.add_function(wrap_pyfunction!(run_protocol, m)?)?;
    m.add_function(wrap_pyfunction!(alone_ps, m)?)?;
    m.add("BASELINES", BASELINES.to_vec())?;
    m.add("MAX_MESSAGES", MAX_MESSAGES)?;
    m.add_class::<Scheduler>()?;
    Ok(())
}
