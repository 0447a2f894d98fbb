//! The default thermal model: two RC nodes, the controller over the board.

use super::ThermalModel;
use crate::config::RcConfig;

/// Heat enters the controller node (where the drive's sensor is), flows through
/// `controller_k_per_w` into the board node, and from the board into the air through the
/// cooling's resistance. At constant power the sensor settles at
/// ambient + P × (R_controller + R_cooling), approached with the two nodes' time
/// constants (CALIBRATION.md, "Thermal").
pub struct TwoNode {
    /// Conductances, W/K: controller to board, board to air.
    g_controller: f64,
    g_air: f64,
    /// Heat capacities, J/K.
    c_controller: f64,
    c_board: f64,
    ambient_c: f64,
    controller_c: f64,
    board_c: f64,
}

impl TwoNode {
    /// Both nodes at the air's temperature, the board cooled through `cooling_k_per_w`.
    pub fn new(rc: &RcConfig, cooling_k_per_w: f64, ambient_c: f64) -> TwoNode {
        TwoNode {
            g_controller: 1.0 / rc.controller_k_per_w,
            g_air: 1.0 / cooling_k_per_w,
            c_controller: rc.controller_j_per_k,
            c_board: rc.board_j_per_k,
            ambient_c,
            controller_c: ambient_c,
            board_c: ambient_c,
        }
    }
}

impl ThermalModel for TwoNode {
    /// One backward-Euler step (stable for any step and any time constants, exact at
    /// steady state): the two nodes' balance equations at the step's end, solved.
    fn advance(&mut self, dt_s: f64, power_w: f64) {
        let a = self.c_controller / dt_s;
        let b = self.c_board / dt_s;
        let g = self.g_controller;
        // (a + g) T1 - g T2 = a T1_old + P
        // -g T1 + (b + g + g_air) T2 = b T2_old + g_air T_air
        let m11 = a + g;
        let m22 = b + g + self.g_air;
        let r1 = a * self.controller_c + power_w;
        let r2 = b * self.board_c + self.g_air * self.ambient_c;
        let det = m11 * m22 - g * g;
        self.controller_c = (r1 * m22 + g * r2) / det;
        self.board_c = (m11 * r2 + g * r1) / det;
    }

    fn sensor_c(&self) -> f64 {
        self.controller_c
    }

    fn set_air(&mut self, k_per_w: f64, ambient_c: f64) {
        self.g_air = 1.0 / k_per_w;
        self.ambient_c = ambient_c;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rc() -> RcConfig {
        RcConfig {
            controller_k_per_w: 2.0,
            controller_j_per_k: 2.0,
            board_j_per_k: 35.0,
            bare_k_per_w: 7.0,
            heatsink_k_per_w: 3.0,
            fan_k_per_w: 2.0,
        }
    }

    #[test]
    fn settles_at_ambient_plus_power_times_resistance() {
        let mut m = TwoNode::new(&rc(), 7.0, 25.0);
        for _ in 0..100_000 {
            m.advance(0.1, 5.0);
        }
        assert!((m.sensor_c() - (25.0 + 5.0 * 9.0)).abs() < 1e-6);
    }

    #[test]
    fn the_controller_heats_in_seconds_the_board_in_minutes() {
        let mut m = TwoNode::new(&rc(), 7.0, 25.0);
        for _ in 0..200 {
            m.advance(0.1, 5.0); // 20 s: five controller time constants
        }
        let rise = m.sensor_c() - 25.0;
        // the controller's own 10 K is there, the board's 35 K mostly not yet
        assert!(rise > 10.0 && rise < 20.0, "{rise}");
    }

    #[test]
    fn the_step_does_not_change_where_it_goes() {
        let run = |dt: f64| {
            let mut m = TwoNode::new(&rc(), 7.0, 25.0);
            for _ in 0..(600.0 / dt) as usize {
                m.advance(dt, 6.0);
            }
            m.sensor_c()
        };
        assert!((run(0.1) - run(0.01)).abs() < 0.2);
    }

    #[test]
    fn without_power_it_cools_to_the_air() {
        let mut m = TwoNode::new(&rc(), 3.0, 25.0);
        for _ in 0..6000 {
            m.advance(0.1, 8.0);
        }
        for _ in 0..100_000 {
            m.advance(0.1, 0.0);
        }
        assert!((m.sensor_c() - 25.0).abs() < 1e-6);
    }
}
