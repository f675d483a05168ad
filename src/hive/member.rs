//! What a simulated member posts on its turn (hive-rooms/1 "What a member
//! posts"): the first of eight rules that fires, judged from the member's
//! own view of the room. What the member says is kept as its one marker
//! line's fields (`Said`): written out as text when someone reads the
//! message (a recorded transcript), or turned straight into the trace that
//! text parses to when nobody does, which saves writing and re-reading it.

use std::fmt::Write;

use super::board::{Board, Cites, Mark, MAX_TOPICS};
use super::markers::Kind;
use super::policy::RoomPolicy;
use super::rng::Stream;
use super::room::{Role, Room, MAX_MEMBERS, MEMBERS, OPTIONS};

/// What the speaker is shown, folded at the last message it is shown.
pub struct View<'a> {
    pub marks: &'a [Mark],
    pub board: &'a Board,
}

/// What a member says on its turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Said {
    /// Rule 1's prose line: no marker.
    Prose,
    Post(Post),
}

/// One marker line: `!kind [#topic] [>target] [^cite] — name`, the line
/// starting the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Post {
    kind: Kind,
    topic: Option<u8>,
    target: Option<u64>,
    /// Only a proposal cites nothing.
    cite: Option<u64>,
}

impl Post {
    fn on(kind: Kind, topic: u8, cite: u64) -> Post {
        Post {
            kind,
            topic: Some(topic),
            target: None,
            cite: Some(cite),
        }
    }
}

impl Said {
    /// The message text, as member `speaker` writes it.
    pub fn write(&self, speaker: usize, out: &mut String) {
        let name = MEMBERS[speaker].0;
        out.clear();
        let Said::Post(post) = self else {
            let _ = write!(out, "{name}: reading the thread again before saying more.");
            return;
        };
        let _ = write!(out, "!{}", post.kind.name());
        if let Some(t) = post.topic {
            let _ = write!(out, " #{}", OPTIONS[t as usize]);
        }
        if let Some(t) = post.target {
            let _ = write!(out, " >{t}");
        }
        if let Some(c) = post.cite {
            let _ = write!(out, " ^{c}");
        }
        let _ = write!(out, " — {name}");
    }

    /// The trace that `write`'s text parses to as message `seq` of member
    /// `speaker` in `room`: the marker at offset 0 with its fields as they
    /// are, and its topic counted only when it is one of the room's options
    /// (as the engine interns names). The prose line has none: it does not
    /// start with `!`, and the name and the dash after a marker are words
    /// the parser skips.
    pub fn mark(&self, room: &Room, seq: u64, speaker: usize) -> Option<Mark> {
        let Said::Post(post) = self else {
            return None;
        };
        Some(Mark {
            seq,
            offset: 0,
            author: Some(speaker as u8),
            kind: post.kind,
            topic: post.topic.filter(|&t| (t as usize) < room.topics),
            target: post.target,
            cites: Cites::new(post.cite.as_slice()),
        })
    }
}

/// Per-topic facts of a view the rules keep asking for.
struct Reading<'a> {
    room: &'a Room,
    me: u8,
    board: &'a Board,
    /// Sequence of the first propose trace on each topic, any author.
    proposal: [Option<u64>; 8],
    /// Topics with a proposal, in proposal order (`floor_at[..floor_len]`).
    floor_at: [u8; 8],
    floor_len: usize,
}

impl Reading<'_> {
    fn eval(&self, t: u8) -> i64 {
        self.room.evaluation[self.me as usize][t as usize]
    }

    fn counted(&self, t: u8) -> bool {
        self.board.counts(t, self.me)
    }

    fn backers(&self, t: u8) -> u32 {
        self.board.backers(t)
    }

    fn posterior(&self, t: u8) -> i64 {
        let others = self.backers(t) - u32::from(self.counted(t));
        self.eval(t) + 25 * i64::from(others)
    }

    fn floor(&self) -> impl Iterator<Item = u8> + '_ {
        self.floor_at[..self.floor_len].iter().copied()
    }

    fn favourite(&self) -> u8 {
        self.room.favourite[self.me as usize]
    }
}

pub fn compose(
    room: &Room,
    p: &RoomPolicy,
    speaker: usize,
    view: &View,
    commit_phase: bool,
    prose: &mut Stream,
) -> Said {
    // Rule 1: drawn on every turn, before anything else.
    if prose.chance(60) {
        return Said::Prose;
    }
    let mut r = Reading {
        room,
        me: speaker as u8,
        board: view.board,
        proposal: [None; 8],
        floor_at: [0; 8],
        floor_len: 0,
    };
    for m in view.marks {
        if let (Kind::Propose, Some(t)) = (m.kind, m.topic) {
            if r.proposal[t as usize].is_none() {
                r.proposal[t as usize] = Some(m.seq);
                r.floor_at[r.floor_len] = t;
                r.floor_len += 1;
            }
        }
    }
    let post = refute(&r, p, view)
        .or_else(|| object_in_tie(&r, p, view))
        .or_else(|| commit(&r, commit_phase))
        .or_else(|| support(&r, p));
    Said::Post(post.unwrap_or_else(|| fallback(&r, view)))
}

/// Rule 2: refute a rival the member rates far below its favourite.
fn refute(r: &Reading, p: &RoomPolicy, view: &View) -> Option<Post> {
    if p.fold.refutation_cap.is_none_or(|c| c > MAX_MEMBERS) {
        return None;
    }
    let fav = r.favourite();
    let t = r
        .board
        .order
        .iter()
        .copied()
        .filter(|&t| {
            t != fav
                && r.board.refuted_by[t as usize] & (1 << r.me) == 0
                && r.eval(fav) - r.eval(t) > 60
        })
        .max_by_key(|&t| r.backers(t))?;
    let own_evidence = view
        .marks
        .iter()
        .find(|m| m.kind == Kind::Evidence && m.author == Some(r.me))
        .map(|m| m.seq);
    let grounds = own_evidence.or(r.proposal[t as usize])?;
    Some(Post::on(Kind::Refute, t, grounds))
}

/// Rule 3: two or more topics carry a count; object to a backer of the
/// weakest in favour of the strongest.
fn object_in_tie(r: &Reading, p: &RoomPolicy, view: &View) -> Option<Post> {
    let mut at = [0u8; MAX_TOPICS];
    let mut len = 0;
    for t in r.board.order.iter().copied() {
        if r.backers(t) as usize >= p.fold.threshold {
            at[len] = t;
            len += 1;
        }
    }
    let contenders = &mut at[..len];
    // Stable: equal posteriors keep standings order.
    contenders.sort_by_key(|&t| std::cmp::Reverse(r.posterior(t)));
    let (&best, &worst) = (contenders.first()?, contenders.last()?);
    if contenders.len() < 2 || r.posterior(worst) >= r.posterior(best) {
        return None;
    }
    let target = view.marks.iter().find(|m| {
        matches!(m.kind, Kind::Propose | Kind::Support)
            && m.topic == Some(worst)
            && m.author
                .is_some_and(|a| a != r.me && r.board.counts(worst, a))
    })?;
    Some(Post {
        kind: Kind::Object,
        topic: None,
        target: Some(target.seq),
        cite: Some(r.proposal[best as usize]?),
    })
}

/// Rule 4: in the commit phase, commit the floor topic with most backers,
/// then best posterior.
fn commit(r: &Reading, commit_phase: bool) -> Option<Post> {
    if !commit_phase {
        return None;
    }
    let t = r.floor().max_by_key(|&t| (r.backers(t), r.posterior(t)))?;
    Some(marker(Kind::Commit, t, r))
}

/// Rules 5 and 6: back the best floor topic, or close a topic one short of
/// the threshold unless that means leaving a much better one.
fn support(r: &Reading, p: &RoomPolicy) -> Option<Post> {
    if let Some(best) = r.floor().max_by_key(|&t| r.posterior(t)) {
        if !r.counted(best) {
            return Some(marker(Kind::Support, best, r));
        }
    }
    let t = r
        .floor()
        .filter(|&t| r.backers(t) as usize + 1 == p.fold.threshold && !r.counted(t))
        .max_by_key(|&t| r.posterior(t))?;
    let held = r
        .floor()
        .filter(|&t| r.counted(t))
        .map(|t| r.posterior(t))
        .max();
    if held.is_some_and(|h| r.posterior(t) < h - 60) {
        return None;
    }
    Some(marker(Kind::Support, t, r))
}

/// `!kind #T ^proposal(T)`; only called for floor topics.
fn marker(kind: Kind, t: u8, r: &Reading) -> Post {
    Post::on(kind, t, r.proposal[t as usize].unwrap_or(0))
}

/// Rules 7 and 8: propose the favourite, or (with it on the floor) a critic
/// objects to a rival backer and anyone else offers evidence.
fn fallback(r: &Reading, view: &View) -> Post {
    let fav = r.favourite();
    let Some(cite) = r.proposal[fav as usize] else {
        // Proposals cite nothing.
        return Post {
            kind: Kind::Propose,
            topic: Some(fav),
            target: None,
            cite: None,
        };
    };
    if r.room.role(r.me as usize) == Role::Critic {
        let rival = view
            .marks
            .iter()
            .filter(|m| {
                matches!(m.kind, Kind::Propose | Kind::Support)
                    && m.author.is_some_and(|a| a != r.me)
                    && m.topic.is_some_and(|t| t != fav && r.eval(t) < r.eval(fav))
            })
            .max_by_key(|m| m.topic.map_or(0, |t| r.backers(t)));
        if let Some(m) = rival {
            return Post {
                kind: Kind::Object,
                topic: None,
                target: Some(m.seq),
                cite: Some(cite),
            };
        }
    }
    Post {
        kind: Kind::Evidence,
        topic: None,
        target: None,
        cite: Some(cite),
    }
}
