//! Sobol' points and Saltelli's scheme over them. The sequence is the
//! unscrambled one in Gray-code order with 30-bit integers, so its points
//! are exact binary fractions and equal SciPy's `qmc.Sobol(scramble=False)`
//! bit for bit; Saltelli's rows follow SALib's order (A, each AB_i, each
//! BA_i when second-order indices are wanted, B), which is what lets
//! `witness sensitivity` find a row's role from its index alone.

use super::directions::TABLE;

/// Bits of each coordinate: the sequence has 2^30 distinct points.
const BITS: usize = 30;

/// Dimensions the direction table covers.
pub const MAX_DIMS: usize = TABLE.len() + 1;

/// The direction integers v_1 .. v_30 of dimension `d` (from 0).
fn directions(d: usize) -> [u32; BITS] {
    let mut v = [0u32; BITS];
    if d == 0 {
        for (j, x) in v.iter_mut().enumerate() {
            *x = 1 << (BITS - 1 - j);
        }
        return v;
    }
    let (poly, init) = TABLE[d - 1];
    let s = init.len();
    for j in 0..BITS {
        v[j] = if j < s {
            init[j] << (BITS - 1 - j)
        } else {
            // v_j = a_1 v_{j-1} ^ ... ^ a_{s-1} v_{j-s+1} ^ v_{j-s} ^ (v_{j-s} >> s),
            // with a_k the polynomial's coefficient of x^(s-k).
            let mut x = v[j - s] ^ (v[j - s] >> s);
            for k in 1..s {
                if (poly >> (s - k)) & 1 == 1 {
                    x ^= v[j - k];
                }
            }
            x
        };
    }
    v
}

/// Moves `x` from point i - 1 to point i (the origin stays for i = 0): in
/// Gray-code order the next point flips the direction of i - 1's lowest
/// zero bit.
fn gray_step(x: &mut [u32], v: &[[u32; BITS]], i: usize) {
    if i > 0 {
        let c = (i - 1).trailing_ones() as usize;
        for (xd, vd) in x.iter_mut().zip(v) {
            *xd ^= vd[c.min(BITS - 1)];
        }
    }
}

/// The factors whose A and B values agree at every one of the first `base`
/// samples of Saltelli's scheme over `d` factors (A and B are the two
/// halves of a 2d-dimensional point). Their first-order and total indices
/// are then 0 by construction, whatever the model does; this happens for
/// small bases, whose few points repeat across dimensions. Stops as soon
/// as every factor has differed.
pub fn unmixed_factors(base: usize, d: usize) -> Vec<usize> {
    let v: Vec<[u32; BITS]> = (0..2 * d).map(directions).collect();
    let mut x = vec![0u32; 2 * d];
    let mut same = vec![true; d];
    for i in 0..base {
        gray_step(&mut x, &v, i);
        for (j, s) in same.iter_mut().enumerate() {
            *s &= x[j] == x[d + j];
        }
        if !same.contains(&true) {
            break;
        }
    }
    (0..d).filter(|&j| same[j]).collect()
}

/// The smallest power-of-two base at which every one of `d` factors
/// differs between A and B (at most 64 for the dimensions allowed).
pub fn smallest_base(d: usize) -> usize {
    let mut base = 2;
    while !unmixed_factors(base, d).is_empty() {
        base *= 2;
    }
    base
}

/// The first `n` points of the `dims`-dimensional sequence, the origin
/// first. Panics past `MAX_DIMS` (the manifest refuses such designs).
pub fn points(n: usize, dims: usize) -> Vec<Vec<f64>> {
    assert!(
        dims <= MAX_DIMS,
        "{dims} Sobol' dimensions; at most {MAX_DIMS}"
    );
    let v: Vec<[u32; BITS]> = (0..dims).map(directions).collect();
    let scale = 1.0 / (1u64 << BITS) as f64;
    let mut x = vec![0u32; dims];
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        gray_step(&mut x, &v, i);
        out.push(x.iter().map(|&q| f64::from(q) * scale).collect());
    }
    out
}

/// Rows per base sample of Saltelli's scheme over `d` factors.
pub fn rows_per_sample(d: usize, second_order: bool) -> usize {
    if second_order {
        2 * d + 2
    } else {
        d + 2
    }
}

/// A row's part in Saltelli's scheme, from its place within its sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    A,
    /// A with factor i taken from B.
    AB(usize),
    /// B with factor i taken from A.
    BA(usize),
    B,
}

pub fn role(offset: usize, d: usize, second_order: bool) -> Role {
    let last = rows_per_sample(d, second_order) - 1;
    match offset {
        0 => Role::A,
        o if o == last => Role::B,
        o if o <= d => Role::AB(o - 1),
        o => Role::BA(o - 1 - d),
    }
}

/// Saltelli's points in the unit cube, row after row (`d` values each):
/// `base` samples of A and B (the two halves of a 2d-dimensional Sobol'
/// point), each followed by its cross rows. Flat, so ten million points
/// are one allocation.
pub fn saltelli(base: usize, d: usize, second_order: bool) -> Vec<f64> {
    let dims = 2 * d;
    assert!(
        dims <= MAX_DIMS,
        "{dims} Sobol' dimensions; at most {MAX_DIMS}"
    );
    let v: Vec<[u32; BITS]> = (0..dims).map(directions).collect();
    let scale = 1.0 / (1u64 << BITS) as f64;
    let per = rows_per_sample(d, second_order);
    let mut out = vec![0.0; base * per * d];
    let mut x = vec![0u32; dims];
    let mut ab = vec![0.0; dims];
    for (i, rows) in out.chunks_exact_mut(per * d).enumerate() {
        gray_step(&mut x, &v, i);
        for (o, &q) in ab.iter_mut().zip(&x) {
            *o = f64::from(q) * scale;
        }
        let (a, b) = ab.split_at(d);
        // Rows in the order `role` gives: A, each AB_k, each BA_k, B.
        for (offset, row) in rows.chunks_exact_mut(d).enumerate() {
            match role(offset, d, second_order) {
                Role::A => row.copy_from_slice(a),
                Role::B => row.copy_from_slice(b),
                Role::AB(k) => {
                    row.copy_from_slice(a);
                    row[k] = b[k];
                }
                Role::BA(k) => {
                    row.copy_from_slice(b);
                    row[k] = a[k];
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_points_are_the_known_binary_fractions() {
        let p = points(4, 3);
        assert_eq!(p[0], [0.0, 0.0, 0.0]);
        assert_eq!(p[1], [0.5, 0.5, 0.5]);
        assert_eq!(p[2], [0.75, 0.25, 0.25]);
        assert_eq!(p[3], [0.25, 0.75, 0.75]);
    }

    #[test]
    fn every_dyadic_box_of_a_power_of_two_holds_one_point_per_dimension() {
        // The defining (0, m, 1) property in each coordinate: 2^m points
        // fall one per interval [k / 2^m, (k + 1) / 2^m).
        let n = 1 << 8;
        let p = points(n, MAX_DIMS);
        for d in 0..MAX_DIMS {
            let mut seen = vec![false; n];
            for x in &p {
                let k = (x[d] * n as f64) as usize;
                assert!(!seen[k], "dimension {d}: interval {k} twice");
                seen[k] = true;
            }
        }
    }

    #[test]
    fn saltelli_rows_are_built_from_the_sequences_points() {
        let (base, d) = (37, 3);
        let flat = saltelli(base, d, true);
        let seq = points(base, 2 * d);
        for (i, sample) in flat.chunks(rows_per_sample(d, true) * d).enumerate() {
            assert_eq!(&sample[..d], &seq[i][..d]);
            assert_eq!(&sample[sample.len() - d..], &seq[i][d..]);
        }
    }

    #[test]
    fn unmixed_factors_are_those_whose_a_and_b_agree_at_every_sample() {
        for d in 1..=MAX_DIMS / 2 {
            let smallest = smallest_base(d);
            assert!(smallest <= 64, "d = {d}: {smallest}");
            for base in [smallest / 2, smallest] {
                let pts = points(base, 2 * d);
                let want: Vec<usize> = (0..d)
                    .filter(|&j| pts.iter().all(|p| p[j] == p[d + j]))
                    .collect();
                assert_eq!(unmixed_factors(base, d), want, "d = {d}, base = {base}");
            }
            assert!(unmixed_factors(smallest, d).is_empty());
            assert!(!unmixed_factors(smallest / 2, d).is_empty() || smallest == 2);
        }
        // Two samples are the origin and the centre: A equals B in all.
        assert_eq!(unmixed_factors(2, 5), [0, 1, 2, 3, 4]);
    }

    #[test]
    fn saltelli_rows_cross_a_and_b_in_salibs_order() {
        let d = 2;
        let flat = saltelli(2, d, true);
        let rows: Vec<&[f64]> = flat.chunks(d).collect();
        assert_eq!(rows.len(), 2 * rows_per_sample(d, true));
        let base = points(2, 2 * d);
        let (a, b) = base[1].split_at(d);
        let s = &rows[6..12];
        assert_eq!(s[0], a);
        assert_eq!(s[1], [b[0], a[1]]);
        assert_eq!(s[2], [a[0], b[1]]);
        assert_eq!(s[3], [a[0], b[1]]);
        assert_eq!(s[4], [b[0], a[1]]);
        assert_eq!(s[5], b);
        assert_eq!(role(3, d, true), Role::BA(0));
        assert_eq!(role(3, d, false), Role::B);
    }
}
