//! Marker lines (hive-rooms/1 "Markers and traces"): `!<kind> [#topic] [>target]
//! [^cite ...] text` at the start of a line, outside ``` or ~~~ fences,
//! at most 16 traces per message.

pub const MAX_TRACES: usize = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Propose,
    Support,
    Object,
    Refute,
    Evidence,
    Question,
    Commit,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::Propose,
        Kind::Support,
        Kind::Object,
        Kind::Refute,
        Kind::Evidence,
        Kind::Question,
        Kind::Commit,
    ];

    /// The word after the `!`, as `parse` reads it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Propose => "propose",
            Kind::Support => "support",
            Kind::Object => "object",
            Kind::Refute => "refute",
            Kind::Evidence => "evidence",
            Kind::Question => "question",
            Kind::Commit => "commit",
        }
    }

    /// The kind a marker's word names (`name`'s inverse).
    fn parse(word: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == word)
    }

    /// In thousandths.
    pub const fn importance(self) -> u64 {
        match self {
            Kind::Commit => 1000,
            Kind::Propose => 900,
            Kind::Refute => 850,
            Kind::Object => 800,
            Kind::Evidence => 600,
            Kind::Support => 500,
            Kind::Question => 300,
        }
    }
}

/// Who wrote a message: a room member (by member index) or someone else,
/// such as the operator who posts the task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Author {
    Member(u8),
    Other,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    pub sequence: u64,
    pub author: Author,
    pub kind: Kind,
    pub topic: Option<String>,
    pub target: Option<u64>,
    pub cites: Vec<u64>,
    /// Byte offset of the `!` in the message; with `sequence`, the identity.
    pub offset: usize,
}

impl Trace {
    pub fn identity(&self) -> (u64, usize) {
        (self.sequence, self.offset)
    }

    pub fn grounded(&self) -> bool {
        !self.cites.is_empty()
    }

    pub fn agent_author(&self) -> Option<u8> {
        match self.author {
            Author::Member(m) => Some(m),
            Author::Other => None,
        }
    }
}

fn fence_of(trimmed: &str) -> Option<&'static str> {
    ["```", "~~~"].into_iter().find(|f| trimmed.starts_with(f))
}

/// One marker line as written: fields borrowed from the message text.
#[derive(Clone, Copy, Debug)]
pub struct Marker<'a> {
    pub kind: Kind,
    pub topic: Option<&'a str>,
    pub target: Option<u64>,
    /// Deduplicated, in written order.
    pub cites: &'a [u64],
    /// Byte offset of the `!`.
    pub offset: usize,
}

/// Calls `each` for the first 16 markers of `text`, in offset order,
/// without allocating once `cites` has grown to the longest citation list.
pub fn scan<'a>(text: &'a str, cites: &mut Vec<u64>, mut each: impl FnMut(Marker<'_>)) {
    let mut found = 0;
    let mut fence: Option<&str> = None;
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let start = line_start;
        line_start += line.len();
        let trimmed = line.trim_start();
        if let Some(open) = fence {
            if trimmed.starts_with(open) {
                fence = None;
            }
            continue;
        }
        if let Some(f) = fence_of(trimmed) {
            fence = Some(f);
            continue;
        }
        let Some(body) = trimmed.strip_prefix('!') else {
            continue;
        };
        let offset = start + (line.len() - trimmed.len());
        let mut words = body.split_whitespace();
        let Some(kind) = words.next().and_then(Kind::parse) else {
            continue;
        };
        let (mut topic, mut target): (Option<&'a str>, Option<u64>) = (None, None);
        cites.clear();
        for w in words {
            if let Some(t) = w.strip_prefix('#') {
                if topic.is_none() && !t.is_empty() {
                    topic = Some(t);
                }
            } else if let Some(n) = w.strip_prefix('>') {
                if target.is_none() {
                    target = n.parse::<u64>().ok();
                }
            } else if let Some(n) = w.strip_prefix('^') {
                if let Ok(c) = n.parse::<u64>() {
                    if !cites.contains(&c) {
                        cites.push(c);
                    }
                }
            }
        }
        if kind == Kind::Refute && (topic.is_none() || cites.is_empty()) {
            continue;
        }
        each(Marker {
            kind,
            topic,
            target,
            cites,
            offset,
        });
        found += 1;
        if found == MAX_TRACES {
            break;
        }
    }
}

/// The traces of message `sequence` by `author`, in offset order.
pub fn parse(sequence: u64, author: Author, text: &str) -> Vec<Trace> {
    let mut out = Vec::new();
    scan(text, &mut Vec::new(), |m| {
        out.push(Trace {
            sequence,
            author,
            kind: m.kind,
            topic: m.topic.map(str::to_string),
            target: m.target,
            cites: m.cites.to_vec(),
            offset: m.offset,
        })
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Vec<Trace> {
        parse(7, Author::Member(1), text)
    }

    #[test]
    fn every_kind_name_parses_back() {
        for k in Kind::ALL {
            assert_eq!(Kind::parse(k.name()), Some(k));
        }
    }

    #[test]
    fn fields_are_parsed_and_the_offset_is_the_bang() {
        let t = one("prose first\n  !support #ship >3 ^2 ^5 ^2 because #later >9 ^x");
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].kind, Kind::Support);
        assert_eq!(t[0].topic.as_deref(), Some("ship"));
        assert_eq!(t[0].target, Some(3));
        assert_eq!(
            t[0].cites,
            vec![2, 5],
            "repeated citations count once, in written order"
        );
        assert_eq!(t[0].offset, "prose first\n  ".len());
    }

    #[test]
    fn markers_inside_fences_and_mid_line_do_not_count() {
        let text =
            "```\n!propose #a\n```\n~~~ rust\n!propose #b\n~~~\nsee !propose #c\n!propose #d";
        let t = one(text);
        assert_eq!(
            t.iter()
                .map(|x| x.topic.clone().unwrap())
                .collect::<Vec<_>>(),
            vec!["d"]
        );
        let unclosed = one("```\n!propose #a\n!propose #b");
        assert!(unclosed.is_empty(), "an unclosed fence runs to the end");
        let mixed = one("```\n~~~\n!propose #a\n```\n!propose #b");
        assert_eq!(mixed.len(), 1, "only the same kind of fence closes");
    }

    #[test]
    fn unicode_text_keeps_byte_offsets() {
        let text = "héllo ✓\n!propose #café ^1";
        let t = one(text);
        assert_eq!(t[0].topic.as_deref(), Some("café"));
        assert_eq!(&text[t[0].offset..t[0].offset + 1], "!");
    }

    #[test]
    fn unknown_kinds_and_bare_refutes_give_nothing_and_16_is_the_limit() {
        assert!(one("!shout #a\n!refute #a\n!refute ^3").is_empty());
        let many: String = (0..20).map(|i| format!("!support #t{i} ^1\n")).collect();
        let t = one(&many);
        assert_eq!(t.len(), MAX_TRACES);
        assert_eq!(t[15].topic.as_deref(), Some("t15"));
    }

    use proptest::prelude::*;

    /// A message piece: a marker line (topic, citations with repeats), a
    /// fenced block hiding marker lines, or unicode prose.
    #[derive(Clone, Debug)]
    enum Piece {
        Marker(usize, Vec<u64>),
        Fenced(bool, usize),
        Prose(String),
    }

    fn piece() -> impl Strategy<Value = Piece> {
        prop_oneof![
            (0usize..4, prop::collection::vec(1u64..5, 0..4))
                .prop_map(|(t, c)| Piece::Marker(t, c)),
            (any::<bool>(), 1usize..4).prop_map(|(tilde, n)| Piece::Fenced(tilde, n)),
            "[a-zé✓ ]{0,12}".prop_map(Piece::Prose),
        ]
    }

    const TOPICS: [&str; 4] = ["ship", "café", "日本", "x"];

    proptest! {
        #[test]
        fn markers_outside_fences_are_found_in_order_up_to_16(pieces in prop::collection::vec(piece(), 0..30)) {
            let mut text = String::new();
            let mut want: Vec<(String, Vec<u64>)> = Vec::new();
            for p in &pieces {
                match p {
                    Piece::Marker(t, cites) => {
                        let c: String = cites.iter().map(|c| format!(" ^{c}")).collect();
                        text += &format!("  !support #{}{c} ✓ done\n", TOPICS[*t]);
                        let mut dedup = Vec::new();
                        for c in cites {
                            if !dedup.contains(c) {
                                dedup.push(*c);
                            }
                        }
                        want.push((TOPICS[*t].to_string(), dedup));
                    }
                    Piece::Fenced(tilde, n) => {
                        let f = if *tilde { "~~~" } else { "```" };
                        text += &format!("{f} text\n");
                        for _ in 0..*n {
                            text += "!propose #hidden ^1\n";
                        }
                        text += &format!("{f}\n");
                    }
                    Piece::Prose(s) => text += &format!("{s}\n"),
                }
            }
            want.truncate(MAX_TRACES);
            let got = parse(3, Author::Member(0), &text);
            let got_fields: Vec<(String, Vec<u64>)> =
                got.iter().map(|t| (t.topic.clone().unwrap(), t.cites.clone())).collect();
            prop_assert_eq!(got_fields, want);
            for t in &got {
                prop_assert_eq!(&text[t.offset..t.offset + 8], "!support");
            }
        }
    }
}
