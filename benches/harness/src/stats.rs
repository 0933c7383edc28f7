//! Statistics of samples, shared by the adapters' timing (`results::WallTime`)
//! and the runner's reports (its `stats` module re-exports these).

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
}
