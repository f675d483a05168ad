//! Validated trust-v1 evidence: actors with their root controllers,
//! revisions grouped by item, claims, signals, relations, source families
//! and ratings, every reference resolved. Built from raw tables by
//! `Evidence::new`, which refuses anything the scorer could misread.

use std::collections::HashMap;

use super::input::{self, Cells, Ids, InputError, RawTable};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActorKind {
    Human,
    Organization,
    Ai,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verification {
    None,
    Email,
    Domain,
    Organization,
}

impl Verification {
    /// The verification multiplier m_v (seed section 8).
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

#[derive(Clone, Debug, PartialEq)]
pub struct Signal {
    pub id: String,
    pub target: Target,
    pub actor: usize,
    pub outcome: Outcome,
    pub real_world: bool,
    pub confidence: Option<f64>,
    pub references_usage: bool,
    pub day: i64,
    pub active: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelationKind {
    Supports,
    Contradicts,
    Supersedes,
    Corrects,
    DerivedFrom,
    Mirrors,
    Quotes,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Relation {
    pub from: String,
    pub to: String,
    pub kind: RelationKind,
    pub strength: f64,
    pub actor: usize,
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
    pub actor_index: HashMap<String, usize>,
    pub revisions: Vec<Revision>,
    pub revision_index: HashMap<String, usize>,
    /// Item id -> its revisions, by revision number.
    pub items: Vec<(String, Vec<usize>)>,
    pub item_index: HashMap<String, usize>,
    pub claims: Vec<Claim>,
    pub claim_index: HashMap<String, usize>,
    pub signals: Vec<Signal>,
    pub relations: Vec<Relation>,
    /// Source id -> family, derivatives already collapsed to their origin's.
    pub families: HashMap<String, String>,
    pub ratings: Vec<Rating>,
}

const ACTOR_KINDS: &[(&str, ActorKind)] = &[
    ("human", ActorKind::Human),
    ("organization", ActorKind::Organization),
    ("ai", ActorKind::Ai),
];
const VERIFICATIONS: &[(&str, Verification)] = &[
    ("none", Verification::None),
    ("email", Verification::Email),
    ("domain", Verification::Domain),
    ("organization", Verification::Organization),
];
const USAGE: &[(&str, Outcome)] = &[
    ("success", Outcome::Success),
    ("failure", Outcome::Failure),
    ("unknown", Outcome::Unknown),
];
const REVIEW: &[(&str, Outcome)] = &[
    ("true", Outcome::True),
    ("false", Outcome::False),
    ("outdated", Outcome::Outdated),
    ("cannot_verify", Outcome::CannotVerify),
];
const STATUSES: &[(&str, bool)] = &[("active", true), ("retracted", false), ("hidden", false)];
const RELATION_KINDS: &[(&str, RelationKind)] = &[
    ("supports", RelationKind::Supports),
    ("contradicts", RelationKind::Contradicts),
    ("supersedes", RelationKind::Supersedes),
    ("corrects", RelationKind::Corrects),
    ("derived_from", RelationKind::DerivedFrom),
    ("mirrors", RelationKind::Mirrors),
    ("quotes", RelationKind::Quotes),
];

/// Facets `key=value` joined by `;`, as a sorted, deduplicated set.
pub fn normalize_context(s: &str) -> Result<String, String> {
    let mut facets: Vec<&str> = s
        .split(';')
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .collect();
    if let Some(bad) = facets.iter().find(|f| !f.contains('=')) {
        return Err(format!(
            "facet `{bad}` is not key=value; facets are key=value joined by `;`"
        ));
    }
    facets.sort_unstable();
    facets.dedup();
    Ok(facets.join(";"))
}

impl Evidence {
    pub fn new(t: &Tables) -> Result<Evidence, InputError> {
        let mut ev = Evidence::default();
        ev.read_actors(&t.actors)?;
        ev.read_items(&t.items)?;
        if let Some(claims) = &t.claims {
            ev.read_claims(claims)?;
        }
        let implicit = t.claims.is_none();
        ev.read_signals(&t.signals, implicit)?;
        if let Some(sources) = &t.sources {
            for c in sources.cells(input::SOURCES)? {
                let id = c.required("id")?;
                if ev
                    .families
                    .insert(id.to_string(), c.required("family")?.to_string())
                    .is_some()
                {
                    return Err(c.fail("id", "duplicate source id"));
                }
            }
        }
        if let Some(relations) = &t.relations {
            ev.read_relations(relations, implicit)?;
        }
        if let Some(ratings) = &t.ratings {
            ev.read_ratings(ratings, implicit)?;
        }
        Ok(ev)
    }

    fn actor(&self, c: &Cells, field: &str) -> Result<usize, InputError> {
        let id = c.required(field)?;
        self.actor_index
            .get(id)
            .copied()
            .ok_or_else(|| c.fail(field, "unknown actor; add it to the actors table"))
    }

    fn read_actors(&mut self, t: &RawTable) -> Result<(), InputError> {
        let cells = t.cells(input::ACTORS)?;
        let mut ids = Ids::new("id");
        let mut controllers = Vec::new();
        for c in &cells {
            let id = c.required("id")?;
            ids.add(c, id)?;
            let kind = c.word("kind", ACTOR_KINDS)?;
            if kind == ActorKind::Ai && c.optional("controller").is_none() {
                return Err(c.fail(
                    "controller",
                    "an ai actor needs a controller: the accountable actor",
                ));
            }
            self.actor_index.insert(id.to_string(), self.actors.len());
            controllers.push(c.optional("controller").filter(|_| kind == ActorKind::Ai));
            self.actors.push(Actor {
                id: id.to_string(),
                kind,
                verification: c.word("verification", VERIFICATIONS)?,
                created: c.int("created")?,
                root: self.actors.len(),
            });
        }
        // Follow controllers to a non-ai actor; a cycle or a missing one is an error.
        for (i, c) in cells.iter().enumerate() {
            let mut at = i;
            let mut path = vec![self.actors[i].id.clone()];
            while let Some(next) = controllers[at] {
                let Some(&j) = self.actor_index.get(next) else {
                    return Err(c.fail(
                        "controller",
                        format!(
                            "controller `{next}` (reached from `{}`) is not in the actors table",
                            self.actors[i].id
                        ),
                    ));
                };
                path.push(next.to_string());
                if path.len() > self.actors.len() + 1 {
                    return Err(c.fail(
                        "controller",
                        format!("controller cycle: {}", path.join(" -> ")),
                    ));
                }
                at = j;
            }
            self.actors[i].root = at;
        }
        Ok(())
    }

    fn read_items(&mut self, t: &RawTable) -> Result<(), InputError> {
        let mut ids = Ids::new("revision");
        let mut current: HashMap<String, usize> = HashMap::new();
        for c in t.cells(input::ITEMS)? {
            let id = c.required("revision")?;
            ids.add(&c, id)?;
            let r = Revision {
                id: id.to_string(),
                item: c.required("item")?.to_string(),
                number: c.int("number")?,
                author: self.actor(&c, "author")?,
                current: c.flag("current")?,
            };
            let slot = *self.item_index.entry(r.item.clone()).or_insert_with(|| {
                self.items.push((r.item.clone(), Vec::new()));
                self.items.len() - 1
            });
            if self.items[slot]
                .1
                .iter()
                .any(|&k| self.revisions[k].number == r.number)
            {
                return Err(c.fail(
                    "number",
                    format!(
                        "item `{}` already has a revision numbered {}",
                        r.item, r.number
                    ),
                ));
            }
            if r.current
                && current
                    .insert(r.item.clone(), self.revisions.len())
                    .is_some()
            {
                return Err(c.fail(
                    "current",
                    format!("item `{}` already has a current revision", r.item),
                ));
            }
            self.revision_index
                .insert(r.id.clone(), self.revisions.len());
            self.items[slot].1.push(self.revisions.len());
            self.revisions.push(r);
        }
        for (item, revs) in &mut self.items {
            if !current.contains_key(item.as_str()) {
                return Err(InputError {
                    file: t.file.clone(),
                    place: String::new(),
                    problem: format!(
                        "item `{item}` has no current revision; mark one row current = true"
                    ),
                });
            }
            let revisions = &self.revisions;
            revs.sort_by_key(|&k| revisions[k].number);
        }
        Ok(())
    }

    fn read_claims(&mut self, t: &RawTable) -> Result<(), InputError> {
        let mut ids = Ids::new("id");
        for c in t.cells(input::CLAIMS)? {
            let id = c.required("id")?;
            ids.add(&c, id)?;
            if self.revision_index.contains_key(id) || self.item_index.contains_key(id) {
                return Err(c.fail(
                    "id",
                    "already a revision or item id; claims need their own ids",
                ));
            }
            let author = match c.optional("author") {
                Some(_) => Some(self.actor(&c, "author")?),
                None => None,
            };
            self.claim_index.insert(id.to_string(), self.claims.len());
            self.claims.push(Claim {
                id: id.to_string(),
                author,
            });
        }
        Ok(())
    }

    /// A claim id: listed, or (without a claims table) created on first use.
    fn claim(&mut self, c: &Cells, field: &str, implicit: bool) -> Result<usize, InputError> {
        let id = c.required(field)?;
        if let Some(&k) = self.claim_index.get(id) {
            return Ok(k);
        }
        if !implicit {
            return Err(c.fail(
                field,
                "unknown target: not a revision and not in the claims table",
            ));
        }
        self.claim_index.insert(id.to_string(), self.claims.len());
        self.claims.push(Claim {
            id: id.to_string(),
            author: None,
        });
        Ok(self.claims.len() - 1)
    }

    /// A revision or a claim; an item id is refused (signals name a revision).
    fn target(&mut self, c: &Cells, field: &str, implicit: bool) -> Result<Target, InputError> {
        let id = c.required(field)?;
        if let Some(&r) = self.revision_index.get(id) {
            return Ok(Target::Revision(r));
        }
        if self.item_index.contains_key(id) {
            return Err(c.fail(
                field,
                "this is an item; evidence targets one of its revisions",
            ));
        }
        Ok(Target::Claim(self.claim(c, field, implicit)?))
    }

    fn read_signals(&mut self, t: &RawTable, implicit: bool) -> Result<(), InputError> {
        let mut ids = Ids::new("id");
        for c in t.cells(input::SIGNALS)? {
            let id = c.required("id")?;
            ids.add(&c, id)?;
            let outcome = match c.text("kind") {
                "usage" => c.word("outcome", USAGE)?,
                "review" => c.word("outcome", REVIEW)?,
                _ => return Err(c.fail("kind", "allowed: usage, review")),
            };
            let signal = Signal {
                id: id.to_string(),
                target: self.target(&c, "target", implicit)?,
                actor: self.actor(&c, "actor")?,
                outcome,
                real_world: c.flag("real_world")?,
                confidence: c.number("confidence", 0.0, 1.0)?,
                references_usage: c.flag("references_usage")?,
                day: c.int("day")?,
                active: c.word("status", STATUSES)?,
            };
            self.signals.push(signal);
        }
        Ok(())
    }

    fn read_relations(&mut self, t: &RawTable, implicit: bool) -> Result<(), InputError> {
        let rows = t.cells(input::RELATIONS)?;
        // Derivative source -> (origin, row), in file order.
        let mut derived: HashMap<String, (String, usize)> = HashMap::new();
        let mut order: Vec<String> = Vec::new();
        for (row, c) in rows.iter().enumerate() {
            let kind = c.word("kind", RELATION_KINDS)?;
            let r = Relation {
                from: c.required("from")?.to_string(),
                to: c.required("to")?.to_string(),
                kind,
                strength: c.number("strength", 0.0, 1.0)?.unwrap_or(0.7),
                actor: self.actor(c, "actor")?,
                day: c.int("day")?,
            };
            match kind {
                RelationKind::Supports | RelationKind::Contradicts => {
                    if let Target::Revision(_) = self.target(c, "to", implicit)? {
                        return Err(c.fail("to", "source stances target claims, not revisions"));
                    }
                }
                RelationKind::Supersedes | RelationKind::Corrects => {
                    for f in ["from", "to"] {
                        let id = c.required(f)?;
                        if !self.item_index.contains_key(id) {
                            self.target(c, f, implicit)?;
                        }
                    }
                }
                RelationKind::DerivedFrom | RelationKind::Mirrors | RelationKind::Quotes => {
                    if derived
                        .insert(r.from.clone(), (r.to.clone(), row))
                        .is_some()
                    {
                        return Err(c.fail("from", "a source derives from one origin only"));
                    }
                    order.push(r.from.clone());
                }
            }
            self.relations.push(r);
        }
        // Derivatives join their origin's family, following chains.
        let mut collapsed = Vec::new();
        for start in &order {
            let mut at = start.clone();
            let mut path = vec![at.clone()];
            while let Some((next, row)) = derived.get(&at) {
                let cycle = path.contains(next);
                path.push(next.clone());
                if cycle {
                    let msg = format!("derivation cycle: {}", path.join(" -> "));
                    return Err(rows[*row].fail("from", msg));
                }
                at = next.clone();
            }
            let family = self.families.get(&at).cloned().unwrap_or(at);
            collapsed.push((start.clone(), family));
        }
        self.families.extend(collapsed);
        Ok(())
    }

    fn read_ratings(&mut self, t: &RawTable, implicit: bool) -> Result<(), InputError> {
        for c in t.cells(input::RATINGS)? {
            let target = c.required("target")?.to_string();
            if !self.revision_index.contains_key(&target) && !self.item_index.contains_key(&target)
            {
                self.claim(&c, "target", implicit)?;
            }
            let score = c.number("score", 0.0, 100.0)?;
            self.ratings.push(Rating {
                actor: self.actor(&c, "actor")?,
                target,
                context: normalize_context(c.text("context")).map_err(|e| c.fail("context", e))?,
                dimension: c.required("dimension")?.to_string(),
                score: score.ok_or_else(|| c.fail("score", "missing; a score in 0 ..= 100"))?,
                confidence: c.number("confidence", 0.0, 1.0)?.unwrap_or(1.0),
                references_usage: c.flag("references_usage")?,
                day: c.int("day")?,
            });
        }
        Ok(())
    }

    /// The source family of a source id (itself when unlisted).
    pub fn family(&self, source: &str) -> String {
        self.families
            .get(source)
            .cloned()
            .unwrap_or_else(|| source.to_string())
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

    /// The current revision of item `i`.
    pub fn current(&self, i: usize) -> usize {
        *self.items[i]
            .1
            .iter()
            .find(|&&r| self.revisions[r].current)
            .expect("validated: one current revision per item")
    }
}
