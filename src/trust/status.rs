//! trust-v1's status rules (docs/models/trust.md §4.8) and the ranking factor
//! each status carries (§5, ranking). Rules run in the documented order and the first
//! match wins; moderation never enters them.

crate::words! {
    /// A target's status, in the order the rules are tried.
    pub enum Status {
        Superseded = "superseded",
        Outdated = "outdated",
        Incorrect = "incorrect",
        Disputed = "disputed",
        HighConfidence = "high_confidence",
        Supported = "supported",
        Unverified = "unverified",
    }
}

impl Status {
    /// Retrieval ranking's status factor.
    pub fn factor(self) -> f64 {
        match self {
            Status::HighConfidence => 1.0,
            Status::Supported | Status::Unverified => 0.9,
            Status::Disputed => 0.7,
            Status::Outdated => 0.4,
            Status::Superseded => 0.2,
            Status::Incorrect => 0.1,
        }
    }
}

/// What the rules after `superseded` read.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Facts {
    pub value: f64,
    pub lower: f64,
    pub upper: f64,
    pub independent: usize,
    pub contradictions: usize,
    /// Independent groups with p_g > 0.5.
    pub supporting: usize,
    pub real_world: usize,
    /// Distinct non-author roots with a qualifying `outdated` review.
    pub outdated_roots: usize,
}

/// Rules 2 to 7; `superseded` needs other targets and is applied on top.
pub fn base_status(f: &Facts) -> Status {
    if f.outdated_roots >= 2 {
        Status::Outdated
    } else if f.upper < 0.3 && f.independent >= 3 {
        Status::Incorrect
    } else if f.contradictions >= 2 && f.supporting >= 2 {
        Status::Disputed
    } else if f.lower >= 0.75 && f.independent >= 3 && f.real_world >= 1 {
        Status::HighConfidence
    } else if f.value >= 0.6 && f.independent >= 1 {
        Status::Supported
    } else {
        Status::Unverified
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> Facts {
        Facts {
            value: 0.9,
            lower: 0.8,
            upper: 0.95,
            independent: 3,
            contradictions: 0,
            supporting: 3,
            real_world: 1,
            outdated_roots: 0,
        }
    }

    #[test]
    fn each_rule_and_its_precedence() {
        assert_eq!(base_status(&facts()), Status::HighConfidence);
        let mut f = facts();
        f.real_world = 0;
        assert_eq!(base_status(&f), Status::Supported, "no real-world use");
        f.independent = 2;
        f.real_world = 1;
        assert_eq!(
            base_status(&f),
            Status::Supported,
            "two roots are not enough"
        );
        f.value = 0.59;
        assert_eq!(base_status(&f), Status::Unverified);
        f.independent = 0;
        f.value = 0.9;
        assert_eq!(base_status(&f), Status::Unverified, "no independent group");
        let mut d = facts();
        d.contradictions = 2;
        d.supporting = 2;
        assert_eq!(base_status(&d), Status::Disputed, "before high_confidence");
        let mut i = facts();
        i.upper = 0.29;
        i.contradictions = 3;
        i.supporting = 2;
        assert_eq!(base_status(&i), Status::Incorrect, "before disputed");
        i.independent = 2;
        assert_eq!(base_status(&i), Status::Disputed, "incorrect needs 3 roots");
        let mut o = i;
        o.outdated_roots = 2;
        assert_eq!(
            base_status(&o),
            Status::Outdated,
            "before everything but superseded"
        );
        o.outdated_roots = 1;
        assert_ne!(base_status(&o), Status::Outdated, "one root is not enough");
    }
}
