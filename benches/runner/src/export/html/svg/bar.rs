//! Horizontal log-scale bar charts, bars in labelled groups.

use std::fmt::Write;

use super::{esc, figure, log_ticks, tick_ns, x_axis, LogScale};
use crate::export::model::table::duration;

/// What one bar shows.
pub enum BarValue<'a> {
    /// A median time per operation, in ns (positive and finite).
    Time(f64),
    /// A cell that ran without a time: its status word and reason.
    NotMeasured { status: &'static str, reason: &'a str },
    /// No such cell.
    Absent,
}

pub struct Bar<'a> {
    pub colour: &'static str,
    pub value: BarValue<'a>,
    /// The bus, in grouped charts.
    pub name: String,
}

impl Bar<'_> {
    pub fn time(&self) -> Option<f64> {
        match self.value {
            BarValue::Time(v) => Some(v),
            _ => None,
        }
    }
}

pub struct BarGroup<'a> {
    pub label: String,
    pub bars: Vec<Bar<'a>>,
}

/// Bars from `x0` rightwards on a log axis of time; `floor` is a dashed line
/// under the bars (the raw-socket floor).
pub fn bar_chart(
    caption: &str,
    sub: &str,
    groups: &[BarGroup],
    legend: &[(String, &'static str)],
    floor: Option<f64>,
) -> String {
    let per_group = groups.iter().map(|g| g.bars.len()).max().unwrap_or(1);
    let (bar_h, bar_gap, group_gap, font) = if per_group == 1 {
        (14.0, 0.0, 6.0, 11.0)
    } else {
        (10.0, 1.0, 10.0, 9.0)
    };
    // A log axis holds positive, finite times only: a floor or bar of 0 or
    // less (a damaged file) is left out rather than drawn at -infinity.
    let drawable = |v: &f64| *v > 0.0 && v.is_finite();
    let floor = floor.filter(drawable);
    let values: Vec<f64> = groups
        .iter()
        .flat_map(|g| g.bars.iter().filter_map(Bar::time))
        .chain(floor)
        .filter(drawable)
        .collect();
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(0.0, f64::max);
    let ticks = match values.is_empty() {
        true => log_ticks(1.0, 10.0),
        false => log_ticks(min, max),
    };
    let longest = groups.iter().map(|g| g.label.chars().count()).max().unwrap_or(0);
    let w = 640.0;
    let x0 = (12.0 + 6.3 * longest as f64).clamp(80.0, 240.0);
    let x1 = w - 64.0;
    let top = if legend.is_empty() { 6.0 } else { 36.0 };
    let group_h = per_group as f64 * (bar_h + bar_gap) - bar_gap;
    let plot_h = groups.len() as f64 * (group_h + group_gap);
    let h = top + plot_h + 26.0;
    let scale = LogScale::new(ticks[0], ticks[ticks.len() - 1], x0, x1);
    let mut s = String::new();
    // Legend.
    let mut lx = x0;
    for (name, colour) in legend {
        let _ = write!(
            s,
            "<rect x=\"{lx:.1}\" y=\"6\" width=\"11\" height=\"11\" fill=\"{colour}\"/><text x=\"{:.1}\" y=\"15.5\">{}</text>",
            lx + 15.0,
            esc(name)
        );
        lx += 15.0 + 7.0 * name.chars().count() as f64 + 16.0;
    }
    x_axis(&mut s, &scale, &ticks, top, top + plot_h, tick_ns);
    // Under the bars, so that their value labels stay readable.
    if let Some(f) = floor {
        let x = scale.at(f);
        let _ = write!(
            s,
            "<g><title>raw-socket floor: {}</title><line x1=\"{x:.1}\" y1=\"{top:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#444\" stroke-width=\"1.2\" stroke-dasharray=\"4 3\"/>\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" style=\"font-size:9px\">floor {}</text></g>",
            duration(f),
            top + plot_h,
            top - 3.0,
            duration(f)
        );
    }
    for (gi, g) in groups.iter().enumerate() {
        let gy = top + gi as f64 * (group_h + group_gap) + group_gap / 2.0;
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" dominant-baseline=\"central\">{}</text>",
            x0 - 6.0,
            gy + group_h / 2.0,
            esc(&g.label)
        );
        for (bi, b) in g.bars.iter().enumerate() {
            let y = gy + bi as f64 * (bar_h + bar_gap);
            let who = if b.name.is_empty() {
                g.label.clone()
            } else {
                format!("{} on {}", g.label, b.name)
            };
            match b.value {
                BarValue::Time(v) if drawable(&v) => {
                    let xe = scale.at(v).max(x0 + 1.0);
                    let _ = write!(
                        s,
                        "<g><title>{}: {}</title><rect x=\"{x0:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{bar_h}\" fill=\"{}\"/>\
                         <text class=\"v\" x=\"{:.1}\" y=\"{:.1}\" dominant-baseline=\"central\" style=\"font-size:{font}px\">{}</text></g>",
                        esc(&who),
                        duration(v),
                        xe - x0,
                        b.colour,
                        xe + 4.0,
                        y + bar_h / 2.0,
                        duration(v)
                    );
                }
                BarValue::NotMeasured { status: word, reason } => {
                    let _ = write!(
                        s,
                        "<g><title>{}: {word}: {}</title><rect x=\"{x0:.1}\" y=\"{y:.1}\" width=\"3\" height=\"{bar_h}\" fill=\"{}\"/>\
                         <text class=\"na {word}\" x=\"{:.1}\" y=\"{:.1}\" dominant-baseline=\"central\" style=\"font-size:{font}px\">{word}</text></g>",
                        esc(&who),
                        esc(reason),
                        b.colour,
                        x0 + 7.0,
                        y + bar_h / 2.0
                    );
                }
                BarValue::Time(_) | BarValue::Absent => {}
            }
        }
    }
    figure(caption, sub, w, h, &s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A floor or bar of zero or less (only a damaged file has one) is left
    /// out of the axis instead of failing it ("log ticks of 0").
    #[test]
    fn a_floor_or_bar_of_zero_or_less_is_left_out() {
        let bar = |v: f64| BarGroup {
            label: "a".into(),
            bars: vec![Bar {
                colour: "#000",
                value: BarValue::Time(v),
                name: String::new(),
            }],
        };
        for floor in [0.0, -1.0, f64::NAN] {
            let svg = bar_chart("c", "", &[bar(1000.0)], &[], Some(floor));
            assert!(!svg.contains("floor") && !svg.contains("NaN"), "{svg}");
            let svg = bar_chart("c", "", &[bar(floor)], &[], Some(500.0));
            assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
        }
        let svg = bar_chart("c", "", &[bar(0.0)], &[], None);
        assert!(!svg.contains("NaN"), "{svg}");
    }
}
