//! The hive's decision point `hive.turn`: once the attention market has
//! picked the speaker, what the speaker writes is asked of an external
//! policy. The arm keeps its mechanism and knobs; only the writing moves
//! out. The speaker's prose draw is made first, from the same stream as
//! the built-in member rules, whether the answer uses it or not, so the
//! rooms' streams never depend on an answer. The text that comes back goes
//! through the same marker parser as every message.

use serde_json::{json, Value as Json};

use super::policy::RoomPolicy;
use super::room::{Role, Room, MEMBERS, OPTIONS};
use crate::model::{Ask, Decided, DecisionPoint, Obs, PolicyFailure};

/// The longest message a policy may write, in bytes.
pub const TEXT_LIMIT: usize = 4096;

pub const TURN: DecisionPoint = DecisionPoint {
    name: "hive.turn",
    belief_for: &[],
    text_for: &["post"],
    text_limit: TEXT_LIMIT,
    safe: "silent",
    fields: None,
};

const POST: &[&str] = &["post"];

/// What the engine hands a decision to.
pub type Decide<'a> = dyn FnMut(Vec<Ask>) -> Result<Vec<Decided>, PolicyFailure> + 'a;

/// One message of the room: its sequence number, author (none for the
/// operator's task) and text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub seq: u64,
    pub author: Option<usize>,
    pub text: String,
}

/// Who writes the members' messages in one room.
pub enum Writer<'d, 'a> {
    /// The member rules.
    Builtin,
    /// An external policy, for room `episode`; `failed` is set when a
    /// decision could not be had (the room stops there).
    External {
        episode: u64,
        decide: &'d mut Decide<'a>,
        failed: Option<PolicyFailure>,
    },
}

/// Where the speaker stands when it is asked.
pub struct Turn<'m> {
    pub turn: u64,
    pub speaker: usize,
    pub blind: bool,
    pub commit_phase: bool,
    pub prose: u64,
    /// Every message so far, the task first.
    pub messages: &'m [Message],
}

fn role(r: Role) -> &'static str {
    match r {
        Role::Proposer => "proposer",
        Role::Critic => "critic",
        Role::Archivist => "archivist",
    }
}

fn author(a: Option<usize>) -> &'static str {
    a.map_or("operator", |k| MEMBERS[k].0)
}

/// Asks for the speaker's message: `Ok(Some(text))`, `Ok(None)` for the
/// safe action (the speaker stays silent: an empty message). Besides what
/// the speaker may see, the observation names every member in index order
/// (authors are names) and the sequence number the message will get. Only
/// the room's option names are topics: a marker naming anything else
/// counts for no topic.
pub fn ask(
    decide: &mut Decide,
    episode: u64,
    room: &Room,
    p: &RoomPolicy,
    t: &Turn,
) -> Result<Option<String>, PolicyFailure> {
    let k = t.speaker;
    // Blind: the task and the speaker's own messages only.
    let visible: Vec<Json> = t
        .messages
        .iter()
        .filter(|m| !t.blind || m.author.is_none() || m.author == Some(k))
        .map(|m| json!({"seq": m.seq, "author": author(m.author), "text": m.text}))
        .collect();
    let topics = &OPTIONS[..room.topics];
    let members: Vec<Json> = (0..room.members)
        .map(|m| json!({"name": MEMBERS[m].0, "role": role(room.role(m))}))
        .collect();
    let next_seq = t.messages.last().map_or(1, |m| m.seq) + 1;
    let obs = json!({
        "episode": episode,
        "turn": t.turn,
        "member": k,
        "name": MEMBERS[k].0,
        "role": role(room.role(k)),
        "topics": topics,
        "evaluations": &room.evaluation[k][..room.topics],
        "favourite": OPTIONS[room.favourite[k] as usize],
        "visible": visible,
        "members": members,
        "seq": next_seq,
        "blind": t.blind,
        "commit_phase": t.commit_phase,
        "budget_left": p.budget - t.turn,
        "rules": {
            "threshold": p.fold.threshold,
            "window": p.fold.window,
            "require_grounded": p.fold.require_grounded,
            "require_evidential": p.fold.require_evidential,
            "refutation_cap": p.fold.refutation_cap,
            "repetition": p.repetition,
            "dominance": p.dominance,
        },
        "draws": {"prose": t.prose},
    });
    let ask = Ask {
        key: format!("e{episode}/t{}/m{k}", t.turn),
        obs: Obs::from_json(&obs),
        allowed: POST,
    };
    let mut answers = decide(vec![ask])?;
    Ok(match answers.pop() {
        Some(Decided::Answer(a)) => Some(a.text.unwrap_or_default()),
        _ => None,
    })
}
