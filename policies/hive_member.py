#!/usr/bin/env python3
"""The hive's built-in member rules as an external policy for `hive.turn`.

A loopback: run with `member = "external"` it must reproduce, byte for
byte, what the built-in rules (src/hive/member.rs) post, so a hive arm
gives the same rooms either way. The member only gets the messages it is
allowed to see, so this script re-derives its view the way the engine
does: parse every visible message into traces, fold them at the last
visible message, then apply the eight rules in order.

Standard library only. JSON Lines on stdin/stdout (witness-policy/1);
anything meant for a human goes to stderr.
"""

import hashlib
import json
import re
import sys

# Member names in member-index order; the operator is no member.
MEMBERS = ["planner", "critic", "archivist", "scout",
           "auditor", "historian", "builder", "reviewer"]
MAX_MEMBERS = 8
MAX_TRACES = 16
KINDS = ("propose", "support", "object", "refute", "evidence", "question", "commit")

# Rust's trim_start / split_whitespace use the Unicode White_Space property,
# which is not quite Python's str.isspace (that one also takes \x1c..\x1f).
WHITE = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
         "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
WORDS = re.compile("[^" + re.escape(WHITE) + "]+")
# What Rust's `str::parse::<u64>` accepts: an optional plus, ASCII digits.
UNSIGNED = re.compile(r"\+?[0-9]+")


def identity():
    with open(__file__, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return {"name": "hive-member-py", "version": "1", "digest": digest}


# ---------------------------------------------------------------- markers

def parse_u64(s):
    if UNSIGNED.fullmatch(s) is None:
        return None
    n = int(s)
    return n if n < 1 << 64 else None


class Mark:
    """One trace, with its topic already turned into an option index (or
    None when the name is not one of the room's options)."""
    __slots__ = ("seq", "author", "kind", "topic", "target", "cites")

    def __init__(self, seq, author, kind, topic, target, cites):
        self.seq, self.author, self.kind = seq, author, kind
        self.topic, self.target, self.cites = topic, target, cites


def scan(seq, author, text, topic_index):
    """The traces of one message, in the order their lines appear. Only a
    line starting (after blanks) with `!kind` outside a fenced block
    counts, and only the first 16 such lines."""
    out = []
    fence = None
    for line in text.split("\n"):
        trimmed = line.lstrip(WHITE)
        if fence is not None:
            # Inside a block only the same kind of fence closes it.
            if trimmed.startswith(fence):
                fence = None
            continue
        opened = next((f for f in ("```", "~~~") if trimmed.startswith(f)), None)
        if opened is not None:
            fence = opened
            continue
        if not trimmed.startswith("!"):
            continue
        words = WORDS.findall(trimmed[1:])
        if not words or words[0] not in KINDS:
            continue
        kind = words[0]
        topic, target, cites = None, None, []
        for w in words[1:]:
            if w.startswith("#"):
                if topic is None and len(w) > 1:
                    topic = w[1:]
            elif w.startswith(">"):
                if target is None:
                    target = parse_u64(w[1:])
            elif w.startswith("^"):
                c = parse_u64(w[1:])
                if c is not None and c not in cites:
                    cites.append(c)
        # A refutation needs both what it refutes and why.
        if kind == "refute" and (topic is None or not cites):
            continue
        out.append(Mark(seq, author, kind, topic_index(topic), target, cites))
        if len(out) == MAX_TRACES:
            break
    return out


# ---------------------------------------------------------------- the fold

class Board:
    """Standings of one fold: per topic, member bitmasks (bit k = member k)."""

    def __init__(self):
        self.order = []        # advocated topics, first advocacy first
        self.supporters = {}   # topic -> mask
        self.silenced = {}
        self.refuted_by = {}

    def counted(self, t):
        return self.supporters.get(t, 0) & ~self.silenced.get(t, 0)

    def backers(self, t):
        return bin(self.counted(t)).count("1")

    def counts(self, t, member):
        return self.counted(t) >> member & 1 == 1


def reaches_evidence(mark, kept):
    """Whether following citations (through kept traces only) from `mark`
    ever lands on an evidence trace; visited sequences end cycles."""
    by_seq = {}
    for k in kept:
        by_seq.setdefault(k.seq, []).append(k)
    stack, visited = list(mark.cites), set()
    while stack:
        seq = stack.pop()
        if seq in visited:
            continue
        visited.add(seq)
        for k in by_seq.get(seq, ()):
            if k.kind == "evidence":
                return True
            stack.extend(k.cites)
    return False


def fold(marks, at, rules):
    """The standings of `marks` (already in sequence order) at `at`."""
    lo = max(at - rules["window"], 0)
    kept = [m for m in marks if lo <= m.seq <= at]
    evidential = rules["require_evidential"]
    grounded_required = rules["require_grounded"] or evidential
    board = Board()
    evidenced = 0
    refuters = {}
    for m in kept:
        if m.author is None:
            continue
        if m.kind == "evidence":
            evidenced |= 1 << m.author
        elif m.kind == "refute" and m.topic is not None and m.cites:
            refuters[m.topic] = refuters.get(m.topic, 0) | 1 << m.author
    # Support: proposals always count, supports only with the grounds the
    # rules ask for; a member who refutes a topic cannot also back it.
    counted_marks = []
    for m in kept:
        t, a = m.topic, m.author
        if t is None or a is None:
            continue
        if m.kind == "propose":
            admitted = True
        elif m.kind == "support":
            admitted = ((not grounded_required or bool(m.cites))
                        and (not evidential or reaches_evidence(m, kept)))
        else:
            admitted = False
        if not admitted or refuters.get(t, 0) >> a & 1:
            continue
        if t not in board.supporters:
            board.order.append(t)
            board.supporters[t] = 0
        board.supporters[t] |= 1 << a
        counted_marks.append(m)
    # Objections silence whoever advocated at the targeted sequence (except
    # the objector), on that topic, for the whole window.
    for m in kept:
        if m.kind != "object":
            continue
        if grounded_required and not m.cites:
            continue
        if evidential and (m.author is None or not evidenced >> m.author & 1):
            continue
        if m.target is None:
            continue
        for adv in counted_marks:
            if adv.seq == m.target and adv.author != m.author:
                board.silenced[adv.topic] = board.silenced.get(adv.topic, 0) | 1 << adv.author
    # Refutations are recorded only on topics that have a standing.
    for m in kept:
        if (m.kind == "refute" and m.author is not None and m.topic is not None
                and m.cites and m.topic in board.supporters):
            board.refuted_by[m.topic] = board.refuted_by.get(m.topic, 0) | 1 << m.author
    return board


# ---------------------------------------------------------------- the view

def last_max(items, key):
    """Like Rust's max_by_key: the last of equal maxima, None if empty."""
    best, best_key = None, None
    for x in items:
        k = key(x)
        if best_key is None or k >= best_key:
            best, best_key = x, k
    return best


class Reading:
    """What the speaker knows: its evaluations, every trace it is shown
    (unwindowed, for proposals and targets) and the fold of them."""

    def __init__(self, obs):
        topics = obs["topics"]
        index = {name: i for i, name in enumerate(topics)}
        authors = {name: i for i, name in enumerate(MEMBERS)}
        self.me = obs["member"]
        self.role = obs["role"]
        self.rules = obs["rules"]
        self.topics = topics
        self.evaluation = obs["evaluations"]
        self.fav = index[obs["favourite"]]
        self.marks = []
        visible = obs["visible"]
        for msg in visible:
            self.marks.extend(scan(msg["seq"], authors.get(msg["author"]),
                                   msg["text"], index.get))
        at = visible[-1]["seq"] if visible else 1
        self.board = fold(self.marks, at, self.rules)
        # The first proposal of each topic, whoever made it, in or out of
        # the window; the floor lists the proposed topics in that order.
        self.proposal = {}
        for m in self.marks:
            if m.kind == "propose" and m.topic is not None and m.topic not in self.proposal:
                self.proposal[m.topic] = m.seq
        self.floor = list(self.proposal)

    def eval(self, t):
        return self.evaluation[t]

    def counted(self, t):
        return self.board.counts(t, self.me)

    def backers(self, t):
        return self.board.backers(t)

    def posterior(self, t):
        # Own evaluation nudged up by every other counted backer.
        others = self.backers(t) - int(self.counted(t))
        return self.eval(t) + 25 * others


def post(kind, name, cite, topic=None, target=None, topics=None):
    """A marker line exactly as member.rs writes it."""
    out = "!" + kind
    if topic is not None:
        out += " #" + topics[topic]
    if target is not None:
        out += " >%d" % target
    return out + " ^%d \u2014 %s" % (cite, name)


def on_topic(r, kind, t, name):
    return post(kind, name, r.proposal.get(t, 0), topic=t, topics=r.topics)


# ---------------------------------------------------------------- rules 2-8

def refute(r, name):
    """Rule 2 (only with a refutation cap of at most 8): refute the most
    backed rival rated more than 60 below the favourite."""
    cap = r.rules["refutation_cap"]
    if cap is None or cap > MAX_MEMBERS:
        return None
    fav = r.fav
    rivals = [t for t in r.board.order
              if t != fav and not r.board.refuted_by.get(t, 0) >> r.me & 1
              and r.eval(fav) - r.eval(t) > 60]
    t = last_max(rivals, r.backers)
    if t is None:
        return None
    # Grounds: own first evidence if any, else the rival's own proposal.
    own_evidence = next((m.seq for m in r.marks
                         if m.kind == "evidence" and m.author == r.me), None)
    grounds = own_evidence if own_evidence is not None else r.proposal.get(t)
    if grounds is None:
        return None
    return post("refute", name, grounds, topic=t, topics=r.topics)


def object_in_tie(r, name):
    """Rule 3: with two or more topics at the threshold, silence a backer
    of the one it rates lowest, citing the proposal of the one it rates best."""
    contenders = [t for t in r.board.order if r.backers(t) >= r.rules["threshold"]]
    # sorted() is stable, so equal posteriors keep standings order.
    contenders = sorted(contenders, key=lambda t: -r.posterior(t))
    if len(contenders) < 2:
        return None
    best, worst = contenders[0], contenders[-1]
    if r.posterior(worst) >= r.posterior(best):
        return None
    target = next((m for m in r.marks
                   if m.kind in ("propose", "support") and m.topic == worst
                   and m.author is not None and m.author != r.me
                   and r.board.counts(worst, m.author)), None)
    if target is None or best not in r.proposal:
        return None
    return post("object", name, r.proposal[best], target=target.seq)


def commit(r, commit_phase, name):
    """Rule 4: in the commit phase, commit the most backed floor topic."""
    if not commit_phase:
        return None
    t = last_max(r.floor, lambda t: (r.backers(t), r.posterior(t)))
    return None if t is None else on_topic(r, "commit", t, name)


def support(r, name):
    """Rules 5 and 6: back the best floor topic if not already counted for
    it; else help a topic one backer short, unless far worse than one held."""
    best = last_max(r.floor, r.posterior)
    if best is not None and not r.counted(best):
        return on_topic(r, "support", best, name)
    short = [t for t in r.floor
             if r.backers(t) + 1 == r.rules["threshold"] and not r.counted(t)]
    t = last_max(short, r.posterior)
    if t is None:
        return None
    held = [r.posterior(h) for h in r.floor if r.counted(h)]
    if held and r.posterior(t) < max(held) - 60:
        return None
    return on_topic(r, "support", t, name)


def fallback(r, name):
    """Rules 7 and 8: propose the favourite if nobody has; otherwise a
    critic objects to the most backed rival advocacy, others give evidence."""
    fav = r.fav
    cite = r.proposal.get(fav)
    if cite is None:
        return "!propose #%s \u2014 %s" % (r.topics[fav], name)
    if r.role == "critic":
        rivals = [m for m in r.marks
                  if m.kind in ("propose", "support")
                  and m.author is not None and m.author != r.me
                  and m.topic is not None and m.topic != fav
                  and r.eval(m.topic) < r.eval(fav)]
        m = last_max(rivals, lambda m: r.backers(m.topic))
        if m is not None:
            return post("object", name, cite, target=m.seq)
    return post("evidence", name, cite)


def compose(obs):
    name = obs["name"]
    # Rule 1: the engine has already made the prose draw for us.
    if obs["draws"]["prose"] < 60:
        return name + ": reading the thread again before saying more."
    r = Reading(obs)
    for rule in (lambda: refute(r, name), lambda: object_in_tie(r, name),
                 lambda: commit(r, obs["commit_phase"], name), lambda: support(r, name)):
        text = rule()
        if text is not None:
            return text
    return fallback(r, name)


# ---------------------------------------------------------------- protocol

def main():
    # Bytes in, so the locale's encoding never gets a say: the runner
    # speaks UTF-8.
    out = sys.stdout
    for raw in sys.stdin.buffer:
        line = raw.decode("utf-8")
        if not line.strip():
            continue
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "hello":
            reply = {"type": "ready", "protocol": msg["protocol"], "policy": identity()}
        elif kind == "decide":
            items = [{"key": it["key"], "action": "post", "text": compose(it["obs"])}
                     for it in msg["items"]]
            reply = {"type": "decisions", "batch": msg["batch"], "items": items}
        elif kind == "bye":
            return
        else:
            print("hive_member.py: unknown message %r" % kind, file=sys.stderr)
            continue
        out.write(json.dumps(reply, separators=(",", ":")) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
