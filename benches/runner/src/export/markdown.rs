//! The default report: Markdown tables for terminals and READMEs.

use std::fmt::Write;

use harness::results::{AdapterRecord, CellStatus, Outcome, ResultsFile};

use super::model::table::{self, duration, si, Entry, Notes};
use super::model::width;

/// What the cells of a report need from the run as a whole.
struct Context {
    target: Option<f64>,
    planned_rounds: Option<u32>,
}

fn cell_text(e: &Entry, adapter: &str, cx: &Context, notes: &mut Notes) -> String {
    match &e.cell.outcome {
        Outcome::Ok(m) => {
            let w = width::of(m, cx.target);
            let mut s = duration(m.wall.median_ns.point);
            if let Some(rel) = w.relative {
                s += &format!(" {}", width::percent(rel));
            }
            if w.above_target {
                s += width::FLAG;
            }
            let mut extra = Vec::new();
            if let Some(r) = e.ratio {
                extra.push(format!("{r:.2}×"));
            }
            extra.extend(table::calls_per_second(&e.cell.scenario, m.wall.median_ns.point));
            if let Some(f) = m.floor_ratio {
                // Cached reads never touch the socket: keep two significant digits below 1.
                let text = if f >= 1.0 {
                    format!("{f:.1}× floor")
                } else {
                    let n = notes.number(table::below_floor_reason(&e.cell.scenario).to_string());
                    format!("{f:.2}× floor [{n}]")
                };
                extra.push(text);
            }
            if let Some(r) = width::rounds_text(&w, cx.planned_rounds) {
                extra.push(r);
            }
            if let Some(reason) = w.cut {
                let n = notes.number(width::cut_note(adapter, &e.cell.scenario, reason));
                extra.push(format!("cut [{n}]"));
            }
            if !extra.is_empty() {
                s += &format!(" ({})", extra.join(", "));
            }
            s
        }
        Outcome::Unsupported { reason } | Outcome::Failed { reason } => {
            let word = table::status_word(e.cell.status());
            let n = notes.number(format!("{adapter} {word}: {reason}"));
            format!("{word} [{n}]")
        }
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
    let sizes: Vec<String> = r
        .adapters
        .iter()
        .filter(|a| a.loaded_bytes.is_some() || a.build.is_some())
        .map(|a| {
            let size = a.loaded_bytes.map(|b| format!(" {:.1} MB", b as f64 / 1e6));
            let build = a.build.as_ref().map(|b| format!(" (build {})", table::build_time(b)));
            format!(
                "{}{}{}",
                table::label(r, a),
                size.unwrap_or_default(),
                build.unwrap_or_default()
            )
        })
        .collect();
    if !sizes.is_empty() {
        let _ = writeln!(out, "Adapter binaries, code and data: {}\n", sizes.join(", "));
    }
    runtimes(r, &mut out);
    let mut notes = Notes::default();
    let cx = Context {
        target: width::target(r),
        planned_rounds: width::planned_rounds(r),
    };
    for t in table::tables(r) {
        match &t.group {
            table::Group::Codec => {}
            table::Group::Floor => {
                let _ = writeln!(out, "### floor: bytes ping-ponged over a Unix socket pair\n");
            }
            table::Group::Bus(bus) => {
                let daemon = r
                    .buses
                    .iter()
                    .find(|b| &b.id == bus)
                    .map(|b| format!(" ({})", b.description));
                let _ = writeln!(out, "### bus: {bus}{}\n", daemon.unwrap_or_default());
            }
            table::Group::Role(role, bus) => {
                let _ = writeln!(out, "### {} on {bus}\n\n{}\n", role.view(), table::role_note(r, *role));
            }
        }
        if let Some(line) = table::placement_line(&t, r.run.placement.as_deref()) {
            let _ = writeln!(out, "{line}\n");
        }
        library_table_head(&t, &mut out);
        for row in &t.rows {
            let cells: Vec<String> = row
                .cells
                .iter()
                .map(|e| {
                    e.as_ref()
                        .map_or_else(|| "–".to_string(), |e| cell_text(e, &row.adapter.id, &cx, &mut notes))
                })
                .collect();
            library_row(r, row.adapter, &cells, &mut out);
        }
        out.push('\n');
        if matches!(t.group, table::Group::Codec) {
            instructions_table(r, &t, &mut out);
        }
        cost_tables(r, &t, &mut out);
    }
    bus_vs_bus(r, &mut out);
    if let Some(t) = &r.interop {
        out.push_str(&super::model::interop::markdown(t));
    }
    super::model::connection_memory::markdown(r, &mut out);
    out.push_str(
        "Cells: median wall time per operation (criterion); in brackets the ratio to the fastest library in the column \
         (1.00× = fastest; the baseline is not a library and may go below 1) and, over IPC, the ratio to the raw-socket \
         floor of the same run.\n",
    );
    if let Some(legend) = width::legend(r) {
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
fn runtimes(r: &ResultsFile, out: &mut String) {
    let with: Vec<_> = r.adapters.iter().filter(|a| a.runtime.is_some()).collect();
    if with.is_empty() {
        return;
    }
    let _ = writeln!(out, "| adapter | runtime |\n|---|---|");
    for a in with {
        let _ = writeln!(
            out,
            "| {} | {} |",
            table::label(r, a),
            a.runtime.as_deref().unwrap_or("")
        );
    }
    out.push('\n');
}

/// The head of a table with a row per library and a column per scenario of `t`.
fn library_table_head(t: &table::Table, out: &mut String) {
    let _ = writeln!(out, "| library | {} |", t.columns.join(" | "));
    let _ = writeln!(out, "|---|{}", "---:|".repeat(t.columns.len()));
}

fn library_row(r: &ResultsFile, adapter: &AdapterRecord, cells: &[String], out: &mut String) {
    let _ = writeln!(out, "| {} | {} |", table::label(r, adapter), cells.join(" | "));
}

/// Instructions per operation (`run --instructions`), with the ratio to the
/// fewest in the column; only when some cell has them.
fn instructions_table(r: &ResultsFile, t: &table::Table, out: &mut String) {
    if !table::has_instructions(t) {
        return;
    }
    let fewest: Vec<Option<f64>> = (0..t.columns.len()).map(|i| table::fewest_instructions(t, i)).collect();
    let _ = writeln!(out, "### instructions per operation (callgrind)\n");
    library_table_head(t, out);
    for row in &t.rows {
        let cells: Vec<String> = row
            .cells
            .iter()
            .enumerate()
            .map(|(i, e)| match (table::instructions(e), fewest[i]) {
                (Some(n), Some(f)) if f > 0.0 => format!("{} ({:.2}×)", si(n), n / f),
                (Some(n), _) => si(n),
                (None, _) => "–".into(),
            })
            .collect();
        library_row(r, row.adapter, &cells, out);
    }
    out.push('\n');
}

/// The costs of IPC cells (`Measurement::costs`), one table per figure;
/// only figures some cell of the table has.
fn cost_tables(r: &ResultsFile, t: &table::Table, out: &mut String) {
    for f in &table::COST_FIGURES {
        let texts: Vec<Vec<Option<String>>> = t
            .rows
            .iter()
            .map(|row| {
                row.cells
                    .iter()
                    .map(|e| table::costs(e).and_then(|c| table::cost_text(f, c)))
                    .collect()
            })
            .collect();
        if !texts.iter().flatten().any(Option::is_some) {
            continue;
        }
        let each = if f.per_process() {
            " — all processes (client / server [/ subscribers] / bus)"
        } else {
            ""
        };
        let _ = writeln!(out, "#### {}{each}\n", f.title);
        library_table_head(t, out);
        for (row, texts) in t.rows.iter().zip(texts) {
            let cells: Vec<String> = texts.into_iter().map(|s| s.unwrap_or_else(|| "–".into())).collect();
            library_row(r, row.adapter, &cells, out);
        }
        out.push('\n');
    }
}

/// For each library with IPC results: rows = scenarios, columns = buses.
fn bus_vs_bus(r: &ResultsFile, out: &mut String) {
    let mut buses: Vec<&str> = Vec::new();
    for c in &r.cells {
        if let Some(b) = c.bus.as_deref() {
            if !buses.contains(&b) {
                buses.push(b);
            }
        }
    }
    if buses.len() < 2 {
        return;
    }
    for a in r.adapters.iter().filter(|a| !a.baseline) {
        let cells: Vec<_> = r
            .cells
            .iter()
            // Same-library cells only: the roles apart have tables of their own.
            .filter(|c| c.adapter == a.id && c.bus.is_some() && c.role.is_same())
            .collect();
        if !cells.iter().any(|c| c.status() == CellStatus::Ok) {
            continue;
        }
        let _ = writeln!(out, "### bus vs bus: {}\n", table::label(r, a));
        let _ = writeln!(out, "| scenario | {} |", buses.join(" | "));
        let _ = writeln!(out, "|---|{}", "---:|".repeat(buses.len()));
        let mut scenarios: Vec<&str> = Vec::new();
        for c in &cells {
            if !scenarios.contains(&c.scenario.as_str()) {
                scenarios.push(&c.scenario);
            }
        }
        for s in scenarios {
            let row: Vec<String> = buses
                .iter()
                .map(|b| {
                    cells
                        .iter()
                        .find(|c| c.scenario == s && c.bus.as_deref() == Some(b))
                        .map_or("–".into(), |c| {
                            c.median_ns()
                                .map_or_else(|| table::status_word(c.status()).into(), duration)
                        })
                })
                .collect();
            let _ = writeln!(out, "| {s} | {} |", row.join(" | "));
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
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
}
