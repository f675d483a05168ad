//! The elementary functions of the models, designs and statistics (`exp`,
//! `ln`, `ln_1p`, `powf`), correctly rounded.
//!
//! The standard library's versions call the platform's C library, whose
//! last bit can depend on the CPU: glibc picks an FMA variant of `exp`
//! when the processor has FMA, and the two variants disagree on about one
//! input in 1,400. The same build of witness then wrote different
//! trajectories on a machine without FMA, so shards run on mixed nodes
//! could not match a run on one (decision 151). A correctly rounded
//! result is the exact value rounded to the nearest float: the
//! mathematics fixes it, not the machine, so every machine gets the same
//! bits. `clippy.toml` keeps the standard functions out of the crate.
//! `special` builds the gamma, beta and Student-t functions on them.

pub mod special;

/// e^x, correctly rounded.
#[inline]
pub fn exp(x: f64) -> f64 {
    pxfm::f_exp(x)
}

/// The natural logarithm, correctly rounded.
#[inline]
pub fn ln(x: f64) -> f64 {
    pxfm::f_log(x)
}

/// ln(1 + x), correctly rounded.
#[inline]
pub fn ln_1p(x: f64) -> f64 {
    pxfm::f_log1p(x)
}

/// x^y, correctly rounded.
#[inline]
pub fn powf(x: f64, y: f64) -> f64 {
    pxfm::f_pow(x, y)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inputs where glibc 2.36's `exp` on an x86_64 CPU with FMA (what
    /// this project's results used before decision 151) is one bit off;
    /// the expected bits are the exact values rounded to nearest, from
    /// `python3 tests/golden/exp_cr.py 8` (mpmath at 300 bits); CI checks
    /// them against mpmath again (`tests/interop/check_math.py`).
    const HARD: [(f64, u64); 8] = [
        (-0.8476364675485026, 0x3fdb6b564b3ba2de),
        (2.4156214497081407, 0x402664b9528da0e1),
        (-2.6740730592059143, 0x3fb1a810d81fb663),
        (-4.422322491670651, 0x3f8896c45cdde400),
        (-5.765438706001434, 0x3f69ac844165acec),
        (-4.100211777971569, 0x3f90f781e9279e32),
        (-1.6807954518095878, 0x3fc7d63f18d6e40f),
        (-0.6199534485111329, 0x3fe1370bc583373e),
    ];

    #[test]
    fn exp_is_correctly_rounded_where_the_c_library_was_not() {
        for (x, bits) in HARD {
            assert_eq!(exp(x).to_bits(), bits, "exp({x:?})");
        }
    }

    #[test]
    fn exact_and_edge_values() {
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(-0.0), 1.0);
        assert_eq!(exp(1.0), std::f64::consts::E);
        assert_eq!(exp(f64::NEG_INFINITY), 0.0);
        assert_eq!(exp(710.0), f64::INFINITY);
        assert_eq!(exp(-746.0), 0.0);
        assert!(exp(f64::NAN).is_nan());
        assert_eq!(ln(1.0), 0.0);
        assert_eq!(ln(std::f64::consts::E), 1.0);
        assert_eq!(ln(0.0), f64::NEG_INFINITY);
        assert!(ln(-1.0).is_nan());
        assert_eq!(ln_1p(0.0), 0.0);
        assert_eq!(ln_1p(-1.0), f64::NEG_INFINITY);
        assert_eq!(powf(0.5, 0.0), 1.0);
        assert_eq!(powf(0.5, 1.0), 0.5);
        assert_eq!(powf(0.5, 3.0), 0.125);
        assert_eq!(powf(0.5, 0.5), std::f64::consts::FRAC_1_SQRT_2);
    }
}
