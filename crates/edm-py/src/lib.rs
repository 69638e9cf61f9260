//! Python bindings: `edm._core`.
mod codec;
mod sim;

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Every protocol constant by name (the Rust `edm_proto::spec::SPEC` table).
#[pyfunction]
fn spec(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for (name, value) in edm_proto::spec::SPEC {
        d.set_item(*name, *value)?;
    }
    Ok(d)
}

/// Cycles of one iteration of the switch scheduler at `ports` ports, with its
/// request tree registered or not (spec.rs).
#[pyfunction]
#[pyo3(signature = (ports, registered=false))]
fn sw_pim_iter_cycles(ports: u32, registered: bool) -> u32 {
    edm_proto::spec::sw_pim_iter_cycles(ports, registered)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(spec, m)?)?;
    m.add_function(wrap_pyfunction!(sw_pim_iter_cycles, m)?)?;
    codec::register(m)?;
    sim::register(m)?;
    Ok(())
}
