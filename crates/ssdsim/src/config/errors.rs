//! `[drive.errors]`: the raw bit error rate of the NAND and what drives it (see
//! `crate::wear::errors`).

use super::fields::{Fields, Section};
use crate::bounds as b;
use serde::Deserialize;

/// The raw bit error rate (RBER) of a native-mode page, as power laws in its block's
/// wear, its data's age at the reference temperature and the reads since it was
/// programmed (CALIBRATION.md, "Wear, retention and error correction").
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ErrorsConfig {
    /// RBER of a fresh block just programmed.
    /// Bound: [`bounds::RBER`](crate::bounds::RBER).
    pub fresh_rber: f64,
    /// RBER wear adds at the rated P/E cycles, and the power of wear / rated it grows with.
    /// Bounds: [`bounds::RBER`](crate::bounds::RBER), [`bounds::RBER_EXPONENT`](crate::bounds::RBER_EXPONENT).
    pub wear_rber: f64,
    pub wear_exponent: f64,
    /// RBER a year at the reference temperature adds on a fresh block, and the power of
    /// the time it grows with (below 1: charge leaks fastest in the first hours).
    /// Bounds: [`bounds::RBER`](crate::bounds::RBER), [`bounds::RBER_EXPONENT`](crate::bounds::RBER_EXPONENT).
    pub retention_rber: f64,
    pub retention_exponent: f64,
    /// RBER 100 000 reads of a block since its program add on a fresh block, and the
    /// power of the reads it grows with.
    /// Bounds: [`bounds::RBER`](crate::bounds::RBER), [`bounds::RBER_EXPONENT`](crate::bounds::RBER_EXPONENT).
    pub read_disturb_rber: f64,
    pub read_disturb_exponent: f64,
    /// Worn blocks leak and are disturbed faster: the retention and read terms grow as
    /// `(1 + cycles / wear_scale_cycles) ^ wear_scale_exponent`.
    /// Bounds: [`bounds::PE_CYCLES`](crate::bounds::PE_CYCLES), [`bounds::RBER_EXPONENT`](crate::bounds::RBER_EXPONENT).
    pub wear_scale_cycles: f64,
    pub wear_scale_exponent: f64,
    /// Arrhenius activation energy of charge loss, eV, and the temperature the retention
    /// term is given at, °C.
    /// Bounds: [`bounds::ACTIVATION_EV`](crate::bounds::ACTIVATION_EV), [`bounds::RETENTION_C`](crate::bounds::RETENTION_C).
    pub activation_ev: f64,
    pub reference_c: f64,
    /// Spread of errors from codeword to codeword: the sigma of the natural logarithm of
    /// a codeword's RBER around its page's (errors per codeword are over-dispersed).
    /// Bound: [`bounds::CODEWORD_SIGMA`](crate::bounds::CODEWORD_SIGMA).
    pub codeword_sigma: f64,
}

impl Section for ErrorsConfig {
    fn add_bounded_fields(&self, f: &mut Fields) {
        f.table("drive.errors");
        for (key, value) in [
            ("fresh_rber", self.fresh_rber),
            ("wear_rber", self.wear_rber),
            ("retention_rber", self.retention_rber),
            ("read_disturb_rber", self.read_disturb_rber),
        ] {
            f.add(key, value, &b::RBER);
        }
        for (key, value) in [
            ("wear_exponent", self.wear_exponent),
            ("retention_exponent", self.retention_exponent),
            ("read_disturb_exponent", self.read_disturb_exponent),
            ("wear_scale_exponent", self.wear_scale_exponent),
        ] {
            f.add(key, value, &b::RBER_EXPONENT);
        }
        f.add("wear_scale_cycles", self.wear_scale_cycles, &b::PE_CYCLES);
        f.add("activation_ev", self.activation_ev, &b::ACTIVATION_EV);
        f.add("reference_c", self.reference_c, &b::RETENTION_C);
        f.add("codeword_sigma", self.codeword_sigma, &b::CODEWORD_SIGMA);
    }
}
