//! One run checked for `verify`: its id, key and parameters, the model's
//! identities re-derived from its stored rows, and, when sampled, the run
//! replayed and compared value by value.

use super::super::tables::{run_one, run_row, Table};
use super::stored::{rows_of, value_columns, StoredRow};
use super::FLOAT_TOLERANCE;
use crate::grid::{run_key, Plan};
use crate::model::{Column, Row, Stored};
use crate::params::Value;
use crate::policy::{ChunkLogs, Policies};

/// Equal under the replay rule: discrete values identical, floats within
/// the tolerance; `exact` compares floats bit for bit.
pub(super) fn same(a: &Value, b: &Value, exact: bool) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) if exact => x.to_bits() == y.to_bits(),
        (Value::Float(x), Value::Float(y)) => {
            x == y || (x - y).abs() <= FLOAT_TOLERANCE || (x.is_nan() && y.is_nan())
        }
        _ => a == b,
    }
}

/// The first cell where stored rows differ from a replay's, with the file
/// row and column. With `exact`, a float within the tolerance of its
/// replay counts too (the caller knows the stored rows were changed).
pub(super) fn first_difference(
    file: &str,
    columns: &[Column],
    stored: &[&StoredRow],
    fresh: &[Row],
    exact: bool,
) -> Option<String> {
    if stored.len() != fresh.len() {
        let rows = match (stored.first(), stored.last()) {
            (Some(a), Some(b)) => format!(" (rows {}..={}, column run_id)", a.row, b.row),
            _ => String::new(),
        };
        return Some(format!(
            "{file}: {} rows stored for the run{rows}, {} on replay",
            stored.len(),
            fresh.len()
        ));
    }
    for pass_exact in [false, exact] {
        for (s, f) in stored.iter().zip(fresh) {
            for ((a, b), c) in s.values.iter().zip(f).zip(columns) {
                if !same(a, b, pass_exact) {
                    let note = if pass_exact && same(a, b, false) {
                        " (within the replay tolerance, but not the value written)"
                    } else {
                        ""
                    };
                    return Some(format!(
                        "{file}, row {}, column {}: stored {a}, replay gives {b}{note}",
                        s.row, c.name
                    ));
                }
            }
        }
    }
    None
}

/// (audited, replayed, problems) of one run.
#[allow(clippy::too_many_arguments)]
pub(super) fn check_run(
    plan: &Plan,
    tables: &[Table],
    files: &[String],
    rows: &[Vec<StoredRow>],
    id: u64,
    replay: Option<bool>,
    policies: &Policies,
    logs: Option<&mut ChunkLogs>,
) -> (bool, bool, Vec<String>) {
    let model = plan.model();
    let spec = plan.run(id);
    let (details, runs_table) = tables.split_at(tables.len() - 1);
    let runs_table = &runs_table[0];
    let runs_file = &files[details.len()];
    let who = format!("run {id} ({})", plan.arm_name(spec.arm));
    let mut problems = Vec::new();
    let stored = match rows_of(&rows[details.len()], id).as_slice() {
        [one] => *one,
        [] => {
            return (
                false,
                false,
                vec![format!("{who}: missing from {runs_file}")],
            )
        }
        more => {
            let at: Vec<String> = more.iter().map(|r| r.row.to_string()).collect();
            return (
                false,
                false,
                vec![format!(
                    "{who}: stored {} times in {runs_file} (rows {}, column run_id)",
                    more.len(),
                    at.join(", ")
                )],
            );
        }
    };
    // The runs row as stored, by column name.
    let columns = value_columns(runs_table);
    let named = |name: &str| {
        columns
            .iter()
            .position(|c| c.name == name)
            .map(|k| &stored.values[k])
            .expect("a column of runs.parquet")
    };
    let key = run_key(model, &spec.params);
    if *named("run_key") != Value::Str(key.clone()) {
        problems.push(format!(
            "{who}: {runs_file}, row {}, column run_key: stored {}, the manifest gives {key}",
            stored.row,
            named("run_key")
        ));
    }
    if let Some(k) = spec.design_point {
        let want = Value::Int(k as i64);
        if *named("design_point") != want {
            problems.push(format!(
                "{who}: {runs_file}, row {}, column design_point: stored {}, the manifest gives {want}",
                stored.row,
                named("design_point")
            ));
        }
    }
    let shown = |i: usize| plan.manifest.shown.contains(crate::params::ParamId(i));
    for (_, (name, v)) in spec
        .params
        .values
        .iter()
        .enumerate()
        .filter(|(i, _)| shown(*i))
    {
        if !same(named(name), v, false) {
            problems.push(format!(
                "{who}: {runs_file}, row {}, column {name}: stored {}, the manifest gives {v}",
                stored.row,
                named(name)
            ));
        }
    }
    // A decision an external policy could not give is a recorded outcome;
    // a broken identity is not.
    let policy_failed = plan.manifest.has_external() && *named("policy_failure") != Value::Null;
    if *named("failed") == Value::Bool(true) && !policy_failed {
        problems.push(format!(
            "{who}: recorded a broken identity: {}",
            named("failure")
        ));
    }
    let stored_details: Vec<Vec<&StoredRow>> =
        (0..details.len()).map(|t| rows_of(&rows[t], id)).collect();
    let owned: Vec<Vec<Row>> = stored_details
        .iter()
        .map(|rs| rs.iter().map(|r| r.values.clone()).collect())
        .collect();
    let mut by_model_table: Vec<Option<&[Row]>> = vec![None; model.tables().len()];
    for (table, r) in details.iter().zip(&owned) {
        if let Some(k) = table.model_table {
            by_model_table[k] = Some(r);
        }
    }
    // A run its policy failed has no detail rows to audit.
    let audited = details.iter().any(|t| t.model_table.is_some()) && !policy_failed;
    if audited {
        let audit = model.audit(
            &spec.params,
            &Stored {
                specs: model.tables(),
                rows: by_model_table,
            },
        );
        match audit {
            Ok(None) => {}
            Ok(Some(v)) => problems.push(format!("{who}: {v}")),
            Err(e) => problems.push(format!("{who}: {e}")),
        }
    }
    if let Some(exact) = replay {
        let done = run_one(plan, &spec, policies, logs);
        let fresh = run_row(plan, &spec, &done.out, &done.usage)[1..].to_vec();
        if let Some(d) = first_difference(runs_file, &columns, &[stored], &[fresh], exact) {
            problems.push(format!("{who}: {d}"));
        }
        for ((table, stored_rows), file) in details.iter().zip(&stored_details).zip(files) {
            let replayed = match table.model_table {
                Some(k) => &done.out.tables[k].to_rows(),
                None => &done.calls,
            };
            let cols = value_columns(table);
            if let Some(d) = first_difference(file, &cols, stored_rows, replayed, exact) {
                problems.push(format!("{who}: {d}"));
            }
        }
    }
    (audited, replay.is_some(), problems)
}
