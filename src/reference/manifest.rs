//! The manifest's keys, table by table, as one list the reference page is
//! generated from. The parser's raw shapes stay the authority: a test asks
//! the parser which keys each table accepts and compares them with this
//! list, so a key cannot be added or removed without the page following.

/// One key of one manifest table.
pub struct Key {
    pub key: &'static str,
    pub kind: &'static str,
    /// `None` when the key is required.
    pub default: Option<&'static str>,
    pub meaning: &'static str,
}

/// A table of the manifest and its keys, in the order the page lists them.
pub struct Section {
    /// As written in TOML: `[experiment]`, `[[arm]]`, `external = { ... }`.
    pub header: &'static str,
    pub about: &'static str,
    /// Empty for the open tables whose keys are the model's parameters.
    pub keys: &'static [Key],
}

const fn key(
    key: &'static str,
    kind: &'static str,
    default: Option<&'static str>,
    meaning: &'static str,
) -> Key {
    Key {
        key,
        kind,
        default,
        meaning,
    }
}

pub const SECTIONS: &[Section] = &[
    Section {
        header: "[experiment]",
        about: "What the experiment is and which model runs it. Required.",
        keys: &[
            key("name", "string", None, "the experiment's name; `witness run` writes to `results/<name>/` unless `--out` says otherwise"),
            key("model", "string", None, "the model: `witness`, `hive`, `trust-sim` or `harness` (`witness describe` lists them and their aliases)"),
            key("description", "string", Some("\"\""), "free text, kept in the results folder's copy of the manifest"),
            key("chunk_runs", "integer 1 ..= 1000000", Some(CHUNK_RUNS), "runs per chunk: the unit of parallel work, of resuming and of sharding"),
        ],
    },
    Section {
        header: "[fixed]",
        about: "Parameter = value for every run. Keys are the model's parameters (see models.md); a parameter is set in one place only.",
        keys: &[],
    },
    Section {
        header: "[grid]",
        about: "Parameter = list of values, or a range `{ from = A, to = B }` with optional `step = S` or `count = N`. Axes expand in the order written; the last varies fastest.",
        keys: &[],
    },
    Section {
        header: "[[arm]]",
        about: "One policy to compare; repeat the table for each arm. Without arms, the grid runs once under the model's defaults.",
        keys: &[
            key("name", "string", None, "the arm's name in every table and verdict; `:` is reserved for generated arms, and `[ ] = , ;` for variant labels and `--where`"),
            key("policy", "string", Some("the model's default"), "the cascade's belief-update policy (the model's arm parameter)"),
            key("member", "string", Some("the model's default"), "the hive's arm parameter: who writes a member's messages"),
            key("external", "inline table", Some("none"), "a program that decides for this arm (witness-policy/1); keys below"),
            key("fixed", "table", Some("{}"), "parameters set for this arm only"),
            key("grid", "table", Some("{}"), "axes this arm alone expands"),
            key("placebo", "bool", Some("false"), "also run `<name>:placebo`, the same runs under replicate = 1, to measure chance differences"),
        ],
    },
    Section {
        header: "external = { ... }",
        about: "Inside an `[[arm]]`: the process that answers the arm's decisions.",
        keys: &[
            key("command", "list of strings", None, "the program and its arguments (never a shell line), run in the manifest's folder; may be left out only with replay = \"require\""),
            key("jobs", "integer 1 ..= 64", Some("1"), "processes started for the arm, shared by every thread"),
            key("timeout_s", "number", Some("60"), "seconds a batch may take"),
            key("retries", "integer", Some("2"), "further attempts per decision after a failed one"),
            key("fallback", "string", Some("\"fail_run\""), "after the last attempt: fail the run, or take the decision point's named safe action"),
            key("replay", "string", Some("off"), "\"require\": start no process, take every answer from the record log"),
            key("max_batch", "integer", Some(MAX_BATCH), "the most decisions sent in one message"),
            key("breaker", "integer 0 ..= 1000000", Some(BREAKER), "exchanges in a row without a usable answer after which the run stops asking the policy and stops (exit 2; rerun to resume); 0: never"),
        ],
    },
    Section {
        header: "[output]",
        about: "Table name = true or false: which detail tables to write besides `runs`. Keys are the model's tables (see models.md) and `policy_calls` (the external arms' decisions, one row each).",
        keys: &[],
    },
    Section {
        header: "[design]",
        about: "Points other than the full grid. Each kind takes only its own keys.",
        keys: &[
            key("kind", "string", Some("\"grid\""), "\"grid\", \"list\", \"lhs\", \"sobol\" or \"morris\""),
            key("samples", "integer", None, "lhs: the number of points"),
            key("seed", "integer", Some("1"), "lhs and morris: the design's own seed"),
            key("base", "integer, a power of two", None, "sobol: base samples N; Saltelli's scheme runs N (k + 2) points, N (2k + 2) with second order. N must be large enough that every factor differs between the A and B samples (8 for 2 factors, 16 for 5, at most 64); a smaller N is refused with the smallest that works"),
            key("second_order", "bool", Some("true"), "sobol: also the points second-order indices need"),
            key("trajectories", "integer", None, "morris: the number of trajectories r"),
            key("levels", "integer", None, "morris: the grid levels p"),
            key("points", "list of tables", None, "list: the points, each parameter = value"),
            key("file", "string", None, "list: a CSV of points, one column per parameter, relative to the manifest"),
            key("factors", "table", None, "lhs, sobol, morris: parameter = { from = A, to = B } for each factor"),
        ],
    },
    Section {
        header: "[search]",
        about: "Race the arms' candidates over a `[grid]` axis, running only survivors on more of it.",
        keys: &[
            key("method", "string", None, "\"race\" (paired t-tests against the best, Holm-adjusted) or \"halving\" (keep the best 1/eta)"),
            key("metric", "string", None, "a numeric summary column every run has"),
            key("maximize", "bool", None, "whether larger values of the metric are better"),
            key("resource", "string", None, "the `[grid]` axis whose values are handed out rung by rung (usually `seed`)"),
            key("first", "integer", Some("2"), "values of the resource in the first rung"),
            key("eta", "integer", Some("3"), "growth of the resource per rung (and halving's cut)"),
            key("max", "integer", Some("the whole axis"), "values of the resource at most"),
            key("alpha", "number", Some("0.05"), "race: the level of its tests"),
            key("keep_at_least", "integer", Some("1"), "never fewer survivors than this"),
        ],
    },
];

// The numeric defaults as shown; the test below holds them to the code's
// constants, so a new default there cannot leave the page stale.
const CHUNK_RUNS: &str = "32";
const MAX_BATCH: &str = "1024";
const BREAKER: &str = "10";

/// The manifest reference as Markdown.
pub fn markdown() -> String {
    let mut s = String::from(
        "# Manifest reference\n\nGenerated by `witness generate reference`; a test keeps this file equal to its output and its keys equal to what the parser accepts.\n\nA manifest is a TOML file. Unknown keys are refused with the list of those allowed. Parameter names, their kinds, ranges and defaults are in [models.md](models.md).\n",
    );
    for sec in SECTIONS {
        s += &format!("\n## `{}`\n\n{}\n", sec.header, sec.about);
        if sec.keys.is_empty() {
            continue;
        }
        s += "\n| key | kind | default | meaning |\n|---|---|---|---|\n";
        for k in sec.keys {
            let default = k.default.unwrap_or("(required)");
            s += &format!(
                "| `{}` | {} | {} | {} |\n",
                k.key, k.kind, default, k.meaning
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::DEFAULT_CHUNK_RUNS;
    use crate::model::Registry;
    use crate::policy::spec::DEFAULT_MAX_BATCH;

    /// The keys the parser lists when it meets an unknown one.
    fn accepted(manifest: &str) -> Vec<String> {
        let err = crate::manifest::Manifest::parse("m.toml", manifest, &Registry::builtin())
            .map(|_| ())
            .unwrap_err()
            .to_string();
        let list = err
            .split("expected one of ")
            .nth(1)
            .or_else(|| err.split("expected ").nth(1))
            .unwrap_or_else(|| panic!("no key list in: {err}"));
        let list = list.split(" (see").next().unwrap();
        list.split(", ")
            .map(|k| k.trim().trim_matches('`').to_string())
            .filter(|k| !k.is_empty())
            .collect()
    }

    fn listed(header: &str) -> Vec<String> {
        let sec = SECTIONS.iter().find(|s| s.header == header).unwrap();
        sec.keys.iter().map(|k| k.key.to_string()).collect()
    }

    const EXP: &str = "[experiment]\nname = \"x\"\nmodel = \"witness\"\n";

    #[test]
    fn every_table_lists_exactly_the_keys_the_parser_accepts() {
        let cases = [
            ("[experiment]", "[experiment]\nname = \"x\"\nmodel = \"witness\"\nbogus = 1\n".to_string()),
            ("[[arm]]", format!("{EXP}[[arm]]\nname = \"a\"\nbogus = 1\n")),
            ("external = { ... }", format!("{EXP}[[arm]]\nname = \"a\"\npolicy = \"external\"\nexternal = {{ bogus = 1 }}\n")),
            ("[design]", format!("{EXP}[design]\nbogus = 1\n")),
            ("[search]", format!("{EXP}[search]\nbogus = 1\n")),
        ];
        for (header, text) in cases {
            let mut want = accepted(&text);
            let mut have = listed(header);
            want.sort();
            have.sort();
            assert_eq!(
                have, want,
                "{header}: the reference's keys differ from the parser's"
            );
        }
    }

    #[test]
    fn the_shown_defaults_are_the_codes() {
        assert_eq!(CHUNK_RUNS, DEFAULT_CHUNK_RUNS.to_string());
        assert_eq!(MAX_BATCH, DEFAULT_MAX_BATCH.to_string());
        assert_eq!(BREAKER, crate::policy::spec::DEFAULT_BREAKER.to_string());
    }
}
