//! The object-safe face of a model: `Registered<M>` wraps a `Model` and its
//! optional capabilities, and implements `DynModel`, which is all the
//! runner, the manifest, the analysis and the CLI ever call. Typed
//! parameters and records are converted here, once per run.

use serde_json::{json, Map, Value as Json};
use std::marker::PhantomData;

use super::capability::{Curves, Export, Outcome, Ranking, Simulation};
use super::columns::Columns;
use super::decide::{Decider, DecisionPoint, PolicyFailure};
use super::record::{Column, Record, RecordError};
use super::table::{Row, RunContext, Stored, TableSpec};
use super::{Footprint, Model, Violation};
use crate::params::{lookup, ParamError, ParamSet, ParamSpec, Params, Resolved, Value};

/// What one run produces: its summary row (in `summary_columns` order), the
/// rows of each detail table (in `tables` order; empty when not asked for),
/// and the first broken identity, if any. A run whose decider failed has
/// nulls for a summary, no detail rows, and the failure.
#[derive(Clone, Debug, PartialEq)]
pub struct RunOutput {
    pub summary: Row,
    pub tables: Vec<Columns>,
    pub violation: Option<Violation>,
    pub failure: Option<PolicyFailure>,
}

/// A parameter set after the model's rules: the parameters it does not
/// read, what a run of it holds in memory, and its decision point, if any.
#[derive(Clone, Debug)]
pub struct Checked {
    pub ignored: ParamSet,
    pub footprint: Footprint,
    pub decision: Option<&'static DecisionPoint>,
}

/// A model as the rest of witness sees it.
pub trait DynModel: Sync {
    fn name(&self) -> &'static str;
    /// Other names manifests may use for it.
    fn aliases(&self) -> &'static [&'static str];
    fn version(&self) -> &'static str;
    fn doc(&self) -> &'static str;
    fn params(&self) -> &'static [ParamSpec];
    fn summary_columns(&self) -> &'static [Column];
    fn tables(&self) -> &'static [TableSpec];
    /// The rules that tie parameters together, and the parameters this set
    /// does not read.
    fn check(&self, p: &Resolved) -> Result<ParamSet, ParamError>;
    /// Everything the plan needs to know of a parameter set, from one
    /// configuration.
    fn checked(&self, p: &Resolved) -> Result<Checked, ParamError>;
    /// Runs a parameter set; `want[k]` says whether table k is kept, and
    /// `decider` answers the run's decision point, if it has one.
    fn run(
        &self,
        p: &Resolved,
        want: &[bool],
        decider: Option<&mut dyn Decider>,
    ) -> Result<RunOutput, ParamError>;
    /// Re-derives the identities of a run's stored detail rows.
    fn audit(&self, p: &Resolved, stored: &Stored) -> Result<Option<Violation>, ParamError>;

    /// Summary columns `summary` shows and `compare`/`plot` default to.
    fn headline_metrics(&self) -> &'static [&'static str];
    /// (name, doc) of each categorical outcome.
    fn outcomes(&self) -> Vec<(&'static str, &'static str)>;
    fn classify(
        &self,
        outcome: usize,
        p: &Resolved,
        summary: &[Value],
    ) -> Result<&'static str, RecordError>;
    /// (table, x column, curve columns, y label) of the per-round curves.
    fn curves(
        &self,
    ) -> Option<(
        &'static str,
        &'static str,
        &'static [&'static str],
        &'static str,
    )>;
    fn curve_scale(&self, p: &Resolved) -> f64;
    /// (doc, shown columns with decimals) of the ranking, if any.
    fn ranking(&self) -> Option<(&'static str, &'static [(&'static str, usize)])>;
    fn rank_key(&self, p: &Resolved, summary: &[Value]) -> Result<Vec<i64>, RecordError>;
    /// One run for a reader (the model's own export, or the generic one);
    /// the export document only when `export` is set.
    fn simulate(&self, p: &Resolved, export: bool) -> Result<Simulation, ParamError>;
    fn params_of_export(&self, doc: &Json) -> Result<Resolved, ParamError>;
}

/// A model and the analysis capabilities it offers; `DynModel` for any `M`.
pub struct Registered<M: Model> {
    aliases: &'static [&'static str],
    headline: &'static [&'static str],
    outcomes: &'static [Outcome<M>],
    curves: Option<Curves<M>>,
    ranking: Option<Ranking<M>>,
    export: Option<&'static dyn Export>,
    model: PhantomData<fn() -> M>,
}

impl<M: Model> Default for Registered<M> {
    fn default() -> Self {
        Self::new()
    }
}

impl<M: Model> Registered<M> {
    pub const fn new() -> Self {
        Registered {
            aliases: &[],
            headline: &[],
            outcomes: &[],
            curves: None,
            ranking: None,
            export: None,
            model: PhantomData,
        }
    }

    pub const fn aliases(mut self, names: &'static [&'static str]) -> Self {
        self.aliases = names;
        self
    }

    pub const fn headline(mut self, metrics: &'static [&'static str]) -> Self {
        self.headline = metrics;
        self
    }

    pub const fn outcomes(mut self, outcomes: &'static [Outcome<M>]) -> Self {
        self.outcomes = outcomes;
        self
    }

    pub const fn curves(mut self, curves: Curves<M>) -> Self {
        self.curves = Some(curves);
        self
    }

    pub const fn ranking(mut self, ranking: Ranking<M>) -> Self {
        self.ranking = Some(ranking);
        self
    }

    pub const fn export(mut self, export: &'static dyn Export) -> Self {
        self.export = Some(export);
        self
    }

    fn configure(p: &Resolved) -> Result<M::Config, ParamError> {
        M::configure(M::Params::from_resolved(p))
    }
}

impl<M: Model> DynModel for Registered<M> {
    fn name(&self) -> &'static str {
        M::NAME
    }
    fn aliases(&self) -> &'static [&'static str] {
        self.aliases
    }
    fn version(&self) -> &'static str {
        M::VERSION
    }
    fn doc(&self) -> &'static str {
        M::DOC
    }
    fn params(&self) -> &'static [ParamSpec] {
        M::Params::SPECS
    }
    fn summary_columns(&self) -> &'static [Column] {
        M::Summary::COLUMNS
    }
    fn tables(&self) -> &'static [TableSpec] {
        M::TABLES
    }
    fn check(&self, p: &Resolved) -> Result<ParamSet, ParamError> {
        Self::configure(p).map(|c| M::ignored(&c))
    }
    fn checked(&self, p: &Resolved) -> Result<Checked, ParamError> {
        Self::configure(p).map(|c| Checked {
            ignored: M::ignored(&c),
            footprint: M::footprint(&c),
            decision: M::decision_point(&c),
        })
    }
    fn run(
        &self,
        p: &Resolved,
        want: &[bool],
        decider: Option<&mut dyn Decider>,
    ) -> Result<RunOutput, ParamError> {
        let c = Self::configure(p)?;
        let rows = M::footprint(&c).rows;
        let mut cx = RunContext::new(M::TABLES, want, &rows, decider);
        let ran = M::run(&c, &mut cx);
        let (tables, failure) = cx.finish();
        Ok(match failure {
            None => RunOutput {
                summary: ran.summary.to_row(),
                tables,
                violation: ran.violation,
                failure: None,
            },
            // What a model returns after its decider failed is partial, so
            // none of it is kept.
            Some(f) => RunOutput {
                summary: M::Summary::COLUMNS.iter().map(|_| Value::Null).collect(),
                tables: M::TABLES.iter().map(|t| Columns::new(t.columns)).collect(),
                violation: None,
                failure: Some(f),
            },
        })
    }
    fn audit(&self, p: &Resolved, stored: &Stored) -> Result<Option<Violation>, ParamError> {
        Self::configure(p).map(|c| M::audit(&c, stored))
    }
    fn headline_metrics(&self) -> &'static [&'static str] {
        self.headline
    }
    fn outcomes(&self) -> Vec<(&'static str, &'static str)> {
        self.outcomes.iter().map(|o| (o.name, o.doc)).collect()
    }
    fn classify(
        &self,
        outcome: usize,
        p: &Resolved,
        summary: &[Value],
    ) -> Result<&'static str, RecordError> {
        let s = M::Summary::from_values(summary)?;
        Ok((self.outcomes[outcome].classify)(
            &M::Params::from_resolved(p),
            &s,
        ))
    }
    fn curves(
        &self,
    ) -> Option<(
        &'static str,
        &'static str,
        &'static [&'static str],
        &'static str,
    )> {
        self.curves
            .as_ref()
            .map(|c| (c.table, c.x, c.columns, c.y_label))
    }
    fn curve_scale(&self, p: &Resolved) -> f64 {
        self.curves
            .as_ref()
            .map_or(1.0, |c| (c.scale)(&M::Params::from_resolved(p)))
    }
    fn ranking(&self) -> Option<(&'static str, &'static [(&'static str, usize)])> {
        self.ranking.as_ref().map(|r| (r.doc, r.show))
    }
    fn rank_key(&self, p: &Resolved, summary: &[Value]) -> Result<Vec<i64>, RecordError> {
        let s = M::Summary::from_values(summary)?;
        Ok(self
            .ranking
            .as_ref()
            .map_or_else(Vec::new, |r| (r.key)(&M::Params::from_resolved(p), &s)))
    }
    fn simulate(&self, p: &Resolved, export: bool) -> Result<Simulation, ParamError> {
        match self.export {
            Some(e) => e.simulate(p, export),
            None => generic_simulation(self, p, export),
        }
    }
    fn params_of_export(&self, doc: &Json) -> Result<Resolved, ParamError> {
        match self.export {
            Some(e) => e.params_of(doc),
            None => generic_params(self.params(), &doc["config"]),
        }
    }
}

fn object(columns: &[Column], row: &[Value]) -> Json {
    let mut m = Map::new();
    for (c, v) in columns.iter().zip(row) {
        m.insert(c.name.to_string(), v.to_json());
    }
    Json::Object(m)
}

fn params_object(p: &Resolved, keep: impl Fn(usize) -> bool) -> Json {
    let entries = p.values.iter().enumerate().filter(|(i, _)| keep(*i));
    Json::Object(
        entries
            .map(|(_, (n, v))| (n.to_string(), v.to_json()))
            .collect(),
    )
}

/// The export every model has: its parameters, summary, detail tables and
/// failures as JSON, and a plain listing of the summary.
fn generic_simulation(
    m: &dyn DynModel,
    p: &Resolved,
    with_export: bool,
) -> Result<Simulation, ParamError> {
    let ignored = m.check(p)?;
    let quiet = p.quiet(m.params());
    let want = vec![with_export; m.tables().len()];
    let out = m.run(p, &want, None)?;
    let mut tables = Map::new();
    for (spec, rows) in m.tables().iter().zip(&out.tables) {
        let rows: Vec<Json> = rows
            .to_rows()
            .iter()
            .map(|r| object(spec.columns, r))
            .collect();
        tables.insert(spec.name.to_string(), Json::Array(rows));
    }
    let export = json!({
        "model": m.name(),
        "engine": m.version(),
        "config": params_object(p, |i| !quiet.contains(crate::params::ParamId(i))),
        "effective_parameters": params_object(p, |i| {
            let id = crate::params::ParamId(i);
            !ignored.contains(id) && !quiet.contains(id)
        }),
        "summary": object(m.summary_columns(), &out.summary),
        "tables": tables,
        "failures": out.violation.iter().map(|v| json!({"identity": v.identity, "detail": v.detail, "text": v.to_string()})).collect::<Vec<_>>(),
    });
    let mut text = format!("{}  ({})\n", m.name(), m.version());
    let width = m
        .summary_columns()
        .iter()
        .map(|c| c.name.len())
        .max()
        .unwrap_or(0);
    for (c, v) in m.summary_columns().iter().zip(&out.summary) {
        text += &format!("{:<width$}  {}\n", c.name, v.plain());
    }
    text += &match &out.violation {
        None => "identities hold\n".to_string(),
        Some(v) => format!("FAILED: {v}\n"),
    };
    Ok(Simulation {
        text,
        export: with_export.then_some(export),
        failed: out.violation.is_some(),
    })
}

/// Parameters from an export's `config` object; keys it does not carry
/// take their defaults, as they did when it was written.
pub fn generic_params(specs: &[ParamSpec], config: &Json) -> Result<Resolved, ParamError> {
    let obj = config.as_object().ok_or_else(|| {
        ParamError::new(
            "config",
            config,
            "the export's config is not an object",
            "a JSON object".into(),
        )
    })?;
    let mut p = Resolved::defaults(specs);
    for (key, v) in obj {
        let id = lookup(specs, key)?;
        p.set(id, Value::from_json(id.spec(specs), v)?);
    }
    Ok(p)
}
