//! How `compare` judges a summary column: which way is better, what a
//! missing value stands for when runs are ordered, the per-seed change
//! that counts as a changed answer, and the smallest effect of interest.
//! A model declares these beside the column's bounds (`record!`'s
//! `=> Judge::...`), so a verdict can say "better" or "worse" and a flip
//! is measured in the metric's own units.

crate::words! {
    /// Which way a column is better.
    pub enum Better {
        Lower = "lower",
        Higher = "higher",
        Neither = "neither",
    }
}

crate::words! {
    /// What a missing (null) value is when runs are ordered: left out
    /// (and counted), the worst value or the best.
    pub enum NullMeans {
        Missing = "missing",
        Worst = "worst",
        Best = "best",
    }
}

/// A column's judgement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Judge {
    pub better: Better,
    pub null_means: NullMeans,
    /// The smallest per-seed change, in the metric's units, that counts as
    /// a changed answer; `None`: a fifth of the column's range.
    pub flip_delta: Option<f64>,
    /// The smallest effect of interest, in the metric's units.
    pub sesoi: Option<f64>,
}

impl Judge {
    /// No direction, nothing declared.
    pub const NEUTRAL: Judge = Judge {
        better: Better::Neither,
        null_means: NullMeans::Missing,
        flip_delta: None,
        sesoi: None,
    };

    /// Lower is better.
    pub const fn lower() -> Judge {
        Judge {
            better: Better::Lower,
            ..Judge::NEUTRAL
        }
    }

    /// Higher is better.
    pub const fn higher() -> Judge {
        Judge {
            better: Better::Higher,
            ..Judge::NEUTRAL
        }
    }

    /// A missing value is the worst one (e.g. a round never reached).
    pub const fn null_worst(self) -> Judge {
        Judge {
            null_means: NullMeans::Worst,
            ..self
        }
    }

    /// The smallest effect of interest.
    pub const fn sesoi(self, delta: f64) -> Judge {
        Judge {
            sesoi: Some(delta),
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_judgement_is_built_up_from_its_direction() {
        let j = Judge::lower().null_worst().sesoi(0.05);
        assert_eq!(
            (j.better, j.null_means, j.sesoi),
            (Better::Lower, NullMeans::Worst, Some(0.05))
        );
        assert_eq!(Judge::higher().better, Better::Higher);
        assert_eq!(Judge::NEUTRAL.better, Better::Neither);
    }
}
