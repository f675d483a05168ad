//! `kind = "list"`: points written in the manifest or read from a CSV
//! file beside it, each checked against its parameters.

use toml::Spanned;

use super::{RawDesign, RawPoints, Source};
use crate::design::Design;
use crate::manifest::{claim, Ctx, ManifestError};
use crate::params::{parse_word, ParamId, ParamSpec, Value};

/// `kind = "list"`: `points = [{ ... }, ...]` or `file = "points.csv"`.
pub(super) fn list(
    cx: &Ctx,
    specs: &[ParamSpec],
    d: &RawDesign,
    span: std::ops::Range<usize>,
    taken: &mut Vec<ParamId>,
) -> Result<(Option<Design>, Option<Source>), ManifestError> {
    match (&d.points, &d.file) {
        (Some(p), None) => {
            let rows: RawPoints = p
                .get_ref()
                .iter()
                .map(|row| {
                    row.0
                        .iter()
                        .map(|(k, v)| (k.get_ref().clone(), v.get_ref().clone()))
                        .collect()
                })
                .collect();
            let design = points(cx, specs, &rows, p.span(), "points", false, taken)?;
            Ok((Some(design), None))
        }
        (None, Some(f)) => {
            let (rows, source) = csv_points(cx, f)?;
            let design = points(cx, specs, &rows, f.span(), &f.get_ref().clone(), true, taken)?;
            Ok((Some(design), Some(source)))
        }
        (Some(p), Some(_)) => Err(cx.err(
            p.span(),
            "[design] kind = \"list\" takes `points` or `file`, not both; keep one",
        )),
        (None, None) => Err(cx.err(
            span,
            "[design] kind = \"list\" needs its points: points = [{ gain = 3.0 }, ...] or file = \"points.csv\"",
        )),
    }
}

/// Checks the listed points: every point sets the same parameters, each
/// value accepted by its parameter.
fn points(
    cx: &Ctx,
    specs: &[ParamSpec],
    rows: &[Vec<(String, toml::Value)>],
    span: std::ops::Range<usize>,
    origin: &str,
    from_file: bool,
    taken: &mut Vec<ParamId>,
) -> Result<Design, ManifestError> {
    let first = rows.first().ok_or_else(|| {
        cx.err(
            span.clone(),
            format!("[design] {origin}: no points; list at least one"),
        )
    })?;
    let mut params = Vec::new();
    for (k, _) in first {
        let spanned = Spanned::new(span.clone(), k.clone());
        let id = claim(cx, specs, &spanned, taken, "design")?;
        params.push((id, id.spec(specs).name));
    }
    let mut out = Vec::with_capacity(rows.len());
    let mut seen = std::collections::HashMap::new();
    for (n, row) in rows.iter().enumerate() {
        let mut keys: Vec<&str> = row.iter().map(|(k, _)| k.as_str()).collect();
        let mut want: Vec<&str> = first.iter().map(|(k, _)| k.as_str()).collect();
        keys.sort_unstable();
        want.sort_unstable();
        if keys != want {
            return Err(cx.err(
                span.clone(),
                format!(
                    "[design] {origin}: point {} sets {}, but the first point sets {}; every point sets the same parameters",
                    n + 1,
                    keys.join(", "),
                    want.join(", ")
                ),
            ));
        }
        let line = |n: usize| match from_file {
            true => format!(" (line {})", n + 2),
            false => String::new(),
        };
        let mut point = Vec::with_capacity(params.len());
        for (id, name) in &params {
            let raw = &row.iter().find(|(k, _)| k == name).expect("keys checked").1;
            // A file's points are its lines after the header.
            let v = id.spec(specs).accept(raw).map_err(|e| {
                cx.err(
                    span.clone(),
                    format!("[design] {origin}: point {}{}: {e}", n + 1, line(n)),
                )
            })?;
            point.push(v);
        }
        // A repeated point would run the same settings and seeds twice
        // (under other run keys, if only a zero's sign differs).
        let key: Vec<String> = point.iter().map(Value::setting_key).collect();
        if let Some(&was) = seen.get(&key) {
            return Err(cx.err(
                span.clone(),
                format!(
                    "[design] {origin}: point {}{} repeats point {}{}; list each point once (more seeds give more runs of it)",
                    n + 1,
                    line(n),
                    was + 1,
                    line(was)
                ),
            ));
        }
        seen.insert(key, n);
        out.push(point);
    }
    Ok(Design::list(params, out))
}

/// Why a path inside the results folder is witness's own, if it is: the
/// copy of a points file must not collide with what `run` and the
/// analysis verbs write there.
fn reserved(parts: &[String]) -> Option<&'static str> {
    const FOLDERS: &[&str] = &["parts", "plots", "policy-log", "policy-logs"];
    const FILES: &[&str] = &[
        "manifest.toml",
        "summary.csv",
        "compare.csv",
        "rank.csv",
        "sensitivity.csv",
        "search.csv",
        "report.html",
    ];
    let first = parts[0].as_str();
    if parts.iter().any(|p| p.starts_with('.')) {
        Some("hidden names are witness's temporaries and staging folders")
    } else if FOLDERS.contains(&first) {
        Some("that folder is one witness writes in a results folder")
    } else if parts.len() == 1
        && (FILES.contains(&first)
            || crate::analysis::filter::is_filtered_output(first)
            || first.ends_with(".parquet")
            || first.ends_with(".json"))
    {
        Some("that name is one witness writes in a results folder")
    } else {
        None
    }
}

/// Reads a CSV of points beside the manifest: a header of parameter names,
/// then one point per line, each cell written as in a manifest or bare.
fn csv_points(cx: &Ctx, f: &Spanned<String>) -> Result<(RawPoints, Source), ManifestError> {
    let written = f.get_ref().clone();
    let rel = std::path::Path::new(&written);
    let parts: Option<Vec<String>> = rel
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .map(|c| match c {
            std::path::Component::Normal(p) => Some(p.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    let Some(parts) = parts.filter(|p| (!p.is_empty() || !written.is_empty()) && rel.is_relative())
    else {
        return Err(cx.err(
            f.span(),
            format!("[design] file = {written:?}: give a path inside the manifest's folder (relative, no `..`), so the results folder can keep a copy"),
        ));
    };
    // "." and "sub/" are inside, but no file to read.
    if parts.is_empty() || cx.folder.join(rel).is_dir() {
        let example = parts.iter().map(|p| format!("{p}/")).collect::<String>();
        return Err(cx.err(
            f.span(),
            format!(
                "[design] file = {written:?}: a folder, not a file; give the CSV file of points, e.g. file = \"{example}points.csv\""
            ),
        ));
    }
    if let Some(why) = reserved(&parts) {
        return Err(cx.err(
            f.span(),
            format!("[design] file = {written:?}: {why}, and the results folder keeps a copy of the points under the same name; rename it, e.g. points.csv or design/points.csv"),
        ));
    }
    let name = parts.join("/");
    let path = cx.folder.join(rel);
    let bytes = std::fs::read(&path).map_err(|e| {
        cx.err(
            f.span(),
            format!(
                "[design] file = {name:?}: cannot read {}: {e}",
                path.display()
            ),
        )
    })?;
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(&bytes[..]);
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| cx.err(f.span(), format!("[design] {}: {e}", path.display())))?
        .iter()
        .map(str::to_string)
        .collect();
    header_names(&header)
        .map_err(|why| cx.err(f.span(), format!("[design] {}: {why}", path.display())))?;
    let mut rows = Vec::new();
    for (n, record) in reader.records().enumerate() {
        let record = record.map_err(|e| {
            cx.err(
                f.span(),
                format!("[design] {}: line {}: {e}", path.display(), n + 2),
            )
        })?;
        rows.push(
            header
                .iter()
                .zip(record.iter())
                .map(|(k, cell)| (k.clone(), parse_word(cell)))
                .collect(),
        );
    }
    Ok((rows, Source { name, bytes }))
}

/// Why a points file's header is not one name per column, if it is not:
/// a column without a name (a trailing comma makes one) or a name twice.
fn header_names(header: &[String]) -> Result<(), String> {
    for (k, name) in header.iter().enumerate() {
        if name.is_empty() {
            let fix = if k + 1 == header.len() && k > 0 {
                ": the header ends with a comma; remove the trailing comma (and from every line that has one)"
            } else {
                "; name it after the parameter it sets, or remove the column"
            };
            return Err(format!("column {} of the header has no name{fix}", k + 1));
        }
        if let Some(j) = header[..k].iter().position(|h| h == name) {
            return Err(format!(
                "column `{name}` appears twice in the header (columns {} and {}); keep one",
                j + 1,
                k + 1
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::header_names;

    fn check(header: &[&str]) -> Result<(), String> {
        header_names(&header.iter().map(|h| h.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn a_header_names_each_column_once() {
        assert_eq!(check(&["gain", "communication"]), Ok(()));
        assert_eq!(
            check(&["gain", "communication", "gain"]),
            Err("column `gain` appears twice in the header (columns 1 and 3); keep one".into())
        );
        let trailing = check(&["gain", ""]).unwrap_err();
        assert!(
            trailing.starts_with("column 2 of the header has no name: the header ends with a comma; remove the trailing comma"),
            "{trailing}"
        );
        let inside = check(&["", "gain"]).unwrap_err();
        assert!(
            inside.starts_with("column 1 of the header has no name; name it"),
            "{inside}"
        );
    }
}
