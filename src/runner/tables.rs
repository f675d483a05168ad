//! The output tables of an experiment: `runs` (one row per run: ids, every
//! resolved parameter, every summary metric, identity status) and the
//! model's detail tables prefixed with `run_id`; plus the metadata every
//! file carries.

use crate::grid::{run_key, Plan, RunSpec};
use crate::manifest::Manifest;
use crate::model::{ColType, Column, Columns, Decider, Record, Row, RunOutput, Violation};
use crate::params::{Kind, ParamId, ParamSpec, Value};
use crate::policy::usage::{CallRow, PolicyUsage};
use crate::policy::{ChunkLogs, Policies};
use crate::store::FileMeta;

pub struct Table {
    pub name: &'static str,
    /// Index into the model's tables; `None` for `runs` and `policy_calls`.
    pub model_table: Option<usize>,
    /// The external arms' decisions, one row each.
    pub calls: bool,
    pub columns: Vec<Column>,
}

impl Table {
    pub fn is_runs(&self) -> bool {
        self.model_table.is_none() && !self.calls
    }

    pub fn column_names(&self) -> Vec<&'static str> {
        self.columns.iter().map(|c| c.name).collect()
    }
}

pub const RUN_ID: Column =
    Column::new("run_id", ColType::Int, false, "the run's index in the plan");
pub const RUN_KEY: Column = Column::new(
    "run_key",
    ColType::Str,
    false,
    "16 hex digits of SHA-256 over the model and every resolved parameter",
);
pub const ARM: Column = Column::new("arm", ColType::Str, false, "the arm the run belongs to");
pub const DESIGN_POINT: Column = Column::new(
    "design_point",
    ColType::Int,
    false,
    "the run's point of the manifest's [design], from 0 in the design's order",
);
pub const RUNG: Column = Column::new(
    "rung",
    ColType::Int,
    false,
    "the rung of the manifest's [search] that ran the run, from 0",
);
pub const FAILED: Column = Column::new(
    "failed",
    ColType::Bool,
    false,
    "an accounting identity broke, or an external policy's decision could not be had",
);
pub const FAILURE: Column = Column::new(
    "failure",
    ColType::Str,
    true,
    "which identity broke, where and how; or which decision failed",
);

/// A parameter as a column of `runs.parquet`.
pub fn param_column(spec: &ParamSpec) -> Column {
    let (ty, nullable) = match spec.kind {
        Kind::Bool => (ColType::Bool, false),
        Kind::Int { .. } => (ColType::Int, false),
        Kind::Float { .. } => (ColType::Float, false),
        Kind::Choice(_) => (ColType::Str, false),
        Kind::IntList { .. } => (ColType::IntList, false),
        Kind::IntOrNone { .. } => (ColType::Int, true),
    };
    Column::new(spec.name, ty, nullable, spec.doc)
}

/// The columns of `runs.parquet` for an experiment.
pub fn runs_columns(manifest: &Manifest) -> Vec<Column> {
    let model = manifest.model;
    let mut columns = vec![RUN_ID, RUN_KEY, ARM];
    if manifest.design.is_some() {
        columns.push(DESIGN_POINT);
    }
    if manifest.search.is_some() {
        columns.push(RUNG);
    }
    columns.extend(shown(manifest).map(|(_, spec)| param_column(spec)));
    if manifest.has_external() {
        // A run whose external policy failed it has no summary.
        columns.extend(model.summary_columns().iter().map(|c| Column {
            nullable: true,
            ..*c
        }));
        columns.extend_from_slice(PolicyUsage::COLUMNS);
    } else {
        columns.extend_from_slice(model.summary_columns());
    }
    columns.push(FAILED);
    columns.push(FAILURE);
    columns
}

/// The parameters that are columns of `runs.parquet`, with their index.
fn shown(manifest: &Manifest) -> impl Iterator<Item = (usize, &'static ParamSpec)> + '_ {
    let specs = manifest.model.params();
    specs
        .iter()
        .enumerate()
        .filter(|(i, _)| manifest.shown.contains(ParamId(*i)))
}

/// The tables an experiment writes: the wanted detail tables, then `runs`
/// last, because a chunk counts as done once its `runs` part exists.
pub fn tables(manifest: &Manifest) -> Vec<Table> {
    let (model, want) = (manifest.model, &manifest.tables);
    let mut out: Vec<Table> = model
        .tables()
        .iter()
        .enumerate()
        .filter(|(k, _)| want[*k])
        .map(|(k, t)| {
            let mut columns = vec![RUN_ID];
            columns.extend_from_slice(t.columns);
            Table {
                name: t.name,
                model_table: Some(k),
                calls: false,
                columns,
            }
        })
        .collect();
    if manifest.policy_calls {
        let mut columns = vec![RUN_ID];
        columns.extend_from_slice(CallRow::COLUMNS);
        out.push(Table {
            name: "policy_calls",
            model_table: None,
            calls: true,
            columns,
        });
    }
    out.push(Table {
        name: "runs",
        model_table: None,
        calls: false,
        columns: runs_columns(manifest),
    });
    out
}

/// How a run's failure reads when its external policy, not the engine,
/// failed it.
pub const POLICY_FAILED: &str = "external policy: ";

/// What a run of an external arm adds to its row.
pub type Usage = Option<PolicyUsage>;

pub fn run_row(plan: &Plan, spec: &RunSpec, out: &RunOutput, usage: &Usage) -> Row {
    let mut row = vec![
        Value::Int(spec.run_id as i64),
        Value::Str(run_key(plan.model(), &spec.params)),
        Value::Str(plan.arm_name(spec.arm).to_string()),
    ];
    if let Some(k) = spec.design_point {
        row.push(Value::Int(k as i64));
    }
    if let Some(k) = spec.rung {
        row.push(Value::Int(i64::from(k)));
    }
    row.extend(shown(&plan.manifest).map(|(i, _)| spec.params.values[i].1.clone()));
    row.extend(out.summary.iter().cloned());
    if plan.manifest.has_external() {
        usage.clone().unwrap_or_default().push_values(&mut row);
    }
    let failure = match (&out.violation, &out.failure) {
        (Some(v), _) => Some(v.to_string()),
        (None, Some(f)) => Some(format!("{POLICY_FAILED}{f}")),
        (None, None) => None,
    };
    row.push(Value::Bool(failure.is_some()));
    row.push(failure.map_or(Value::Null, Value::Str));
    row
}

/// A run the model could not start (its parameters broke a rule the plan
/// should have caught): recorded as a failed run rather than a panic.
fn refused(model_summary: &[Column], why: String) -> RunOutput {
    RunOutput {
        summary: model_summary.iter().map(|_| Value::Null).collect(),
        tables: Vec::new(),
        violation: Some(Violation {
            identity: "the parameters pass the model's rules".into(),
            at: None,
            detail: why,
        }),
        failure: None,
    }
}

/// One run's results: what the model returned, its policy's usage (for
/// an external arm) and its decisions as `policy_calls` rows.
pub struct Done {
    pub out: RunOutput,
    pub usage: Usage,
    pub calls: Vec<Row>,
}

/// Runs one run, its decisions (if it hands some out) answered by its
/// arm's policy through `logs`.
pub fn run_one(
    plan: &Plan,
    spec: &RunSpec,
    policies: &Policies,
    logs: Option<&mut ChunkLogs>,
) -> Done {
    let model = plan.model();
    let mut client = logs.and_then(|l| {
        l.client(policies, spec.arm, || {
            (run_key(model, &spec.params), params_json(&spec.params))
        })
    });
    if let Some(c) = client.as_mut().filter(|_| plan.manifest.policy_calls) {
        c.calls = Some(Vec::new());
    }
    let decider = client.as_mut().map(|c| c as &mut dyn Decider);
    let out = model
        .run(&spec.params, &plan.manifest.tables, decider)
        .unwrap_or_else(|e| refused(model.summary_columns(), e.to_string()));
    let mut calls = Vec::new();
    let usage = client.map(|c| {
        let mut u = c.usage;
        if let Ok(id) = c.arm.identity() {
            u.identify(&id);
        }
        u.policy_failure = out.failure.as_ref().map(|f| f.to_string());
        calls = c
            .calls
            .unwrap_or_default()
            .iter()
            .map(Record::to_row)
            .collect();
        u
    });
    Done { out, usage, calls }
}

/// Every resolved parameter as a JSON object, as a policy is told them.
pub fn params_json(p: &crate::params::Resolved) -> serde_json::Value {
    serde_json::Value::Object(
        p.values
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_json()))
            .collect(),
    )
}

/// Runs `id` and appends its rows to `rows` (one buffer per table, in
/// `tables` order); returns its failure, if any.
pub fn run_into(
    plan: &Plan,
    tables: &[Table],
    spec: &RunSpec,
    rows: &mut [Columns],
    policies: &Policies,
    logs: Option<&mut ChunkLogs>,
) -> Option<String> {
    let id = spec.run_id;
    let Done {
        mut out,
        usage,
        calls,
    } = run_one(plan, spec, policies, logs);
    for (buffer, table) in rows.iter_mut().zip(tables) {
        match table.model_table {
            Some(k) => {
                if let Some(detail) = out.tables.get_mut(k).map(std::mem::take) {
                    buffer.append_run(id, detail);
                }
            }
            None if table.calls => {
                for call in &calls {
                    let row: Row = std::iter::once(Value::Int(id as i64))
                        .chain(call.iter().cloned())
                        .collect();
                    push_row(buffer, row, table);
                }
            }
            None => push_row(buffer, run_row(plan, spec, &out, &usage), table),
        }
    }
    match (out.violation, out.failure) {
        (Some(v), _) => Some(v.to_string()),
        (None, Some(f)) => Some(format!("{POLICY_FAILED}{f}")),
        (None, None) => None,
    }
}

/// A row the runner built (a run's, a decision's) goes into its table; a
/// value its column cannot hold is a bug in how the row was built.
fn push_row(buffer: &mut Columns, row: Row, table: &Table) {
    if let Err(e) = buffer.push_row(row, &table.columns) {
        panic!("a row of {}: {e}", table.name);
    }
}

/// Metadata of a final file: a function of the manifest and the build only.
pub fn metadata(plan: &Plan, table: &str) -> FileMeta {
    let m = &plan.manifest;
    FileMeta {
        model: m.model.name().into(),
        engine_version: m.model.version().into(),
        crate_version: env!("CARGO_PKG_VERSION").into(),
        manifest: m.text.clone(),
        manifest_sha256: m.hash.clone(),
        runs_total: plan.total,
        table: table.into(),
        chunk: None,
        shard: None,
        digest: None,
        rows: None,
    }
}
