//! `report`'s data: what one results folder shows a reader, gathered as
//! one JSON document the page's script draws. Each section is built from
//! the model's declared capabilities (headline metrics, curves, ranking)
//! and the analysis verbs' own computations, so the page needs no
//! model-specific code. Large folders are reduced (runs listed by an even
//! sample, trajectories of a few hundred runs, the top of long tables) and
//! each reduction is stated in `notes`.

mod runs;
mod sections;

use serde_json::{json, Value as Json};

use super::design::Design;
use crate::results::ResultsDir;

/// Runs listed with their parameters and headline metrics.
pub const MAX_LISTED_RUNS: usize = 2_000;
/// Runs whose own trajectories the page can draw.
pub const MAX_TRAJECTORY_RUNS: usize = 200;
/// Scenarios drawn as trajectory charts.
pub const MAX_CHART_SCENARIOS: usize = 24;
/// Rows of long tables (summary cells, ranking, search).
pub const MAX_TABLE_ROWS: usize = 3_000;

pub struct Request<'a> {
    /// The baseline arm for the verdicts section.
    pub baseline: Option<&'a str>,
}

/// What a section is built from.
pub struct Context<'a> {
    pub results: &'a ResultsDir,
    pub design: Design,
    pub request: &'a Request<'a>,
}

/// A part of the page: its key in the document (the script draws each key
/// it knows) and its data, or `None` when it has nothing to show here.
pub trait Section {
    fn key(&self) -> &'static str;
    fn build(&self, cx: &Context, notes: &mut Vec<String>) -> crate::Result<Option<Json>>;
}

/// The sections, in page order.
fn sections() -> Vec<Box<dyn Section>> {
    vec![
        Box::new(sections::Provenance),
        Box::new(sections::Layout),
        Box::new(sections::Summary),
        Box::new(sections::Verdicts),
        Box::new(sections::Curves),
        Box::new(sections::Ranking),
        Box::new(sections::Race),
        Box::new(runs::Runs),
    ]
}

/// A float for the page: six significant digits are more than any chart
/// or table shows, and keep the file small.
pub fn short(x: f64) -> Json {
    if !x.is_finite() {
        return Json::Null;
    }
    let v: f64 = format!("{x:.5e}").parse().expect("a formatted float");
    json!(v)
}

/// The whole document.
pub fn build(results: &ResultsDir, request: &Request) -> crate::Result<Json> {
    let cx = Context {
        results,
        design: Design::kept(&results.plan, None)?,
        request,
    };
    let mut doc = serde_json::Map::new();
    let mut notes = Vec::new();
    for s in sections() {
        if let Some(data) = s.build(&cx, &mut notes)? {
            doc.insert(s.key().into(), data);
        }
    }
    doc.insert("notes".into(), json!(notes));
    Ok(Json::Object(doc))
}
