//! ssdsim: the simulator core of ssdlab.
//!
//! Pure Rust, no Python. The boundary is coarse: a drive preset and a list of
//! steps go in, step results come out, in virtual time (see DESIGN.md, "The
//! simulator", and README.md in this crate).
//!
//! ```no_run
//! use ssdsim::{DriveConfig, Drive, Step, Op};
//! let cfg = DriveConfig::from_file("drives/wd-sn850-1tb.toml").unwrap();
//! let mut drive = Drive::new(cfg).unwrap();
//! let r = drive.run(&Step::new("fill", Op::Write, 128 << 10, drive.user_bytes() / (128 << 10) * (128 << 10)).qd(32).per_gib()).unwrap();
//! println!("{:.0} MB/s", r.mbps());
//! ```

pub mod bounds;
pub mod cache;
pub mod config;
pub mod controller;
pub mod ftl;
pub mod geometry;
pub mod health;
pub mod histogram;
pub mod nand;
pub mod pattern;
pub mod power;
pub mod rng;
pub mod run;
pub mod step;
pub mod thermal;
pub mod time;
pub mod timeline;
pub mod wear;

#[cfg(test)]
mod proptests;

pub use config::{ConfigError, DriveConfig};
pub use power::{Platform, Work};
pub use run::{simulate, Drive};
pub use step::{
    Counters, DirectionResult, GibPoint, IoRecord, JobResult, Latency, Op, SecondPoint, SimError,
    Step, StepEnergy, StepResult,
};

/// Version of the simulator core, recorded with every simulated run.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

#[cfg(test)]
mod tests {
    #[test]
    fn drive_is_send() {
        // The Python bindings hold a Drive in a pyclass, which must be Send.
        fn send<T: Send>() {}
        send::<super::Drive>();
        send::<super::StepResult>();
    }

    #[test]
    fn version_is_semver() {
        assert_eq!(super::VERSION.split('.').count(), 3);
    }
}
