//! The bounded numbers of a preset, table by table.
//!
//! Contract: every table of a preset is a [`Section`]: it adds each of its numeric
//! fields that is present to the [`Fields`] of the preset, with its dotted key and
//! its bound from [`crate::bounds`], and checks the relations between its own
//! fields. [`DriveConfig::validate`](super::DriveConfig::validate) checks every
//! bound first, then each section's relations, then the relations across sections.

use super::ConfigError;
use crate::bounds::Bound;

/// One table of a preset (`[drive.<name>]`).
pub(super) trait Section {
    /// Add every numeric field of the table that is present, under the table's dotted name.
    fn add_bounded_fields(&self, fields: &mut Fields);

    /// Check the relations between the table's own fields. Called once every bounded
    /// field of the preset is within its bound; errors name the keys.
    fn validate(&self) -> Result<(), ConfigError> {
        Ok(())
    }
}

/// An optional table is checked when present.
impl<S: Section> Section for Option<S> {
    fn add_bounded_fields(&self, fields: &mut Fields) {
        if let Some(section) = self {
            section.add_bounded_fields(fields);
        }
    }

    fn validate(&self) -> Result<(), ConfigError> {
        self.as_ref().map_or(Ok(()), Section::validate)
    }
}

/// One bounded numeric field of a preset.
#[derive(Debug, Clone)]
pub struct BoundedField {
    /// Dotted TOML path, e.g. `drive.nand.tlc.t_prog_us`.
    pub key: String,
    pub value: f64,
    pub bound: &'static Bound,
}

/// Builder of the table of bounded fields, one TOML table after another.
#[derive(Default)]
pub(super) struct Fields {
    table: String,
    fields: Vec<BoundedField>,
}

impl Fields {
    /// Fields added from now on are in the table with this dotted name.
    pub(super) fn table(&mut self, name: &str) {
        self.table = name.to_string();
    }

    pub(super) fn add(&mut self, field: &str, value: impl Into<f64>, bound: &'static Bound) {
        self.fields.push(BoundedField {
            key: format!("{}.{field}", self.table),
            value: value.into(),
            bound,
        });
    }

    /// An optional field is checked when present.
    pub(super) fn add_some(
        &mut self,
        field: &str,
        value: Option<impl Into<f64>>,
        bound: &'static Bound,
    ) {
        if let Some(v) = value {
            self.add(field, v, bound);
        }
    }

    /// Every field added, in the order added.
    pub(super) fn into_fields(self) -> Vec<BoundedField> {
        self.fields
    }
}
