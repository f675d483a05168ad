//! Results do not depend on the machine's CPU features. glibc chooses
//! among variants of its `exp` (and others) by the CPU's features, and the
//! variants disagree in the last bit on a few inputs; witness uses its own
//! correctly rounded functions (`src/math/mod.rs`, decision 151) so that a
//! run's bytes are the same on every machine.
//!
//! `GLIBC_TUNABLES` hides FMA and AVX2 from glibc, which then loads the
//! variants a CPU without them gets. Before decision 151 this test failed:
//! 1 of the 10,980 Brier scores in `experiments/default.toml`'s
//! trajectories changed. Elsewhere than glibc on x86_64 the variable does
//! nothing and the test passes trivially.

mod common;

use common::{data_files, witness};

#[test]
fn hiding_fma_from_the_c_library_changes_no_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/experiments/default.toml");
    let mut outputs = Vec::new();
    for (name, tunables) in [
        ("full", None),
        ("no-fma", Some("glibc.cpu.hwcaps=-AVX2,-FMA")),
    ] {
        let out = tmp.path().join(name);
        let mut cmd = witness();
        if let Some(t) = tunables {
            cmd.env("GLIBC_TUNABLES", t);
        }
        cmd.args(["run", "-q", "--out"])
            .arg(&out)
            .arg(manifest)
            .assert()
            .success();
        outputs.push(data_files(&out));
    }
    assert!(outputs[0].contains_key("trajectories.parquet"));
    assert!(
        outputs[0] == outputs[1],
        "the results differ when glibc cannot use FMA"
    );
}
