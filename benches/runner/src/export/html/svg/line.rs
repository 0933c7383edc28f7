//! Log-log line charts of a figure against message size.

use std::fmt::Write;

use super::{esc, figure, log_ticks, size_label, tick_mb_s, tick_ns, LogScale};

#[derive(Clone, Copy)]
pub enum Metric {
    Latency,
    Throughput,
}

pub struct Line {
    pub label: String,
    pub colour: &'static str,
    pub dashed: bool,
    /// (size, median ns, throughput bytes).
    pub points: Vec<(usize, f64, u64)>,
}

/// One line per entry of `lines` over the message sizes, log-log; `None`
/// when there is nothing to draw.
pub fn line_chart(caption: &str, sub: &str, lines: &[Line], metric: Metric) -> Option<String> {
    let y_of = |&(n, ns, bytes): &(usize, f64, u64)| match metric {
        Metric::Latency => ns,
        // MB/s: bytes per ns is GB/s.
        Metric::Throughput => (if bytes > 0 { bytes as f64 } else { n as f64 }) / ns * 1e3,
    };
    let ys: Vec<f64> = lines
        .iter()
        .flat_map(|l| l.points.iter().map(y_of))
        .filter(|y| *y > 0.0 && y.is_finite())
        .collect();
    let mut sizes: Vec<usize> = lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)).collect();
    sizes.sort();
    sizes.dedup();
    if ys.is_empty() || sizes.is_empty() {
        return None;
    }
    let yticks = log_ticks(
        ys.iter().copied().fold(f64::INFINITY, f64::min),
        ys.iter().copied().fold(0.0, f64::max),
    );
    // The legend goes below the plot, three entries a row.
    let legend_rows = lines.len().div_ceil(3);
    let w = 640.0;
    let plot_bottom = 290.0;
    let h = plot_bottom + 40.0 + 17.0 * legend_rows as f64;
    let (px0, px1, py0, py1) = (66.0, w - 16.0, plot_bottom, 10.0);
    let smin = (sizes[0].max(1) as f64).log10() - 0.15;
    let smax = (sizes[sizes.len() - 1].max(1) as f64).log10() + 0.15;
    let x_at = |n: usize| px0 + ((n.max(1) as f64).log10() - smin) / (smax - smin) * (px1 - px0);
    let ys_scale = LogScale::new(yticks[0], yticks[yticks.len() - 1], py0, py1);
    let ylabel: fn(f64) -> String = match metric {
        Metric::Latency => tick_ns,
        Metric::Throughput => tick_mb_s,
    };
    let mut s = String::new();
    for &t in &yticks[..yticks.len() - 1] {
        for m in 2..10 {
            let y = ys_scale.at(t * m as f64);
            let _ = write!(
                s,
                "<line class=\"minor\" x1=\"{px0}\" y1=\"{y:.1}\" x2=\"{px1}\" y2=\"{y:.1}\"/>"
            );
        }
    }
    for &t in &yticks {
        let y = ys_scale.at(t);
        let _ = write!(
            s,
            "<g class=\"tick\"><line class=\"grid\" x1=\"{px0}\" y1=\"{y:.1}\" x2=\"{px1}\" y2=\"{y:.1}\"/>\
             <text x=\"{:.1}\" y=\"{y:.1}\" text-anchor=\"end\" dominant-baseline=\"central\">{}</text></g>",
            px0 - 6.0,
            esc(&ylabel(t))
        );
    }
    // A size's label is left out when it would run into the previous one.
    let mut last_label_end = f64::NEG_INFINITY;
    for &n in &sizes {
        let x = x_at(n);
        let label = size_label(n);
        let half = 3.4 * label.chars().count() as f64;
        let text = if x - half > last_label_end + 4.0 {
            last_label_end = x + half;
            format!(
                "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{label}</text>",
                py0 + 15.0
            )
        } else {
            String::new()
        };
        let _ = write!(
            s,
            "<g class=\"tick\"><line class=\"grid\" x1=\"{x:.1}\" y1=\"{py1}\" x2=\"{x:.1}\" y2=\"{py0}\"/>{text}</g>"
        );
    }
    let _ = write!(
        s,
        "<line class=\"axis\" x1=\"{px0}\" y1=\"{py0}\" x2=\"{px1}\" y2=\"{py0}\"/>\
         <line class=\"axis\" x1=\"{px0}\" y1=\"{py0}\" x2=\"{px0}\" y2=\"{py1}\"/>\
         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" style=\"font-size:10px\">message size</text>",
        (px0 + px1) / 2.0,
        py0 + 30.0
    );
    for (li, l) in lines.iter().enumerate() {
        let pts: Vec<String> = l
            .points
            .iter()
            .map(|p| format!("{:.1},{:.1}", x_at(p.0), ys_scale.at(y_of(p))))
            .collect();
        let dash = if l.dashed { " stroke-dasharray=\"6 4\"" } else { "" };
        let _ = write!(
            s,
            "<g><title>{}</title><polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{dash}/>",
            esc(&l.label),
            pts.join(" "),
            l.colour,
            if l.dashed { 1.5 } else { 2.0 }
        );
        for p in &l.points {
            let v = y_of(p);
            let _ = write!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"{}\" fill=\"{}\"><title>{}, {}: {}</title></circle>",
                x_at(p.0),
                ys_scale.at(v),
                if l.dashed { 2.0 } else { 2.8 },
                l.colour,
                esc(&l.label),
                size_label(p.0),
                ylabel(v)
            );
        }
        s.push_str("</g>");
        // Legend, below the plot.
        let ly = py0 + 48.0 + (li / 3) as f64 * 17.0;
        let lx = px0 + (li % 3) as f64 * 190.0;
        let mut label = l.label.clone();
        if label.chars().count() > 26 {
            label = label.chars().take(25).collect::<String>() + "…";
        }
        let _ = write!(
            s,
            "<line x1=\"{lx:.1}\" y1=\"{ly:.1}\" x2=\"{:.1}\" y2=\"{ly:.1}\" stroke=\"{}\" stroke-width=\"2\"{dash}/>\
             <text x=\"{:.1}\" y=\"{ly:.1}\" dominant-baseline=\"central\"><title>{}</title>{}</text>",
            lx + 18.0,
            l.colour,
            lx + 23.0,
            esc(&l.label),
            esc(&label)
        );
    }
    Some(figure(caption, sub, w, h, &s))
}
