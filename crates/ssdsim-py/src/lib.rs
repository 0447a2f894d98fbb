//! Thin PyO3 bindings of ssdsim: types in, types out, no simulation logic.
//!
//! The boundary is coarse (DESIGN.md principle 1): a preset's TOML text makes a
//! `Drive`; each call of `run_step` takes one step as the JSON text of an
//! `ssdlab.model.Step` (serde makes it an `ssdsim::Step`, which refuses unknown
//! fields) and returns its whole result as a dict. The GIL is released while the
//! simulator runs.
//!
//! Errors are typed: `PresetError` (a preset the simulator refuses) and
//! `StepError` (a step it refuses) are `ValueError`s whose message names the
//! field; `InternalError` (a `RuntimeError`) is a bug of the simulator, a Rust
//! panic caught at this boundary so that it never unwinds into Python as
//! PyO3's `PanicException` (a `BaseException`). A drive that panicked is not
//! used again: its state may be half-updated.

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

create_exception!(
    ssdlab._ssdsim,
    PresetError,
    PyValueError,
    "The simulator refuses the preset; the message names the field, its value and its allowed range."
);
create_exception!(
    ssdlab._ssdsim,
    StepError,
    PyValueError,
    "The simulator refuses the step; the message names the step and the field."
);
create_exception!(
    ssdlab._ssdsim,
    DriveFailed,
    PyRuntimeError,
    "The simulated drive failed as a real one would (it overheated and dropped off the bus); the message says why and what to do."
);
create_exception!(
    ssdlab._ssdsim,
    FeatureError,
    PyValueError,
    "The drive does not support the feature asked for (a real drive's Invalid Field status)."
);
create_exception!(
    ssdlab._ssdsim,
    InternalError,
    PyRuntimeError,
    "A bug of the simulator (a Rust panic); the message says where, please report it."
);

/// The simulator core's version string.
#[pyfunction]
fn version() -> &'static str {
    ssdsim::VERSION
}

/// Every numeric field present in a preset, with its bound (the simulator's bounds.rs): a
/// list of {key, value, min, max, unit, integer}; PresetError when the preset is not valid.
#[pyfunction]
fn preset_bounds(py: Python<'_>, preset_toml: &str) -> PyResult<Vec<PyObject>> {
    let config = ssdsim::DriveConfig::from_toml_str(preset_toml)
        .map_err(|e| PresetError::new_err(e.to_string()))?;
    config
        .bounded_fields()
        .into_iter()
        .map(|f| {
            let d = PyDict::new(py);
            d.set_item("key", f.key)?;
            d.set_item("value", f.value)?;
            d.set_item("min", f.bound.min)?;
            d.set_item("max", f.bound.max)?;
            d.set_item("unit", f.bound.unit)?;
            d.set_item("integer", f.bound.kind == ssdsim::bounds::Kind::Integer)?;
            Ok(d.into_any().unbind())
        })
        .collect()
}

/// How far a drive's running step is, readable from another thread while the step runs (it
/// releases the GIL): the records of a trace step issued so far.
#[pyclass(module = "ssdlab._ssdsim", frozen)]
struct Progress {
    done: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

#[pymethods]
impl Progress {
    #[getter]
    fn records(&self) -> u64 {
        self.done.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// A simulated drive whose state persists from step to step. Send and Sync, so that it may
/// be freed on another thread than its own: a Dask worker runs tasks on a thread pool, and
/// the cyclic collector frees what it finds on whichever thread it runs (an `unsendable`
/// class would be leaked there, a whole mapping table, with an error).
#[pyclass(module = "ssdlab._ssdsim")]
struct Drive {
    inner: ssdsim::Drive,
    /// Set when a step panicked: the drive's state may be inconsistent.
    failed: bool,
}

#[pymethods]
impl Drive {
    /// A fresh-out-of-box drive from a preset's TOML text, on a platform whose power
    /// management is Linux's (APST with `apst_max_latency_us`, 0 for off) and which lets
    /// the drive reach its non-operational states or not, cooled (`bare`, `heatsink` or
    /// `fan`) in air at `ambient_c`, its volatile write cache on or off as the host set it
    /// (NVMe feature 06h; off, a write completes only when its data is on NAND);
    /// PresetError names what is wrong.
    #[new]
    #[pyo3(signature = (
        preset_toml,
        seed = 1,
        apst_max_latency_us = ssdsim::power::DEFAULT_MAX_LATENCY_US,
        low_power_states = true,
        cooling = "heatsink",
        ambient_c = ssdsim::thermal::DEFAULT_AMBIENT_C,
        volatile_write_cache = true,
    ))]
    fn new(
        preset_toml: &str,
        seed: u64,
        apst_max_latency_us: u64,
        low_power_states: bool,
        cooling: &str,
        ambient_c: f64,
        volatile_write_cache: bool,
    ) -> PyResult<Self> {
        let cooling = cooling.parse().map_err(PyValueError::new_err)?;
        let platform = ssdsim::Platform {
            apst_max_latency_us,
            low_power_states,
            cooling,
            ambient_c,
            volatile_write_cache,
        };
        platform.check().map_err(PyValueError::new_err)?;
        let built = catch_panic(|| {
            let cfg = ssdsim::DriveConfig::from_toml_str(preset_toml)?;
            ssdsim::Drive::with_platform(cfg, seed, platform)
        })?;
        Ok(Drive {
            inner: built.map_err(sim_error)?,
            failed: false,
        })
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

    /// Run one step, given as `Step.model_dump_json()`; StepError when the step is
    /// not one the simulator knows or does not fit the drive.
    fn run_step<'py>(&mut self, py: Python<'py>, step_json: &str) -> PyResult<Bound<'py, PyDict>> {
        if self.failed {
            return Err(InternalError::new_err(
                "this simulated drive stopped at an internal error and cannot run more steps",
            ));
        }
        let step = step_from(step_json)?;
        let inner = &mut self.inner;
        let outcome = py.allow_threads(|| catch_panic(|| inner.run(&step)));
        self.failed = outcome.is_err();
        let result = outcome?.map_err(sim_error)?;
        result_to(py, &result)
    }

    /// The drive's progress counter (the same object for every step).
    fn progress(&self) -> Progress {
        Progress {
            done: self.inner.progress(),
        }
    }

    /// Cumulative counters and current state of the drive.
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        counters_to(py, &self.inner.counters())
    }

    /// The host's APST latency limit changes from the next step on (0 turns APST off), as
    /// writing the controller's latency tolerance does on Linux.
    fn set_apst_max_latency_us(&mut self, us: u64) -> PyResult<()> {
        self.change_platform(|p| p.apst_max_latency_us = us)
    }

    /// The host's APST latency limit now, µs (0: off).
    #[getter]
    fn apst_max_latency_us(&self) -> u64 {
        self.inner.platform().apst_max_latency_us
    }

    /// The host's volatile write cache is turned on or off (NVMe feature 06h) from the next
    /// step on, as `nvme set-feature -f 6` does on a real host.
    fn set_volatile_write_cache(&mut self, on: bool) -> PyResult<()> {
        self.change_platform(|p| p.volatile_write_cache = on)
    }

    /// Is the drive's volatile write cache on now?
    #[getter]
    fn volatile_write_cache(&self) -> bool {
        self.inner.platform().volatile_write_cache
    }

    /// The host the drive is on now: `apst_latency_us`, `low_power_states`, `cooling`,
    /// `ambient_c` and `volatile_write_cache`, the simulator's defaults filled in.
    fn platform<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let platform = self.inner.platform();
        let dict = PyDict::new(py);
        dict.set_item("apst_latency_us", platform.apst_max_latency_us)?;
        dict.set_item("low_power_states", platform.low_power_states)?;
        dict.set_item("cooling", platform.cooling.name())?;
        dict.set_item("ambient_c", platform.ambient_c)?;
        dict.set_item("volatile_write_cache", platform.volatile_write_cache)?;
        Ok(dict)
    }

    /// The SMART / health log, as `nvme smart-log -o json` of nvme-cli 2.6+ prints it.
    fn smart_log_json(&self) -> PyResult<String> {
        to_json(&ssdsim::health::SmartLog::of(&self.inner))
    }

    /// The Endurance Group log, as `nvme endurance-log --group-id=1 -o json` of nvme-cli 2.6+ prints it.
    fn endurance_log_json(&self) -> PyResult<String> {
        to_json(&ssdsim::health::EnduranceLog::of(&self.inner))
    }

    /// Identify Controller, as `nvme id-ctrl -o json` of nvme-cli 2.6+ prints it.
    fn id_ctrl_json(&self) -> PyResult<String> {
        to_json(&ssdsim::health::IdCtrl::of(&self.inner))
    }

    /// Feature `fid`, as `nvme get-feature -f FID -H` prints it; FeatureError (with the
    /// status a real drive returns) for a feature the drive does not support.
    fn get_feature(&self, fid: u32) -> PyResult<String> {
        ssdsim::health::get_feature(&self.inner, fid)
            .map_err(|e| FeatureError::new_err(e.to_string()))
    }
}

impl Drive {
    /// The drive's platform, as `change` changes it, from the next step on.
    fn change_platform(&mut self, change: impl FnOnce(&mut ssdsim::Platform)) -> PyResult<()> {
        let mut platform = self.inner.platform();
        change(&mut platform);
        self.inner.set_platform(platform).map_err(sim_error)
    }
}

fn to_json<T: serde::Serialize>(record: &T) -> PyResult<String> {
    serde_json::to_string_pretty(record).map_err(|e| InternalError::new_err(e.to_string()))
}

thread_local! {
    /// Set while this thread runs the simulator under `catch_panic`.
    static CATCHING: Cell<bool> = const { Cell::new(false) };
    /// What the panic hook saw of a caught panic: its message and where it happened.
    static CAUGHT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Panics of the simulator are reported in the InternalError, not printed to stderr
/// (where they would look like a crash of the CLI); every other panic is printed by
/// the hook that was there before.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CATCHING.with(Cell::get) {
                CAUGHT.with(|c| *c.borrow_mut() = Some(info.to_string().replace('\n', " ")));
            } else {
                previous(info);
            }
        }));
    });
}

/// Run `f`, turning a panic into an InternalError instead of unwinding into Python.
fn catch_panic<T>(f: impl FnOnce() -> T) -> PyResult<T> {
    CATCHING.with(|c| c.set(true));
    // The state `f` touches is not used again after a panic (see `Drive::failed`).
    let outcome = catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(false));
    outcome.map_err(|_| {
        let what = CAUGHT.with(|c| c.borrow_mut().take());
        InternalError::new_err(format!(
            "internal simulator error: {}; please report it",
            what.as_deref().unwrap_or("a panic")
        ))
    })
}

fn sim_error(e: ssdsim::SimError) -> PyErr {
    match e {
        ssdsim::SimError::Config(e) => PresetError::new_err(e.to_string()),
        ssdsim::SimError::Step(e) => StepError::new_err(e),
        ssdsim::SimError::DriveFailed(e) => DriveFailed::new_err(e),
    }
}

/// The step in `json`; a field that is unknown, missing or of the wrong type is a
/// StepError naming it.
fn step_from(json: &str) -> PyResult<ssdsim::Step> {
    let mut de = serde_json::Deserializer::from_str(json);
    let step = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let field = e.path().to_string();
        json_error(&field, e.into_inner())
    })?;
    de.end().map_err(|e| json_error(".", e))?;
    Ok(step)
}

/// One short line naming the field (`.` is the step as a whole).
fn json_error(field: &str, e: serde_json::Error) -> PyErr {
    let text = e.to_string();
    // serde_json ends with where in the text it stopped; the field's name says it better.
    let position = format!(" at line {} column {}", e.line(), e.column());
    let text = text.strip_suffix(&position).unwrap_or(&text);
    let (field, text) = (shorten(field, NAME_CHARS), shorten(text, TEXT_CHARS));
    StepError::new_err(if text.starts_with("unknown field") {
        // serde's text goes on to list every field
        format!("unknown step field `{field}`")
    } else if field == "." {
        format!("step: {text}")
    } else {
        format!("step field `{field}`: {text}")
    })
}

/// The most characters shown of a field's name, and of serde's text (which quotes the
/// value: a hostile value may have thousands of characters).
const NAME_CHARS: usize = 40;
const TEXT_CHARS: usize = 160;

/// `text` on one line, cut to `max_chars`.
fn shorten(text: &str, max_chars: usize) -> String {
    let line = text.chars().map(|c| if c.is_control() { ' ' } else { c });
    if text.chars().count() <= max_chars {
        line.collect()
    } else {
        format!("{}...", line.take(max_chars - 3).collect::<String>())
    }
}

fn direction_to<'py>(py: Python<'py>, d: &ssdsim::DirectionResult) -> PyResult<Bound<'py, PyDict>> {
    let lat = PyDict::new(py);
    lat.set_item("count", d.latency.count)?;
    lat.set_item("mean_ns", d.latency.mean_ns)?;
    lat.set_item("min_ns", d.latency.min_ns)?;
    lat.set_item("max_ns", d.latency.max_ns)?;
    lat.set_item(
        "histogram",
        PyList::new(py, d.latency.histogram.iter().copied())?,
    )?;
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
    out.set_item("host_read_bytes", c.host_read_bytes)?;
    out.set_item("host_read_commands", c.host_read_commands)?;
    out.set_item("host_write_commands", c.host_write_commands)?;
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
    out.set_item("bad_superblocks", c.bad_superblocks)?;
    out.set_item("mean_pe_cycles", c.mean_pe_cycles)?;
    out.set_item("read_retries", c.read_retries)?;
    out.set_item("soft_decodes", c.soft_decodes)?;
    out.set_item("parity_rebuilds", c.parity_rebuilds)?;
    out.set_item("uncorrectable_reads", c.uncorrectable_reads)?;
    out.set_item("refreshed_superblocks", c.refreshed_superblocks)?;
    out.set_item("mapped_bytes", c.mapped_bytes)?;
    out.set_item("rmw_reads", c.rmw_reads)?;
    out.set_item("unwritten_read_bytes", c.unwritten_read_bytes)?;
    Ok(out)
}

fn energy_to<'py>(py: Python<'py>, e: &ssdsim::StepEnergy) -> PyResult<Bound<'py, PyDict>> {
    let w = &e.work;
    let work = PyDict::new(py);
    work.set_item("read_ns", w.read_ns)?;
    work.set_item("program_ns", w.program_ns)?;
    work.set_item("erase_ns", w.erase_ns)?;
    work.set_item("channel_units", w.channel_units)?;
    work.set_item("processor_ns", w.processor_ns)?;
    work.set_item("link_bytes", w.link_bytes)?;
    let out = PyDict::new(py);
    out.set_item("busy_j", e.busy_j)?;
    out.set_item("idle_j", e.idle_j)?;
    out.set_item("state_s", PyList::new(py, e.state_s.iter())?)?;
    out.set_item("work", work)?;
    Ok(out)
}

fn result_to<'py>(py: Python<'py>, r: &ssdsim::StepResult) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("start_s", r.start_s)?;
    out.set_item("busy_s", r.busy_s)?;
    out.set_item("idle_s", r.idle_s)?;
    out.set_item("bursts", r.bursts)?;
    figures_to(py, &out, [&r.read, &r.write, &r.trim], &r.per_second)?;
    out.set_item(
        "per_gib",
        PyList::new(py, r.per_gib.iter().map(|p| (p.gib, p.mbps)))?,
    )?;
    out.set_item("temperature_c", PyList::new(py, r.temperature_c.iter())?)?;
    out.set_item(
        "thermal_transitions",
        PyList::new(py, r.thermal_transitions.iter())?,
    )?;
    out.set_item("counters", counters_to(py, &r.counters)?)?;
    match &r.energy {
        Some(e) => out.set_item("energy", energy_to(py, e)?)?,
        None => out.set_item("energy", py.None())?,
    }
    out.set_item("notes", PyList::new(py, r.notes.iter())?)?;
    let jobs = r
        .jobs
        .iter()
        .map(|j| job_to(py, j))
        .collect::<PyResult<Vec<_>>>()?;
    out.set_item("jobs", PyList::new(py, jobs)?)?;
    Ok(out)
}

/// The read, write and trim figures (None where a direction had no command) and the
/// per-second series of a step or of one of its jobs, into `out`.
fn figures_to(
    py: Python<'_>,
    out: &Bound<'_, PyDict>,
    directions: [&Option<ssdsim::DirectionResult>; 3],
    per_second: &[ssdsim::SecondPoint],
) -> PyResult<()> {
    for (name, d) in ["read", "write", "trim"].into_iter().zip(directions) {
        match d {
            Some(d) => out.set_item(name, direction_to(py, d)?)?,
            None => out.set_item(name, py.None())?,
        }
    }
    let seconds = per_second.iter().map(|p| (p.t_s, p.mbps, p.iops));
    out.set_item("per_second", PyList::new(py, seconds)?)
}

/// One job's figures; its log as little-endian u64 rows of (done_ns, latency_ns, dir,
/// bs, offset), for numpy to read without a Python object per command.
fn job_to<'py>(py: Python<'py>, j: &ssdsim::JobResult) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("label", &j.label)?;
    out.set_item("busy_s", j.busy_s)?;
    figures_to(py, &out, [&j.read, &j.write, &j.trim], &j.per_second)?;
    let mut log = Vec::with_capacity(j.io_log.len() * 40);
    for c in &j.io_log {
        for v in [c.done_ns, c.latency_ns, u64::from(c.dir), c.bs, c.offset] {
            log.extend_from_slice(&v.to_le_bytes());
        }
    }
    out.set_item("io_log", PyBytes::new(py, &log))?;
    out.set_item("log_truncated", j.log_truncated)?;
    match &j.steady {
        Some(r) => {
            let steady = PyDict::new(py);
            steady.set_item("attained", r.attained)?;
            steady.set_item("criterion", r.criterion)?;
            steady.set_item("max_deviation", r.max_deviation)?;
            steady.set_item("slope", r.slope)?;
            steady.set_item("iops", PyList::new(py, r.iops.iter())?)?;
            steady.set_item("bw", PyList::new(py, r.bw.iter())?)?;
            out.set_item("steady", steady)?
        }
        None => out.set_item("steady", py.None())?,
    }
    Ok(out)
}

#[pymodule]
fn _ssdsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    install_panic_hook();
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(preset_bounds, m)?)?;
    m.add_class::<Drive>()?;
    m.add_class::<Progress>()?;
    m.add("PresetError", m.py().get_type::<PresetError>())?;
    m.add("StepError", m.py().get_type::<StepError>())?;
    m.add("DriveFailed", m.py().get_type::<DriveFailed>())?;
    m.add("FeatureError", m.py().get_type::<FeatureError>())?;
    m.add("InternalError", m.py().get_type::<InternalError>())?;
    Ok(())
}
