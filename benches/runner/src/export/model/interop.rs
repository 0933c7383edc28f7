//! The interop table (`dbus-matrix interop`): rows are clients, columns
//! servers; a cell counts the checks that passed, and a pair with a failed
//! check says which one and why (a numbered note).

use std::fmt::Write;

use harness::results::{InteropPair, InteropStatus, InteropTable};

/// What one pair's cell says, and the notes it needs.
pub struct PairText {
    /// `4/4`, `3/4 ✗`, `–` (nothing checked: every check unsupported).
    pub summary: String,
    pub passed: bool,
    /// One line per failed check: `scenario: reason`.
    pub failures: Vec<String>,
}

pub fn pair_text(p: &InteropPair) -> PairText {
    let passed = p.checks.iter().filter(|c| c.status == InteropStatus::Passed).count();
    let checked = p
        .checks
        .iter()
        .filter(|c| c.status != InteropStatus::Unsupported)
        .count();
    let failures: Vec<String> = p
        .failed()
        .map(|c| format!("{}: {}", c.scenario, c.reason.as_deref().unwrap_or("failed")))
        .collect();
    let summary = match (checked, failures.is_empty()) {
        (0, _) => "–".to_string(),
        (_, true) => format!("{passed}/{checked}"),
        (_, false) => format!("{passed}/{checked} ✗"),
    };
    PairText {
        summary,
        passed: failures.is_empty(),
        failures,
    }
}

/// The lead of the table: what was checked, over which bus.
pub fn lead(t: &InteropTable) -> String {
    let failed = t.pairs.iter().filter(|p| !p.passed()).count();
    format!(
        "Every client (row) calls every server (column) over {}, not timed: {}. A cell counts the checks that passed of \
         those both sides support (– : none); ✗ marks a pair with a failed check (the note says which and why). \
         {} pairs, {} with a failure.",
        t.bus,
        t.checks.join(", "),
        t.pairs.len(),
        failed
    )
}

/// The table as Markdown, with its notes.
pub fn markdown(t: &InteropTable) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "### interop: client (row) × server (column)\n\n{}\n", lead(t));
    let servers: Vec<&String> = t
        .adapters
        .iter()
        .filter(|s| t.pairs.iter().any(|p| &p.server == *s))
        .collect();
    let _ = writeln!(
        out,
        "| client \\ server | {} |",
        servers.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" | ")
    );
    let _ = writeln!(out, "|---|{}", "---:|".repeat(servers.len()));
    let mut notes = Vec::new();
    for client in t.adapters.iter().filter(|c| t.pairs.iter().any(|p| &p.client == *c)) {
        let cells: Vec<String> = servers
            .iter()
            .map(|server| match t.pair(client, server) {
                None => " ".to_string(),
                Some(p) => {
                    let text = pair_text(p);
                    if text.passed {
                        text.summary
                    } else {
                        notes.push(format!("{client} → {server}: {}", text.failures.join("; ")));
                        format!("{} [i{}]", text.summary, notes.len())
                    }
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
        let md = super::markdown(&t);
        assert!(md.contains("| a |   | 1/2 ✗ [i1] |"), "{md}");
        assert!(md.contains("| b | 1/1 |   |"), "{md}");
        assert!(md.contains("[i1] a → b: property/get: digest mismatch"), "{md}");
        assert!(md.contains("2 pairs, 1 with a failure"), "{md}");
    }
}
