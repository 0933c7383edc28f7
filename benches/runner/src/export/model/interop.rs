//! The interop table (`dbus-matrix interop`): rows are clients, columns
//! servers; a cell counts the checks that passed, and a pair with a failed
//! check says which one and why (a numbered note). A model section: the
//! Markdown and HTML reports print its [`View`].

use harness::results::{InteropPair, InteropStatus, InteropTable};

/// The table as the reports show it.
pub struct View {
    /// [`lead`].
    pub lead: String,
    /// Servers (columns): the adapters that served some pair, in the table's order.
    pub servers: Vec<String>,
    /// Clients (rows): the adapters that called some pair, with a text per server.
    pub rows: Vec<(String, Vec<Option<PairText>>)>,
}

pub fn view(t: &InteropTable) -> View {
    let servers: Vec<String> = t
        .adapters
        .iter()
        .filter(|s| t.pairs.iter().any(|p| &p.server == *s))
        .cloned()
        .collect();
    let rows = t
        .adapters
        .iter()
        .filter(|c| t.pairs.iter().any(|p| &p.client == *c))
        .map(|client| {
            let texts = servers
                .iter()
                .map(|server| t.pair(client, server).map(pair_text))
                .collect();
            (client.clone(), texts)
        })
        .collect();
    View {
        lead: lead(t),
        servers,
        rows,
    }
}

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
