//! Which shard this process is: `K/N` given explicitly, or `auto` from the
//! array-job variables of Slurm, Kubernetes Indexed Jobs or AWS Batch
//! (HTCondor and GNU parallel have no such variable: they pass `K/N`).
//! Takes the environment as a function so it can be tested without one.

use super::Shard;

/// A shard that cannot be worked out: the words say what to pass instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ShardError(pub String);

pub fn parse(
    spec: &str,
    count: Option<u64>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Shard, ShardError> {
    if spec == "auto" {
        return auto(count, env).map_err(ShardError);
    }
    if let Some(c) = count {
        return Err(ShardError(format!(
            "--shard-count {c}: only with --shard auto; --shard {spec} gives the count itself"
        )));
    }
    let (k, n) = spec
        .split_once('/')
        .ok_or_else(|| ShardError(format!("--shard {spec}: expected K/N (e.g. 0/4) or auto")))?;
    let num = |s: &str| {
        s.trim()
            .parse::<u64>()
            .map_err(|_| ShardError(format!("--shard {spec}: `{s}` is not a whole number")))
    };
    shard(num(k)?, num(n)?, &format!("--shard {spec}")).map_err(ShardError)
}

fn shard(index: u64, count: u64, origin: &str) -> Result<Shard, String> {
    if count == 0 || index >= count {
        return Err(format!(
            "{origin}: shard {index} of {count} does not exist; shards are 0 ..= N-1 with N >= 1"
        ));
    }
    Ok(Shard { index, count })
}

fn auto(count: Option<u64>, env: &dyn Fn(&str) -> Option<String>) -> Result<Shard, String> {
    let num = |name: &str| -> Result<Option<u64>, String> {
        match env(name) {
            None => Ok(None),
            Some(v) => v
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| format!("{name}={v:?} is not a whole number")),
        }
    };
    if let Some(k) = num("SLURM_ARRAY_TASK_ID")? {
        // An explicit count means the task id is the shard number, which is
        // how one failed task is resubmitted alone (`sbatch --array=1`).
        if let Some(n) = count {
            return shard(
                k,
                n,
                &format!("SLURM_ARRAY_TASK_ID={k} with --shard-count {n}"),
            );
        }
        if let Some(min) = num("SLURM_ARRAY_TASK_MIN")? {
            if min != 0 {
                return Err(format!(
                    "SLURM_ARRAY_TASK_MIN={min}: --shard auto needs an array that starts at 0 \
                     (submit with --array=0-{{N-1}}), so task ids are shard numbers"
                ));
            }
        }
        if let Some(step) = num("SLURM_ARRAY_TASK_STEP")? {
            if step != 1 {
                return Err(format!(
                    "SLURM_ARRAY_TASK_STEP={step}: --shard auto needs a step of 1, or some shards would never run"
                ));
            }
        }
        let n = num("SLURM_ARRAY_TASK_COUNT")?.ok_or(
            "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not; pass --shard-count N",
        )?;
        return shard(
            k,
            n,
            &format!("SLURM_ARRAY_TASK_ID={k}, SLURM_ARRAY_TASK_COUNT={n}"),
        );
    }
    if let Some(k) = num("JOB_COMPLETION_INDEX")? {
        let n = count
            .ok_or("JOB_COMPLETION_INDEX is set; pass --shard-count N (the Job's `completions`)")?;
        return shard(
            k,
            n,
            &format!("JOB_COMPLETION_INDEX={k} with --shard-count {n}"),
        );
    }
    if let Some(k) = num("AWS_BATCH_JOB_ARRAY_INDEX")? {
        let n = num("AWS_BATCH_JOB_ARRAY_SIZE")?
            .or(count)
            .ok_or("AWS_BATCH_JOB_ARRAY_INDEX is set but AWS_BATCH_JOB_ARRAY_SIZE is not; pass --shard-count N")?;
        return shard(k, n, &format!("AWS_BATCH_JOB_ARRAY_INDEX={k} of {n}"));
    }
    Err(
        "--shard auto found no array job: set SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX or \
         AWS_BATCH_JOB_ARRAY_INDEX, or give --shard K/N (HTCondor: --shard $(Process)/N; \
         GNU parallel: --shard {}/N)"
            .into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn explicit_shards() {
        assert_eq!(
            parse("1/4", None, &env(&[])),
            Ok(Shard { index: 1, count: 4 })
        );
        assert!(parse("4/4", None, &env(&[]))
            .unwrap_err()
            .0
            .contains("does not exist"));
        assert!(parse("x/4", None, &env(&[])).is_err());
        assert!(parse("3", None, &env(&[])).is_err());
        // A count beside K/N would be ignored: refused, naming auto.
        assert!(parse("1/4", Some(4), &env(&[]))
            .unwrap_err()
            .0
            .contains("only with --shard auto"));
    }

    #[test]
    fn slurm_arrays_must_start_at_zero_with_step_one() {
        let ok = env(&[
            ("SLURM_ARRAY_TASK_ID", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
        ]);
        assert_eq!(parse("auto", None, &ok), Ok(Shard { index: 2, count: 4 }));
        let from_one = env(&[
            ("SLURM_ARRAY_TASK_ID", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
        ]);
        assert!(parse("auto", None, &from_one)
            .unwrap_err()
            .0
            .contains("starts at 0"));
        let stepped = env(&[
            ("SLURM_ARRAY_TASK_ID", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
            ("SLURM_ARRAY_TASK_STEP", "2"),
        ]);
        assert!(parse("auto", None, &stepped)
            .unwrap_err()
            .0
            .contains("step of 1"));
    }

    #[test]
    fn a_resubmitted_slurm_task_needs_the_shard_count() {
        let again = env(&[
            ("SLURM_ARRAY_TASK_ID", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "1"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
        ]);
        assert!(parse("auto", None, &again)
            .unwrap_err()
            .0
            .contains("starts at 0"));
        assert_eq!(
            parse("auto", Some(4), &again),
            Ok(Shard { index: 1, count: 4 })
        );
    }

    #[test]
    fn kubernetes_needs_a_count_and_aws_reads_its_size() {
        let k8s = env(&[("JOB_COMPLETION_INDEX", "3")]);
        assert!(parse("auto", None, &k8s).is_err());
        assert_eq!(
            parse("auto", Some(5), &k8s),
            Ok(Shard { index: 3, count: 5 })
        );
        let aws = env(&[
            ("AWS_BATCH_JOB_ARRAY_INDEX", "0"),
            ("AWS_BATCH_JOB_ARRAY_SIZE", "2"),
        ]);
        assert_eq!(parse("auto", None, &aws), Ok(Shard { index: 0, count: 2 }));
        let sizeless = env(&[("AWS_BATCH_JOB_ARRAY_INDEX", "1")]);
        assert!(parse("auto", None, &sizeless)
            .unwrap_err()
            .0
            .contains("AWS_BATCH_JOB_ARRAY_SIZE is not"));
        let past = env(&[
            ("AWS_BATCH_JOB_ARRAY_INDEX", "2"),
            ("AWS_BATCH_JOB_ARRAY_SIZE", "2"),
        ]);
        assert!(parse("auto", None, &past)
            .unwrap_err()
            .0
            .contains("does not exist"));
        let bad = env(&[("JOB_COMPLETION_INDEX", "x")]);
        assert!(parse("auto", Some(2), &bad)
            .unwrap_err()
            .0
            .contains("JOB_COMPLETION_INDEX=\"x\" is not a whole number"));
        assert!(parse("auto", None, &env(&[]))
            .unwrap_err()
            .0
            .contains("no array job"));
    }
}
