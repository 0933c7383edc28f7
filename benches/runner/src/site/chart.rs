//! A scenario's figure over runs: per library a line of medians (log time
//! axis) with its 95% interval as a band, `history`'s steps as triangles
//! (▲ slower, ▼ faster) and a dashed red line where a run is not like for
//! like with the one before it. Each point carries its run, adapter and
//! median (`data-*`), so a test can read the chart against the results file.

use std::fmt::Write;

use crate::analyze::history::Step;
use crate::export::html::esc;
use crate::export::html::svg::{figure, log_ticks, tick_ns, LogScale};

pub struct Point {
    /// Index into the chart's runs.
    pub x: usize,
    /// The run's index in the site.
    pub run: usize,
    pub median: f64,
    pub lower: f64,
    pub upper: f64,
    pub step: Option<Step>,
    pub title: String,
}

pub struct Line {
    pub label: String,
    pub adapter: String,
    pub colour: &'static str,
    /// Ok points only, by `x`.
    pub points: Vec<Point>,
}

/// Run `x` is not like for like with the chart's run before it.
pub struct Break {
    pub x: usize,
    pub why: Vec<String>,
}

const W: f64 = 640.0;
const H: f64 = 300.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 14.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 40.0;

/// `None` when no line has a point.
pub fn chart(caption: &str, sub: &str, runs: &[String], lines: &[Line], breaks: &[Break]) -> Option<String> {
    let values = lines
        .iter()
        .flat_map(|l| &l.points)
        .flat_map(|p| [p.lower, p.median, p.upper]);
    let values: Vec<f64> = values.filter(|v| v.is_finite() && *v > 0.0).collect();
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(0.0, f64::max);
    if values.is_empty() || runs.is_empty() {
        return None;
    }
    let ticks = log_ticks(min, max);
    let y = LogScale::new(ticks[0], ticks[ticks.len() - 1], H - BOTTOM, TOP);
    let step = (W - LEFT - RIGHT) / runs.len() as f64;
    let x = |i: usize| LEFT + step * (i as f64 + 0.5);
    let at = |v: f64| y.at(v.max(ticks[0]));
    let mut s = String::new();
    for &t in &ticks {
        let ty = y.at(t);
        let _ = write!(
            s,
            "<g class=\"tick\"><line class=\"grid\" x1=\"{LEFT}\" y1=\"{ty:.1}\" x2=\"{:.1}\" y2=\"{ty:.1}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text></g>",
            W - RIGHT,
            LEFT - 4.0,
            ty + 4.0,
            esc(&tick_ns(t))
        );
    }
    let _ = write!(
        s,
        "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\"/>",
        H - BOTTOM,
        W - RIGHT,
        H - BOTTOM
    );
    // Label every run when they fit, else about twelve of them.
    let every = runs.len().div_ceil(12).max(1);
    for (i, label) in runs.iter().enumerate() {
        if i % every == 0 || i + 1 == runs.len() {
            let _ = write!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                x(i),
                H - BOTTOM + 15.0,
                esc(label)
            );
        }
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">run (oldest first)</text>",
        LEFT + (W - LEFT - RIGHT) / 2.0,
        H - 6.0
    );
    for b in breaks {
        let bx = x(b.x) - step / 2.0;
        let _ = write!(
            s,
            "<g class=\"break\"><title>Not like for like with the run before: {}</title>\
             <line class=\"lfl\" x1=\"{bx:.1}\" y1=\"{TOP}\" x2=\"{bx:.1}\" y2=\"{:.1}\"/>\
             <text class=\"lfl\" x=\"{bx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">≠</text></g>",
            esc(&b.why.join("; ")),
            H - BOTTOM,
            TOP - 4.0
        );
    }
    for l in lines {
        if l.points.is_empty() {
            continue;
        }
        let _ = write!(s, "<g class=\"line\" data-adapter=\"{}\">", esc(&l.adapter));
        let upper = l.points.iter().map(|p| format!("{:.1},{:.1}", x(p.x), at(p.upper)));
        let lower = l
            .points
            .iter()
            .rev()
            .map(|p| format!("{:.1},{:.1}", x(p.x), at(p.lower)));
        let band: Vec<String> = if l.points.len() == 1 {
            // One run: a small box around its interval.
            let p = &l.points[0];
            let (x0, x1) = (x(p.x) - 4.0, x(p.x) + 4.0);
            vec![
                format!("{x0:.1},{:.1}", at(p.upper)),
                format!("{x1:.1},{:.1}", at(p.upper)),
                format!("{x1:.1},{:.1}", at(p.lower)),
                format!("{x0:.1},{:.1}", at(p.lower)),
            ]
        } else {
            upper.chain(lower).collect()
        };
        let _ = write!(
            s,
            "<polygon class=\"band\" fill=\"{}\" points=\"{}\"/>",
            l.colour,
            band.join(" ")
        );
        let path: Vec<String> = l
            .points
            .iter()
            .map(|p| format!("{:.1},{:.1}", x(p.x), at(p.median)))
            .collect();
        let _ = write!(
            s,
            "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\" points=\"{}\"/>",
            l.colour,
            path.join(" ")
        );
        for p in &l.points {
            let (px, py) = (x(p.x), at(p.median));
            let _ = write!(
                s,
                "<circle class=\"pt\" cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"3\" fill=\"{}\" data-run=\"{}\" \
                 data-ns=\"{}\"><title>{}</title></circle>",
                l.colour,
                p.run,
                p.median,
                esc(&p.title)
            );
            let mark = match p.step {
                Some(Step::Up) => Some(format!(
                    "{px:.1},{:.1} {:.1},{:.1} {:.1},{:.1}",
                    py - 14.0,
                    px - 5.0,
                    py - 6.0,
                    px + 5.0,
                    py - 6.0
                )),
                Some(Step::Down) => Some(format!(
                    "{px:.1},{:.1} {:.1},{:.1} {:.1},{:.1}",
                    py + 14.0,
                    px - 5.0,
                    py + 6.0,
                    px + 5.0,
                    py + 6.0
                )),
                None => None,
            };
            if let Some(points) = mark {
                let _ = write!(s, "<polygon class=\"step\" fill=\"{}\" points=\"{points}\"/>", l.colour);
            }
        }
        s.push_str("</g>");
    }
    Some(figure(caption, sub, W, H, &s))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(x: usize, median: f64, step: Option<Step>) -> Point {
        Point {
            x,
            run: x,
            median,
            lower: median * 0.9,
            upper: median * 1.1,
            step,
            title: String::new(),
        }
    }

    #[test]
    fn bands_steps_and_breaks() {
        let line = Line {
            label: "zbus".into(),
            adapter: "zbus-5".into(),
            colour: "#4e79a7",
            points: vec![point(0, 1000.0, None), point(2, 2000.0, Some(Step::Up))],
        };
        let runs = ["#1".to_string(), "#2".into(), "#3".into()];
        let svg = chart(
            "c",
            "",
            &runs,
            &[line],
            &[Break {
                x: 1,
                why: vec!["CPU: a → b".into()],
            }],
        )
        .unwrap();
        assert_eq!(svg.matches("class=\"pt\"").count(), 2);
        assert!(svg.contains("data-ns=\"2000\""));
        assert_eq!(svg.matches("class=\"step\"").count(), 1);
        assert_eq!(svg.matches("class=\"band\"").count(), 1);
        assert!(svg.contains("CPU: a → b") && svg.contains("≠"));
        assert!(chart("c", "", &runs, &[], &[]).is_none());
    }
}
