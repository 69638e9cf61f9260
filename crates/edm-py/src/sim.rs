//! The simulator for Python (`edm._core`; wrapped by `python/edm/sim/`).
//! A configuration arrives as a plain dict and is resolved and checked by
//! the schema (`edm_sim::schema`, which `sim_schema` exports); a generated
//! workload is made and run here without leaving Rust; results leave as
//! columns for a pandas DataFrame.
use edm_proto::message::Kind;
use edm_sim::baselines::BASELINES;
use edm_sim::edm::config::Priority;
use edm_sim::engine::closed_loop::AppReport;
use edm_sim::engine::{self, Feed, Record, RecordSink};
use edm_sim::memory::protection::Layout;
use edm_sim::scheduler::Scheduler as CoreScheduler;
use edm_sim::schema::{
    self, RunConfig, Value, CDF_UNIT_BYTES, EDM_PROTOCOLS, FIELDS, GENERATED_WORKLOADS,
    MAX_MESSAGES, PROTOCOLS,
};
use edm_sim::time::Ps;
use edm_sim::workload::{
    assign_addresses, check_messages, MessageSpec, Op, OpenLoop, Roles, SizeCdf,
};
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyDict, PyFloat, PyInt, PyList, PyString};

fn get<'py, T: FromPyObject<'py>>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<T> {
    d.get_item(key)?
        .ok_or_else(|| PyKeyError::new_err(format!("missing config field {key:?}")))?
        .extract()
        .map_err(|e| PyValueError::new_err(format!("config field {key:?}: {e}")))
}

fn priority(name: &str) -> PyResult<Priority> {
    Priority::from_name(name).ok_or_else(|| {
        PyValueError::new_err(format!("priority: {name:?} is not srpt, fcfs or las"))
    })
}

/// A Python value as the schema takes it: an int (never a bool), a float or
/// a string; None for anything else (the schema's type error then names it).
fn value(obj: &Bound<'_, PyAny>) -> Option<Value> {
    if obj.is_instance_of::<PyBool>() {
        None
    } else if obj.is_instance_of::<PyInt>() {
        // Past i128 only the range error's wording is lost: saturate.
        Some(Value::Int(obj.extract::<i128>().unwrap_or_else(|_| {
            if obj.lt(0).unwrap_or(false) {
                i128::MIN
            } else {
                i128::MAX
            }
        })))
    } else if obj.is_instance_of::<PyFloat>() {
        obj.extract().ok().map(Value::Float)
    } else if obj.is_instance_of::<PyString>() {
        obj.extract().ok().map(Value::Text)
    } else {
        None
    }
}

fn to_py(py: Python<'_>, v: &Value) -> PyResult<PyObject> {
    Ok(match v {
        Value::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        Value::Float(x) => x.into_pyobject(py)?.into_any().unbind(),
        Value::Text(s) => s.into_pyobject(py)?.into_any().unbind(),
    })
}

/// The configuration `d` names, resolved and checked by the schema. Errors
/// are ValueError(message, field) with the message led by `source`.
fn resolve(d: &Bound<'_, PyDict>, source: &str) -> PyResult<RunConfig> {
    let fail = |message: String, field: Option<&str>| {
        PyValueError::new_err((format!("{source}: {message}"), field.map(str::to_owned)))
    };
    let mut given = Vec::with_capacity(d.len());
    for (k, v) in d.iter() {
        let name: String = k.extract()?;
        match (value(&v), schema::field(&name)) {
            (Some(value), _) => given.push((name, value)),
            (None, Some(f)) => {
                let why = format!("should be {}", f.kind.type_name());
                return Err(fail(
                    format!("field '{name}' = {} {why}", v.repr()?),
                    Some(f.name),
                ));
            }
            (None, None) => given.push((name, Value::Int(0))), // reported as unknown
        }
    }
    RunConfig::resolve(&given).map_err(|e| {
        let (Some(name), Some(v)) = (e.field, &e.value) else {
            return fail(e.why.clone(), e.field);
        };
        // The value as given (as Python prints it), else as resolved.
        let shown = match d.get_item(name) {
            Ok(Some(given)) => given.repr(),
            _ => to_py(d.py(), v).and_then(|o| o.bind(d.py()).repr()),
        };
        match shown {
            Ok(repr) => fail(format!("field '{name}' = {repr} {}", e.why), Some(name)),
            Err(err) => err,
        }
    })
}

/// The schema: one dict per field (name, kind, range, default, the paper
/// rules' value for EDM's rule levers, doc, protocols), in file order.
#[pyfunction]
fn sim_schema(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let defaults = RunConfig::default();
    let out = PyList::empty(py);
    for f in FIELDS {
        let d = PyDict::new(py);
        d.set_item("name", f.name)?;
        d.set_item("type", f.kind.value_type())?;
        d.set_item("range", f.kind.range())?;
        d.set_item("default", to_py(py, &(f.get)(&defaults))?)?;
        d.set_item("paper", f.paper_value().map(|v| to_py(py, &v)).transpose()?)?;
        d.set_item("doc", f.doc)?;
        d.set_item("protocols", f.scope.protocols())?;
        d.set_item("scope", f.scope.name())?;
        out.append(d)?;
    }
    Ok(out)
}

/// `config` with every field filled in and checked (a ValueError(message,
/// field) names the field, after `source`).
#[pyfunction]
#[pyo3(signature = (config, source="config"))]
fn resolve_config<'py>(config: &Bound<'py, PyDict>, source: &str) -> PyResult<Bound<'py, PyDict>> {
    let py = config.py();
    let c = resolve(config, source)?;
    let out = PyDict::new(py);
    for (name, v) in c.values() {
        out.set_item(name, to_py(py, &v)?)?;
    }
    Ok(out)
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

/// The open-loop workload described by `w` (sizes as CDF points in `unit`
/// bytes): the generator alone, as the Rust API has it.
#[pyfunction]
fn generate_open_loop<'py>(py: Python<'py>, w: &Bound<'py, PyDict>) -> PyResult<Columns<'py>> {
    let memory_nodes: usize = get(w, "memory_nodes")?;
    let gen = OpenLoop {
        nodes: get(w, "nodes")?,
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
        sizes: SizeCdf::new(get(w, "cdf")?, get(w, "unit")?).map_err(PyValueError::new_err)?,
        messages: get(w, "messages")?,
        seed: get(w, "seed")?,
    };
    RunConfig::validate_open_loop(&gen).map_err(PyValueError::new_err)?;
    workload_columns(py, &gen.generate())
}

fn workload_columns<'py>(py: Python<'py>, msgs: &[MessageSpec]) -> PyResult<Columns<'py>> {
    let n = msgs.len();
    Ok((
        to_bytes(py, n, |i| [op_code(msgs[i].op)])?,
        to_bytes(py, n, |i| msgs[i].requester.to_ne_bytes())?,
        to_bytes(py, n, |i| msgs[i].memory.to_ne_bytes())?,
        to_bytes(py, n, |i| msgs[i].size.to_ne_bytes())?,
        to_bytes(py, n, |i| msgs[i].issue_ps.to_ne_bytes())?,
    ))
}

/// The messages of a resolved configuration's generated workload; `cdf_text`
/// is an application's size CDF file as shipped.
fn generated(c: &RunConfig, cdf_text: Option<&str>) -> PyResult<Vec<MessageSpec>> {
    let mut msgs = c
        .open_loop(cdf_text)
        .map_err(PyValueError::new_err)?
        .generate();
    // Addresses drawn from their own stream of the run's seed, then, with a
    // memory manager, the regions it places; with protection, the mappings.
    assign_addresses(&mut msgs, c.address_space_bytes, c.seed);
    c.place(&mut msgs);
    c.protect(&mut msgs).map_err(PyValueError::new_err)?;
    Ok(msgs)
}

/// An application's size CDF file as shipped, parsed: `(size in
/// CDF_UNIT_BYTES packets, cumulative probability)` points.
#[pyfunction]
fn size_cdf_points(text: &str) -> PyResult<Vec<(f64, f64)>> {
    let cdf = SizeCdf::from_text(text, CDF_UNIT_BYTES).map_err(PyValueError::new_err)?;
    Ok(cdf.points().to_vec())
}

/// An application's size-CDF file as shipped in the core (None: not an application).
#[pyfunction]
fn app_cdf_text(app: &str) -> Option<&'static str> {
    edm_sim::workload::app_cdf_text(app)
}

/// What a workload names: "named" (generated), "cdf" (a size-CDF file the
/// generator samples) or "trace" (a trace file).
#[pyfunction]
fn workload_kind(workload: &str) -> &'static str {
    schema::WorkloadKind::of(workload).name()
}

/// The generated workload of `config` as columns (`edm.sim.build_workload`).
#[pyfunction]
#[pyo3(signature = (config, cdf_text=None))]
fn generate<'py>(config: &Bound<'py, PyDict>, cdf_text: Option<&str>) -> PyResult<Columns<'py>> {
    let c = resolve(config, "config")?;
    workload_columns(config.py(), &generated(&c, cdf_text)?)
}

/// Latency (ps) of one message from node 0 to node 1 alone in the network
/// under `config`'s protocol.
#[pyfunction]
fn alone_ps(config: &Bound<'_, PyDict>, op: u8, size: u32) -> PyResult<Ps> {
    let c = resolve(config, "config")?;
    let m = MessageSpec {
        op: op_from_code(op)?,
        requester: 0,
        memory: 1,
        size,
        issue_ps: 0,
        ..Default::default()
    };
    Ok(c.alone_ps(&m))
}

/// The memory nodes' protection of `config` (its `protection*` fields; on
/// whatever `protection` says): its page-table entries `(memory, asid, vpn,
/// frame, writable)`, sorted, and its verdict on each query `(memory, address
/// word, bytes, write)`: the physical address, or None for a denial. For the
/// cross-check against `edm.related.clio_model`.
#[pyfunction]
fn protection_verdicts(
    config: &Bound<'_, PyDict>,
    queries: Vec<(u16, u64, u64, bool)>,
) -> PyResult<ProtectionVerdicts> {
    let c = resolve(config, "config")?;
    let layout = Layout::new(&c.fabric.protection, c.fabric.nodes);
    let verdicts = queries
        .iter()
        .map(|&(memory, addr, bytes, write)| layout.translate(memory, addr, bytes, write))
        .collect();
    Ok((layout.entries(), verdicts))
}

/// What [`protection_verdicts`] returns.
type ProtectionVerdicts = (Vec<(u16, u16, u64, u64, bool)>, Vec<Option<u64>>);

/// Messages given as columns of bytes (sorted by issue time), checked.
fn given_messages(c: &RunConfig, cols: &Bound<'_, PyAny>) -> PyResult<Vec<MessageSpec>> {
    type Given<'a> = (
        Vec<u8>,
        Vec<u8>,
        Vec<u8>,
        Vec<u8>,
        Vec<u8>,
        Option<Vec<u8>>,
        Option<Vec<u8>>,
    );
    let (op, requester, memory, size, issue_ps, addr, fence): Given = cols.extract()?;
    let requester = column("requester", &requester, u16::from_ne_bytes)?;
    let memory = column("memory", &memory, u16::from_ne_bytes)?;
    let size = column("size", &size, u32::from_ne_bytes)?;
    let issue_ps = column("issue_ps", &issue_ps, Ps::from_ne_bytes)?;
    let addr = addr
        .map(|a| column("addr", &a, u64::from_ne_bytes))
        .transpose()?;
    let n = op.len();
    if addr.as_ref().is_some_and(|a| a.len() != n)
        || fence.as_ref().is_some_and(|f| f.len() != n)
        || [requester.len(), memory.len(), size.len(), issue_ps.len()]
            .iter()
            .any(|&l| l != n)
    {
        return Err(PyValueError::new_err("message columns differ in length"));
    }
    let mut msgs = Vec::with_capacity(n);
    for i in 0..n {
        msgs.push(MessageSpec {
            op: op_from_code(op[i])?,
            requester: requester[i],
            memory: memory[i],
            size: size[i],
            issue_ps: issue_ps[i],
            addr: addr.as_ref().map_or(0, |a| a[i]),
            fence: fence.as_ref().is_some_and(|f| f[i] != 0),
        });
    }
    check_messages(&msgs, c.fabric.nodes).map_err(PyValueError::new_err)?;
    if addr.is_none() {
        // Addresses drawn from their own stream of the run's seed (with
        // protection, aimed into the mappings; given ones carry their spaces).
        assign_addresses(&mut msgs, c.address_space_bytes, c.seed);
        c.protect(&mut msgs).map_err(PyValueError::new_err)?;
    }
    Ok(msgs)
}

/// What [`run`] returns.
type RunResult<'py> = (
    Option<Columns<'py>>,
    Bound<'py, PyByteArray>,
    Bound<'py, PyByteArray>,
    Bound<'py, PyDict>,
);

/// Runs `config`: on its generated workload (made here, with `cdf_text` an
/// application's size CDF file) or on `messages`, columns of bytes (op,
/// requester, memory, size, issue_ps, addr or None, fence or None) sorted by
/// issue time. Returns (the generated workload's columns or None,
/// complete_ps with -1 for unfinished and -2 for timed out, alone_ps, totals dict).
#[pyfunction]
#[pyo3(signature = (config, cdf_text=None, messages=None, progress=None, sink=None, sink_rows=65536))]
fn run<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyDict>,
    cdf_text: Option<&str>,
    messages: Option<&Bound<'py, PyAny>>,
    progress: Option<PyObject>,
    sink: Option<PyObject>,
    sink_rows: usize,
) -> PyResult<RunResult<'py>> {
    let c = resolve(config, "config")?;
    let closed_loop = c.closed_loop.enabled();
    if sink.is_some() && (closed_loop || sink_rows == 0) {
        return Err(PyValueError::new_err(
            "records: a streamed run needs an open loop and sink_rows of at least 1",
        ));
    }
    // (A generated workload's columns are made after the run, once its
    // records are converted: so the run's peak memory does not hold them.)
    let (msgs, given) = match messages {
        Some(_) if closed_loop => return Err(PyValueError::new_err(
            "closed_loop_threads: a closed loop runs its generated workload, not given messages",
        )),
        Some(cols) => (given_messages(&c, cols)?, true),
        None => (generated(&c, cdf_text)?, false),
    };
    let mut model = c.model();
    let mut callback_error: Option<PyErr> = None;
    let callback_failed = std::rc::Rc::new(std::cell::Cell::new(false));
    let failed = callback_failed.clone();
    let sink_failed = callback_failed.clone();
    let mut sink_error: Option<PyErr> = None;
    // Streamed: each batch of final records crosses with its messages' ids
    // and columns, `sink(ids, workload columns, complete_ps, alone_ps, acked_ps)`.
    let mut hand = |ids: &[u32], records: &[Record]| {
        let (Some(cb), None) = (&sink, &sink_error) else {
            return;
        };
        let batch: Vec<MessageSpec> = ids.iter().map(|&i| msgs[i as usize].clone()).collect();
        let crossed = workload_columns(py, &batch).and_then(|cols| {
            let (acked, complete, alone) = record_columns(py, records)?;
            let ids = to_bytes(py, ids.len(), |k| ids[k].to_ne_bytes())?;
            cb.call1(py, (ids, cols, complete, alone, acked))
        });
        if let Err(e) = crossed {
            sink_error = Some(e);
            sink_failed.set(true);
        }
    };
    let mut report = |done: u64, total: u64| {
        if let (Some(cb), None) = (&progress, &callback_error) {
            if let Err(e) = cb.call1(py, (done, total)) {
                callback_error = Some(e);
                callback_failed.set(true);
            }
        }
    };
    // A pending signal (Ctrl-C) stops the run within a few thousand events,
    // as does a progress callback that failed (Ctrl-C may land in it); what
    // finished is returned, marked "interrupted".
    let pending_signal =
        Box::new(move || failed.get() || Python::with_gil(|py| py.check_signals().is_err()));
    let ((out, app, ran), mut interrupted) = engine::with_stop_check(pending_signal, || {
        if closed_loop {
            let run = c.run_closed_loop(&msgs, &mut report);
            (run.outcome, Some(run.report), Some(run.messages))
        } else if sink.is_some() {
            let sink = &mut RecordSink {
                batch: sink_rows,
                hand: &mut hand,
            };
            (model.run_streamed(&msgs, &mut report, sink), None, None)
        } else {
            (model.run(Feed::Open(&msgs), &mut report), None, None)
        }
    });
    if let Some(e) = sink_error {
        return Err(e);
    }
    if let Some(e) = callback_error {
        if !e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
            return Err(e);
        }
        interrupted = true;
    }
    let t = &out.totals;
    let (edm, packet) = (t.edm(), t.packet());
    let totals = PyDict::new(py);
    totals.set_item("interrupted", interrupted)?;
    if let Some(a) = app {
        totals.set_item("application", application_dict(py, &a)?)?;
    }
    // Every counter of the run by the name Python sees (its summary copies
    // each one it does not render itself).
    macro_rules! counters {
        ($($name:ident: $value:expr),* $(,)?) => { $( totals.set_item(stringify!($name), $value)?; )* };
    }
    counters!(
        events: t.events,
        end_ps: t.end_ps,
        // (A run not streamed holds every record, whatever its protocol reports.)
        max_records_held: t.max_records_held.max(out.records.len()),
        uplink_util_mean: t.uplink_util_mean,
        uplink_util_max: t.uplink_util_max,
        downlink_util_mean: t.downlink_util_mean,
        downlink_util_max: t.downlink_util_max,
        max_switch_data_queue: t.max_switch_data_queue,
        max_switch_data_wait_ps: t.max_switch_data_wait_ps,
        switch_data_conflicts: edm.switch_data_conflicts,
        max_grant_wait_ps: edm.max_grant_wait_ps,
        max_request_wait_ps: edm.max_request_wait_ps,
        max_notification_queue: edm.max_notification_queue,
        scheduler_iterations: edm.scheduler_iterations,
        timed_out: edm.faults.timed_out,
        late_data: edm.faults.late_data,
        control_corrupted: edm.faults.control_corrupted,
        data_corrupted: edm.faults.data_corrupted,
        undetected: edm.faults.undetected,
        notify_retries: edm.faults.notify_retries,
        chunk_retries: edm.faults.chunk_retries,
        write_data_dropped: edm.faults.write_data_dropped,
        writes_lost: edm.faults.writes_lost,
        acks_sent: edm.acks_sent,
        acks_lost: edm.faults.acks_lost,
        write_retries: edm.faults.write_retries,
        writes_acked: edm.faults.writes_acked,
        writes_failed: edm.faults.writes_failed,
        writes_failed_applied: edm.faults.writes_failed_applied,
        writes_unresolved: edm.faults.writes_unresolved,
        writes_applied_twice: edm.faults.writes_applied_twice,
        dup_stale_refused: edm.faults.dup_stale_refused,
        dup_first_copy_refused: edm.faults.dup_first_copy_refused,
        dup_span_max: edm.faults.dup_span_max,
        retry_buffer_max: edm.faults.retry_buffer_max,
        rmw_result_gone: edm.faults.rmw_result_gone,
        response_data_dropped: edm.faults.response_data_dropped,
        duplicate_notifications: edm.faults.duplicate_notifications,
        duplicate_data: edm.faults.duplicate_data,
        duplicate_grants: edm.faults.duplicate_grants,
        link_down_drops: edm.faults.link_down_drops,
        links_disabled: edm.faults.links_disabled,
        failed: edm.faults.failed,
        mirror_copies_discarded: edm.faults.mirror_copies_discarded,
        unmirrored: edm.faults.unmirrored,
        demand_dropped: edm.faults.demand_dropped,
        rmw_replayed: edm.faults.rmw_replayed,
        rmw_refused: edm.faults.rmw_refused,
        rmw_results_kept_max: edm.faults.rmw_results_kept_max,
        rmw_applied_twice: edm.faults.rmw_applied_twice,
        rmw_first_copy_refused: edm.faults.rmw_first_copy_refused,
        delivered_bytes: t.delivered_bytes,
        drops: packet.drops,
        ecn_marks: packet.ecn_marks,
        pauses: packet.pauses,
        retransmissions: packet.retransmissions,
        timeouts: packet.timeouts,
        max_switch_queue_bytes: packet.max_queue_bytes,
        max_ingress_bytes: packet.max_ingress_bytes,
        dram_lines: t.memory.lines(),
        dram_wait_mean_ps: t.memory.wait_mean_ps(),
        dram_wait_p99_ps: t.memory.wait_quantile_ps(0.99),
        dram_wait_max_ps: t.memory.wait_max_ps,
        dram_imbalance: t.memory.imbalance(),
        dram_late_responses: t.memory.late_responses,
        protection_checks: t.protection.checked,
        denied_reads: t.protection.denied_reads,
        denied_writes: t.protection.denied_writes,
        served_outside: t.protection.served_outside,
        denied_inside: t.protection.denied_inside,
    );
    let fr = &edm.frames;
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
    let (acked, complete, alone) = record_columns(py, &out.records)?;
    totals.set_item("acked_ps", acked)?;
    // Each per-message copy is freed once converted (peak memory).
    drop(out);
    // A closed loop's issue times are known after its run (a streamed
    // run's crossed with its records).
    let workload = match (ran, given) {
        (Some(ran), _) => Some(workload_columns(py, &ran)?),
        (None, false) if sink.is_none() => Some(workload_columns(py, &msgs)?),
        (None, _) => None,
    };
    drop(msgs);
    Ok((workload, complete, alone, totals))
}

/// Records as columns of bytes: (acked_ps: a write's acknowledged
/// completion, docs/protocol.md §4b, -1 none, -2 reported failed, given up
/// or timed out whatever else happened; complete_ps, -1 unfinished, -2
/// timed out or given up, -3 a write lost, docs/faults.md §4; alone_ps).
fn record_columns<'py>(
    py: Python<'py>,
    r: &[Record],
) -> PyResult<(
    Bound<'py, PyByteArray>,
    Bound<'py, PyByteArray>,
    Bound<'py, PyByteArray>,
)> {
    Ok((
        to_bytes(py, r.len(), |i| {
            let none = if r[i].timed_out { -2 } else { -1 };
            r[i].acked_ps.map_or(none, |a| a as i64).to_ne_bytes()
        })?,
        to_bytes(py, r.len(), |i| {
            let unfinished = if r[i].lost {
                -3
            } else if r[i].timed_out {
                -2
            } else {
                -1
            };
            r[i].complete_ps
                .map_or(unfinished, |c| c as i64)
                .to_ne_bytes()
        })?,
        to_bytes(py, r.len(), |i| r[i].alone_ps.to_ne_bytes())?,
    ))
}

/// A closed loop's application figures (times in ns), as the summary's `application`.
fn application_dict<'py>(py: Python<'py>, a: &AppReport) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let ns = |ps: f64| ps / 1e3;
    let per_op = |total: u128| {
        if a.ops > 0 {
            total as f64 / a.ops as f64 / 1e3
        } else {
            f64::NAN
        }
    };
    d.set_item("threads", a.threads)?;
    d.set_item("ops", a.ops)?;
    d.set_item("run_time_ns", ns(a.run_time_ps as f64))?;
    d.set_item("unloaded_run_time_ns", ns(a.unloaded_run_time_ps as f64))?;
    d.set_item(
        "compute_only_run_time_ns",
        ns(a.compute_only_run_time_ps as f64),
    )?;
    let mean_thread = |total: u128| total as f64 / a.threads.max(1) as f64 / 1e3;
    d.set_item("mean_thread_time_ns", mean_thread(a.thread_time_ps))?;
    d.set_item(
        "unloaded_mean_thread_time_ns",
        mean_thread(a.unloaded_thread_time_ps),
    )?;
    d.set_item(
        "compute_only_mean_thread_time_ns",
        mean_thread(a.compute_only_thread_time_ps),
    )?;
    d.set_item("degradation_vs_unloaded", a.degradation_vs_unloaded())?;
    d.set_item("degradation_vs_local", a.degradation_vs_local())?;
    d.set_item("mean_latency_ns", per_op(a.latency_ps_total))?;
    d.set_item("mean_compute_ns", per_op(a.compute_ps_total))?;
    d.set_item("throughput_ops_per_s", a.throughput_ops_per_s)?;
    d.set_item(
        "window_ns",
        (ns(a.window_ps.0 as f64), ns(a.window_ps.1 as f64)),
    )?;
    d.set_item("window_mean_latency_ns", ns(a.window_mean_latency_ps))?;
    d.set_item("window_mean_compute_ns", ns(a.window_mean_compute_ps))?;
    d.set_item("little_threads", a.little_threads)?;
    d.set_item("late_completions", a.late_completions)?;
    Ok(d)
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
    #[pyo3(signature = (ports, policy="srpt", chunk_bytes=256, link_gbps=100, cycle_ps=edm_proto::spec::CYCLE_PS, priority_hold=0, pipelined_matching=false, pair_order=true, registered_tree=false))]
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
        registered_tree: bool,
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
        // The RTL's iteration (its REGISTERED_TREE: a request tree level per cycle).
        let iteration =
            edm_proto::spec::sw_pim_iter_cycles(ports as u32, registered_tree) as Ps * cycle_ps;
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

    /// The link of `port` is up or down from the next cycle on (the RTL's
    /// `link_up` input, set in this cycle): a port whose link is down is
    /// never granted, as a source or as a destination.
    fn set_link_up(&mut self, port: u16, up: bool) -> PyResult<()> {
        if port as usize >= self.ports {
            return Err(PyValueError::new_err(format!(
                "port: {port} is not below {}",
                self.ports
            )));
        }
        self.inner.set_link_up(port, up);
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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sim_schema, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_config, m)?)?;
    m.add_function(wrap_pyfunction!(protection_verdicts, m)?)?;
    m.add_function(wrap_pyfunction!(generate_open_loop, m)?)?;
    m.add_function(wrap_pyfunction!(generate, m)?)?;
    m.add_function(wrap_pyfunction!(size_cdf_points, m)?)?;
    m.add_function(wrap_pyfunction!(app_cdf_text, m)?)?;
    m.add_function(wrap_pyfunction!(workload_kind, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(alone_ps, m)?)?;
    m.add("PROTOCOLS", PROTOCOLS.to_vec())?;
    m.add("EDM_PROTOCOLS", EDM_PROTOCOLS.to_vec())?;
    m.add("BASELINES", BASELINES.to_vec())?;
    m.add("GENERATED_WORKLOADS", GENERATED_WORKLOADS.to_vec())?;
    m.add("CDF_UNIT_BYTES", CDF_UNIT_BYTES)?;
    m.add("MAX_MESSAGES", MAX_MESSAGES)?;
    m.add_class::<Scheduler>()?;
    Ok(())
}
