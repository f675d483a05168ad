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
//! (blank lines at either end aside), a ```` ```text excerpt ```` block's
//! lines must be lines of its stdout in the same order;
//! any block with `file=PATH` is written to PATH first. Other blocks are
//! illustration. Two commands cannot run inside the tests, and CI runs them
//! instead: the README's install (`.ci/run` builds the same binary with
//! `--locked`) and its test command (`.ci/run` is that command plus the
//! lints and interop checks).

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
/// file's folder or to the repository's root, or the end of a path in the
/// repository (a table of golden files naming them below their folder); a
/// bare file name (a comment saying "cascade.md" after naming its folder)
/// anywhere in the repository. `paths` are the repository's files,
/// relative to its root.
fn exists(file: &Path, target: &str, paths: &[String]) -> bool {
    let target = target.trim_start_matches("./");
    if file.parent().unwrap().join(target).exists() || root().join(target).exists() {
        return true;
    }
    let tail = format!("/{}", target.trim_start_matches("../"));
    paths.iter().any(|p| p == target || p.ends_with(&tail))
}

/// The targets a Markdown file links to: inline links and images
/// (`](target)`), reference definitions (`[label]: target`) and HTML
/// `src`/`href` attributes.
fn link_targets(text: &str) -> Vec<String> {
    let mut out: Vec<String> = between(text, "](", ')').collect();
    for line in text.lines() {
        let line = line.trim_start();
        if let Some(def) = line
            .strip_prefix('[')
            .and_then(|l| l.split_once("]:"))
            .map(|(_, target)| target.trim())
        {
            out.extend(def.split_whitespace().next().map(str::to_string));
        }
    }
    for attr in ["src=\"", "href=\""] {
        out.extend(between(text, attr, '"'));
    }
    out
}

/// Each piece of `text` that follows an `open` up to the next `close`.
fn between<'a>(text: &'a str, open: &'a str, close: char) -> impl Iterator<Item = String> + 'a {
    text.match_indices(open).filter_map(move |(at, _)| {
        let rest = &text[at + open.len()..];
        rest.find(close).map(|end| rest[..end].to_string())
    })
}

#[test]
fn every_relative_link_resolves() {
    let mut broken = Vec::new();
    for file in text_files()
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "md"))
    {
        let text = std::fs::read_to_string(file).unwrap();
        for target in link_targets(&text) {
            let target = target.split('#').next().unwrap().trim();
            let target = target.trim_start_matches('<').trim_end_matches('>');
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

#[test]
fn the_link_reader_finds_every_kind_of_link() {
    let text = "see [a](x.md#top) and ![b][i]\n[i]: ../img/y.png \"title\"\n<img src=\"z.svg\"> <a href=\"w.md\">w</a>\n";
    assert_eq!(
        link_targets(text),
        vec!["x.md#top", "../img/y.png", "z.svg", "w.md"]
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

/// The extensions of files a text may name: documents, images, data,
/// manifests and scripts (not `.parquet`: those are results, written by
/// the commands that name them).
const NAMED: &[&str] = &[
    ".md", ".png", ".svg", ".json", ".toml", ".py", ".csv", ".sh",
];

/// The file names ending in one of `NAMED` that `text` mentions, each with
/// the path written before it (`docs/guide/racing.md`, `../img/a.png`).
fn named_files(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for ext in NAMED {
        for (at, _) in text.match_indices(ext) {
            let end = at + ext.len();
            let after = text[end..].chars().next();
            if after.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let start = text[..at]
                .rfind(|c: char| !(c.is_alphanumeric() || "_-./".contains(c)))
                .map_or(0, |s| s + 1);
            let name = &text[start..end];
            let stem = &name[..name.len() - ext.len()];
            // `.md` alone, a dotfile, `*.toml`, `$DIR/x.json`, `{name}.csv`.
            let before = text[..start].chars().next_back();
            if stem.is_empty()
                || stem.ends_with('/')
                || name.starts_with('.') && !name.starts_with("./") && !name.starts_with("../")
                || before.is_some_and(|c| "*$<{%".contains(c))
            {
                continue;
            }
            out.push(name);
        }
    }
    out
}

/// What of a file names documents for a reader: a Markdown file's text
/// outside fenced blocks (a block's commands make the files they name, and
/// runnable blocks are run), a source file's comments. A test's string
/// literals name the scratch files it makes.
fn prose(file: &Path, text: &str) -> String {
    let ext = file.extension().and_then(|e| e.to_str()).unwrap_or("");
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        let comment = match ext {
            "md" => {
                if line.trim_start().starts_with("```") {
                    fenced = !fenced;
                    continue;
                }
                (!fenced).then_some(line)
            }
            "rs" | "js" | "css" => line.find("//").map(|at| &line[at..]),
            "py" | "sh" | "toml" | "yaml" | "sub" | "sbatch" | "txt" => {
                line.find('#').map(|at| &line[at..])
            }
            _ if file.file_name().is_some_and(|n| n == "run") => {
                line.find('#').map(|at| &line[at..])
            }
            _ => None,
        };
        if let Some(c) = comment {
            out += c;
            out.push('\n');
        }
    }
    out
}

/// Every file in the repository (its own tree: not build output or
/// results), relative to its root.
fn repository_paths() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap();
            if path.is_dir() {
                if !matches!(name, "target" | "results" | ".git" | "__pycache__") {
                    walk(&path, out);
                }
            } else {
                out.push(relative(&path));
            }
        }
    }
    let mut out = Vec::new();
    walk(root(), &mut out);
    out
}

/// Files witness writes (into a results folder, or where an analysis verb
/// is told): texts name them without their being in the repository.
const WRITTEN: &[&str] = &[
    "complete.json",
    "manifest.toml",
    "timing.json",
    "timing-shard-K-of-N.json",
    "policy.json",
    "compare.json",
    "compare.csv",
    "summary.csv",
    "rank.csv",
    // The same of the runs a `--where` keeps.
    "summary-where-graph-hub.csv",
    "rank-where-<filter>.csv",
    "search.json",
    "search.csv",
    "sensitivity.json",
    "sensitivity.csv",
    "run.json",
    "trust-score.json",
    "scores.csv",
    "ranking.csv",
    "stem.png",
    "stem.svg",
    // A design's points file: the user's, beside their manifest.
    "points.csv",
];

/// The files a document's own blocks write (`file=PATH`), which its text
/// may name.
fn written_by_blocks(text: &str) -> Vec<String> {
    blocks(text)
        .iter()
        .flat_map(|b| {
            b.info
                .split_whitespace()
                .filter_map(|w| w.strip_prefix("file="))
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Folders a text's examples write into, where a named file is made by
/// the command beside it rather than shipped.
const MADE_IN: &[&str] = &["results/", "OUT", "out/", "/tmp/", "DIR/", "E/", "tmp/"];

#[test]
fn code_cites_a_model_page_by_its_path() {
    // `cascade.md §4` in a comment is ambiguous beside docs/guide and the
    // reports; the path says which page.
    let mut bare = Vec::new();
    let this = root().join("tests/docs.rs");
    for file in text_files()
        .iter()
        .filter(|f| **f != this && f.extension().is_some_and(|e| e == "rs" || e == "py"))
    {
        let text = std::fs::read_to_string(file).unwrap();
        let comments = prose(file, &text);
        for (at, _) in comments.match_indices(".md §") {
            let start = comments[..at]
                .rfind(|c: char| !(c.is_alphanumeric() || "_-./".contains(c)))
                .map_or(0, |s| s + 1);
            if !comments[start..].starts_with("docs/models/") {
                let end = at + ".md §".len();
                bare.push(format!("{}: {}", relative(file), &comments[start..end]));
            }
        }
    }
    assert!(
        bare.is_empty(),
        "cite docs/models/PAGE.md:\n{}",
        bare.join("\n")
    );
}

#[test]
fn the_name_reader_finds_paths_in_prose_and_comments_only() {
    let md = "See `docs/img/a.png` and cascade.md; not *.toml or $DIR/x.json.\n```sh\nwitness run b.toml\n```\n";
    assert_eq!(
        named_files(&prose(Path::new("x.md"), md)),
        vec!["cascade.md", "docs/img/a.png"]
    );
    let rs = "let f = \"scratch.toml\"; // pins tests/fixtures/v.json\n";
    assert_eq!(
        named_files(&prose(Path::new("x.rs"), rs)),
        vec!["tests/fixtures/v.json"]
    );
    let paths = vec!["tests/fixtures/vectors/policies/run.json".to_string()];
    assert!(exists(
        root().join("docs/models/x.md").as_path(),
        "policies/run.json",
        &paths
    ));
    assert!(!exists(
        root().join("docs/models/x.md").as_path(),
        "vectors/other.json",
        &paths
    ));
}

#[test]
fn no_file_names_a_document_that_is_not_in_the_repository() {
    let mut missing = Vec::new();
    let this = root().join("tests/docs.rs");
    let files = text_files();
    let paths = repository_paths();
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
        let made = written_by_blocks(&text);
        for name in named_files(&prose(&file, &text)) {
            let base = name.rsplit('/').next().unwrap();
            if WRITTEN.contains(&base)
                || MADE_IN.iter().any(|d| name.contains(d))
                || made.iter().any(|m| m == name)
            {
                continue;
            }
            if !exists(&file, name, &paths) {
                missing.push(format!("{}: names `{name}`", relative(&file)));
            }
        }
    }
    missing.dedup();
    assert!(
        missing.is_empty(),
        "files not in the repository:\n{}",
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
/// With `WITNESS_BLESS_DOCS=1` in the environment, a whole output block
/// that differs is rewritten in the document with what was printed (for a
/// deliberate change of output; review the diff before committing).
fn run_document(doc: &str) -> Vec<String> {
    let text = read(doc);
    let mut fixes = Vec::new();
    let problems = run_text_fixing(doc, &text, &mut fixes);
    if std::env::var_os("WITNESS_BLESS_DOCS").is_none() || fixes.is_empty() {
        return problems;
    }
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    // From the end, so earlier line numbers stay valid.
    for (fence, new) in fixes.into_iter().rev() {
        let close = (fence..lines.len())
            .find(|&i| lines[i].trim_start().starts_with("```"))
            .expect("a closed block");
        let body: Vec<String> = new.trim_matches('\n').lines().map(str::to_string).collect();
        lines.splice(fence..close, body);
    }
    std::fs::write(root().join(doc), lines.join("\n") + "\n").unwrap();
    problems
}

fn run_text(doc: &str, text: &str) -> Vec<String> {
    run_text_fixing(doc, text, &mut Vec::new())
}

/// `run_text`, also gathering (the line after an output block's opening
/// fence, what the block should hold) for every whole output that differs.
fn run_text_fixing(doc: &str, text: &str, fixes: &mut Vec<(usize, String)>) -> Vec<String> {
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
        if words.contains(&"output") || words.contains(&"excerpt") {
            let whole = words.contains(&"output");
            match last_stdout.take() {
                Some((_, out)) if whole && out.trim_matches('\n') == b.text.trim_matches('\n') => {}
                Some((_, out)) if !whole && is_excerpt(&b.text, &out) => {}
                Some((line, out)) => {
                    if whole {
                        fixes.push((b.line, out.clone()));
                    }
                    problems.push(format!(
                        "{at}: the output of the block at line {line} differs; it printed:\n{out}"
                    ))
                }
                None => problems.push(format!("{at}: an output block follows no run block")),
            }
            continue;
        }
        last_stdout = None;
        if !words.contains(&"run") {
            continue;
        }
        if words.first() != Some(&"sh") {
            // A block marked to run that would silently not run.
            problems.push(format!(
                "{at}: only `sh run` blocks run; this one is `{}`",
                b.info
            ));
            continue;
        }
        let want: i32 = words
            .iter()
            .find_map(|w| w.strip_prefix("exit="))
            .map_or(0, |n| n.parse().unwrap());
        let script = &b.text;
        let out = Command::new("bash")
            .args(["-euo", "pipefail", "-c", script])
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

/// Whether every non-blank line of `excerpt` is a line of `out`, in order
/// (an abridged output: lines may be left out, none changed).
fn is_excerpt(excerpt: &str, out: &str) -> bool {
    let mut lines = out.lines();
    excerpt
        .lines()
        .filter(|l| !l.trim().is_empty())
        .all(|want| lines.any(|got| got == want))
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
        "```sh run\necho a\n```\n```text output\nb\n```\n```sh run exit=2\ntrue\n```\n```sh run\necho ok\n```\n```text output\nok\n```\n```bash run\nfalse\n```\n",
    );
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(is_excerpt("a\n\nc\n", "a\nb\nc\n"));
    assert!(!is_excerpt("c\na\n", "a\nb\nc\n"));
    assert!(!is_excerpt("a\nb2\n", "a\nb\nc\n"));
    assert!(problems[0].contains("differs"), "{problems:?}");
    assert!(problems[1].contains("exited 0, not 2"), "{problems:?}");
    assert!(
        problems[2].contains("only `sh run` blocks run"),
        "{problems:?}"
    );
}
