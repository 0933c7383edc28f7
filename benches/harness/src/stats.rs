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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median_of_sorted(&[1.0, 2.0, 10.0]), 2.0);
        assert!(median(&[]).is_nan());
    }
}
