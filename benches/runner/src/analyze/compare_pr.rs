//! `compare --format pr`: the answer to a pull request, as a comment. The
//! cells that changed by `compare`'s own rules (significance and threshold,
//! status changes), grouped by scenario family, worst first; a one-line
//! verdict above them; the full table folded in `<details>`. In each changed
//! row the portable figures (counts another machine running the same files
//! reproduces: instructions, allocations, bus messages) come first, the
//! times after them (issue 32: "portable figures first"). Kept under
//! GitHub's limit on a comment's length: what does not fit is left out,
//! with a note saying how many rows and how to see them all.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::compare::{markdown, CellComparison, Comparison, Verdict};
use crate::export::md_escape::{md_code, md_text};
use crate::export::model::table;

/// GitHub refuses a comment body over 65,536 characters; a margin is kept
/// (bytes are counted, which are never fewer than characters).
pub const MAX_BYTES: usize = 65_000;

/// The scenario family: what comes before the first `/` (`call`, `marshal`, …).
fn family(scenario: &str) -> &str {
    scenario.split('/').next().unwrap_or(scenario)
}

fn cell_label(c: &CellComparison) -> String {
    let bus = c
        .bus
        .as_deref()
        .map_or_else(String::new, |b| format!(" @{}", md_text(b)));
    format!(
        "{} `{}{}`{bus}",
        md_text(&c.adapter),
        md_code(&c.scenario),
        c.role.label_suffix()
    )
}

/// The one line a reviewer reads first.
fn verdict_line(c: &Comparison, changed: &[&CellComparison]) -> String {
    let worse = c.regressions();
    let gone = c.count(Verdict::Missing) + c.count(Verdict::Dropped);
    let better = c.count(Verdict::Improved) + c.count(Verdict::Fixed);
    let worst = changed
        .iter()
        .filter(|r| r.verdict == Verdict::Regressed)
        .filter_map(|r| r.wall_median_ns.as_ref().map(|m| (r, m.ratio)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let mut line = if worse > 0 {
        let mut l = format!("❌ **{worse} cell{} slower or broken**", plural(worse));
        if let Some((r, ratio)) = worst {
            let _ = write!(l, " (worst: {} {ratio:.2}× the time)", cell_label(r));
        }
        l
    } else if gone > 0 && !c.allow_missing {
        format!("❌ **{gone} cell{} no longer measured**", plural(gone))
    } else if better > 0 {
        format!(
            "✅ **no significant regression**; {better} cell{} faster or fixed",
            plural(better)
        )
    } else {
        "✅ **no significant change**".to_string()
    };
    if worse > 0 && gone > 0 {
        let _ = write!(line, "; {gone} no longer measured");
    }
    if worse > 0 && better > 0 {
        let _ = write!(line, "; {better} faster or fixed");
    }
    let _ = write!(line, " ({} cells compared)", c.cells.len());
    line
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn row(r: &CellComparison) -> String {
    let (old, new, ratio) = match &r.wall_median_ns {
        Some(m) => (
            table::duration(m.old),
            table::duration(m.new),
            format!("{:.3}×", m.ratio),
        ),
        None => (word(r.old_status), word(r.new_status), String::new()),
    };
    format!(
        "| {} | {}{} | {} | {} | {old} | {new} | {ratio} | {} |",
        md_text(&r.adapter),
        md_text(&r.scenario),
        r.role.label_suffix(),
        md_text(r.bus.as_deref().unwrap_or("")),
        portable_text(r),
        format!("{:?}", r.verdict).to_lowercase()
    )
}

/// The portable figures of the row's cell, each as `name old → new (ratio)`
/// or `name n (=)` when equal: a codec cell's instructions, an IPC cell's
/// instructions of all processes together, bus messages, allocations.
fn portable_text(r: &CellComparison) -> String {
    let named = [
        ("instructions", r.instructions_per_op.as_ref()),
        (
            "instructions (all processes)",
            r.portable.get("ipc_instructions_per_op"),
        ),
        ("bus messages", r.portable.get("bus_messages_per_op")),
        ("allocations", r.portable.get("allocations_per_op")),
    ];
    let count = |n: f64| {
        if n.fract() == 0.0 {
            format!("{n:.0}")
        } else {
            format!("{n:.2}")
        }
    };
    named
        .into_iter()
        .filter_map(|(name, m)| {
            let m = m?;
            Some(if m.old == m.new {
                format!("{name} {} (=)", count(m.new))
            } else {
                format!("{name} {} → {} ({:.3}×)", count(m.old), count(m.new), m.ratio)
            })
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn word(s: Option<harness::results::CellStatus>) -> String {
    s.map_or("absent", table::status_word).to_string()
}

/// The comment, at most [`MAX_BYTES`] long.
pub fn render(c: &Comparison) -> String {
    let mut changed: Vec<&CellComparison> = c.cells.iter().filter(|r| r.verdict != Verdict::Unchanged).collect();
    // Worst first: regressions by their ratio, then the rest by verdict.
    changed.sort_by(|a, b| {
        a.verdict.cmp(&b.verdict).then_with(|| {
            let ratio = |r: &CellComparison| r.wall_median_ns.as_ref().map_or(0.0, |m| m.ratio);
            ratio(b).total_cmp(&ratio(a))
        })
    });
    let mut head = String::new();
    let _ = writeln!(head, "### dbus-matrix: {}\n", verdict_line(c, &changed));
    let _ = writeln!(
        head,
        "`{}` → `{}`: a change counts when it is significant (Mann-Whitney U at α = {}, or the rounds' 95% \
         intervals apart) and beyond {:.1}%; instruction counts compare exactly. In each row the portable figures \
         (counts another machine running the same files reproduces) come first, the times after them.",
        md_code(&c.old_revision),
        md_code(&c.new_revision),
        c.alpha,
        c.threshold * 100.0
    );
    if c.portable_only {
        let _ = writeln!(
            head,
            "\nThe runs are from different machines: the verdicts judge portable figures only (instructions, \
             allocations, bus messages); times are shown, not judged."
        );
    }
    let patched = c
        .cells
        .iter()
        .any(|r| r.adapter.ends_with(crate::matrix::patched::SUFFIX));
    let control = changed
        .iter()
        .filter(|r| !r.adapter.ends_with(crate::matrix::patched::SUFFIX) && r.wall_median_ns.is_some())
        .count();
    if patched && control > 0 {
        let _ = writeln!(
            head,
            "\n⚠️ {control} cell{} of released (unpatched) rows changed too: those rows run the same code in both \
             runs, so their change is the machine's; read the `+patch` rows against them.",
            plural(control)
        );
    }
    if !c.differences.is_empty() {
        let _ = writeln!(
            head,
            "\nNot like for like: {}.",
            c.differences
                .iter()
                .take(8)
                .map(|d| md_text(d))
                .collect::<Vec<_>>()
                .join("; ")
                + if c.differences.len() > 8 { "; …" } else { "" }
        );
    }
    let mut by_family: BTreeMap<&str, Vec<&CellComparison>> = BTreeMap::new();
    for r in &changed {
        by_family.entry(family(&r.scenario)).or_default().push(r);
    }
    let mut changes: Vec<String> = Vec::new();
    for (fam, rows) in &by_family {
        changes.push(format!(
            "\n#### {} ({} cell{})\n",
            md_text(fam),
            rows.len(),
            plural(rows.len())
        ));
        changes.push(
            "| adapter | scenario | bus | portable figures, old → new | time old | time new | time new/old | verdict |"
                .into(),
        );
        changes.push("|---|---|---|---|---:|---:|---:|---|".into());
        changes.extend(rows.iter().map(|r| row(r)));
    }

    let full = markdown(c);
    let table_at = full.find("| adapter |").unwrap_or(full.len());
    let table: Vec<&str> = full[table_at..].lines().collect();

    let mut out = head;
    let summary = format!("\n<details><summary>All {} cells</summary>\n\n", c.cells.len());
    let tail = "\n</details>\n";
    // Room for the longest note that may be added.
    let note_room = 200;
    let budget = MAX_BYTES - summary.len() - tail.len() - 2 * note_room;
    let left = fill(&mut out, &changes, budget);
    if left > 0 {
        let _ = writeln!(
            out,
            "\n*{left} more changed rows left out to stay under GitHub's comment limit: run `dbus-matrix compare OLD NEW` for all.*"
        );
    }
    out.push_str(&summary);
    let left = fill(
        &mut out,
        &table.iter().map(|l| l.to_string()).collect::<Vec<_>>(),
        budget,
    );
    if left > 0 {
        let _ = writeln!(
            out,
            "\n*{left} more rows left out to stay under GitHub's comment limit: run `dbus-matrix compare OLD NEW` for all.*"
        );
    }
    out.push_str(tail);
    cap(out)
}

/// The last guard of GitHub's limit: every untrusted string is already cut
/// to [`crate::export::md_escape::MAX_CHARS`], so only a head of unforeseen length gets here.
fn cap(mut out: String) -> String {
    if out.len() <= MAX_BYTES {
        return out;
    }
    let note = "\n\n*The comment was cut here to stay under GitHub's comment limit: run `dbus-matrix compare OLD NEW` for all.*\n\n</details>\n";
    let mut at = MAX_BYTES - note.len();
    while !out.is_char_boundary(at) {
        at -= 1;
    }
    out.truncate(at);
    out.push_str(note);
    out
}

/// Appends `lines` to `out` while it stays within `budget` bytes; returns
/// how many were left out.
fn fill(out: &mut String, lines: &[String], budget: usize) -> usize {
    for (i, l) in lines.iter().enumerate() {
        if out.len() + l.len() + 1 > budget {
            return lines.len() - i;
        }
        out.push_str(l);
        out.push('\n');
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::compare::Metric;
    use harness::results::{CellStatus, Role};

    fn cell(i: usize, ratio: f64) -> CellComparison {
        let verdict = if ratio > 1.05 {
            Verdict::Regressed
        } else if ratio < 0.95 {
            Verdict::Improved
        } else {
            Verdict::Unchanged
        };
        CellComparison {
            adapter: format!("adapter-with-a-long-name-{i}"),
            scenario: format!("{}/echo-bytes/{i}", ["call", "marshal", "signal"][i % 3]),
            bus: Some("dbus-broker".into()),
            role: Role::Same,
            old_status: Some(CellStatus::Ok),
            new_status: Some(CellStatus::Ok),
            wall_median_ns: Some(Metric {
                old: 1000.0,
                new: 1000.0 * ratio,
                ratio,
                test: "mann-whitney",
                p_value: Some(0.001),
                significant: true,
                verdict,
            }),
            instructions_per_op: None,
            portable: Default::default(),
            verdict,
        }
    }

    fn comparison(cells: Vec<CellComparison>) -> Comparison {
        Comparison {
            old_revision: "a".into(),
            new_revision: "b".into(),
            threshold: 0.05,
            alpha: 0.05,
            allow_missing: false,
            differences: vec![],
            portable_only: false,
            cells,
        }
    }

    #[test]
    fn a_huge_comparison_stays_under_the_limit_and_says_what_it_left_out() {
        let cells: Vec<_> = (0..5000).map(|i| cell(i, if i % 2 == 0 { 1.5 } else { 1.0 })).collect();
        let text = render(&comparison(cells));
        assert!(text.len() <= MAX_BYTES, "{} bytes", text.len());
        assert!(text.contains("more changed rows left out"), "the changed rows were cut");
        assert!(text.contains("more rows left out"), "the full table was cut");
        assert!(text.starts_with("### dbus-matrix: ❌ **2500 cells slower or broken**"));
        assert!(text.trim_end().ends_with("</details>"), "the fold is closed");
    }

    /// Issue 42 (9, 10): long revision, CPU and version strings took the
    /// comment to 200,808 bytes, and ids and environment strings went into
    /// it unescaped (a newline, `|`, `</details>`, `<!--`).
    #[test]
    fn hostile_strings_stay_text_and_long_ones_stay_under_the_limit() {
        let evil = "x\n| </details> <!-- `y` \\";
        let mut cells: Vec<_> = (0..3).map(|i| cell(i, 1.5)).collect();
        cells[0].adapter = format!("zbus-6{evil}");
        cells[1].bus = Some(evil.into());
        cells[2].scenario = format!("call/{evil}");
        let mut c = comparison(cells);
        c.old_revision = "r".repeat(100_000) + evil;
        c.new_revision = format!("{evil}{}", "n".repeat(100_000));
        c.differences = (0..20)
            .map(|i| format!("cpu {i}: {}{evil}", "Intel ".repeat(20_000)))
            .collect();
        let text = render(&c);
        assert!(text.len() <= MAX_BYTES, "{} bytes", text.len());
        assert_eq!(text.matches("</details>").count(), 1, "{text}");
        assert!(!text.contains("<!--") && !text.contains("\n| </"), "{text}");
        for line in text.lines().filter(|l| l.starts_with("| ") && !l.starts_with("|---")) {
            let bars = line.matches(" | ").count();
            assert!(bars == 7 || bars == 8, "a row split or merged: {line}");
        }
    }

    #[test]
    fn portable_figures_come_before_the_times() {
        let mut c = cell(0, 1.5);
        let exact = |old: f64, new: f64| Metric {
            old,
            new,
            ratio: new / old,
            test: "exact",
            p_value: None,
            significant: old != new,
            verdict: Verdict::Unchanged,
        };
        c.portable.insert("allocations_per_op", exact(5.0, 5.0));
        c.portable.insert("ipc_instructions_per_op", exact(1000.0, 1200.0));
        let text = render(&comparison(vec![c]));
        let line = text
            .lines()
            .find(|l| l.starts_with("| adapter-with-a-long-name-0 | call/echo-bytes/0 |"))
            .unwrap();
        assert_eq!(
            line,
            "| adapter-with-a-long-name-0 | call/echo-bytes/0 | dbus-broker | instructions (all processes) 1000 → \
             1200 (1.200×); allocations 5 (=) | 1.00 µs | 1.50 µs | 1.500× | regressed |"
        );
    }

    #[test]
    fn a_small_comparison_is_whole_and_grouped_by_family() {
        let text = render(&comparison(vec![cell(0, 1.0), cell(1, 0.5), cell(2, 1.0)]));
        assert!(!text.contains("left out"), "{text}");
        assert!(
            text.starts_with("### dbus-matrix: ✅ **no significant regression**; 1 cell faster"),
            "{text}"
        );
        assert!(text.contains("#### marshal (1 cell)"), "{text}");
        assert!(
            !text.contains("#### call"),
            "unchanged cells are only in the full table: {text}"
        );
        assert_eq!(
            text.matches("| adapter-with-a-long-name-").count(),
            4,
            "1 changed + 3 in the table: {text}"
        );
    }
}
