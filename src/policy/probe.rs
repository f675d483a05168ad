//! Checks of an external arm before anything runs: that its command names
//! an executable program (as `plan` and `run` do for every live arm), and,
//! when asked (`plan --probe-policy`), how it answers: its identity and how
//! fast it decides.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::spec::External;

/// The program an argument vector runs, found as the process will find
/// it: a path with a slash is relative to the working folder; a bare name
/// is looked up on PATH.
pub fn program(ext: &External) -> Result<PathBuf, String> {
    let name = &ext.command[0];
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if name.contains('/') {
        let path = ext.workdir.join(name);
        if !path.exists() {
            return Err(format!(
                "`{name}` does not exist (looked for {}; relative paths are taken from the manifest's folder)",
                path.display()
            ));
        }
        if !executable(&path) {
            return Err(format!(
                "{} is not an executable file; make it one (chmod +x) or run it through its interpreter, e.g. [\"python3\", \"{name}\"]",
                path.display()
            ));
        }
        return Ok(path);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| executable(p))
        .ok_or_else(|| format!("`{name}` is not a program on PATH; give its path, or install it"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::spec::{External, RawExternal};

    fn ext(command: &[&str], dir: &Path) -> External {
        let raw = RawExternal {
            command: command.iter().map(|s| s.to_string()).collect(),
            jobs: None,
            timeout_s: None,
            retries: None,
            fallback: None,
            replay: None,
            max_batch: None,
            breaker: None,
        };
        External::new(raw, dir.to_path_buf()).unwrap()
    }

    #[test]
    fn programs_are_found_on_path_or_relative_to_the_manifest() {
        let dir = tempfile::tempdir().unwrap();
        assert!(program(&ext(&["sh"], dir.path())).is_ok());
        let e = program(&ext(&["no-such-program-here"], dir.path())).unwrap_err();
        assert!(e.contains("not a program on PATH"), "{e}");
        let script = dir.path().join("p.py");
        std::fs::write(&script, "print()").unwrap();
        let e = program(&ext(&["./p.py"], dir.path())).unwrap_err();
        assert!(e.contains("not an executable file"), "{e}");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(
            program(&ext(&["./p.py"], dir.path())).unwrap(),
            dir.path().join("./p.py")
        );
        assert!(program(&ext(&["./q.py"], dir.path()))
            .unwrap_err()
            .contains("does not exist"));
    }
}
