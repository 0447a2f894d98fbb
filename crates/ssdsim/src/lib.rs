//! ssdsim: the simulator core of ssdlab.
//!
//! Pure Rust, no Python. The boundary is coarse: a drive preset and a list of
//! steps go in, step results come out (see DESIGN.md, "The simulator").

/// Version of the simulator core, recorded with every simulated run.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

#[cfg(test)]
mod tests {
    #[test]
    fn version_is_semver() {
        assert_eq!(super::VERSION.split('.').count(), 3);
    }
}
