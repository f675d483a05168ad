//! The registry of models the runner can execute, by manifest name.

use crate::cascade::Cascade;
use crate::hive::model::Hive;
use crate::model::Model;
use crate::trustsim::TrustSim;

pub static ALL: &[&dyn Model] = &[&Cascade, &Hive, &TrustSim];

pub fn find(name: &str) -> Option<&'static dyn Model> {
    ALL.iter().copied().find(|m| m.name() == name)
}

pub fn names() -> Vec<&'static str> {
    ALL.iter().map(|m| m.name()).collect()
}
