//! The episode engine (hive-rooms/1 "The episode engine"): one turn per step,
//! judged by folding the live traces, with the speaker chosen by the
//! attention market. Every message anyone reads as text (an external
//! writer's, or a recorded transcript's) is parsed back into traces, so the
//! fold only ever sees what the text says; when nobody reads the built-in
//! members' text, their traces are made directly, equal to what the text
//! would parse to (`member::Said::mark`).

use super::board::{Board, Mark};
use super::external::{self, Message, Writer};
use super::live::Live;
use super::markers::{scan, Author, Kind};
use super::market::{market, newly_addressed};
use super::member::{compose, Said, View};
use super::policy::RoomPolicy;
use super::rng::Stream;
use super::room::{Room, MAX_MEMBERS, OPTIONS};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    Converged(u8),
    Deadlocked,
    Exhausted,
    Idle,
}

impl Ending {
    pub fn name(self) -> &'static str {
        match self {
            Ending::Converged(_) => "converged",
            Ending::Deadlocked => "deadlocked",
            Ending::Exhausted => "exhausted",
            Ending::Idle => "idle",
        }
    }
}

/// One turn as the worked examples list it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Turn {
    pub speaker: usize,
    pub blind: bool,
    pub commit: bool,
    pub text: String,
    /// Every member's bid threshold before this turn.
    pub thresholds: Vec<i64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub ending: Ending,
    pub turns: u64,
    /// Filled only when asked for (`play(.., true)`).
    pub transcript: Vec<Turn>,
}

/// The operator's task: message 1, with no marker.
pub const TASK: &str = "Task: pick the option to roll out; deliberate, then commit.";
const WATERMARK: u64 = 1;

/// decay(d) in thousandths, half-life 20, in integers.
pub const fn decay(d: u64) -> u64 {
    const H: u64 = 20;
    let (w, r) = (d / H, d % H);
    let high = if w >= 63 { 0 } else { 1000u64 >> w };
    let low = high / 2;
    high - ((high - low) * r) / H
}

/// Buffers one room needs, reused from room to room so that a run of many
/// rooms allocates only while they grow.
#[derive(Default)]
pub struct Scratch {
    marks: Vec<Mark>,
    /// Each member's own traces, for its blind view.
    own: [Vec<Mark>; MAX_MEMBERS],
    /// The live fold, updated by each new message's traces.
    live: Live,
    seen: Board,
    text: String,
    cites: Vec<u64>,
    /// Every message's text, kept only for an external writer.
    messages: Vec<Message>,
}

/// Plays one room under a hive policy. `record` keeps the transcript.
pub fn play(room: &Room, p: &RoomPolicy, record: bool) -> Outcome {
    play_in(
        &mut Scratch::default(),
        room,
        p,
        record,
        &mut Writer::Builtin,
    )
}

/// Plays one room, its members' messages written by `writer`. When an
/// external writer fails, the room stops there (the caller discards it).
pub fn play_in(
    s: &mut Scratch,
    room: &Room,
    p: &RoomPolicy,
    record: bool,
    writer: &mut Writer,
) -> Outcome {
    let n = room.members;
    // Message 1 is the operator's task; it carries no trace.
    let mut last: u64 = 1;
    let Scratch {
        marks,
        own,
        live,
        seen,
        text,
        cites,
        messages,
    } = s;
    marks.clear();
    messages.clear();
    if !matches!(writer, Writer::Builtin) {
        messages.push(Message {
            seq: 1,
            author: None,
            text: TASK.to_string(),
        });
    }
    own.iter_mut().for_each(Vec::clear);
    live.clear();
    let mut prose: [Stream; MAX_MEMBERS] = std::array::from_fn(|k| room.prose(k));
    let mut threshold = [0i64; MAX_MEMBERS];
    let mut posted = 0u8;
    let everyone: u8 = ((1u16 << n) - 1) as u8;
    let mut last_own = [WATERMARK; MAX_MEMBERS];
    // Once addressed, a member stays addressed: kept as a growing set.
    let mut addressed = 0u8;
    let mut commit_phase = false;
    let mut boundary = 0;
    let mut turns = 0;
    let mut transcript = Vec::new();
    let ending = loop {
        if turns >= p.budget {
            break Ending::Exhausted;
        }
        let at = last;
        live.update(marks, at, &p.fold);
        let live = &live.board;
        // Judge.
        let carried = live.carried;
        if carried.count_ones() == 1 && commit_phase {
            let committed = marks.iter().any(|m| {
                m.kind == Kind::Commit
                    && m.topic.is_some_and(|t| carried == 1 << t)
                    && m.seq > boundary
            });
            if committed {
                break Ending::Converged(carried.trailing_zeros() as u8);
            }
        } else if carried.count_ones() >= 2 {
            let held = live
                .order
                .iter()
                .filter(|&&t| carried & (1 << t) != 0)
                .fold(0u8, |acc, &t| acc | live.counted(t));
            if held & everyone == everyone {
                break Ending::Deadlocked;
            }
        }
        let Some(speaker) = market(room, p, marks, at, live, &threshold, addressed) else {
            break Ending::Idle;
        };
        if carried.count_ones() == 1 && !commit_phase {
            commit_phase = true;
            boundary = at;
        }
        let blind = p.blind && posted & everyone != everyone;
        // A full view is every message so far, folded at the last one: the
        // live fold of this step, since every member message is live.
        let view = if blind {
            seen.fold(&own[speaker], last_own[speaker], &p.fold);
            View {
                marks: &own[speaker],
                board: seen,
            }
        } else {
            View { marks, board: live }
        };
        // The built-in member's words when its text is not needed.
        let mut direct: Option<Said> = None;
        match writer {
            Writer::Builtin => {
                let said = compose(room, p, speaker, &view, commit_phase, &mut prose[speaker]);
                if record {
                    said.write(speaker, text);
                } else {
                    direct = Some(said);
                }
            }
            Writer::External {
                episode,
                decide,
                failed,
            } => {
                let turn = external::Turn {
                    turn: turns,
                    speaker,
                    blind,
                    commit_phase,
                    // The draw the member rules make first, made here too.
                    prose: prose[speaker].below(1000),
                    messages,
                };
                match external::ask(*decide, *episode, room, p, &turn) {
                    Ok(t) => *text = t.unwrap_or_default(),
                    Err(f) => {
                        *failed = Some(f);
                        break Ending::Idle;
                    }
                }
                messages.push(Message {
                    seq: last + 1,
                    author: Some(speaker),
                    text: text.clone(),
                });
            }
        }
        last += 1;
        let first_new = marks.len();
        let author = Author::Member(speaker as u8);
        match direct {
            Some(said) => marks.extend(said.mark(room, last, speaker)),
            None => scan(text, cites, |m| {
                marks.push(Mark::new(last, author, &m, |name| topic_index(room, name)))
            }),
        }
        addressed |= newly_addressed(marks, first_new);
        if p.blind && posted & everyone != everyone {
            own[speaker].extend_from_slice(&marks[first_new..]);
        }
        last_own[speaker] = last;
        if record {
            transcript.push(Turn {
                speaker,
                blind,
                commit: commit_phase,
                text: text.clone(),
                thresholds: threshold[..n].to_vec(),
            });
        }
        posted |= 1 << speaker;
        turns += 1;
        for (k, th) in threshold[..n].iter_mut().enumerate() {
            *th += if k == speaker { 500 } else { -250 };
        }
    };
    Outcome {
        ending,
        turns,
        transcript,
    }
}

/// Members only ever name the room's options.
fn topic_index(room: &Room, name: &str) -> Option<u8> {
    OPTIONS[..room.topics]
        .iter()
        .position(|o| *o == name)
        .map(|i| i as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::hive::markers::parse;

    #[test]
    fn the_task_carries_no_trace() {
        assert!(parse(1, Author::Other, TASK).is_empty());
    }

    /// The arms of the benchmark and the grid's corners: evidential and
    /// refutation rules, sighted rounds, short windows and budgets.
    fn policies(n: usize) -> Vec<RoomPolicy> {
        use crate::hive::policy::{hive, hive_plus};
        let mut out = vec![hive(n), hive_plus(n)];
        for (cap, ev, blind, window, budget) in [
            (Some(2), false, true, 100, 15),
            (Some(2), true, true, 100, 20),
            (Some(3), true, false, 4, 10),
            (None, true, false, 2, 20),
        ] {
            let mut p = hive_plus(n);
            p.fold.refutation_cap = cap;
            p.fold.require_evidential = ev;
            p.blind = blind;
            p.fold.window = window;
            p.budget = budget;
            out.push(p);
        }
        out
    }

    #[test]
    fn direct_traces_equal_the_parsed_text() {
        let (mut texts, mut direct) = (Scratch::default(), Scratch::default());
        for (n, topics) in [(5, 4), (2, 2), (8, 8), (3, 6)] {
            for p in policies(n) {
                for i in 0..150 {
                    let room = Room::new(7, i, n, topics, 90);
                    let w = &mut Writer::Builtin;
                    let read = play_in(&mut texts, &room, &p, true, w);
                    let made = play_in(&mut direct, &room, &p, false, w);
                    assert_eq!((read.ending, read.turns), (made.ending, made.turns));
                    assert_eq!(texts.marks, direct.marks, "room {i} of {n} members");
                }
            }
        }
    }

    #[test]
    fn decay_check_values() {
        let got: Vec<u64> = [0, 1, 10, 20, 30, 60, 70].map(decay).to_vec();
        assert_eq!(got, vec![1000, 975, 750, 500, 375, 125, 94]);
        assert_eq!(decay(63 * 20), 0);
    }
}
