//! Statistics of samples, shared by the adapters' timing (`results::WallTime`)
//! and the runner's reports (its `stats` module re-exports these), and the
//! one method that turns raw samples into figures: criterion's own
//! percentile bootstrap ([`bootstrap_interval`]), with a fixed seed.

/// The median of `values` in any order; NaN when there are none.
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    median_of_sorted(&sorted)
}

/// The median of values sorted in ascending order; NaN when there are none.
pub fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// The 0.975 quantile of Student's t distribution with `df` degrees of
/// freedom (two-sided 95% intervals): exact to three decimals up to 30
/// (the standard table), then the Cornish-Fisher expansion about 1.96.
pub fn student_t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df - 1],
        _ => {
            let (z, n) = (1.959_964_f64, df as f64);
            z + (z.powi(3) + z) / (4.0 * n) + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * n * n)
        }
    }
}

/// Mean and sample standard deviation (n - 1); the deviation is 0 for one value.
pub fn mean_and_sd(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (mean, var.sqrt())
}

/// The seed of every bootstrap: the same samples give the same interval.
const BOOTSTRAP_SEED: u64 = 0x6462_7573_2d6d_6174; // "dbus-mat"

/// splitmix64: a small, well-known generator, enough to draw resample indices.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// An index below `n` (n is far below 2^32: the modulo bias is negligible).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The `p`-th percentile (0..=100) of sorted values, interpolating linearly
/// between neighbours, as criterion's `Percentiles::at` does.
pub fn percentile_of_sorted(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    match n {
        0 => f64::NAN,
        1 => sorted[0],
        _ => {
            let rank = (p / 100.0) * (n - 1) as f64;
            let (lo, frac) = (rank.floor() as usize, rank.fract());
            if lo + 1 >= n {
                sorted[n - 1]
            } else {
                sorted[lo] + (sorted[lo + 1] - sorted[lo]) * frac
            }
        }
    }
}

/// The 95% percentile-bootstrap interval of `statistic` over `values`:
/// `resamples` resamples with replacement (fixed seed), the 2.5th and 97.5th
/// percentiles of the statistic over them. This is criterion's method for
/// the intervals of its mean and median.
pub fn bootstrap_interval(values: &[f64], resamples: usize, statistic: impl Fn(&mut [f64]) -> f64) -> (f64, f64) {
    let mut rng = SplitMix64(BOOTSTRAP_SEED);
    let mut resample = vec![0.0; values.len()];
    let mut stats: Vec<f64> = (0..resamples.max(1))
        .map(|_| {
            for slot in resample.iter_mut() {
                *slot = values[rng.below(values.len())];
            }
            statistic(&mut resample)
        })
        .collect();
    stats.sort_by(f64::total_cmp);
    (percentile_of_sorted(&stats, 2.5), percentile_of_sorted(&stats, 97.5))
}

/// The mean of `values` (a bootstrap statistic).
pub fn mean(values: &mut [f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// The median of `values`, reordering them (a bootstrap statistic).
pub fn median_in_place(values: &mut [f64]) -> f64 {
    values.sort_unstable_by(f64::total_cmp);
    median_of_sorted(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_meet_the_table_and_the_normal_limit() {
        assert_eq!(student_t_975(1), 12.706);
        assert_eq!(student_t_975(4), 2.776);
        // continuous at the end of the table (2.042 at 30; 2.040 at 31 in the table)
        assert!((student_t_975(31) - 2.040).abs() < 0.002, "{}", student_t_975(31));
        assert!((student_t_975(60) - 2.000).abs() < 0.002, "{}", student_t_975(60));
        assert!((student_t_975(100_000) - 1.960).abs() < 0.001);
        assert!(student_t_975(0).is_infinite());
    }

    #[test]
    fn mean_and_sample_deviation() {
        assert_eq!(mean_and_sd(&[2.0, 4.0, 6.0]), (4.0, 2.0));
        assert_eq!(mean_and_sd(&[5.0]), (5.0, 0.0));
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median_of_sorted(&[1.0, 2.0, 10.0]), 2.0);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn percentiles_interpolate_like_criterion() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(percentile_of_sorted(&v, 50.0), 3.0);
        assert_eq!(percentile_of_sorted(&v, 2.5), 1.1);
        assert_eq!(percentile_of_sorted(&v, 100.0), 5.0);
        assert_eq!(percentile_of_sorted(&[7.0], 97.5), 7.0);
    }

    #[test]
    fn bootstrap_intervals_hold_the_estimate_and_repeat_exactly() {
        let v: Vec<f64> = (0..50).map(|i| 100.0 + f64::from(i % 7)).collect();
        let (lo, hi) = bootstrap_interval(&v, 2000, mean);
        let m = mean(&mut v.clone());
        assert!(lo < m && m < hi, "{lo} {m} {hi}");
        assert_eq!((lo, hi), bootstrap_interval(&v, 2000, mean));
        // Constant samples: a zero-width interval.
        assert_eq!(bootstrap_interval(&[5.0; 9], 100, median_in_place), (5.0, 5.0));
    }
}
