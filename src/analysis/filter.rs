//! Which runs an analysis looks at (`--where`, and the settings of
//! `--scenario`): `key=value` pairs checked against the model's
//! parameters and the manifest's arms. A filter that names no arm of the
//! manifest, or keeps no run, is refused with the values there are, rather
//! than giving empty tables.

use crate::grid::Plan;
use crate::params::{lookup, ParamError, ParamId, ParamSet, Value};

/// At most this many values per parameter in a "keeps nothing" message.
const SHOWN: usize = 12;

/// The CSV tables written under a name that says which runs they hold.
const NAMED_BY_FILTER: &[&str] = &["summary", "rank"];

/// The file `table` (`summary`, `rank`) is written to: `summary.csv` for
/// every run, and for the runs of a `--where` a file of its own
/// (`summary-where-graph-hub.csv`), so a look at some runs neither
/// replaces nor passes for the table of all of them.
pub fn output_name(table: &str, filter: Option<&str>) -> String {
    debug_assert!(NAMED_BY_FILTER.contains(&table));
    match filter {
        Some(f) => format!("{table}-where-{}.csv", file_slug(f)),
        None => format!("{table}.csv"),
    }
}

/// Longest filter spelled out in a file name: names stay well inside the
/// 255 bytes a file system allows, beside the table's or figure's stem.
const SLUG_CHARS: usize = 80;

/// A filter as file names spell it. Its pairs, trimmed, are written out
/// as `key-value` joined by `-` (`graph=hub, truth=false` gives
/// `graph-hub-truth-false`) when that can be read back: every key and
/// value of letters, digits, `.` and `_`, and at most 80 characters.
/// Any other filter (`arm=hive+`, a variant label, a long list) is
/// spelled as near as it can be and followed by 8 hex digits of the
/// SHA-256 of its pairs, so two filters that keep different runs never
/// share a file (`arm=hive` and `arm=hive+` did), while spacing alone
/// does not make a new one.
pub fn file_slug(filter: &str) -> String {
    let pairs: Vec<(&str, &str)> = parts(filter)
        .into_iter()
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (k.trim(), v.trim())
        })
        .collect();
    let plain = |t: &str| {
        !t.is_empty()
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_')
    };
    let spelled: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}-{v}")).collect();
    let spelled = spelled.join("-");
    if pairs.iter().all(|(k, v)| plain(k) && plain(v)) && spelled.len() <= SLUG_CHARS {
        return spelled;
    }
    let whole: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let hash = crate::manifest::sha256_hex_prefix(whole.join(",").as_bytes(), 8);
    let near = super::plot::slug(&spelled);
    let near = near[..near.len().min(SLUG_CHARS)].trim_end_matches('-');
    format!("{near}-{hash}")
}

/// Whether `name` is a table `output_name` gives to the runs of a filter.
pub fn is_filtered_output(name: &str) -> bool {
    name.ends_with(".csv")
        && NAMED_BY_FILTER.iter().any(|t| {
            name.strip_prefix(t)
                .is_some_and(|r| r.starts_with("-where-"))
        })
}

/// Which runs an analysis looks at: `--where graph=hub,truth=false` keeps
/// the runs with every one of those values (matched as values, so
/// `gain=9` is `gain=9.0`). A key given more than once keeps any of its
/// values (`graph=hub,graph=ring`), as `arm=NAME` does for arms.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filter {
    settings: Vec<(ParamId, Value)>,
    arms: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FilterError {
    #[error("{flag} {text:?}: `{part}` is not key=value; write e.g. \"graph=hub, truth=false\"")]
    Malformed {
        flag: String,
        text: String,
        part: String,
    },
    #[error("{flag} {text:?}: {source}")]
    Param {
        flag: String,
        text: String,
        source: Box<ParamError>,
    },
    #[error("--scenario {0:?}: no such scenario; scenarios: {1}")]
    NoScenario(String, String),
    #[error("--where {0:?}: names no run; write e.g. \"graph=hub, truth=false\", or leave --where out for every run")]
    Empty(String),
    #[error("--where {text:?}: arm= takes an arm's name; for one variant of it, write --where \"{rewrite}\"")]
    Label { text: String, rewrite: String },
    #[error("--where {text:?}: no arm `{arm}` here; arms: {arms}")]
    NoArm {
        text: String,
        arm: String,
        arms: String,
    },
    #[error("--where {text:?}: no run has {setting}; values here: {here}")]
    NoValue {
        text: String,
        setting: String,
        here: String,
    },
    #[error("--where {text:?}: keeps none of the {runs} runs; values here: {here}")]
    KeepsNothing {
        text: String,
        runs: u64,
        here: String,
    },
}

/// Parameter settings, and arm names.
type Pairs = (Vec<(ParamId, Value)>, Vec<String>);

/// `text` split at commas and semicolons outside brackets, so that an arm
/// variant's label (`quorum[threshold=1, count=senders]`) stays whole.
fn parts(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' | ';' if depth <= 0 => {
                out.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(text[start..].trim());
    out
}

/// `key=value` pairs separated by commas (or semicolons), each value
/// checked against its parameter.
pub(super) fn pairs(plan: &Plan, flag: &str, text: &str) -> Result<Pairs, FilterError> {
    let specs = plan.model().params();
    let mut settings = Vec::new();
    let mut arms = Vec::new();
    for part in parts(text).into_iter().filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').ok_or_else(|| FilterError::Malformed {
            flag: flag.into(),
            text: text.into(),
            part: part.into(),
        })?;
        let (k, v) = (k.trim(), v.trim());
        if k == "arm" {
            arms.push(v.to_string());
            continue;
        }
        let param = |source| FilterError::Param {
            flag: flag.into(),
            text: text.into(),
            source: Box::new(source),
        };
        let id = lookup(specs, k).map_err(param)?;
        let value = id
            .spec(specs)
            .accept(&crate::params::parse_word(v))
            .map_err(param)?;
        settings.push((id, value));
    }
    Ok((settings, arms))
}

impl Filter {
    pub fn parse(plan: &Plan, text: &str) -> Result<Filter, FilterError> {
        let (settings, arms) = pairs(plan, "--where", text)?;
        if settings.is_empty() && arms.is_empty() {
            return Err(FilterError::Empty(text.into()));
        }
        let names: Vec<&str> = (0..plan.manifest.arms.len())
            .map(|a| plan.arm_name(a))
            .collect();
        // A variant's label names its arm and settings: say how to write it.
        if let Some((arm, inner)) = arms
            .iter()
            .find_map(|a| a.strip_suffix(']').and_then(|a| a.split_once('[')))
        {
            return Err(FilterError::Label {
                text: text.into(),
                rewrite: format!("arm={arm}, {inner}"),
            });
        }
        if let Some(arm) = arms.iter().find(|a| !names.contains(&a.as_str())) {
            return Err(FilterError::NoArm {
                text: text.into(),
                arm: arm.clone(),
                arms: names.join(", "),
            });
        }
        Ok(Filter { settings, arms })
    }

    /// The error for a filter that keeps no run: the values each filtered
    /// parameter takes in the plan, so the fix can be read off.
    pub fn keeps_nothing(&self, plan: &Plan, text: &str) -> FilterError {
        FilterError::KeepsNothing {
            text: text.into(),
            runs: plan.total,
            here: self.values_here(plan),
        }
    }

    /// The error for a value no run has, when the filter keeps runs by
    /// another value of the same key (`graph=hub, graph=rnig`): a typo
    /// there would otherwise go unnoticed.
    pub fn value_no_run_has(&self, plan: &Plan, text: &str) -> Option<FilterError> {
        let specs = plan.model().params();
        let (k, v) = self
            .settings
            .iter()
            .find(|(k, v)| !(0..plan.total).any(|id| plan.run(id).params.get(*k) == v))?;
        Some(FilterError::NoValue {
            text: text.into(),
            setting: format!("{}={}", k.spec(specs).name, v.plain()),
            here: self.values_here(plan),
        })
    }

    /// The values each filtered key takes in the plan (a few of each).
    fn values_here(&self, plan: &Plan) -> String {
        let specs = plan.model().params();
        // In the order the runs first take them, which is the manifest's.
        let mut keys: Vec<ParamId> = Vec::new();
        for (k, _) in &self.settings {
            if !keys.contains(k) {
                keys.push(*k);
            }
        }
        let mut seen: Vec<Vec<String>> = vec![Vec::new(); keys.len()];
        for id in 0..plan.total {
            let run = plan.run(id);
            for (k, values) in keys.iter().zip(&mut seen) {
                let v = run.params.get(*k).plain();
                if values.len() <= SHOWN && !values.contains(&v) {
                    values.push(v);
                }
            }
        }
        let mut here: Vec<String> = keys
            .iter()
            .zip(&seen)
            .map(|(k, values)| {
                let mut list: Vec<&str> = values.iter().map(String::as_str).take(SHOWN).collect();
                if values.len() > SHOWN {
                    list.push("...");
                }
                format!("{} = {}", k.spec(specs).name, list.join(" | "))
            })
            .collect();
        if !self.arms.is_empty() {
            here.push(format!(
                "arm = {}",
                (0..plan.manifest.arms.len())
                    .map(|a| plan.arm_name(a))
                    .collect::<Vec<_>>()
                    .join(" | ")
            ));
        }
        here.join("; ")
    }

    /// Whether `run` is kept. A run whose arm does not read a filtered
    /// parameter (the endorsement runs of a quorum grid, for `threshold`)
    /// is kept whatever its value: the value stored for it is a default
    /// no run used, so matching it would keep such runs for `threshold=2`
    /// and drop them for `threshold=3` by accident of the default.
    pub fn keeps(&self, plan: &Plan, run: &crate::grid::RunSpec) -> bool {
        if !(self.arms.is_empty() || self.arms.iter().any(|a| *a == plan.arm_name(run.arm))) {
            return false;
        }
        let mut unread = None;
        self.settings.iter().all(|(id, _)| {
            let value = run.params.get(*id);
            self.settings.iter().any(|(k, v)| k == id && v == value)
                // A run the plan validated; one the model refuses now is
                // matched by its values alone.
                || unread
                    .get_or_insert_with(|| plan.model().check(&run.params).unwrap_or(ParamSet::EMPTY))
                    .contains(*id)
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_filtered_table_is_named_by_its_filter() {
        use super::{file_slug, is_filtered_output, output_name};
        assert_eq!(output_name("summary", None), "summary.csv");
        let name = output_name("summary", Some("graph=hub, truth=false"));
        assert_eq!(name, "summary-where-graph-hub-truth-false.csv");
        // Spacing makes no new file; a name spelled alike does.
        assert_eq!(
            output_name("summary", Some(" graph = hub,truth=false ")),
            name
        );
        assert_eq!(
            output_name("rank", Some("arm=source_aware")),
            "rank-where-arm-source_aware.csv"
        );
        let (hive, plus) = (file_slug("arm=hive"), file_slug("arm=hive+"));
        assert_eq!(hive, "arm-hive");
        assert!(
            plus.starts_with("arm-hive-") && plus.len() == "arm-hive-".len() + 8,
            "{plus}"
        );
        assert_ne!(file_slug("arm=café ☕"), file_slug("arm=café ☔"));
        assert_ne!(file_slug("arm=a-b"), file_slug("arm=a_b"));
        assert!(is_filtered_output(&name));
        assert!(is_filtered_output(&output_name("rank", Some("arm=e"))));
        // A long filter is cut, and told apart by a hash of the whole.
        let long = |v: &str| format!("{}, seed={v}", "graph=hub, ".repeat(20));
        let (a, b) = (
            output_name("rank", Some(&long("1"))),
            output_name("rank", Some(&long("2"))),
        );
        assert!(a.len() < 120 && a != b, "{a} {b}");
        for other in [
            "summary.csv",
            "rank.csv",
            "summary-where.csv",
            "compare-where-x.csv",
            "summary-where-x.json",
        ] {
            assert!(!is_filtered_output(other), "{other}");
        }
    }

    #[test]
    fn parts_keep_a_variant_label_whole() {
        assert_eq!(
            super::parts("arm=q[threshold=1, count=senders]; graph=hub,seed=2"),
            ["arm=q[threshold=1, count=senders]", "graph=hub", "seed=2"]
        );
        assert_eq!(super::parts(""), [""]);
        assert_eq!(super::parts("a=1,,b=2"), ["a=1", "", "b=2"]);
    }
}
