//! A library's page: per bus (and role), each of its scenarios over the runs
//! that measured the library, under a header row of the library's version in
//! each run (a new version is highlighted), with `history`'s steps; the
//! scenario names lead to their figures. So a library is followed across
//! releases as well as across runs.

use std::fmt::Write;

use harness::results::Role;

use super::model::{Run, Site};
use super::page::page;
use crate::analyze::history::{Series, Step};
use crate::export::html::esc;
use crate::export::model::table::duration;

/// The page's file name for `adapter`.
pub fn page_name(adapter: &str) -> String {
    let base: String = adapter
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("l-{base}.html")
}

pub fn render(site: &Site, adapter: &str) -> String {
    let mut groups: Vec<(Option<String>, Role, Vec<&Series>)> = Vec::new();
    for s in site.history.series.iter().filter(|s| s.adapter == adapter) {
        match groups.iter_mut().find(|(b, r, _)| *b == s.bus && *r == s.role) {
            Some((_, _, v)) => v.push(s),
            None => groups.push((s.bus.clone(), s.role, vec![s])),
        }
    }
    let mut body = String::new();
    let _ = writeln!(
        body,
        "<h1>Library <code>{}</code></h1>\n<p class=\"explain\">Its median wall time per operation in every run that \
         measured it, oldest first, under the library's version in that run (a new version is shaded). ▲/▼: a step \
         (slower/faster) by <code>history</code>'s rule. Scenario names lead to the figure over runs.</p>",
        esc(adapter)
    );
    for (bus, role, series) in &groups {
        group(site, &mut body, adapter, bus.as_deref(), *role, series);
    }
    page(site, &format!("dbus-matrix · {adapter}"), &body, "")
}

fn group(site: &Site, out: &mut String, adapter: &str, bus: Option<&str>, role: Role, series: &[&Series]) {
    let xs: Vec<usize> = (0..site.runs.len())
        .filter(|&j| series.iter().any(|s| s.points[j].status != "absent"))
        .collect();
    let _ = write!(
        out,
        "<section data-bus=\"{}\"><h2>{}{}</h2><div class=\"scroll\"><table class=\"library\"><thead><tr><th>run</th>",
        esc(bus.unwrap_or("")),
        esc(&bus.map_or("no bus".to_string(), |b| format!("on {b}"))),
        esc(role.label_suffix())
    );
    for &j in &xs {
        let _ = write!(
            out,
            "<th class=\"lib\" title=\"{}\"><a href=\"{}\">#{}</a><small>{}</small></th>",
            esc(&site.runs[j].label),
            Run::page(j),
            j + 1,
            esc(&site.runs[j].title())
        );
    }
    out.push_str("</tr><tr><th>version</th>");
    let mut last: Option<String> = None;
    for &j in &xs {
        let v = site.version(j, adapter);
        let new = last.is_some() && v != last;
        let _ = write!(
            out,
            "<th class=\"lib{}\">{}</th>",
            if new { " version-new" } else { "" },
            esc(v.as_deref().unwrap_or("–"))
        );
        last = v;
    }
    out.push_str("</tr></thead><tbody>\n");
    for s in series {
        let name = match site.scenario_page(&s.scenario) {
            Some(p) => format!("<a href=\"{p}\">{}</a>", esc(&s.scenario)),
            None => esc(&s.scenario),
        };
        let _ = write!(out, "<tr data-scenario=\"{}\"><th>{name}</th>", esc(&s.scenario));
        for &j in &xs {
            let p = &s.points[j];
            match p.median_ns {
                Some(m) => {
                    let (class, mark) = match p.step {
                        Some(Step::Up) => (" up", " ▲"),
                        Some(Step::Down) => (" down", " ▼"),
                        None => ("", ""),
                    };
                    let _ = write!(
                        out,
                        "<td class=\"num{class}\" data-run=\"{j}\" data-ns=\"{m}\">{}{mark}</td>",
                        duration(m)
                    );
                }
                None if p.status == "absent" => out.push_str("<td class=\"none\">–</td>"),
                None => {
                    let _ = write!(out, "<td class=\"{0}\">{0}</td>", p.status);
                }
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div></section>\n");
}
