//! `witness shards DIR`: which shards of a sharded run are complete,
//! partial or missing, and the commands that finish them (a plain loop,
//! a Slurm array of just those tasks, GNU parallel), then `merge`. Exit 0
//! when every chunk is in, 1 otherwise.

use std::path::Path;

use crate::error::Result;
use crate::model::Registry;
use crate::runner::shards::{status, Status};

pub fn shards(dir: &Path, count: Option<u64>, json: bool, registry: &Registry) -> Result<u8> {
    let s = status(dir, count, registry)?;
    let left = s.unfinished();
    if json {
        let doc = serde_json::json!({
            "dir": s.dir,
            "merged": s.merged,
            "count": s.count,
            "shards": s.shards,
            "unfinished": left,
            "engine": s.engine,
            "commands": commands(&s, &left),
        });
        outln!("{}", serde_json::to_string_pretty(&doc).expect("JSON"))?;
    } else {
        print(&s, &left)?;
    }
    Ok(u8::from(!left.is_empty()))
}

fn print(s: &Status, left: &[u64]) -> Result<()> {
    if s.merged {
        outln!(
            "{}: complete and merged; nothing is left to run ({} shard(s))",
            s.dir,
            s.count
        )?;
        return Ok(());
    }
    for sh in &s.shards {
        let state = match sh.done {
            d if d == sh.chunks => "complete".to_string(),
            0 => "missing".to_string(),
            d => format!("partial ({d} of {} chunks)", sh.chunks),
        };
        outln!("shard {}/{}  {state}", sh.shard, s.count)?;
    }
    let owning = s.shards.len() as u64;
    if owning < s.count {
        outln!(
            "shards {owning}..{} have no chunks (the plan has {owning} chunks): nothing to run",
            s.count - 1
        )?;
    }
    if left.is_empty() {
        outln!("every shard is complete; run: witness merge {}", s.dir)?;
        return Ok(());
    }
    let c = commands(s, left);
    let line = |k: &str| c[k].as_str().unwrap_or_default().to_string();
    outln!(
        "\nto finish, run the unfinished shards (they resume their finished chunks), then merge:"
    )?;
    let mut rows = vec![
        ("loop", "one machine:   ", line("loop")),
        (
            "slurm",
            "Slurm:         ",
            format!("{} (the example job script)", line("slurm")),
        ),
        (
            "parallel",
            "GNU parallel:  ",
            format!(
                "{} (or your own command again with --joblog FILE --resume-failed)",
                line("parallel")
            ),
        ),
    ];
    // The engine the shards ran under first.
    if let Some(at) = rows.iter().position(|r| Some(r.0) == s.engine.as_deref()) {
        let r = rows.remove(at);
        rows.insert(0, r);
        rows[0].2.push_str("   <- the shards ran under this");
    }
    for (_, label, text) in rows {
        outln!("  {label}{text}")?;
    }
    outln!("  then:          {}", line("merge"))?;
    Ok(())
}

/// The commands that finish `left`, by engine.
fn commands(s: &Status, left: &[u64]) -> serde_json::Value {
    let list = |sep: &str| {
        left.iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(sep)
    };
    let (m, d, n) = (quote(&s.manifest), quote(&s.dir), s.count);
    serde_json::json!({
        "loop": format!("for k in {}; do witness run {m} --out {d} --shard $k/{n}; done", list(" ")),
        "slurm": format!(
            "MANIFEST={m} OUT={d} SHARDS={n} sbatch --array={} examples/slurm/sweep.sbatch",
            list(",")
        ),
        "parallel": format!("parallel witness run {m} --out {d} --shard {{}}/{n} ::: {}", list(" ")),
        "merge": format!("witness merge {d}"),
    })
}

/// A path as a POSIX shell word.
fn quote(p: &str) -> String {
    if p.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,".contains(c))
    {
        p.to_string()
    } else {
        format!("'{}'", p.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_quoted_for_the_shell_only_when_needed() {
        assert_eq!(quote("results/sweep-540"), "results/sweep-540");
        assert_eq!(quote("my results/it's"), r"'my results/it'\''s'");
    }
}
