//! The simulator's integration tests, one module a file: one binary, built and linked once,
//! whose tests run side by side.
mod common;

mod ageing;
mod bounds;
mod calibration;
mod directions;
mod fill_states;
mod mechanisms;
mod physics;
mod power;
mod retention;
mod same_results;
mod thermal;
mod write_cache;
