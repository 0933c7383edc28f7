//! A cell measured in rounds: each round is one `bench` of the adapter (its
//! own process, verification, warm-up and samples), and the rounds of a
//! cell are spread over the run, between the other cells of its group, so a
//! slow phase of the machine lands in one round, not in the whole cell.
//!
//! The combined estimate: the median of the round medians, with the 95%
//! Student-t interval of the round medians (t(0.975, R-1) x s / sqrt(R),
//! s their sample standard deviation), centred on that median. It reflects
//! how much the figure moves between rounds (what a rerun sees), unlike a
//! single round's interval, which only knows its own samples.

use harness::results::{Estimate, Measurement, WallTime};
use harness::stats::{mean_and_sd, median, student_t_975};

use crate::matrix::Profile;

/// Combines the rounds of one cell (at least one); one round is returned as it is.
pub fn combine(mut rounds: Vec<Measurement>) -> Measurement {
    assert!(!rounds.is_empty(), "a cell has at least one round");
    if rounds.len() == 1 {
        return rounds.pop().expect("one round");
    }
    let medians: Vec<f64> = rounds.iter().map(|m| m.wall.median_ns.point).collect();
    let means: Vec<f64> = rounds.iter().map(|m| m.wall.mean_ns.point).collect();
    let all: Vec<f64> = rounds.iter().flat_map(|m| m.wall.sample_ns.iter().copied()).collect();
    let wall = WallTime {
        median_ns: around(median(&medians), &medians),
        mean_ns: around(mean_and_sd(&means).0, &means),
        std_dev_ns: mean_and_sd(&all).1,
        samples: rounds.iter().map(|m| m.wall.samples).sum(),
        iterations: rounds.iter().map(|m| m.wall.iterations).sum(),
        sample_ns: all,
        round_medians_ns: medians,
    };
    let mut first = rounds.remove(0);
    for later in rounds {
        for note in later.verification_notes {
            if !first.verification_notes.contains(&note) {
                first.verification_notes.push(note);
            }
        }
        // Costs are counted in the first round only.
        first.costs = first.costs.or(later.costs);
    }
    Measurement { wall, ..first }
}

/// `point` with the 95% t interval of `values`' mean as its half-width.
fn around(point: f64, values: &[f64]) -> Estimate {
    let (_, sd) = mean_and_sd(values);
    let half = student_t_975(values.len() - 1) * sd / (values.len() as f64).sqrt();
    Estimate {
        point,
        lower: (point - half).max(0.0),
        upper: point + half,
    }
}

/// Whether a cell with these rounds so far is finished: it has the
/// profile's rounds and its interval is within the target (or it cannot get
/// more rounds); a cut cell is finished after its one round.
pub fn finished(rounds: &[Measurement], profile: &Profile) -> bool {
    let n = rounds.len() as u32;
    if rounds.iter().any(|m| m.cut.is_some()) || n >= profile.max_rounds() {
        return true;
    }
    if n < profile.rounds {
        return false;
    }
    match profile.target_width {
        None => true,
        Some(target) => {
            let combined = combine(rounds.to_vec());
            combined.wall.relative_width().is_some_and(|w| w <= target)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(median: f64, samples: &[f64]) -> Measurement {
        let mut wall = WallTime::from_samples(samples);
        wall.median_ns = Estimate {
            point: median,
            lower: median * 0.99,
            upper: median * 1.01,
        };
        Measurement {
            wall,
            throughput_bytes: 1,
            alloc: None,
            alloc_unavailable: None,
            instructions_per_op: None,
            verification_notes: vec![format!("note {median}")],
            floor_ratio: None,
            costs: None,
            ipc_instructions: None,
            cut: None,
            placement: None,
            connection_memory: None,
        }
    }

    #[test]
    fn median_of_round_medians_with_a_t_interval() {
        let c = combine(vec![
            round(100.0, &[100.0, 101.0]),
            round(110.0, &[110.0]),
            round(90.0, &[90.0]),
        ]);
        assert_eq!(c.wall.median_ns.point, 100.0);
        // s = 10, t(0.975, 2) = 4.303: half-width 4.303 * 10 / sqrt(3) = 24.84
        let half = 4.303 * 10.0 / 3f64.sqrt();
        assert!((c.wall.median_ns.upper - (100.0 + half)).abs() < 1e-9);
        assert!((c.wall.median_ns.lower - (100.0 - half)).abs() < 1e-9);
        assert_eq!(c.wall.round_medians_ns, [100.0, 110.0, 90.0]);
        assert_eq!(c.wall.samples, 4);
        assert_eq!(c.wall.sample_ns.len(), 4);
        assert_eq!(c.verification_notes, ["note 100", "note 110", "note 90"]);
    }

    #[test]
    fn one_round_is_kept_as_measured() {
        let r = round(50.0, &[50.0, 51.0]);
        assert_eq!(combine(vec![r.clone()]), r);
    }

    fn profile(rounds: u32, max: u32, target: Option<f64>) -> Profile {
        let mut p: Profile = toml::from_str("sample_size = 10\nwarm_up = 0.1\nmeasurement = 0.1").unwrap();
        p.rounds = rounds;
        p.max_rounds = Some(max);
        p.target_width = target;
        p
    }

    #[test]
    fn noisy_cells_get_rounds_up_to_the_limit_and_quiet_ones_stop() {
        let p = profile(3, 5, Some(0.05));
        let quiet = [round(100.0, &[1.0]), round(100.5, &[1.0]), round(99.5, &[1.0])];
        let noisy = [round(100.0, &[1.0]), round(120.0, &[1.0]), round(80.0, &[1.0])];
        assert!(!finished(&quiet[..2], &p), "fewer than the profile's rounds");
        assert!(finished(&quiet, &p));
        assert!(!finished(&noisy, &p), "wide interval: another round");
        let five: Vec<_> = noisy.iter().chain(&noisy[..2]).cloned().collect();
        assert!(finished(&five, &p), "max_rounds reached");
        assert!(
            finished(&noisy, &profile(3, 5, None)),
            "no target: the profile's rounds"
        );
        let mut cut = round(1e10, &[1e10]);
        cut.cut = Some("one operation over the budget".into());
        assert!(finished(&[cut], &p));
    }
}
