//! Thin PyO3 bindings of ssdsim: types in, types out, no simulation logic.
//!
//! The boundary is coarse (DESIGN.md principle 1): a preset's TOML text makes a
//! `Drive`; each call of `run_step` takes one step as a dict (the fields of
//! `ssdlab.model.Step`, plus `purge`) and returns its whole result as a dict.
//! The GIL is released while the simulator runs.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// The simulator core's version string.
#[pyfunction]
fn version() -> &'static str {
    ssdsim::VERSION
}

/// A simulated drive whose state persists from step to step.
#[pyclass(module = "ssdlab._ssdsim", unsendable)]
struct Drive {
    inner: ssdsim::Drive,
}

#[pymethods]
impl Drive {
    /// A fresh-out-of-box drive from a preset's TOML text; ValueError names what is wrong.
    #[new]
    #[pyo3(signature = (preset_toml, seed = 1))]
    fn new(preset_toml: &str, seed: u64) -> PyResult<Self> {
        let cfg = ssdsim::DriveConfig::from_toml_str(preset_toml).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let inner = ssdsim::Drive::with_seed(cfg, seed).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Drive { inner })
    }

    /// User capacity, bytes.
    #[getter]
    fn user_bytes(&self) -> u64 {
        self.inner.user_bytes()
    }

    /// Virtual seconds since the drive was created.
    #[getter]
    fn now_s(&self) -> f64 {
        self.inner.now_s()
    }

    /// Run one step; ValueError when the step does not fit the drive.
    fn run_step<'py>(&mut self, py: Python<'py>, step: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyDict>> {
        let step = step_from(step)?;
        let inner = &mut self.inner;
        let result = py.allow_threads(|| inner.run(&step)).map_err(|e| PyValueError::new_err(e.to_string()))?;
        result_to(py, &result)
    }

    /// Cumulative counters and current state of the drive.
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        counters_to(py, &self.inner.counters())
    }
}

fn get<'py, T: FromPyObject<'py>>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<T>> {
    match d.get_item(key)? {
        Some(v) if !v.is_none() => Ok(Some(v.extract()?)),
        _ => Ok(None),
    }
}

fn need<'py, T: FromPyObject<'py>>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<T> {
    get(d, key)?.ok_or_else(|| PyValueError::new_err(format!("step has no `{key}`")))
}

fn step_from(d: &Bound<'_, PyDict>) -> PyResult<ssdsim::Step> {
    let rw: String = need(d, "rw")?;
    let op = ssdsim::Op::parse(&rw).ok_or_else(|| PyValueError::new_err(format!("unknown rw={rw}")))?;
    Ok(ssdsim::Step {
        label: get(d, "label")?.unwrap_or_default(),
        rw: op,
        bs: need(d, "bs")?,
        iodepth: get(d, "iodepth")?.unwrap_or(1),
        rwmixread: get(d, "rwmixread")?,
        offset: get(d, "offset")?.unwrap_or(0),
        size: need(d, "size")?,
        runtime: get(d, "runtime")?,
        io_size: get(d, "io_size")?,
        burst_bytes: get(d, "burst_bytes")?,
        duty_cycle: get(d, "duty_cycle")?,
        idle_after: get(d, "idle_after")?.unwrap_or(0.0),
        per_gib_series: get(d, "per_gib_series")?.unwrap_or(false),
        rate_iops: get(d, "rate_iops")?,
        purge: get(d, "purge")?.unwrap_or(false),
    })
}

fn direction_to<'py>(py: Python<'py>, d: &ssdsim::DirectionResult) -> PyResult<Bound<'py, PyDict>> {
    let lat = PyDict::new(py);
    lat.set_item("count", d.latency.count)?;
    lat.set_item("mean_ns", d.latency.mean_ns)?;
    lat.set_item("min_ns", d.latency.min_ns)?;
    lat.set_item("max_ns", d.latency.max_ns)?;
    lat.set_item("histogram", PyList::new(py, d.latency.histogram.iter().copied())?)?;
    let out = PyDict::new(py);
    out.set_item("ios", d.ios)?;
    out.set_item("bytes", d.bytes)?;
    out.set_item("busy_s", d.busy_s)?;
    out.set_item("latency", lat)?;
    Ok(out)
}

fn counters_to<'py>(py: Python<'py>, c: &ssdsim::Counters) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("host_write_bytes", c.host_write_bytes)?;
    out.set_item("nand_write_bytes", c.nand_write_bytes)?;
    out.set_item("write_amplification", c.write_amplification)?;
    out.set_item("gc_bytes", c.gc_bytes)?;
    out.set_item("fold_bytes", c.fold_bytes)?;
    out.set_item("gc_superblocks", c.gc_superblocks)?;
    out.set_item("fold_superblocks", c.fold_superblocks)?;
    out.set_item("erases", c.erases)?;
    out.set_item("slc_used_bytes", c.slc_used_bytes)?;
    out.set_item("slc_limit_bytes", c.slc_limit_bytes)?;
    out.set_item("free_superblocks", c.free_superblocks)?;
    out.set_item("superblocks", c.superblocks)?;
    out.set_item("mapped_bytes", c.mapped_bytes)?;
    out.set_item("rmw_reads", c.rmw_reads)?;
    Ok(out)
}

fn result_to<'py>(py: Python<'py>, r: &ssdsim::StepResult) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("start_s", r.start_s)?;
    out.set_item("busy_s", r.busy_s)?;
    out.set_item("idle_s", r.idle_s)?;
    out.set_item("bursts", r.bursts)?;
    for (name, d) in [("read", &r.read), ("write", &r.write), ("trim", &r.trim)] {
        match d {
            Some(d) => out.set_item(name, direction_to(py, d)?)?,
            None => out.set_item(name, py.None())?,
        }
    }
    let seconds = r.per_second.iter().map(|p| (p.t_s, p.mbps, p.iops));
    out.set_item("per_second", PyList::new(py, seconds)?)?;
    out.set_item("per_gib", PyList::new(py, r.per_gib.iter().map(|p| (p.gib, p.mbps)))?)?;
    out.set_item("counters", counters_to(py, &r.counters)?)?;
    out.set_item("notes", PyList::new(py, r.notes.iter())?)?;
    Ok(out)
}

#[pymodule]
fn _ssdsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_class::<Drive>()?;
    Ok(())
}
