//! The interval width of a timed cell: one definition for every format.
//!
//! A cell's width is the width of its median's 95% interval relative to the
//! median, `(upper - lower) / median` (`WallTime::relative_width`), the unit
//! of the profile's `target_width`. A cell measured in several rounds has
//! the interval of the variation between its round medians; a one-round cell
//! criterion's bootstrap interval. Machine formats (CSV and JSON `ci_width`)
//! carry this fraction; the formats for people (Markdown, HTML) print it as
//! plus or minus half of it in percent: `±1.4%` is a width of 0.028.
//!
//! A cell is flagged (`above_target`, `‡`) when its width is above the
//! profile's `target_width` (`plan.fingerprint.profile`); files without a
//! plan or a target flag nothing. A cut cell (`Measurement::cut`: one slow
//! operation timed once) has one sample and no interval: no width, no flag,
//! and every format says it was cut.

use harness::results::{Measurement, ResultsFile};

/// What marks a cell whose interval is wider than the target.
pub const FLAG: &str = "‡";

/// The width facts of one timed cell.
#[derive(Clone, Debug, PartialEq)]
pub struct Width<'a> {
    /// `(upper - lower) / median`; `None` for a cut cell or a zero median.
    pub relative: Option<f64>,
    /// Rounds the cell was measured in (1: one round, or a file from before rounds).
    pub rounds: usize,
    /// The width is above the profile's target.
    pub above_target: bool,
    /// Why the timing was cut to one operation.
    pub cut: Option<&'a str>,
}

/// The profile's target width, when the file records one.
pub fn target(r: &ResultsFile) -> Option<f64> {
    r.plan.as_ref().and_then(|p| p.fingerprint.profile.target_width)
}

/// The rounds every cell of the run got at least, when the file records it.
pub fn planned_rounds(r: &ResultsFile) -> Option<u32> {
    r.plan.as_ref().map(|p| p.fingerprint.profile.rounds)
}

pub fn of(m: &Measurement, target: Option<f64>) -> Width<'_> {
    let cut = m.cut.as_deref();
    let relative = if cut.is_some() { None } else { m.wall.relative_width() };
    Width {
        relative,
        rounds: m.wall.round_medians_ns.len().max(1),
        above_target: matches!((relative, target), (Some(w), Some(t)) if w > t),
        cut,
    }
}

/// A relative width as people read it: `±` half of it in percent.
pub fn percent(relative: f64) -> String {
    let half = relative * 50.0;
    let digits = if half >= 10.0 {
        0
    } else if half >= 1.0 {
        1
    } else {
        2
    };
    format!("±{half:.digits$}%")
}

/// The rounds of a cell worth printing next to it: when it had several and
/// the run's plan does not say every cell had that many.
pub fn rounds_text(w: &Width, planned: Option<u32>) -> Option<String> {
    (w.rounds > 1 && planned != Some(w.rounds as u32)).then(|| format!("{} rounds", w.rounds))
}

/// Counts over the timed cells of a file, for the legends.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    pub target: Option<f64>,
    pub timed: usize,
    pub above_target: usize,
    pub cut: usize,
}

pub fn summary(r: &ResultsFile) -> Summary {
    let target = target(r);
    let mut s = Summary {
        target,
        ..Summary::default()
    };
    for w in r.cells.iter().filter_map(|c| c.measurement()).map(|m| of(m, target)) {
        s.timed += 1;
        s.above_target += usize::from(w.above_target);
        s.cut += usize::from(w.cut.is_some());
    }
    s
}

/// The legend sentences on width, rounds and the target, shared by the
/// Markdown and HTML reports (plain text); `None` without timed cells.
pub fn legend(r: &ResultsFile) -> Option<String> {
    let sum = summary(r);
    if sum.timed == 0 {
        return None;
    }
    let mut s = String::from(
        "±: half the width of the median's 95% interval, in percent of the median (the interval of the variation \
         between rounds when a cell was measured in several rounds, else criterion's).",
    );
    if let Some(p) = r.plan.as_ref().map(|p| &p.fingerprint.profile) {
        if p.max_rounds > 1 {
            s += &format!(
                " Every timed cell: {} rounds, up to {} while its interval is wider than the target; a cell with \
                 another count says so.",
                p.rounds, p.max_rounds
            );
        }
    }
    if let Some(t) = sum.target {
        s += &format!(
            " {FLAG}: wider than the profile's target width {t} ({}): {} of {} timed cells.",
            percent(t),
            sum.above_target,
            sum.timed
        );
    }
    if sum.cut > 0 {
        s += &format!(
            " cut: {} timed one operation once (over the profile's cell budget): one sample, no interval.",
            if sum.cut == 1 {
                "1 cell".to_string()
            } else {
                format!("{} cells", sum.cut)
            }
        );
    }
    Some(s)
}

/// The note a cut cell's footnote carries.
pub fn cut_note(adapter: &str, scenario: &str, reason: &str) -> String {
    format!("{adapter} {scenario} cut, timed once: {reason}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_is_half_the_relative_width() {
        assert_eq!(percent(0.028), "±1.4%");
        assert_eq!(percent(0.005), "±0.25%");
        assert_eq!(percent(0.3), "±15%");
    }

    #[test]
    fn flags_above_the_target_and_never_a_cut_cell() {
        let mut r = crate::export::test_fixtures::tiny();
        let m = r.cells[0].measurement_mut().unwrap();
        // tiny(): the interval is ±10% of the median.
        assert!(of(m, Some(0.1)).above_target);
        assert!(!of(m, Some(0.25)).above_target);
        assert!(!of(m, None).above_target);
        assert_eq!(of(m, None).rounds, 1);
        m.wall.round_medians_ns = vec![1.0, 2.0, 3.0];
        assert_eq!(of(m, None).rounds, 3);
        m.cut = Some("one operation took 9 s".into());
        let w = of(m, Some(0.1));
        assert_eq!((w.relative, w.above_target), (None, false));
    }

    #[test]
    fn rounds_shown_when_several_and_not_the_planned_count() {
        let w = |rounds| Width {
            relative: Some(0.1),
            rounds,
            above_target: false,
            cut: None,
        };
        assert_eq!(rounds_text(&w(1), None), None);
        assert_eq!(rounds_text(&w(5), None).as_deref(), Some("5 rounds"));
        assert_eq!(rounds_text(&w(5), Some(5)), None);
        assert_eq!(rounds_text(&w(7), Some(5)).as_deref(), Some("7 rounds"));
    }
}
