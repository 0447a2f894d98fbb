//! Thin PyO3 bindings: types in, types out. No simulation logic lives here.
use pyo3::prelude::*;

/// The simulator core's version string.
#[pyfunction]
fn version() -> &'static str {
    ssdsim::VERSION
}

#[pymodule]
fn _ssdsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
