//! Validated trust-v1 evidence: actors with their root controllers,
//! revisions grouped by item, claims, signals, relations, source families
//! and ratings, every reference resolved. `read.rs` builds it from raw
//! tables and refuses anything the scorer could misread.

use std::collections::HashMap;
use std::sync::Arc;

use super::input::RawTable;
use super::names::{FastMap, Names};

crate::words! {
    /// Who an actor is.
    pub enum ActorKind {
        Human = "human",
        Organization = "organization",
        Ai = "ai",
    }
}

crate::words! {
    /// How an actor's root is verified.
    pub enum Verification {
        None = "none",
        Email = "email",
        Domain = "domain",
        Organization = "organization",
    }
}

impl Verification {
    /// The verification multiplier m_v (docs/models/trust.md §4.2).
    pub fn multiplier(self) -> f64 {
        match self {
            Verification::None => 0.5,
            Verification::Email => 0.8,
            Verification::Domain | Verification::Organization => 1.0,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Actor {
    pub id: String,
    pub kind: ActorKind,
    pub verification: Verification,
    pub created: i64,
    /// Index of the root controller: itself unless an ai actor.
    pub root: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Revision {
    pub id: String,
    pub item: String,
    pub number: i64,
    pub author: usize,
    pub current: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Claim {
    pub id: String,
    pub author: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Revision(usize),
    Claim(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Success,
    Failure,
    Unknown,
    True,
    False,
    Outdated,
    CannotVerify,
}

crate::words! {
    /// The outcome words of a usage signal.
    pub enum UsageOutcome {
        Success = "success",
        Failure = "failure",
        Unknown = "unknown",
    }
}

crate::words! {
    /// The outcome words of a review signal.
    pub enum ReviewOutcome {
        True = "true",
        False = "false",
        Outdated = "outdated",
        CannotVerify = "cannot_verify",
    }
}

impl From<UsageOutcome> for Outcome {
    fn from(o: UsageOutcome) -> Outcome {
        match o {
            UsageOutcome::Success => Outcome::Success,
            UsageOutcome::Failure => Outcome::Failure,
            UsageOutcome::Unknown => Outcome::Unknown,
        }
    }
}

impl From<ReviewOutcome> for Outcome {
    fn from(o: ReviewOutcome) -> Outcome {
        match o {
            ReviewOutcome::True => Outcome::True,
            ReviewOutcome::False => Outcome::False,
            ReviewOutcome::Outdated => Outcome::Outdated,
            ReviewOutcome::CannotVerify => Outcome::CannotVerify,
        }
    }
}

crate::words! {
    /// Whether a signal still counts.
    pub enum SignalStatus {
        Active = "active",
        Retracted = "retracted",
        Hidden = "hidden",
    }
}

impl Outcome {
    /// 1 supports, 0 opposes, none carries no correctness weight.
    pub fn polarity(self) -> Option<f64> {
        match self {
            Outcome::Success | Outcome::True => Some(1.0),
            Outcome::Failure | Outcome::False => Some(0.0),
            _ => None,
        }
    }

    pub fn is_usage(self) -> bool {
        matches!(self, Outcome::Success | Outcome::Failure | Outcome::Unknown)
    }
}

/// A signal; its id is `Evidence::signal_ids` at the signal's index, kept
/// apart so a signal holds no heap block of its own.
#[derive(Clone, Debug, PartialEq)]
pub struct Signal {
    pub target: Target,
    pub actor: usize,
    pub outcome: Outcome,
    pub real_world: bool,
    pub confidence: Option<f64>,
    pub references_usage: bool,
    pub day: i64,
    pub active: bool,
}

crate::words! {
    /// What a relation says.
    pub enum RelationKind {
        Supports = "supports",
        Contradicts = "contradicts",
        Supersedes = "supersedes",
        Corrects = "corrects",
        DerivedFrom = "derived_from",
        Mirrors = "mirrors",
        Quotes = "quotes",
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Relation {
    pub from: String,
    pub to: String,
    pub kind: RelationKind,
    pub strength: f64,
    /// Who made it: required for supersedes and corrects, optional otherwise.
    pub actor: Option<usize>,
    pub day: i64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Rating {
    pub actor: usize,
    pub target: String,
    /// Facets sorted, joined by `;`, so equal sets compare equal.
    pub context: String,
    pub dimension: String,
    pub score: f64,
    pub confidence: f64,
    pub references_usage: bool,
    pub day: i64,
}

/// The input tables; only actors, items and signals are required.
#[derive(Clone, Debug, Default)]
pub struct Tables {
    pub actors: RawTable,
    pub items: RawTable,
    pub signals: RawTable,
    pub relations: Option<RawTable>,
    pub sources: Option<RawTable>,
    pub ratings: Option<RawTable>,
    pub claims: Option<RawTable>,
}

#[derive(Clone, Debug, Default)]
pub struct Evidence {
    pub actors: Vec<Actor>,
    pub actor_index: FastMap<String, usize>,
    pub revisions: Vec<Revision>,
    pub revision_index: FastMap<String, usize>,
    /// Item id -> its revisions, by revision number.
    pub items: Vec<(String, Vec<usize>)>,
    pub item_index: FastMap<String, usize>,
    pub claims: Vec<Claim>,
    pub claim_index: FastMap<String, usize>,
    pub signals: Vec<Signal>,
    /// Signal ids by signal index (shared with the scores, which name them).
    pub signal_ids: Arc<Names>,
    pub relations: Vec<Relation>,
    /// Source id -> family, derivatives already collapsed to their origin's.
    pub families: HashMap<String, String>,
    pub ratings: Vec<Rating>,
}

impl Evidence {
    /// Whether `target` has ratings of `dimension`, or what it has instead.
    pub fn check_rated(&self, target: &str, dimension: &str) -> Result<(), String> {
        let of_target: Vec<&Rating> = self.ratings.iter().filter(|r| r.target == target).collect();
        if of_target.is_empty() {
            let mut targets: Vec<&str> = self.ratings.iter().map(|r| r.target.as_str()).collect();
            targets.sort_unstable();
            targets.dedup();
            return Err(format!(
                "--target {target}: no rating of it; rated targets: {}",
                targets.join(", ")
            ));
        }
        if !of_target.iter().any(|r| r.dimension == dimension) {
            let mut dims: Vec<&str> = of_target.iter().map(|r| r.dimension.as_str()).collect();
            dims.sort_unstable();
            dims.dedup();
            return Err(format!(
                "--dimension {dimension}: {target} has no rating of it; its dimensions: {}",
                dims.join(", ")
            ));
        }
        Ok(())
    }
}

/// A context that is not facets `key=value` joined by `;`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("facet `{0}` is not key=value; facets are key=value joined by `;`")]
pub struct FacetError(pub String);

/// Facets `key=value` joined by `;`, as a sorted, deduplicated set.
pub fn normalize_context(s: &str) -> Result<String, FacetError> {
    let mut facets: Vec<&str> = s
        .split(';')
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .collect();
    // A facet needs a key: `=x` would match no context a rater means.
    let keyless = |f: &&&str| f.split_once('=').is_none_or(|(k, _)| k.trim().is_empty());
    if let Some(bad) = facets.iter().find(keyless) {
        return Err(FacetError(bad.to_string()));
    }
    facets.sort_unstable();
    facets.dedup();
    Ok(facets.join(";"))
}

impl Evidence {
    /// The source family of a source id (itself when unlisted).
    pub fn family(&self, source: &str) -> String {
        self.family_of(source).to_string()
    }

    /// As `family`, borrowed.
    pub fn family_of<'a>(&'a self, source: &'a str) -> &'a str {
        self.families.get(source).map_or(source, String::as_str)
    }

    /// The author's root of a target id: a revision's author, an item's
    /// current revision's author, a claim's author if known.
    pub fn author_root(&self, id: &str) -> Option<usize> {
        if let Some(&r) = self.revision_index.get(id) {
            return Some(self.actors[self.revisions[r].author].root);
        }
        if let Some(&i) = self.item_index.get(id) {
            let cur = self.current(i);
            return Some(self.actors[self.revisions[cur].author].root);
        }
        let claim = &self.claims[*self.claim_index.get(id)?];
        claim.author.map(|a| self.actors[a].root)
    }

    /// The day of the earliest active signal, if any: a `today` before it
    /// lets no signal count.
    pub fn first_signal_day(&self) -> Option<i64> {
        self.signals
            .iter()
            .filter(|s| s.active)
            .map(|s| s.day)
            .min()
    }

    /// Active usage failures reported up to `today` on a target: a claim,
    /// a revision, or any revision of an item.
    pub fn usage_failures(&self, target: &str, today: i64) -> usize {
        let on_target = |t: Target| match t {
            Target::Revision(k) => {
                self.revisions[k].id == target || self.revisions[k].item == target
            }
            Target::Claim(k) => self.claims[k].id == target,
        };
        self.signals
            .iter()
            .filter(|s| s.active && s.day <= today && s.outcome == Outcome::Failure)
            .filter(|s| on_target(s.target))
            .count()
    }

    /// The current revision of item `i`.
    pub fn current(&self, i: usize) -> usize {
        *self.items[i]
            .1
            .iter()
            .find(|&&r| self.revisions[r].current)
            .expect("validated: one current revision per item")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contexts_are_sets_of_keyed_facets() {
        assert_eq!(
            normalize_context(" os=linux ;lang=rust;;lang=rust"),
            Ok("lang=rust;os=linux".to_string())
        );
        assert_eq!(normalize_context(""), Ok(String::new()));
        for bad in ["lang", ";;=", " = rust", "os=linux;=x"] {
            assert!(normalize_context(bad).is_err(), "{bad:?}");
        }
    }
}
