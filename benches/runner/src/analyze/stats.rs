//! The statistics `compare` and `history` share: medians, the two-sided
//! Mann-Whitney U test, whether two wall times differ significantly (the
//! between-round intervals for cells measured in rounds, the rank test on
//! the samples for one-round cells), and whether a ratio is beyond a threshold.

use harness::results::WallTime;
pub use harness::stats::median;

/// Samples each run needs for the rank test; with fewer, the 95% intervals
/// of the medians decide.
const RANK_TEST_MIN_SAMPLES: usize = 3;

/// How a change of wall time was judged significant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Significance {
    /// `round-intervals`, `mann-whitney` or `ci-overlap`.
    pub test: &'static str,
    /// Two-sided p-value of the Mann-Whitney test, when it was the test.
    pub p_value: Option<f64>,
    pub significant: bool,
}

/// The test that decides for cells measured in several rounds in both runs.
pub const ROUND_INTERVALS: &str = "round-intervals";

/// Rounds each run needs for the between-round intervals to decide.
const ROUND_TEST_MIN_ROUNDS: usize = 2;

/// When both runs measured the cell in at least two rounds: "the 95%
/// intervals of the medians do not overlap", which are then the intervals of
/// the variation between rounds (`round-intervals`): the samples of one
/// round are not independent of each other across rounds, the round medians
/// are. Otherwise the Mann-Whitney U test on the per-sample times at `alpha`
/// when both runs have at least three samples, else the same overlap test on
/// criterion's intervals (`ci-overlap`).
pub fn wall_significance(old: &WallTime, new: &WallTime, alpha: f64) -> Significance {
    if old.round_medians_ns.len() >= ROUND_TEST_MIN_ROUNDS && new.round_medians_ns.len() >= ROUND_TEST_MIN_ROUNDS {
        return Significance {
            test: ROUND_INTERVALS,
            p_value: None,
            significant: intervals_disjoint(old, new),
        };
    }
    if old.sample_ns.len() >= RANK_TEST_MIN_SAMPLES && new.sample_ns.len() >= RANK_TEST_MIN_SAMPLES {
        let p = mann_whitney_p(&old.sample_ns, &new.sample_ns);
        Significance {
            test: "mann-whitney",
            p_value: Some(p),
            significant: p < alpha,
        }
    } else {
        Significance {
            test: "ci-overlap",
            p_value: None,
            significant: intervals_disjoint(old, new),
        }
    }
}

/// The 95% intervals of the two medians do not overlap.
fn intervals_disjoint(old: &WallTime, new: &WallTime) -> bool {
    new.median_ns.lower > old.median_ns.upper || new.median_ns.upper < old.median_ns.lower
}

/// Which way a ratio new/old points, when it is beyond `threshold`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Above `1 + threshold`.
    Up,
    /// Below `1 / (1 + threshold)`.
    Down,
}

/// `Up` above `1 + threshold`, `Down` below `1 / (1 + threshold)`, else
/// (and for NaN) `None`: the same relative change counts both ways.
pub fn beyond_threshold(ratio: f64, threshold: f64) -> Option<Direction> {
    if ratio > 1.0 + threshold {
        Some(Direction::Up)
    } else if ratio < 1.0 / (1.0 + threshold) {
        Some(Direction::Down)
    } else {
        None
    }
}

/// Two-sided p-value of the Mann-Whitney U test (normal approximation with
/// tie correction and continuity correction).
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> f64 {
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    let mut all: Vec<(f64, usize)> = a.iter().map(|&x| (x, 0)).chain(b.iter().map(|&x| (x, 1))).collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    // Average ranks over ties; tie term sum(t^3 - t).
    let mut rank_sum_a = 0.0;
    let mut ties = 0.0;
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let t = (j - i + 1) as f64;
        let rank = (i + j) as f64 / 2.0 + 1.0;
        rank_sum_a += all[i..=j].iter().filter(|x| x.1 == 0).count() as f64 * rank;
        ties += t * t * t - t;
        i = j + 1;
    }
    let u = rank_sum_a - n1 * (n1 + 1.0) / 2.0;
    let mean = n1 * n2 / 2.0;
    let n = n1 + n2;
    let var = n1 * n2 / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)));
    if var <= 0.0 {
        return 1.0; // all values equal
    }
    let z = ((u - mean).abs() - 0.5).max(0.0) / var.sqrt();
    erfc(z / std::f64::consts::SQRT_2).min(1.0)
}

/// Complementary error function (Numerical Recipes' erfcc, relative error < 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.26551223
            + t * (1.00002368
                + t * (0.37409196
                    + t * (0.09678418
                        + t * (-0.18628806
                            + t * (0.27886807
                                + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_test_separates_shifted_samples_and_not_equal_ones() {
        let a: Vec<f64> = (0..20).map(|i| 100.0 + i as f64).collect();
        let shifted: Vec<f64> = a.iter().map(|x| x + 50.0).collect();
        assert!(mann_whitney_p(&a, &shifted) < 1e-5);
        assert!(mann_whitney_p(&a, &a) > 0.9);
        assert_eq!(mann_whitney_p(&[1.0; 5], &[1.0; 5]), 1.0);
        // Known value: U = 0 for n1 = n2 = 10, z = (50 - 0.5)/sqrt(175) = 3.742, p = 1.83e-4.
        let lo: Vec<f64> = (0..10).map(f64::from).collect();
        let hi: Vec<f64> = (10..20).map(f64::from).collect();
        let p = mann_whitney_p(&lo, &hi);
        assert!((p - 1.83e-4).abs() < 1e-5, "{p}");
    }

    fn wall(median: f64, half: f64, rounds: &[f64], samples: &[f64]) -> WallTime {
        let mut w = WallTime::from_samples(samples);
        w.median_ns = harness::results::Estimate {
            point: median,
            lower: median - half,
            upper: median + half,
        };
        w.round_medians_ns = rounds.to_vec();
        w
    }

    #[test]
    fn rounds_decide_by_their_intervals_and_one_round_by_the_rank_test() {
        // Samples far apart: the rank test alone would call it significant.
        let lo: Vec<f64> = (0..10).map(|i| 100.0 + f64::from(i)).collect();
        let hi: Vec<f64> = lo.iter().map(|x| x + 20.0).collect();
        let old = wall(105.0, 10.0, &[100.0, 105.0, 110.0], &lo);
        let overlapping = wall(125.0, 15.0, &[115.0, 125.0, 135.0], &hi);
        let s = wall_significance(&old, &overlapping, 0.05);
        assert_eq!((s.test, s.significant, s.p_value), (ROUND_INTERVALS, false, None));
        let apart = wall(125.0, 5.0, &[120.0, 125.0, 130.0], &hi);
        let s = wall_significance(&old, &apart, 0.05);
        assert_eq!((s.test, s.significant), (ROUND_INTERVALS, true));
        // One side with one round: the samples decide.
        let one_round = wall(125.0, 15.0, &[], &hi);
        let s = wall_significance(&old, &one_round, 0.05);
        assert_eq!((s.test, s.significant), ("mann-whitney", true));
    }

    #[test]
    fn erfc_matches_known_values() {
        assert!((erfc(0.0) - 1.0).abs() < 1e-7);
        assert!((erfc(1.0) - 0.157_299_207).abs() < 1e-7);
        assert!((erfc(-1.0) - 1.842_700_793).abs() < 1e-7);
    }

    #[test]
    fn thresholds_both_ways() {
        assert_eq!(beyond_threshold(1.1, 0.05), Some(Direction::Up));
        assert_eq!(beyond_threshold(0.9, 0.05), Some(Direction::Down));
        assert_eq!(beyond_threshold(1.03, 0.05), None);
        assert_eq!(beyond_threshold(1.0 / 1.03, 0.05), None);
        assert_eq!(beyond_threshold(f64::NAN, 0.05), None);
    }
}
