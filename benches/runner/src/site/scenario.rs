//! A scenario's page: per bus (and role), the figure over runs
//! ([`chart`](super::chart)) and beside it the same data as a table (rows
//! libraries, columns runs: median, 95% interval, step, library version
//! where it changed), then what made runs not like for like. The steps are
//! `history`'s, computed once for the whole site.

use std::fmt::Write;

use harness::results::{CellKey, Role};

use super::chart::{self, Break, Line, Point};
use super::model::{Run, Site};
use super::page::{colour, page};
use crate::analyze::history::{Series, Step};
use crate::export::html::esc;
use crate::export::model::table::duration;

/// A figure's runs: the cells of one bus (none for codec cells) in one role.
type Place = (Option<String>, Role);

/// The page of `scenario`.
pub fn render(site: &Site, scenario: &str) -> String {
    let mut groups: Vec<(Place, Vec<&Series>)> = Vec::new();
    for s in site.history.series.iter().filter(|s| s.scenario == scenario) {
        let key = (s.bus.clone(), s.role);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(s),
            None => groups.push((key, vec![s])),
        }
    }
    let mut body = String::new();
    let summary = harness::scenario::find(scenario)
        .map(|s| s.summary.clone())
        .unwrap_or_default();
    let _ = writeln!(
        body,
        "<h1>Scenario <code>{}</code></h1>\n<p class=\"explain\">{}</p>\n<p class=\"explain\">Median wall time \
         per operation in each run that has the scenario, oldest first; the band is the median's 95% interval. \
         ▲/▼: a step (slower/faster) by <code>history</code>'s rule: more than {:.1}% from the level since the last \
         step and a significant change from the previous run (α = {}). A dashed red line (≠) marks a run that is not \
         like for like with the one before it (another machine, kernel, toolchain, bus daemon or placement); the \
         table beside each chart (below it on a narrow screen) lists the same figures.</p>",
        esc(scenario),
        esc(&summary),
        site.settings.threshold * 100.0,
        site.settings.alpha
    );
    for ((bus, role), series) in &groups {
        group(site, &mut body, bus.as_deref(), *role, series);
    }
    page(site, &format!("dbus-matrix · {scenario}"), &body, "")
}

fn group(site: &Site, out: &mut String, bus: Option<&str>, role: Role, series: &[&Series]) {
    let xs: Vec<usize> = (0..site.runs.len())
        .filter(|&j| series.iter().any(|s| s.points[j].status != "absent"))
        .collect();
    let labels: Vec<String> = xs.iter().map(|j| format!("#{}", j + 1)).collect();
    let lines: Vec<Line> = series.iter().map(|s| line(site, s, &xs)).collect();
    let breaks: Vec<Break> = xs
        .windows(2)
        .enumerate()
        .filter_map(|(i, w)| {
            let why = site.not_like_for_like(w[0], w[1], bus);
            (!why.is_empty()).then_some(Break { x: i + 1, why })
        })
        .collect();
    let place = match bus {
        Some(b) => format!("on {b}"),
        None => "no bus".to_string(),
    };
    let caption = format!("{}{}", place, role.label_suffix());
    let _ = write!(
        out,
        "<section data-bus=\"{}\"><h2>{}</h2>\n<div class=\"pair\">",
        esc(bus.unwrap_or("")),
        esc(&caption)
    );
    match chart::chart(&caption, "median per operation", &labels, &lines, &breaks) {
        Some(svg) => {
            out.push_str("<div>");
            out.push_str(&svg);
            out.push_str("<p class=\"legend\">");
            for l in &lines {
                let _ = write!(
                    out,
                    "<span data-lib=\"{}\"><i style=\"background:{}\"></i>{}</span>",
                    esc(&l.adapter),
                    l.colour,
                    esc(&l.label)
                );
            }
            out.push_str("</p></div>");
        }
        None => out.push_str("<p class=\"explain\">No run measured a time here.</p>"),
    }
    table(site, out, series, &xs);
    out.push_str("</div>\n");
    if !breaks.is_empty() {
        out.push_str("<p class=\"explain\">Not like for like:</p><ul>");
        for b in &breaks {
            let (a, c) = (xs[b.x - 1], xs[b.x]);
            let _ = write!(out, "<li>#{} → #{}: {}</li>", a + 1, c + 1, esc(&b.why.join("; ")));
        }
        out.push_str("</ul>");
    }
    out.push_str("</section>\n");
}

fn key_of(s: &Series) -> CellKey {
    CellKey {
        adapter: s.adapter.clone(),
        scenario: s.scenario.clone(),
        bus: s.bus.clone(),
        role: s.role,
    }
}

fn line(site: &Site, s: &Series, xs: &[usize]) -> Line {
    let key = key_of(s);
    let points = xs
        .iter()
        .enumerate()
        .filter_map(|(x, &j)| {
            let p = &s.points[j];
            let wall = &site.runs[j].cells.get(&key)?.measurement()?.wall;
            let median = p.median_ns?;
            Some(Point {
                x,
                run: j,
                median,
                lower: wall.median_ns.lower,
                upper: wall.median_ns.upper,
                step: p.step,
                title: format!(
                    "{} · run #{} {} · {} [{} – {}]{}",
                    s.adapter,
                    j + 1,
                    site.runs[j].title(),
                    duration(median),
                    duration(wall.median_ns.lower),
                    duration(wall.median_ns.upper),
                    site.version(j, &s.adapter)
                        .map(|v| format!(" · {v}"))
                        .unwrap_or_default()
                ),
            })
        })
        .collect();
    Line {
        label: s.adapter.clone(),
        adapter: s.adapter.clone(),
        colour: colour(site, &s.adapter),
        points,
    }
}

/// Rows libraries, columns the chart's runs.
fn table(site: &Site, out: &mut String, series: &[&Series], xs: &[usize]) {
    out.push_str("<div class=\"scroll\"><table class=\"over-runs\"><thead><tr><th>library</th>");
    for &j in xs {
        let _ = write!(
            out,
            "<th class=\"lib\" title=\"{}\"><a href=\"{}\">#{}</a><small>{}</small></th>",
            esc(&site.runs[j].label),
            Run::page(j),
            j + 1,
            esc(&site.runs[j].title())
        );
    }
    out.push_str("</tr></thead><tbody>\n");
    for s in series {
        let key = key_of(s);
        let _ = write!(
            out,
            "<tr data-lib=\"{0}\"><th><a href=\"{1}\">{0}</a></th>",
            esc(&s.adapter),
            super::library::page_name(&s.adapter)
        );
        let mut last_version: Option<String> = None;
        for &j in xs {
            let p = &s.points[j];
            let wall = site.runs[j]
                .cells
                .get(&key)
                .and_then(|c| c.measurement())
                .map(|m| &m.wall);
            match (p.median_ns, wall) {
                (Some(m), Some(w)) => {
                    let (class, mark) = match p.step {
                        Some(Step::Up) => (" up", " ▲"),
                        Some(Step::Down) => (" down", " ▼"),
                        None => ("", ""),
                    };
                    let version = site.version(j, &s.adapter);
                    let changed = match (&last_version, &version) {
                        (Some(a), Some(b)) if a != b => format!("<small>{}</small>", esc(b)),
                        _ => String::new(),
                    };
                    last_version = version;
                    let _ = write!(
                        out,
                        "<td class=\"num{class}\" data-run=\"{j}\" data-ns=\"{m}\">{}{mark}\
                         <small>{} – {}</small>{changed}</td>",
                        duration(m),
                        duration(w.median_ns.lower),
                        duration(w.median_ns.upper)
                    );
                }
                _ if p.status == "absent" => out.push_str("<td class=\"none\">–</td>"),
                _ => {
                    let _ = write!(out, "<td class=\"{0}\">{0}</td>", p.status);
                }
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>");
}
