//! The output tables of an experiment: `runs` (one row per run: ids, every
//! resolved parameter, every summary metric, identity status) and the
//! model's detail tables prefixed with `run_id`; plus the key-value metadata
//! every file carries.

use arrow_schema::{DataType, Field, SchemaRef};

use crate::grid::{run_key, Plan, RunSpec};
use crate::model::{Model, Row, RunOutput, Violation};
use crate::params::Value;
use crate::sink::parquet::{column_field, param_field, schema};

pub struct Table {
    pub name: &'static str,
    /// Index into the model's tables; `None` for `runs`.
    pub model_table: Option<usize>,
    pub schema: SchemaRef,
}

/// The tables an experiment writes: the wanted detail tables, then `runs`
/// last, because a chunk counts as done once its `runs` part exists.
pub fn tables(model: &dyn Model, want: &[bool]) -> Vec<Table> {
    let mut out: Vec<Table> = model
        .tables()
        .iter()
        .enumerate()
        .filter(|(k, _)| want[*k])
        .map(|(k, t)| {
            let mut fields = vec![Field::new("run_id", DataType::Int64, false)];
            fields.extend(t.columns.iter().map(column_field));
            Table {
                name: t.name,
                model_table: Some(k),
                schema: schema(fields),
            }
        })
        .collect();
    let mut fields = vec![
        Field::new("run_id", DataType::Int64, false),
        Field::new("run_key", DataType::Utf8, false),
        Field::new("arm", DataType::Utf8, false),
    ];
    fields.extend(model.params().iter().map(param_field));
    fields.extend(model.summary_columns().iter().map(column_field));
    fields.push(Field::new("failed", DataType::Boolean, false));
    fields.push(Field::new("failure", DataType::Utf8, true));
    out.push(Table {
        name: "runs",
        model_table: None,
        schema: schema(fields),
    });
    out
}

pub fn run_row(plan: &Plan, spec: &RunSpec, out: &RunOutput) -> Row {
    let mut row = vec![
        Value::Int(spec.run_id as i64),
        Value::Str(run_key(plan.model().name(), &spec.params)),
        Value::Str(plan.arm_name(spec.arm).to_string()),
    ];
    row.extend(spec.params.values.iter().map(|(_, v)| v.clone()));
    row.extend(out.summary.iter().cloned());
    row.push(Value::Bool(out.violation.is_some()));
    row.push(
        out.violation
            .as_ref()
            .map_or(Value::Null, |v| Value::Str(v.to_string())),
    );
    row
}

/// Runs `id` and appends its rows to `rows` (one buffer per table, in
/// `tables` order); returns its broken identity, if any.
pub fn run_into(
    plan: &Plan,
    tables: &[Table],
    id: u64,
    rows: &mut [Vec<Row>],
) -> Option<Violation> {
    let spec = plan.run(id);
    let mut out = plan.model().run(&spec.params, &plan.manifest.tables);
    for (buffer, table) in rows.iter_mut().zip(tables) {
        match table.model_table {
            Some(k) => buffer.extend(detail_rows(id, std::mem::take(&mut out.tables[k]))),
            None => buffer.push(run_row(plan, &spec, &out)),
        }
    }
    out.violation
}

pub fn detail_rows(run_id: u64, rows: Vec<Row>) -> impl Iterator<Item = Row> {
    rows.into_iter().map(move |r| {
        let mut row = Vec::with_capacity(r.len() + 1);
        row.push(Value::Int(run_id as i64));
        row.extend(r);
        row
    })
}

pub const KEY_MODEL: &str = "witness.model";
pub const KEY_ENGINE: &str = "witness.engine_version";
pub const KEY_CRATE: &str = "witness.crate_version";
pub const KEY_MANIFEST: &str = "witness.manifest";
pub const KEY_HASH: &str = "witness.manifest_sha256";
pub const KEY_RUNS: &str = "witness.runs_total";
pub const KEY_CHUNK: &str = "witness.chunk";
pub const KEY_SHARD: &str = "witness.shard";

/// Metadata of a final file: a function of the manifest and the build only.
pub fn metadata(plan: &Plan, table: &str) -> Vec<(String, String)> {
    let m = plan.manifest;
    vec![
        (KEY_MODEL.into(), m.model.name().into()),
        (KEY_ENGINE.into(), m.model.version().into()),
        (KEY_CRATE.into(), env!("CARGO_PKG_VERSION").into()),
        (KEY_MANIFEST.into(), m.text.clone()),
        (KEY_HASH.into(), m.hash.clone()),
        (KEY_RUNS.into(), plan.total.to_string()),
        ("witness.table".into(), table.into()),
    ]
}
