//! Recorded tool observations: what an agent sees when it runs the
//! behavioural test, one text per truth value. They are compiled into the
//! program (a fixture is part of the model, so a run never reads a file
//! that could change under it) and chosen by name with the
//! `observations` parameter; `fixtures/observations/` holds their sources.

use serde::Deserialize;
use std::sync::LazyLock;

crate::words! {
    /// The recorded observations a probe can return.
    pub enum Fixture {
        /// A test suite whose local helper shadows the real test runner.
        RunnerShadowed = "runner-shadowed",
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Source {
    name: String,
    #[allow(dead_code)]
    about: String,
    #[allow(dead_code)]
    command: String,
    outputs: Outputs,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Outputs {
    #[serde(rename = "true")]
    when_true: String,
    #[serde(rename = "false")]
    when_false: String,
}

const SOURCES: &[(Fixture, &str)] = &[(
    Fixture::RunnerShadowed,
    include_str!("../../fixtures/observations/runner-shadowed.json"),
)];

static PARSED: LazyLock<Vec<(Fixture, Outputs)>> = LazyLock::new(|| {
    SOURCES
        .iter()
        .map(|&(f, text)| {
            let s: Source =
                serde_json::from_str(text).unwrap_or_else(|e| panic!("fixture {}: {e}", f.name()));
            assert_eq!(s.name, f.name(), "a fixture's file names it");
            (f, s.outputs)
        })
        .collect()
});

impl Fixture {
    /// The test output a probe shows when the claim's truth is `truth`.
    pub fn text(self, truth: bool) -> &'static str {
        let (_, o) = PARSED
            .iter()
            .find(|(f, _)| *f == self)
            .expect("every fixture has a source");
        if truth {
            &o.when_true
        } else {
            &o.when_false
        }
    }
}

/// How the scripted policies read a probe's output: the test run passed
/// when its last line reports no failure. (The Python twins read it the
/// same way.)
pub fn passed(text: &str) -> bool {
    let last = text.lines().rev().find(|l| !l.trim().is_empty());
    last.is_some_and(|l| l.contains("passed") && !l.contains("failed"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fixture_parses_and_reads_as_its_truth() {
        for &f in <Fixture as crate::words::Words>::ALL {
            assert!(passed(f.text(true)), "{f}: the true output passes");
            assert!(!passed(f.text(false)), "{f}: the false output fails");
        }
    }
}
