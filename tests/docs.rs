//! The documentation is checked like code:
//! - the generated reference (`docs/reference/`) equals what the code
//!   generates, and names every parameter and column;
//! - every relative link and every document a file names exists, and no
//!   file points at a document outside the repository;
//! - the README's and the guide's runnable blocks run, in order, in a fresh
//!   folder, with the binary on PATH (`docs_reports_regenerate`, run by
//!   `.ci/run`, does the same for `docs/reports/`, whose output blocks hold
//!   the figures and must come out byte for byte).
//!
//! A block's info string says what to do with it: ```` ```sh run ```` runs
//! under `bash -euo pipefail` and must exit 0 (`exit=N` expects N);
//! a ```` ```text output ```` block right after it must equal its stdout
//! (blank lines at either end aside);
//! any block with `file=PATH` is written to PATH first. Other blocks are
//! illustration.

use std::path::{Path, PathBuf};
use std::process::Command;

use witness::model::{reference, Registry};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap()
}

#[test]
fn the_committed_reference_is_what_the_code_generates() {
    let dir = root().join("docs/reference");
    let mut stale = Vec::new();
    let pages = witness::reference::pages(&Registry::builtin());
    for page in &pages {
        let have = std::fs::read(dir.join(&page.path)).unwrap_or_default();
        if have != page.bytes {
            stale.push(page.path.clone());
        }
    }
    // A page the code no longer generates is stale too.
    for sub in ["", "man"] {
        for e in std::fs::read_dir(dir.join(sub)).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_file() {
                let rel = Path::new(sub).join(e.file_name());
                let rel = rel.to_str().unwrap().to_string();
                if !pages.iter().any(|p| p.path == rel) {
                    stale.push(format!("{rel} (not generated)"));
                }
            }
        }
    }
    assert!(
        stale.is_empty(),
        "docs/reference is stale: {stale:?}; regenerate it with\n  cargo run --release -- generate reference docs/reference"
    );
    assert_eq!(
        read("docs/reference/models.md"),
        reference::markdown_all(Registry::builtin().all()),
        "describe --markdown and the reference page differ"
    );
}

#[test]
fn the_reference_names_every_parameter_and_column_of_its_own_model() {
    let text = read("docs/reference/models.md");
    for model in Registry::builtin().all() {
        // Each model's section, so a name shared by two models must be
        // documented in both.
        let start = text
            .find(&format!("## `{}`", model.name()))
            .unwrap_or_else(|| panic!("no section for {}", model.name()));
        let section = &text[start..];
        let end = section[3..].find("\n## ").map_or(section.len(), |e| e + 3);
        let section = &section[..end];
        let names = model
            .params()
            .iter()
            .map(|p| p.name)
            .chain(model.summary_columns().iter().map(|c| c.name))
            .chain(
                model
                    .tables()
                    .iter()
                    .flat_map(|t| t.columns.iter().map(|c| c.name)),
            );
        for name in names {
            assert!(
                section.contains(&format!("| `{name}` |")),
                "the {} section does not document `{name}`",
                model.name()
            );
        }
    }
}

#[test]
fn the_readme_names_every_verb() {
    use clap::CommandFactory;
    let text = read("README.md");
    for verb in witness::cli::Cli::command().get_subcommands() {
        if verb.is_hide_set() || verb.get_name() == "help" {
            continue;
        }
        assert!(
            text.contains(&format!("`witness {}", verb.get_name())),
            "README lacks `witness {}`",
            verb.get_name()
        );
    }
}

#[test]
fn the_readme_is_a_front_door() {
    let lines = read("README.md").lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines; move detail into docs/"
    );
}

/// Every file the checks read: the project's own text, not build output,
/// results or fixtures of other formats.
fn text_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap();
            if path.is_dir() {
                if !matches!(name, "target" | "results" | ".git" | "__pycache__") {
                    walk(&path, out);
                }
            } else if [
                ".md", ".rs", ".toml", ".py", ".sh", ".js", ".css", ".txt", ".yaml", ".json",
                ".sub", ".sbatch",
            ]
            .iter()
            .any(|ext| name.ends_with(ext))
                || name == "run"
            {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(root(), &mut out);
    out.sort();
    out
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root()).unwrap().display().to_string()
}

/// Whether `target`, as named in `file`, exists: a path relative to the
/// file's folder or to the repository's root; a bare file name (a comment
/// saying "cascade.md" after naming its folder) anywhere in the repository.
fn exists(file: &Path, target: &str, names: &[String]) -> bool {
    let target = target.trim_start_matches("./");
    if !target.contains('/') {
        return names.iter().any(|n| n == target);
    }
    file.parent().unwrap().join(target).exists() || root().join(target).exists()
}

#[test]
fn every_relative_link_resolves() {
    let mut broken = Vec::new();
    for file in text_files()
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "md"))
    {
        let text = std::fs::read_to_string(file).unwrap();
        for (at, _) in text.match_indices("](") {
            let rest = &text[at + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = rest[..end].split('#').next().unwrap().trim();
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            if !file.parent().unwrap().join(target).exists() {
                broken.push(format!("{}: {target}", relative(file)));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to nothing:\n{}",
        broken.join("\n")
    );
}

/// Text that names a document outside the repository: the design sources
/// and specifications a project is built from are not shipped with it.
const OUTSIDE: &[&str] = &[
    "shared/spec",
    "shared/seeds",
    "shared/design",
    "spec section",
    "engine issue",
    "project's spec",
];

#[test]
fn no_file_names_a_document_that_is_not_in_the_repository() {
    let mut missing = Vec::new();
    let this = root().join("tests/docs.rs");
    let files = text_files();
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_str().unwrap().to_string())
        .collect();
    for file in files.iter().cloned() {
        if file == this {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for word in OUTSIDE {
            if text.contains(word) {
                missing.push(format!("{}: names `{word}`", relative(&file)));
            }
        }
        // Every Markdown file name a file mentions, read as a path.
        for (at, _) in text.match_indices(".md") {
            let after = text[at + 3..].chars().next();
            if after.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let start = text[..at]
                .rfind(|c: char| !(c.is_alphanumeric() || "_-./".contains(c)))
                .map_or(0, |s| s + 1);
            let name = &text[start..at + 3];
            if name == ".md"
                || name.starts_with('.') && !name.starts_with("./") && !name.starts_with("../")
            {
                continue;
            }
            if !exists(&file, name, &names) {
                missing.push(format!("{}: names `{name}`", relative(&file)));
            }
        }
    }
    missing.dedup();
    assert!(
        missing.is_empty(),
        "documents not in the repository:\n{}",
        missing.join("\n")
    );
}

/// A fenced block: its info string and its text.
struct Block {
    info: String,
    text: String,
    line: usize,
}

fn blocks(markdown: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in markdown.lines().enumerate() {
        let fence = line.trim_start().starts_with("```");
        match (&mut open, fence) {
            (None, true) => {
                open = Some(Block {
                    info: line.trim_start()[3..].trim().to_string(),
                    text: String::new(),
                    line: i + 1,
                })
            }
            (Some(_), true) => out.push(open.take().unwrap()),
            (Some(b), false) => {
                b.text += line;
                b.text += "\n";
            }
            (None, false) => {}
        }
    }
    out
}

/// The folder a document's commands run in: a copy of what they read, and
/// nothing they might have written before.
fn sandbox() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for sub in [
        "experiments",
        "policies",
        "examples",
        "benches/manifests",
        "docs/img",
    ] {
        copy_dir(&root().join(sub), &dir.path().join(sub));
    }
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Runs a document's runnable blocks in order; returns what went wrong.
fn run_document(doc: &str) -> Vec<String> {
    run_text(doc, &read(doc))
}

fn run_text(doc: &str, text: &str) -> Vec<String> {
    let dir = sandbox();
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_witness"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut problems = Vec::new();
    let mut last_stdout: Option<(usize, String)> = None;
    for b in blocks(text) {
        let words: Vec<&str> = b.info.split_whitespace().collect();
        let at = format!("{doc}:{}", b.line);
        if let Some(file) = words.iter().find_map(|w| w.strip_prefix("file=")) {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &b.text).unwrap();
        }
        if words.contains(&"output") {
            match last_stdout.take() {
                Some((_, out)) if out.trim_matches('\n') == b.text.trim_matches('\n') => {}
                Some((line, out)) => problems.push(format!(
                    "{at}: the output of the block at line {line} differs; it printed:\n{out}"
                )),
                None => problems.push(format!("{at}: an output block follows no run block")),
            }
            continue;
        }
        last_stdout = None;
        if words.first() != Some(&"sh") || !words.contains(&"run") {
            continue;
        }
        let want: i32 = words
            .iter()
            .find_map(|w| w.strip_prefix("exit="))
            .map_or(0, |n| n.parse().unwrap());
        // The README builds and runs in one step; here the binary is built.
        let script = b.text.replace("cargo run --release -- ", "witness ");
        let out = Command::new("bash")
            .args(["-euo", "pipefail", "-c", &script])
            .current_dir(dir.path())
            .env("PATH", &path)
            .output()
            .unwrap();
        let code = out.status.code().unwrap_or(-1);
        if code != want {
            problems.push(format!(
                "{at}: exited {code}, not {want}\n{script}\nstdout:\n{}\nstderr:\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        last_stdout = Some((b.line, String::from_utf8_lossy(&out.stdout).into_owned()));
    }
    problems
}

fn markdown_in(dir: &str) -> Vec<String> {
    let mut docs: Vec<String> = std::fs::read_dir(root().join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| relative(&p))
        .collect();
    docs.sort();
    docs
}

fn run_all(docs: &[String]) {
    let problems: Vec<String> = docs.iter().flat_map(|d| run_document(d)).collect();
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn the_readme_and_the_guide_run_as_written() {
    let mut docs = vec!["README.md".to_string()];
    docs.extend(markdown_in("docs/guide"));
    run_all(&docs);
}

/// The reports' figures, regenerated from their commands (some run grids
/// of thousands of runs, so CI runs this on its own).
#[test]
#[ignore = "minutes of runs; .ci/run runs it with --ignored"]
fn docs_reports_regenerate() {
    run_all(&markdown_in("docs/reports"));
}

#[test]
fn a_block_runner_that_cannot_fail_is_no_check() {
    // The runner must notice a wrong output and a wrong exit code.
    let b = blocks("```sh run\necho a\n```\n\n```text output\nb\n```\n");
    assert_eq!(b.len(), 2);
    assert_eq!(b[0].info, "sh run");
    let problems = run_text(
        "the self-test document",
        "```sh run\necho a\n```\n```text output\nb\n```\n```sh run exit=2\ntrue\n```\n```sh run\necho ok\n```\n```text output\nok\n```\n",
    );
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].contains("differs"), "{problems:?}");
    assert!(problems[1].contains("exited 0, not 2"), "{problems:?}");
}
