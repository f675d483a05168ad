//! Building `Evidence` from raw tables: each table's words checked,
//! every id unique, every reference resolved (actors, targets, claims),
//! root controllers followed and source derivations collapsed, with errors
//! that name the file, row, field and value.

use std::collections::HashMap;
use std::sync::Arc;

use super::evidence::{
    normalize_context, Actor, ActorKind, Claim, Evidence, Rating, Relation, RelationKind,
    ReviewOutcome, Revision, Signal, SignalStatus, Tables, Target, UsageOutcome, Verification,
};
use super::input::{self, Cells, Ids, InputError, RawTable};
use super::names::Names;

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
            let layout = sources.layout(input::SOURCES)?;
            for c in layout.rows() {
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
            ev.read_ratings(ratings)?;
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
        let layout = t.layout(input::ACTORS)?;
        let cells: Vec<Cells> = layout.rows().collect();
        let mut ids = Ids::new("id");
        let mut controllers = Vec::new();
        for c in &cells {
            let id = c.required("id")?;
            ids.add(c, id)?;
            let kind = c.word::<ActorKind>("kind")?;
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
                verification: c.word::<Verification>("verification")?,
                created: c.day("created")?,
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
                let cycle = path.iter().any(|p| p == next);
                path.push(next.to_string());
                if cycle {
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
        let layout = t.layout(input::ITEMS)?;
        for c in layout.rows() {
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
        let layout = t.layout(input::CLAIMS)?;
        for c in layout.rows() {
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
        let mut ids = Ids::with_capacity("id", t.rows.len());
        let mut names = Names::with_capacity(t.rows.len(), 8 * t.rows.len());
        self.signals.reserve_exact(t.rows.len());
        let layout = t.layout(input::SIGNALS)?;
        for c in layout.rows() {
            let id = c.required("id")?;
            ids.add(&c, id)?;
            names.push(id);
            let outcome = match c.text("kind") {
                "usage" => c.word::<UsageOutcome>("outcome")?.into(),
                "review" => c.word::<ReviewOutcome>("outcome")?.into(),
                _ => return Err(c.fail("kind", "allowed: usage, review")),
            };
            let signal = Signal {
                target: self.target(&c, "target", implicit)?,
                actor: self.actor(&c, "actor")?,
                outcome,
                real_world: c.flag("real_world")?,
                confidence: c.number("confidence", 0.0, 1.0)?,
                references_usage: c.flag("references_usage")?,
                day: c.day("day")?,
                active: c.word::<SignalStatus>("status")? == SignalStatus::Active,
            };
            self.signals.push(signal);
        }
        self.signal_ids = Arc::new(names);
        Ok(())
    }

    fn read_relations(&mut self, t: &RawTable, implicit: bool) -> Result<(), InputError> {
        let layout = t.layout(input::RELATIONS)?;
        let rows: Vec<Cells> = layout.rows().collect();
        // Derivative source -> (origin, row), in file order.
        let mut derived: HashMap<String, (String, usize)> = HashMap::new();
        let mut order: Vec<String> = Vec::new();
        for (row, c) in rows.iter().enumerate() {
            let kind = c.word::<RelationKind>("kind")?;
            // Only a supersession or correction is someone's act (its
            // author decides whether it counts); stances and derivations
            // are between sources.
            let needs_actor = matches!(kind, RelationKind::Supersedes | RelationKind::Corrects);
            let actor =
                match c.optional("actor") {
                    Some(_) => Some(self.actor(c, "actor")?),
                    None if needs_actor => return Err(c.fail(
                        "actor",
                        "missing; a supersedes or corrects relation needs the actor who made it",
                    )),
                    None => None,
                };
            let r = Relation {
                from: c.required("from")?.to_string(),
                to: c.required("to")?.to_string(),
                kind,
                strength: c.number("strength", 0.0, 1.0)?.unwrap_or(0.7),
                actor,
                day: c.day("day")?,
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

    /// Ratings rate anything (a revision, an item, an actor, a tool): a
    /// rating target is never made a claim.
    fn read_ratings(&mut self, t: &RawTable) -> Result<(), InputError> {
        let layout = t.layout(input::RATINGS)?;
        for c in layout.rows() {
            let target = c.required("target")?.to_string();
            let score = c.number("score", 0.0, 100.0)?;
            self.ratings.push(Rating {
                actor: self.actor(&c, "actor")?,
                target,
                context: normalize_context(c.text("context"))
                    .map_err(|e| c.fail("context", e.to_string()))?,
                dimension: c.required("dimension")?.to_string(),
                score: score.ok_or_else(|| c.fail("score", "missing; a score in 0 ..= 100"))?,
                confidence: c.number("confidence", 0.0, 1.0)?.unwrap_or(1.0),
                references_usage: c.flag("references_usage")?,
                day: c.day("day")?,
            });
        }
        Ok(())
    }
}
