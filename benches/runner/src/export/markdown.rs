//! The default report: Markdown tables for terminals and READMEs.

use std::fmt::Write;

use harness::results::{InteropTable, ResultsFile};

use super::model::connection_memory::{EXPLAIN, HEAD};
use super::model::interop;
use super::model::report::{CellView, Report, ReportTable};
use super::model::table::{Group, Notes};

fn cell_text(v: &CellView, notes: &mut Notes) -> String {
    match v {
        CellView::Timed(t) => {
            let mut s = t.median.clone();
            if let Some(w) = &t.width {
                s += &format!(" {w}");
            }
            if t.above_target {
                s += super::model::width::FLAG;
            }
            let mut extra = Vec::new();
            if let Some(r) = t.ratio {
                extra.push(format!("{r:.2}×"));
            }
            extra.extend(t.calls_per_second.clone());
            if let Some(f) = &t.floor {
                extra.push(match &f.below_note {
                    None => f.text.clone(),
                    Some(note) => format!("{} [{}]", f.text, notes.number(note.clone())),
                });
            }
            extra.extend(t.rounds_text.clone());
            if let Some(note) = &t.cut_note {
                extra.push(format!("cut [{}]", notes.number(note.clone())));
            }
            if !extra.is_empty() {
                s += &format!(" ({})", extra.join(", "));
            }
            s
        }
        CellView::NotRun { word, note, .. } => format!("{word} [{}]", notes.number(note.clone())),
    }
}

pub fn render(r: &ResultsFile) -> String {
    let mut out = String::new();
    let e = &r.environment;
    let _ = writeln!(
        out,
        "dbus-matrix `{}` profile, revision `{}`, {}{}\n\n{} ({} CPUs, {:.0} GiB), {}, kernel {}, {}, mode {}{}\n",
        r.run.profile,
        r.run.revision,
        r.run.started_at,
        if r.run.complete { "" } else { " (incomplete run)" },
        e.cpu_model,
        e.cpus,
        e.memory_bytes as f64 / (1u64 << 30) as f64,
        e.os,
        e.kernel,
        e.rustc,
        e.mode,
        r.run
            .placement
            .as_deref()
            .filter(|p| *p != "none")
            .map(|p| format!(", pinned {p}"))
            .unwrap_or_default(),
    );
    let report = Report::of(r);
    let sizes: Vec<String> = report
        .adapters
        .iter()
        .filter(|a| a.record.loaded_bytes.is_some() || a.build.is_some())
        .map(|a| {
            let size = a.record.loaded_bytes.map(|b| format!(" {:.1} MB", b as f64 / 1e6));
            let build = a.build.as_ref().map(|b| format!(" (build {b})"));
            format!("{}{}{}", a.label, size.unwrap_or_default(), build.unwrap_or_default())
        })
        .collect();
    if !sizes.is_empty() {
        let _ = writeln!(out, "Adapter binaries, code and data: {}\n", sizes.join(", "));
    }
    runtimes(&report, &mut out);
    out.push_str(&super::portable::markdown(r));
    let mut notes = Notes::default();
    for t in &report.tables {
        match &t.table.group {
            Group::Codec => {}
            Group::Floor => {
                let _ = writeln!(out, "### floor: bytes ping-ponged over a Unix socket pair\n");
            }
            Group::Bus(bus) => {
                let daemon = t.bus_description.map(|d| format!(" ({d})"));
                let _ = writeln!(out, "### bus: {bus}{}\n", daemon.unwrap_or_default());
            }
            Group::Role(role, bus) => {
                let _ = writeln!(
                    out,
                    "### {} on {bus}\n\n{}\n",
                    role.view(),
                    t.role_note.as_deref().unwrap_or_default()
                );
            }
        }
        if let Some(line) = &t.placement {
            let _ = writeln!(out, "{line}\n");
        }
        library_table_head(t, &mut out);
        for (label, row) in t.labels.iter().zip(&t.cells) {
            let cells: Vec<String> = row
                .iter()
                .map(|v| v.as_ref().map_or_else(|| "–".to_string(), |v| cell_text(v, &mut notes)))
                .collect();
            library_row(label, &cells, &mut out);
        }
        out.push('\n');
        if matches!(t.table.group, Group::Codec) {
            instructions_table(t, &mut out);
        }
        cost_tables(t, &mut out);
    }
    bus_vs_bus(&report, &mut out);
    if let Some(v) = &report.interop {
        out.push_str(&interop_section(v));
    }
    idle_connections(&report, &mut out);
    for section in &report.sections {
        plain_section(section, &mut out);
    }
    out.push_str(
        "Cells: median wall time per operation (criterion); in brackets the ratio to the fastest library in the column \
         (1.00× = fastest; the baseline is not a library and may go below 1) and, over IPC, the ratio to the raw-socket \
         floor of the same run.\n",
    );
    if let Some(legend) = &report.legend {
        let _ = writeln!(out, "\n{legend}");
    }
    if !notes.0.is_empty() {
        out.push('\n');
        for (i, n) in notes.0.iter().enumerate() {
            let _ = writeln!(out, "[{}] {n}", i + 1);
        }
    }
    out
}

/// How each adapter drives its library, when the file says (older files do not).
fn runtimes(report: &Report, out: &mut String) {
    let with: Vec<_> = report.adapters.iter().filter(|a| a.record.runtime.is_some()).collect();
    if with.is_empty() {
        return;
    }
    let _ = writeln!(out, "| adapter | runtime |\n|---|---|");
    for a in with {
        let _ = writeln!(out, "| {} | {} |", a.label, a.record.runtime.as_deref().unwrap_or(""));
    }
    out.push('\n');
}

/// The head of a table with a row per library and a column per scenario of `t`.
fn library_table_head(t: &ReportTable, out: &mut String) {
    let columns = &t.table.columns;
    let _ = writeln!(out, "| library | {} |", columns.join(" | "));
    let _ = writeln!(out, "|---|{}", "---:|".repeat(columns.len()));
}

fn library_row(label: &str, cells: &[String], out: &mut String) {
    let _ = writeln!(out, "| {label} | {} |", cells.join(" | "));
}

/// Instructions per operation (`run --instructions`), with the ratio to the
/// fewest in the column; only when some cell has them.
fn instructions_table(t: &ReportTable, out: &mut String) {
    let Some(rows) = &t.instructions else {
        return;
    };
    let _ = writeln!(out, "### instructions per operation (callgrind)\n");
    library_table_head(t, out);
    for (label, row) in t.labels.iter().zip(rows) {
        let cells: Vec<String> = row
            .iter()
            .map(|n| match n {
                Some(n) => match n.ratio {
                    Some(ratio) => format!("{} ({ratio:.2}×)", n.text),
                    None => n.text.clone(),
                },
                None => "–".into(),
            })
            .collect();
        library_row(label, &cells, out);
    }
    out.push('\n');
}

/// The costs of IPC cells (`Measurement::costs`), one table per figure;
/// only figures some cell of the table has.
fn cost_tables(t: &ReportTable, out: &mut String) {
    for f in &t.costs {
        let each = if f.per_process {
            " — all processes (client / server [/ subscribers] / bus)"
        } else {
            ""
        };
        let _ = writeln!(out, "#### {}{each}\n", f.title);
        library_table_head(t, out);
        for (label, texts) in t.labels.iter().zip(&f.texts) {
            let cells: Vec<String> = texts.iter().map(|s| s.clone().unwrap_or_else(|| "–".into())).collect();
            library_row(label, &cells, out);
        }
        out.push('\n');
    }
}

/// For each library with IPC results: rows = scenarios, columns = buses.
fn bus_vs_bus(report: &Report, out: &mut String) {
    for b in &report.bus_vs_bus {
        let _ = writeln!(out, "### bus vs bus: {}\n", b.label);
        let _ = writeln!(out, "| scenario | {} |", b.buses.join(" | "));
        let _ = writeln!(out, "|---|{}", "---:|".repeat(b.buses.len()));
        for (s, row) in &b.rows {
            let _ = writeln!(out, "| {s} | {} |", row.join(" | "));
        }
        out.push('\n');
    }
}

/// The idle-connections section (nothing without such cells).
fn idle_connections(report: &Report, out: &mut String) {
    if report.idle_connections.is_empty() {
        return;
    }
    let _ = writeln!(out, "### idle connections: what one costs\n\n{EXPLAIN}\n");
    let _ = writeln!(out, "| {} |", HEAD.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(HEAD.len()));
    for texts in &report.idle_connections {
        let _ = writeln!(out, "| {} |", texts.join(" | "));
    }
    out.push('\n');
}

/// A plain section ([`crate::export::model::section`]).
fn plain_section(s: &crate::export::model::section::Section, out: &mut String) {
    let _ = writeln!(out, "### {}\n\n{}\n", s.title.to_lowercase(), s.explain);
    let _ = writeln!(out, "| {} |", s.head.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(s.head.len()));
    for row in &s.rows {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    out.push('\n');
}

/// The interop table alone, as Markdown with its notes (`dbus-matrix interop`).
pub fn interop(t: &InteropTable) -> String {
    interop_section(&interop::view(t))
}

fn interop_section(v: &interop::View) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "### interop: client (row) × server (column)\n\n{}\n", v.lead);
    let _ = writeln!(out, "| client \\ server | {} |", v.servers.join(" | "));
    let _ = writeln!(out, "|---|{}", "---:|".repeat(v.servers.len()));
    let mut notes = Vec::new();
    for (client, pairs) in &v.rows {
        let cells: Vec<String> = v
            .servers
            .iter()
            .zip(pairs)
            .map(|(server, p)| match p {
                None => " ".to_string(),
                Some(text) if text.passed => text.summary.clone(),
                Some(text) => {
                    notes.push(format!("{client} → {server}: {}", text.failures.join("; ")));
                    format!("{} [i{}]", text.summary, notes.len())
                }
            })
            .collect();
        let _ = writeln!(out, "| {client} | {} |", cells.join(" | "));
    }
    out.push('\n');
    for (i, n) in notes.iter().enumerate() {
        let _ = writeln!(out, "[i{}] {n}", i + 1);
    }
    if !notes.is_empty() {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use harness::results::{InteropCheck, InteropPair, InteropStatus, InteropTable};

    #[test]
    fn build_time_next_to_the_binary_size() {
        let mut r = crate::export::test_fixtures::tiny();
        let md = super::render(&r);
        assert!(
            md.contains("Adapter binaries, code and data: a 1.0.0 2.5 MB (build 42.1 s, 12 crates, -j 2)\n"),
            "{md}"
        );
        r.adapters[0].build = None;
        assert!(super::render(&r).contains("code and data: a 1.0.0 2.5 MB\n"));
    }

    fn check(scenario: &str, status: InteropStatus, reason: Option<&str>) -> InteropCheck {
        InteropCheck {
            scenario: scenario.into(),
            status,
            reason: reason.map(str::to_string),
        }
    }

    #[test]
    fn a_failed_pair_says_what_failed() {
        let t = InteropTable {
            bus: "dbus-daemon".into(),
            checks: vec!["call/void".into(), "property/get".into()],
            adapters: vec!["a".into(), "b".into()],
            pairs: vec![
                InteropPair {
                    client: "a".into(),
                    server: "b".into(),
                    checks: vec![
                        check("call/void", InteropStatus::Passed, None),
                        check("property/get", InteropStatus::Failed, Some("digest mismatch")),
                    ],
                },
                InteropPair {
                    client: "b".into(),
                    server: "a".into(),
                    checks: vec![
                        check("call/void", InteropStatus::Passed, None),
                        check("property/get", InteropStatus::Unsupported, Some("no properties")),
                    ],
                },
            ],
        };
        let md = super::interop(&t);
        assert!(md.contains("| a |   | 1/2 ✗ [i1] |"), "{md}");
        assert!(md.contains("| b | 1/1 |   |"), "{md}");
        assert!(md.contains("[i1] a → b: property/get: digest mismatch"), "{md}");
        assert!(md.contains("2 pairs, 1 with a failure"), "{md}");
    }
}
