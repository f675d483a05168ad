//! A model's reference, from its declarations alone: every parameter (kind,
//! allowed values, default, role, doc, and which policies read it), every
//! output column, the detail tables, outcomes, curves and ranking. `witness
//! describe` prints it; `docs/reference/models.md` is its Markdown form,
//! kept equal to it by a test.

use super::DynModel;
use crate::params::{Kind, ParamId, ParamSet, ParamSpec, Resolved, Role, Value};

/// The most combinations of choice parameters tried to find out which
/// policies read a parameter.
const MAX_COMBINATIONS: usize = 4096;

/// The parameter whose values the "read by" column is given in: the arm
/// key if the model has one, else the first choice parameter that changes
/// what is read.
fn selector(m: &dyn DynModel) -> Option<usize> {
    let specs = m.params();
    if let Some(i) = specs.iter().position(|s| s.role == Role::Arm) {
        return Some(i);
    }
    (0..specs.len()).find(|&i| match specs[i].kind {
        Kind::Choice(values) => {
            let mut p = Resolved::defaults(specs);
            let sets: Vec<Option<ParamSet>> = values
                .iter()
                .map(|v| {
                    p.set(ParamId(i), Value::from(*v));
                    m.check(&p).ok()
                })
                .collect();
            sets.windows(2).any(|w| w[0] != w[1])
        }
        _ => false,
    })
}

/// For each parameter, the selector's values under which some combination
/// of the other choice parameters reads it.
fn read_by(m: &dyn DynModel, selector: usize) -> Vec<Vec<&'static str>> {
    let specs = m.params();
    let choices: Vec<(usize, &'static [&'static str])> = specs
        .iter()
        .enumerate()
        .filter_map(|(i, s)| match s.kind {
            Kind::Choice(v) => Some((i, v)),
            _ => None,
        })
        .collect();
    let Kind::Choice(selector_values) = specs[selector].kind else {
        return vec![Vec::new(); specs.len()];
    };
    let mut out: Vec<Vec<&'static str>> = vec![Vec::new(); specs.len()];
    let total: usize = choices.iter().map(|(_, v)| v.len()).product();
    for combo in 0..total.min(MAX_COMBINATIONS) {
        let mut p = Resolved::defaults(specs);
        let mut rest = combo;
        let mut chosen = "";
        for (i, values) in &choices {
            let v = values[rest % values.len()];
            rest /= values.len();
            p.set(ParamId(*i), Value::from(v));
            if *i == selector {
                chosen = v;
            }
        }
        let Ok(ignored) = m.check(&p) else { continue };
        for (i, slot) in out.iter_mut().enumerate() {
            if !ignored.contains(ParamId(i)) && !slot.contains(&chosen) {
                slot.push(chosen);
            }
        }
    }
    // In the selector's own order.
    out.iter_mut()
        .for_each(|s| s.sort_by_key(|v| selector_values.iter().position(|x| x == v)));
    out
}

fn default_text(s: &ParamSpec) -> String {
    match (s.default)() {
        Value::Str(v) => v,
        Value::List(l) if l.is_empty() => "[]".into(),
        v => v.to_string(),
    }
}

fn allowed_text(k: &Kind) -> String {
    match *k {
        Kind::Bool => "true, false".into(),
        Kind::Int { min, max } => format!("{min} ..= {max}"),
        Kind::Float { min, max } => format!("{min:?} ..= {max:?}"),
        Kind::Choice(c) => c.join(", "),
        Kind::IntList { min, max } => format!("list of {min} ..= {max}"),
        Kind::IntOrNone { min, max } => format!("none, {min} ..= {max}"),
    }
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The Markdown reference of one model.
pub fn markdown(m: &dyn DynModel) -> String {
    let specs = m.params();
    let sel = selector(m);
    let reads = sel.map(|s| read_by(m, s));
    let mut out = format!("## `{}` ({})\n\n{}\n\n", m.name(), m.version(), m.doc());
    if !m.aliases().is_empty() {
        out += &format!(
            "Also accepted as: {}.\n\n",
            m.aliases()
                .iter()
                .map(|a| format!("`{a}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    out += "### Parameters\n\n";
    let by = sel.map_or("read by".to_string(), |s| {
        format!("read by ({})", specs[s].name)
    });
    out += &format!("| parameter | kind | allowed | default | role | {by} | meaning |\n|---|---|---|---|---|---|---|\n");
    for (i, s) in specs.iter().enumerate() {
        let read = match (&reads, sel) {
            (Some(r), Some(sel)) => {
                let Kind::Choice(all) = specs[sel].kind else {
                    unreachable!()
                };
                if r[i].len() == all.len() {
                    "all".to_string()
                } else if r[i].is_empty() {
                    "none".to_string()
                } else {
                    r[i].join(", ")
                }
            }
            _ => "all".to_string(),
        };
        out += &format!(
            "| `{}` | {} | {} | {} | {} | {} | {} |\n",
            s.name,
            s.kind.label(),
            cell(&allowed_text(&s.kind)),
            cell(&default_text(s)),
            s.role.name(),
            read,
            cell(s.doc())
        );
    }
    out += "\n### Summary columns (`runs.parquet`)\n\n";
    out += "Each run's row holds `run_id`, `run_key`, `arm`, every parameter above, these columns, then `failed` and `failure`.\n\n";
    out += &columns_table(m.summary_columns());
    for t in m.tables() {
        out += &format!(
            "\n### Table `{}` ({}; `[output] {} = {}` by default)\n\n`run_id`, then:\n\n",
            t.name, t.doc, t.name, t.default_on
        );
        out += &columns_table(t.columns);
    }
    if !m.headline_metrics().is_empty() {
        let h: Vec<String> = m
            .headline_metrics()
            .iter()
            .map(|h| format!("`{h}`"))
            .collect();
        out += &format!(
            "\nHeadline metrics (the defaults of `summary`, `compare` and `plot`): {}.\n",
            h.join(", ")
        );
    }
    let outcomes = m.outcomes();
    if !outcomes.is_empty() {
        out += "\n### Outcomes (`compare --outcome`)\n\n| outcome | meaning |\n|---|---|\n";
        for (name, doc) in outcomes {
            out += &format!("| `{name}` | {} |\n", cell(doc));
        }
    }
    if let Some((table, x, columns, y)) = m.curves() {
        let c: Vec<String> = columns.iter().map(|c| format!("`{c}`")).collect();
        out += &format!(
            "\nCurves (`plot`): {} of `{table}` over `{x}`, as {y}.\n",
            c.join(", ")
        );
    }
    if let Some((doc, show)) = m.ranking() {
        let c: Vec<String> = show.iter().map(|(c, _)| format!("`{c}`")).collect();
        out += &format!("\nRanking (`rank`): {doc}; shows {}.\n", c.join(", "));
    }
    out
}

pub(crate) fn columns_table(columns: &[super::Column]) -> String {
    // How compare judges a column, in tables that declare any judgement.
    let judged = columns.iter().any(|c| c.judge != super::Judge::NEUTRAL);
    let mut out = String::from("| column | type | nullable | bounds | meaning |");
    out += if judged {
        " compare |\n|---|---|---|---|---|---|\n"
    } else {
        "\n|---|---|---|---|---|\n"
    };
    for c in columns {
        out += &format!(
            "| `{}` | {} | {} | {} | {} |",
            c.name,
            c.ty.label(),
            if c.nullable { "yes" } else { "no" },
            cell(&c.bounds.describe()),
            cell(c.doc())
        );
        if judged {
            out += &format!(" {} |", cell(&judgement(&c.judge)));
        }
        out += "\n";
    }
    out
}

/// "lower is better; null is worst; sesoi 0.05", or "-".
fn judgement(j: &super::Judge) -> String {
    use super::{Better, NullMeans};
    let mut parts = Vec::new();
    match j.better {
        Better::Lower => parts.push("lower is better".to_string()),
        Better::Higher => parts.push("higher is better".to_string()),
        Better::Neither => {}
    }
    match j.null_means {
        NullMeans::Worst => parts.push("null is worst".into()),
        NullMeans::Best => parts.push("null is best".into()),
        NullMeans::Missing => {}
    }
    if let Some(d) = j.flip_delta {
        parts.push(format!("flip delta {d}"));
    }
    if let Some(d) = j.sesoi {
        parts.push(format!("sesoi {d}"));
    }
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join("; ")
    }
}

/// The Markdown reference of every model, as `docs/reference/models.md`.
pub fn markdown_all(models: &[&'static dyn DynModel]) -> String {
    let mut out = String::from(
        "# Model reference\n\nGenerated by `witness describe --markdown`; a test keeps this file equal to its output.\n\n",
    );
    for m in models {
        out += &markdown(*m);
        out += "\n";
    }
    out
}

/// The same reference as plain text: Markdown tables become aligned
/// columns, for a terminal.
pub fn plain(markdown: &str) -> String {
    let mut out = String::new();
    let mut block: Vec<Vec<String>> = Vec::new();
    let flush = |block: &mut Vec<Vec<String>>, out: &mut String| {
        if block.is_empty() {
            return;
        }
        let cols = block.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..cols)
            .map(|k| {
                block
                    .iter()
                    .filter_map(|r| r.get(k))
                    .map(|c| c.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for row in block.drain(..) {
            let cells: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(k, c)| format!("{c:<w$}", w = widths[k]))
                .collect();
            out.push_str(cells.join("  ").trim_end());
            out.push('\n');
        }
    };
    for line in markdown.lines() {
        if let Some(inner) = line.strip_prefix('|') {
            if inner.starts_with("---") {
                continue;
            }
            let cells = inner
                .trim_end_matches('|')
                .split(" | ")
                .map(|c| c.trim().trim_matches('`').replace("\\|", "|"))
                .collect();
            block.push(cells);
            continue;
        }
        flush(&mut block, &mut out);
        out.push_str(
            line.trim_start_matches("### ")
                .trim_start_matches("## ")
                .trim_start_matches("# "),
        );
        out.push('\n');
    }
    flush(&mut block, &mut out);
    out
}
