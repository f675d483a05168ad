//! Experimental designs beyond the full grid: a list of explicit points, or
//! points sampled over declared factor ranges (a Latin hypercube, Saltelli's
//! scheme over Sobol' points, Morris trajectories). A design is a pure
//! function of the manifest: its points are computed once at parse time,
//! the same on every machine, thread count, shard and resume. The plan
//! crosses them with the remaining grid axes and the arms.

mod directions;
pub mod lhs;
pub mod morris;
pub mod sobol;

use crate::math;
use crate::params::{ParamId, Value};

/// How a design's points are chosen.
#[derive(Clone, Debug, PartialEq)]
pub enum Method {
    /// Points written in the manifest or a CSV file beside it.
    List,
    Lhs {
        samples: usize,
        seed: u64,
    },
    Sobol {
        /// N, a power of two: the design has N (2D + 2) points, or
        /// N (D + 2) without second order.
        base: usize,
        second_order: bool,
    },
    Morris {
        trajectories: usize,
        levels: usize,
        seed: u64,
    },
}

impl Method {
    pub fn name(&self) -> &'static str {
        match self {
            Method::List => "list",
            Method::Lhs { .. } => "lhs",
            Method::Sobol { .. } => "sobol",
            Method::Morris { .. } => "morris",
        }
    }

    /// The points in the unit cube over `d` factors, row after row (none
    /// for a list).
    pub fn unit_points(&self, d: usize) -> Vec<f64> {
        match *self {
            Method::List => Vec::new(),
            Method::Lhs { samples, seed } => lhs::points(samples, d, seed).concat(),
            Method::Sobol { base, second_order } => sobol::saltelli(base, d, second_order),
            Method::Morris {
                trajectories,
                levels,
                seed,
            } => morris::points(trajectories, d, levels, seed).concat(),
        }
    }

    /// How many points the method gives over `d` factors, without drawing
    /// them (so a manifest can be refused before any work).
    pub fn size(&self, d: usize) -> Option<u128> {
        let d = d as u128;
        match *self {
            Method::List => None,
            Method::Lhs { samples, .. } => Some(samples as u128),
            Method::Sobol { base, second_order } => {
                Some(base as u128 * if second_order { 2 * d + 2 } else { d + 2 })
            }
            Method::Morris { trajectories, .. } => Some(trajectories as u128 * (d + 1)),
        }
    }
}

/// A sampled parameter and its range.
#[derive(Clone, Debug, PartialEq)]
pub struct Factor {
    pub id: ParamId,
    pub name: &'static str,
    pub from: f64,
    pub to: f64,
    /// Sampled evenly in the logarithm (both ends positive).
    pub log: bool,
    /// An integer parameter: each of from ..= to is one equal share of the
    /// unit interval, so the ends are as likely as the middle.
    pub integer: bool,
}

impl Factor {
    /// The parameter value at `u` in [0, 1]. Linear factors compute
    /// `u * (to - from) + from`, the same arithmetic as SALib's scaling, so
    /// points equal its samples exactly.
    pub fn value(&self, u: f64) -> Value {
        let (lo, hi) = if self.integer {
            (self.from, self.to + 1.0)
        } else {
            (self.from, self.to)
        };
        let x = if self.log {
            // The ends exactly, where the logarithm's round trip would not.
            match u {
                0.0 => lo,
                1.0 => hi,
                _ => math::exp(math::ln(lo) + u * (math::ln(hi) - math::ln(lo))).clamp(lo, hi),
            }
        } else {
            u * (hi - lo) + lo
        };
        if self.integer {
            // A hair above the floor, so a grid point that lands exactly on
            // a share's edge (Morris levels) is not rounded down by the
            // float product's last bit.
            Value::Int((x + 1e-9).floor().min(self.to) as i64)
        } else {
            Value::Float(x)
        }
    }

    /// How `plan` describes the factor.
    pub fn describe(&self) -> String {
        let scale = if self.log { "log-uniform" } else { "uniform" };
        let (from, to) = if self.integer {
            (
                format!("{}", self.from as i64),
                format!("{}", self.to as i64),
            )
        } else {
            (format!("{:?}", self.from), format!("{:?}", self.to))
        };
        let ints = if self.integer {
            ", integer: each value an equal share (floor of the scaled point)"
        } else {
            ""
        };
        format!("{} {from} ..= {to}, {scale}{ints}", self.name)
    }
}

/// A manifest's design: the parameters its points set and the points.
/// Sampled points are kept as unit-cube coordinates only (8 bytes a
/// factor), and a point's values are computed when a run asks for them.
#[derive(Clone, Debug, PartialEq)]
pub struct Design {
    pub method: Method,
    /// The parameters each point sets, in column order.
    pub params: Vec<(ParamId, &'static str)>,
    /// For sampled designs, the factor of each parameter.
    pub factors: Vec<Factor>,
    /// For sampled designs, the points in the unit cube, row after row
    /// (what the sensitivity analysis reads).
    pub unit: Vec<f64>,
    /// For listed designs, the points as written.
    listed: Vec<Vec<Value>>,
}

impl Design {
    /// A sampled design over `factors`.
    pub fn sampled(method: Method, factors: Vec<Factor>) -> Design {
        Design {
            unit: method.unit_points(factors.len()),
            method,
            params: factors.iter().map(|f| (f.id, f.name)).collect(),
            factors,
            listed: Vec::new(),
        }
    }

    /// Explicit points.
    pub fn list(params: Vec<(ParamId, &'static str)>, points: Vec<Vec<Value>>) -> Design {
        Design {
            method: Method::List,
            params,
            factors: Vec::new(),
            unit: Vec::new(),
            listed: points,
        }
    }

    pub fn len(&self) -> usize {
        match self.method {
            Method::List => self.listed.len(),
            _ => self.unit.len() / self.factors.len().max(1),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Point `k` in the unit cube (empty for a listed design).
    pub fn unit_row(&self, k: usize) -> &[f64] {
        let d = self.factors.len();
        self.unit.get(k * d..(k + 1) * d).unwrap_or(&[])
    }

    /// The value point `k` gives parameter `j` (in `params` order).
    pub fn value(&self, k: usize, j: usize) -> Value {
        match self.method {
            Method::List => self.listed[k][j].clone(),
            _ => self.factors[j].value(self.unit_row(k)[j]),
        }
    }

    /// Every value point `k` sets, in `params` order.
    pub fn point(&self, k: usize) -> Vec<Value> {
        (0..self.params.len()).map(|j| self.value(k, j)).collect()
    }

    /// Lines `plan` prints about the design.
    pub fn describe(&self) -> Vec<String> {
        let d = self.params.len();
        let how = match self.method {
            Method::List => format!("{} listed points", self.len()),
            Method::Lhs { samples, seed } => {
                format!("Latin hypercube, {samples} samples, seed {seed}")
            }
            Method::Sobol { base, second_order } => format!(
                "Saltelli over Sobol' points, base N = {base}, {} = {} points{}",
                if second_order {
                    "N x (2D + 2)"
                } else {
                    "N x (D + 2)"
                },
                self.len(),
                if second_order {
                    ", second-order indices"
                } else {
                    ""
                }
            ),
            Method::Morris {
                trajectories,
                levels,
                seed,
            } => format!(
                "Morris, {trajectories} trajectories x (D + 1) = {} points, {levels} levels, seed {seed}",
                self.len()
            ),
        };
        let mut out = vec![format!(
            "{} over {d} parameter(s): {how}",
            self.method.name()
        )];
        out.extend(
            self.factors
                .iter()
                .map(|f| format!("factor {}", f.describe())),
        );
        if self.factors.is_empty() {
            let names: Vec<&str> = self.params.iter().map(|(_, n)| *n).collect();
            out.push(format!("sets {}", names.join(", ")));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn factor(from: f64, to: f64, log: bool, integer: bool) -> Factor {
        Factor {
            id: ParamId(0),
            name: "x",
            from,
            to,
            log,
            integer,
        }
    }

    #[test]
    fn integer_factors_give_each_value_an_equal_share() {
        let f = factor(1.0, 4.0, false, true);
        let got: Vec<Value> = [0.0, 0.24, 0.25, 0.5, 0.74, 0.75, 0.999, 1.0]
            .iter()
            .map(|&u| f.value(u))
            .collect();
        let want = [1, 1, 2, 3, 3, 4, 4, 4].map(Value::Int);
        assert_eq!(got, want);
    }

    #[test]
    fn log_factors_are_even_in_the_logarithm_and_stay_in_range() {
        let f = factor(0.01, 100.0, true, false);
        assert_eq!(f.value(0.0), Value::Float(0.01));
        let Value::Float(mid) = f.value(0.5) else {
            panic!()
        };
        assert!((mid - 1.0).abs() < 1e-12, "{mid}");
        let Value::Float(top) = f.value(1.0) else {
            panic!()
        };
        assert!(top <= 100.0);
    }

    #[test]
    fn design_sizes_are_known_before_drawing() {
        for m in [
            Method::Lhs {
                samples: 7,
                seed: 1,
            },
            Method::Sobol {
                base: 8,
                second_order: true,
            },
            Method::Sobol {
                base: 8,
                second_order: false,
            },
            Method::Morris {
                trajectories: 5,
                levels: 4,
                seed: 2,
            },
        ] {
            assert_eq!(m.size(3), Some(m.unit_points(3).len() as u128 / 3), "{m:?}");
        }
    }
}
