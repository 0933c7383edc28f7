//! The site's front page: per scenario family (the scenario id up to its
//! first `/`), the headline tables of the newest run that measured it (a run
//! of the whole matrix before a selection)
//! (libraries side by side, each cell's median with its ratio to the fastest
//! library and, over IPC, to the raw-socket floor: `model::report`'s
//! values), the list of scenario pages, and the machines and versions of
//! every run.

use std::collections::BTreeSet;
use std::fmt::Write;

use super::library;
use super::model::{Run, Site};
use super::page::page;
use crate::export::html::esc;
use crate::export::model::report::{CellView, Report, ReportTable};
use crate::export::model::table::Group;

fn family(scenario: &str) -> &str {
    scenario.split('/').next().unwrap_or(scenario)
}

pub fn render(site: &Site) -> String {
    let mut body = String::new();
    let _ = writeln!(
        body,
        "<h1>dbus-matrix: {} runs</h1>\n<p class=\"explain\">Per scenario family, the newest run that measured it (a run of the whole matrix first): \
         median wall time per operation, below it the ratio to the fastest library in the row (1.00× = fastest) and, \
         over IPC, to the raw-socket floor of the same run. Scenario names lead to their figure over all runs; \
         <a href=\"compare.html\">compare</a> puts any two runs side by side with <code>compare</code>'s verdicts.</p>",
        site.runs.len()
    );
    let families: BTreeSet<&str> = site.scenarios.iter().map(|(s, _)| family(s)).collect();
    let mut left: Vec<&str> = families.into_iter().collect();
    for (j, run) in headline_order(site) {
        let here: Vec<&str> = left
            .iter()
            .copied()
            .filter(|f| {
                run.r
                    .cells
                    .iter()
                    .any(|c| family(&c.scenario) == *f && c.measurement().is_some())
            })
            .collect();
        if here.is_empty() {
            continue;
        }
        left.retain(|f| !here.contains(f));
        let report = Report::of(run.r);
        for f in here {
            let _ = writeln!(
                body,
                "<h2 id=\"family-{0}\">Family <code>{0}</code> <span>· run <a href=\"{1}\">#{2}</a> {3}</span></h2>",
                esc(f),
                Run::page(j),
                j + 1,
                esc(&run.title())
            );
            for t in &report.tables {
                family_table(site, t, f, &mut body);
            }
        }
    }
    scenario_list(site, &mut body);
    library_list(site, &mut body);
    runs_table(site, &mut body);
    page(site, "dbus-matrix results", &body, "")
}

/// The runs in the order their tables are taken for the front page: runs of
/// the whole matrix (no adapters, scenarios or buses asked for), newest first,
/// then the others, newest first; so a small run (a bisect, one library's
/// check) never hides the libraries side by side of a whole run.
fn headline_order<'a>(site: &'a Site<'a>) -> Vec<(usize, &'a Run<'a>)> {
    // A file of an old schema records no plan: a whole run then, as those were.
    let whole = |run: &Run| {
        run.r.plan.as_ref().is_none_or(|plan| {
            let asked = &plan.requested;
            asked.adapters.is_empty() && asked.scenarios.is_empty() && asked.buses.is_empty()
        })
    };
    let newest_first = || site.runs.iter().enumerate().rev();
    newest_first()
        .filter(|(_, run)| whole(run))
        .chain(newest_first().filter(|(_, run)| !whole(run)))
        .collect()
}

fn heading(t: &ReportTable) -> String {
    match &t.table.group {
        Group::Codec => "Codec (no bus)".into(),
        Group::Floor => "Floor: a Unix socket pair, no bus".into(),
        Group::Bus(bus) => format!(
            "Bus <code>{}</code> <span>{}</span>",
            esc(bus),
            esc(t.bus_description.unwrap_or(""))
        ),
        Group::Role(role, bus) => format!("{} on <code>{}</code>", esc(role.view()), esc(bus)),
    }
}

/// Rows: the scenarios of family `f` in `t`; columns: its libraries.
fn family_table(site: &Site, t: &ReportTable, f: &str, out: &mut String) {
    let cols: Vec<usize> = (0..t.table.columns.len())
        .filter(|&i| family(&t.table.columns[i]) == f)
        .collect();
    if cols.is_empty() {
        return;
    }
    let _ = write!(
        out,
        "<section data-bus=\"{}\"><h3>{}</h3>",
        esc(t.table.bus.as_deref().unwrap_or("")),
        heading(t)
    );
    if let Some(p) = &t.placement {
        let _ = write!(out, "<p class=\"explain\">{}</p>", esc(p));
    }
    out.push_str("<div class=\"scroll\"><table class=\"headline\"><thead><tr><th>scenario</th>");
    for row in &t.table.rows {
        let a = row.adapter;
        let _ = write!(
            out,
            "<th class=\"lib\" data-lib=\"{}\" title=\"{}\"><a href=\"{}\">{}</a><small>{}</small></th>",
            esc(&a.id),
            esc(&a.id),
            library::page_name(&a.id),
            esc(&a.library),
            esc(if a.baseline { "baseline" } else { &a.version })
        );
    }
    out.push_str("</tr></thead><tbody>\n");
    for &i in &cols {
        let scenario = &t.table.columns[i];
        let name = match site.scenario_page(scenario) {
            Some(p) => format!("<a href=\"{p}\">{}</a>", esc(scenario)),
            None => esc(scenario),
        };
        let _ = write!(out, "<tr data-scenario=\"{}\"><th>{name}</th>", esc(scenario));
        for (row, views) in t.table.rows.iter().zip(&t.cells) {
            let lib = esc(&row.adapter.id);
            match &views[i] {
                Some(CellView::Timed(v)) => {
                    let mut small = Vec::new();
                    if let Some(ratio) = v.ratio {
                        small.push(format!("{ratio:.2}× fastest"));
                    }
                    if let Some(floor) = &v.floor {
                        small.push(floor.text.clone());
                    }
                    let ns = row.cells[i]
                        .as_ref()
                        .and_then(|e| e.cell.median_ns())
                        .unwrap_or(f64::NAN);
                    let best = v.ratio.is_some_and(|x| x <= 1.005) && !row.adapter.baseline;
                    let _ = write!(
                        out,
                        "<td class=\"num{}\" data-lib=\"{lib}\" data-ns=\"{ns}\" title=\"95% interval {} – {}\">{}",
                        if best { " best" } else { "" },
                        esc(&v.lower),
                        esc(&v.upper),
                        esc(&v.median)
                    );
                    for s in small {
                        let _ = write!(out, "<small>{}</small>", esc(&s));
                    }
                    out.push_str("</td>");
                }
                Some(CellView::NotRun { word, reason, .. }) => {
                    let _ = write!(
                        out,
                        "<td class=\"{word}\" data-lib=\"{lib}\" title=\"{}\">{word}</td>",
                        esc(reason)
                    );
                }
                None => {
                    let _ = write!(out, "<td class=\"none\" data-lib=\"{lib}\">–</td>");
                }
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div></section>\n");
}

fn scenario_list(site: &Site, out: &mut String) {
    let _ = write!(
        out,
        "<h2 id=\"scenarios\">Scenarios over runs</h2><ul class=\"scenarios\">"
    );
    for (s, p) in &site.scenarios {
        let _ = write!(
            out,
            "<li data-scenario=\"{}\"><a href=\"{p}\">{}</a></li>",
            esc(s),
            esc(s)
        );
    }
    out.push_str("</ul>\n");
}

fn library_list(site: &Site, out: &mut String) {
    out.push_str("<h2 id=\"libraries\">Libraries over runs and versions</h2><ul class=\"scenarios\">");
    for a in &site.adapters {
        let _ = write!(
            out,
            "<li data-lib=\"{0}\"><a href=\"{1}\">{0}</a></li>",
            esc(a),
            library::page_name(a)
        );
    }
    out.push_str("</ul>\n");
}

/// Every run: when, what revision, which machine, toolchain, daemons, libraries.
fn runs_table(site: &Site, out: &mut String) {
    out.push_str(
        "<h2 id=\"runs\">Runs, machines and versions</h2><p class=\"explain\">Oldest first. The machine is a hash of \
         its host name. Runs on other machines, kernels, toolchains, bus daemons or CPU placements are not like for \
         like: the scenario pages mark them.</p><div class=\"scroll\"><table class=\"runs\"><thead><tr><th>#</th>\
         <th>started</th><th>file</th><th>revision</th><th>profile</th><th>cells</th><th>machine</th><th>CPU</th>\
         <th>OS · kernel</th><th>rustc</th><th>mode · placement</th><th>bus daemons</th><th>libraries</th></tr>\
         </thead><tbody>\n",
    );
    for (j, run) in site.runs.iter().enumerate() {
        let r = run.r;
        let e = &r.environment;
        let buses: Vec<String> = r
            .buses
            .iter()
            .map(|b| format!("<code>{}</code> {}", esc(&b.id), esc(&b.description)))
            .collect();
        let libs: Vec<String> = r
            .adapters
            .iter()
            .map(|a| format!("{} {}", esc(&a.library), esc(&a.version)))
            .collect();
        let _ = writeln!(
            out,
            "<tr><td><a href=\"{}\">#{}</a></td><td>{}</td><td><code>{}</code></td><td><code>{}</code></td><td>{}</td>\
             <td>{}</td><td><code>{}</code></td><td>{} ({} CPUs, {:.1} GiB)</td><td>{} · {}</td><td>{}</td><td>{} · {}</td>\
             <td>{}</td><td><details><summary>{} adapters</summary>{}</details></td></tr>",
            Run::page(j),
            j + 1,
            esc(&r.run.started_at),
            esc(&run.label),
            esc(&r.run.revision),
            esc(&r.run.profile),
            r.cells.len(),
            esc(&e.hostname_hash),
            esc(&e.cpu_model),
            e.cpus,
            e.memory_bytes as f64 / (1u64 << 30) as f64,
            esc(&e.os),
            esc(&e.kernel),
            esc(&e.rustc),
            esc(&e.mode),
            esc(r.run.placement.as_deref().unwrap_or("not recorded")),
            buses.join("<br>"),
            r.adapters.len(),
            libs.join("<br>")
        );
    }
    out.push_str("</tbody></table></div>\n");
}
