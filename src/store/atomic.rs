//! Crash-safe file replacement: write a temporary sibling, fsync it, rename
//! it over the target, fsync the folder. A reader sees the old file or the
//! new one, never half of either.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Whether a file name is one of `write`'s temporaries (`.NAME.tmpPID`),
/// which a killed process can leave behind.
pub fn is_temporary(name: &str) -> bool {
    name.starts_with('.')
        && name
            .rsplit_once(".tmp")
            .is_some_and(|(_, pid)| !pid.is_empty() && pid.chars().all(|c| c.is_ascii_digit()))
}

fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp{}", std::process::id()))
}

pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_with(path, |f| f.write_all(bytes))
}

/// Like `write`, with the content produced by a callback on the open file.
///
/// A symlink is written through, to the file it names: renaming over it
/// would cut the link. A path that is neither a file nor a folder (a FIFO,
/// `/dev/stdout`, a device) is written in place, since a rename would
/// replace it with a regular file and nothing there can be half-written
/// in the sense a file can.
pub fn write_with(path: &Path, fill: impl FnOnce(&mut File) -> io::Result<()>) -> io::Result<()> {
    let path = &through_links(path)?;
    if fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        let mut f = fs::OpenOptions::new().write(true).open(path)?;
        fill(&mut f)?;
        return f.flush();
    }
    stage(path, fill)?.commit()?;
    sync_dir(path)
}

/// Where a write to `path` would land, as a canonical path: through its
/// links when it exists, else its folder's canonical path and its name;
/// `None` when its folder does not exist either.
pub fn landing(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = path.canonicalize() {
        return Some(p);
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Some(parent.canonicalize().ok()?.join(path.file_name()?))
}

/// The path a write to `path` should replace: the end of its chain of
/// symlinks (even one that does not exist yet), else `path` itself.
fn through_links(path: &Path) -> io::Result<PathBuf> {
    let mut at = path.to_path_buf();
    // A bound, as the kernel's, so that a loop of links is an error.
    for _ in 0..40 {
        match fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = fs::read_link(&at)?;
                at = match at.parent() {
                    Some(dir) => dir.join(to),
                    None => to,
                };
            }
            _ => return Ok(at),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// A file written to its temporary sibling, not yet synced or in place.
/// Dropped uncommitted, the temporary goes.
pub struct Staged {
    file: Option<File>,
    tmp: PathBuf,
    path: PathBuf,
}

/// Writes a file's content to its temporary sibling (the first half of
/// `write_with`); `Staged::commit` puts it in place.
pub fn stage(path: &Path, fill: impl FnOnce(&mut File) -> io::Result<()>) -> io::Result<Staged> {
    // Made first, so that a failure below drops it and removes the temporary.
    let mut staged = Staged {
        file: None,
        tmp: temp_path(path),
        path: path.to_path_buf(),
    };
    let f = staged.file.insert(File::create(&staged.tmp)?);
    fill(f)?;
    Ok(staged)
}

impl Staged {
    /// A second handle on the temporary, for a writer that fills it over
    /// time (`parquet::Streamed`); `commit` syncs what it wrote.
    pub fn handle(&self) -> io::Result<File> {
        self.file
            .as_ref()
            .expect("a staged file is open until renamed")
            .try_clone()
    }

    /// Where the file goes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Syncs the content, so the name never shows a half-written file
    /// after a power cut.
    pub fn sync(&self) -> io::Result<()> {
        match &self.file {
            Some(f) => f.sync_all(),
            None => Ok(()),
        }
    }

    /// Syncs the content and renames the file into place. The folder is
    /// not synced: callers sync it once for many files (`sync_dir`).
    pub fn commit(self) -> io::Result<()> {
        self.sync()?;
        crate::crash::point("temporary file written");
        self.rename()
    }

    /// Renames the file into place; call `sync` first.
    pub fn rename(mut self) -> io::Result<()> {
        self.file = None;
        fs::rename(&self.tmp, &self.path)?;
        // In place: nothing for `drop` to remove.
        self.tmp = PathBuf::new();
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.tmp.as_os_str().is_empty() {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// Writes a set of files so that either all of them replace their old
/// versions or none does: every file is written to a temporary sibling and
/// synced first, and only then are they renamed into place, in order (put
/// a file that says the set is whole last). A failure while writing, such
/// as a full disk, leaves the old set as it was.
pub fn write_all(files: &[(PathBuf, Vec<u8>)]) -> io::Result<()> {
    let mut staged: Vec<(PathBuf, &Path)> = Vec::new();
    let result = (|| {
        for (path, bytes) in files {
            let tmp = temp_path(path);
            staged.push((tmp.clone(), path));
            let mut f = File::create(&tmp)?;
            f.write_all(bytes)?;
            f.sync_all()?;
        }
        Ok(())
    })();
    if let Err(e) = result {
        for (tmp, _) in &staged {
            let _ = fs::remove_file(tmp);
        }
        return Err(e);
    }
    for (tmp, path) in &staged {
        fs::rename(tmp, path)?;
        crate::crash::point("file of a set renamed");
    }
    match files.first() {
        Some((p, _)) => sync_dir(p),
        None => Ok(()),
    }
}

/// Syncs the folder holding `path`, so a rename into it survives a power
/// cut.
pub fn sync_dir(path: &Path) -> io::Result<()> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => File::open(dir)?.sync_all(),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    #[cfg(unix)]
    fn writes_through_a_symlink_and_keeps_it() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink("real.json", &link).unwrap();
        // A dangling link is written through too: its target is created.
        super::write(&link, b"one").unwrap();
        super::write(&link, b"two").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"two");
        let loop_a = dir.path().join("a");
        std::os::unix::fs::symlink("b", &loop_a).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        assert!(super::write(&loop_a, b"x").is_err());
    }

    #[test]
    fn replaces_content_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        super::write(&p, b"one").unwrap();
        super::write(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
