//! A small kit of hand-drawn SVG charts (log scales, axes, bars, lines),
//! apart from the page that decides what to chart (as criterion.rs keeps
//! `plot/` apart from `html/`).

mod bar;
mod line;

use std::fmt::Write;

use super::{esc, num};
use crate::export::model::table;

pub use bar::{bar_chart, Bar, BarGroup, BarValue};
pub use line::{line_chart, Line, Metric};

/// Powers of ten from the one at or below `min` to the one at or above
/// `max`, at least two (one decade) so that every value has an axis.
pub fn log_ticks(min: f64, max: f64) -> Vec<f64> {
    assert!(min > 0.0 && max >= min, "log ticks of {min}..{max}");
    let lo = (min.log10() + 1e-9).floor() as i32;
    let hi = ((max.log10() - 1e-9).ceil() as i32).max(lo + 1);
    (lo..=hi).map(|k| 10f64.powi(k)).collect()
}

/// Axis label of a time: 1000 -> "1 µs", 1e5 -> "100 µs".
pub fn tick_ns(ns: f64) -> String {
    let (v, unit) = table::scaled_ns(ns);
    format!("{} {unit}", num(v))
}

/// Axis label of a rate given in MB/s (10^6 bytes per second).
pub fn tick_mb_s(v: f64) -> String {
    if v >= 1e3 {
        format!("{} GB/s", num(v / 1e3))
    } else if v >= 1.0 {
        format!("{} MB/s", num(v))
    } else {
        format!("{} kB/s", num(v * 1e3))
    }
}

/// 1024 -> "1 KiB".
pub fn size_label(n: usize) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} B")
    }
}

/// Grid lines, the axis line and labelled ticks of a horizontal log axis.
pub fn x_axis(s: &mut String, scale: &LogScale, ticks: &[f64], y0: f64, y1: f64, label: fn(f64) -> String) {
    for &t in &ticks[..ticks.len() - 1] {
        for m in 2..10 {
            let x = scale.at(t * m as f64);
            let _ = write!(
                s,
                "<line class=\"minor\" x1=\"{x:.1}\" y1=\"{y0:.1}\" x2=\"{x:.1}\" y2=\"{y1:.1}\"/>"
            );
        }
    }
    for &t in ticks {
        let x = scale.at(t);
        let _ = write!(
            s,
            "<g class=\"tick\"><line class=\"grid\" x1=\"{x:.1}\" y1=\"{y0:.1}\" x2=\"{x:.1}\" y2=\"{y1:.1}\"/>\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text></g>",
            y1 + 15.0,
            esc(&label(t))
        );
    }
    let _ = write!(
        s,
        "<line class=\"axis\" x1=\"{:.1}\" y1=\"{y1:.1}\" x2=\"{:.1}\" y2=\"{y1:.1}\"/>",
        scale.a, scale.b
    );
}

/// One chart as a figure: its caption (and a quieter subtitle) above the
/// SVG drawing `body`, `w` × `h` user units.
pub fn figure(caption: &str, sub: &str, w: f64, h: f64, body: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<figure><figcaption>{}{}</figcaption>\n\
         <svg class=\"chart\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"{}\">",
        esc(caption),
        if sub.is_empty() {
            String::new()
        } else {
            format!(" <span>{}</span>", esc(sub))
        },
        esc(caption)
    );
    out.push_str(body);
    out.push_str("</svg></figure>\n");
    out
}

/// Maps `lo..=hi` (values, log scale) onto pixels `a..=b`.
pub struct LogScale {
    lo: f64,
    hi: f64,
    a: f64,
    b: f64,
}

impl LogScale {
    pub fn new(lo: f64, hi: f64, a: f64, b: f64) -> LogScale {
        LogScale {
            lo: lo.log10(),
            hi: hi.log10(),
            a,
            b,
        }
    }

    pub fn at(&self, v: f64) -> f64 {
        self.a + (v.log10() - self.lo) / (self.hi - self.lo) * (self.b - self.a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks() {
        assert_eq!(log_ticks(1500.0, 2.3e6), vec![1e3, 1e4, 1e5, 1e6, 1e7]);
        assert_eq!(log_ticks(1000.0, 1000.0), vec![1e3, 1e4]);
        assert_eq!(log_ticks(1000.0, 1e5), vec![1e3, 1e4, 1e5]);
        assert_eq!(log_ticks(0.02, 0.5), vec![0.01, 0.1, 1.0]);
        let labels: Vec<String> = log_ticks(150.0, 2e9).into_iter().map(tick_ns).collect();
        assert_eq!(
            labels,
            ["100 ns", "1 µs", "10 µs", "100 µs", "1 ms", "10 ms", "100 ms", "1 s", "10 s"]
        );
        assert_eq!(tick_mb_s(0.01), "10 kB/s");
        assert_eq!(tick_mb_s(1000.0), "1 GB/s");
        assert_eq!(size_label(1_048_576), "1 MiB");
        assert_eq!(size_label(64), "64 B");
    }
}
