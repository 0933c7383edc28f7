//! The coverage table (`dbus-matrix list --format markdown`): per library,
//! what its adapter can do, from the adapters' own listings, and the
//! libraries matrix.toml lists as unavailable with their reason. docs/coverage.md's
//! table is this output, checked by a test, never written by hand.

use std::collections::HashMap;
use std::fmt::Write;

use harness::ipc::{needs_bus, IpcOp};
use harness::scenario::{self, Kind};

use crate::matrix::{AdapterEntry, Matrix};
use crate::process::adapter::Described;

/// What one adapter supports, counted over the matrix's scenarios.
struct Row {
    adapter: String,
    library: String,
    version: String,
    codec: Count,
    bus: Count,
    p2p: Count,
    serves: &'static str,
    api: &'static str,
    runtime: String,
    notes: Vec<String>,
}

#[derive(Default)]
struct Count {
    supported: usize,
    of: usize,
}

impl Count {
    fn add(&mut self, supported: bool) {
        self.of += 1;
        self.supported += usize::from(supported);
    }

    fn cell(&self) -> String {
        if self.of == 0 {
            "—".into()
        } else {
            format!("{}/{}", self.supported, self.of)
        }
    }
}

/// Blocking or async, from the adapter's runtime: blocking libraries say
/// `blocking: ...`, adapters without a transport `none: ...`.
fn api(runtime: &str) -> &'static str {
    if runtime.starts_with("blocking") {
        "blocking"
    } else if runtime.is_empty() || runtime.starts_with("none") {
        "—"
    } else {
        "async"
    }
}

/// `what: reason` of the first scenario without support, once per `what`.
fn note_once(map: &HashMap<String, String>, id: &str, what: &str, notes: &mut Vec<String>) {
    if let Some(why) = map.get(id) {
        if !notes.iter().any(|n| n.starts_with(what)) {
            notes.push(format!("{what}: {}", first_clause(why)));
        }
    }
}

fn row(m: &Matrix, a: &AdapterEntry, d: &Described) -> Row {
    let (mut codec, mut bus, mut p2p) = (Count::default(), Count::default(), Count::default());
    let mut notes = Vec::new();
    for s in &m.scenarios {
        let Some(sc) = scenario::find(&s.id) else { continue };
        let on_bus = !d.unsupported.contains_key(&s.id);
        match sc.kind {
            Kind::Marshal | Kind::Demarshal => {
                codec.add(on_bus);
                if codec.supported == 0 {
                    note_once(&d.unsupported, &s.id, "codec", &mut notes);
                }
            }
            Kind::Ipc(IpcOp::RawSocket(_)) => {}
            Kind::Ipc(op) => {
                bus.add(on_bus);
                if bus.supported == 0 {
                    note_once(&d.unsupported, &s.id, "IPC", &mut notes);
                }
                // A cell that needs a bus whatever the library says nothing about p2p.
                if needs_bus(op).is_none() && sc.runner_needs_bus().is_none() {
                    p2p.add(on_bus && !d.unsupported_p2p.contains_key(&s.id));
                    if on_bus && p2p.supported == 0 {
                        note_once(&d.unsupported_p2p, &s.id, "p2p", &mut notes);
                    }
                }
            }
        }
    }
    // Every call cell calls a server of the adapter's own library: it serves
    // where its call/void cell is supported.
    let void = "call/void";
    let on_bus = !d.unsupported.contains_key(void);
    let serves = match (on_bus, on_bus && !d.unsupported_p2p.contains_key(void)) {
        (true, true) => "bus, p2p",
        (true, false) => "bus",
        _ => "no",
    };
    if a.baseline {
        notes.insert(0, "not a library: the hand-written speed-of-light baseline".into());
    }
    Row {
        adapter: a.id.clone(),
        library: d.listing.library.clone(),
        // A library the machine provides shows its line: the exact version is
        // this machine's (results and `list` have it), the table is everyone's.
        version: match &a.version_line {
            Some(line) => format!("{line}.x"),
            None => d.listing.version.clone(),
        },
        codec,
        bus,
        p2p,
        serves,
        api: api(&d.listing.runtime),
        runtime: d.listing.runtime.clone(),
        notes,
    }
}

/// Markdown: a row per adapter of the matrix (`described` in the same order;
/// an adapter that could not be asked shows why), then one per unavailable
/// library.
pub fn markdown(m: &Matrix, described: &[Result<Described, String>]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| adapter | library | version | codec | IPC on a bus | p2p | serves | API | runtime | notes |"
    );
    let _ = writeln!(out, "|---|---|---|---:|---:|---:|---|---|---|---|");
    for (a, d) in m.adapters.iter().zip(described) {
        match d {
            Ok(d) => {
                let r = row(m, a, d);
                let _ = writeln!(
                    out,
                    "| `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    r.adapter,
                    r.library,
                    r.version,
                    r.codec.cell(),
                    r.bus.cell(),
                    r.p2p.cell(),
                    r.serves,
                    r.api,
                    cell_text(&r.runtime),
                    cell_text(&r.notes.join("; ")),
                );
            }
            Err(why) => {
                let _ = writeln!(
                    out,
                    "| `{}` | {} | — | — | — | — | — | — | — | not available: {} |",
                    a.id,
                    a.library,
                    cell_text(why)
                );
            }
        }
    }
    for u in &m.unavailable {
        let _ = writeln!(
            out,
            "| — | {} | {} | — | — | — | — | — | — | {} |",
            u.library,
            u.version.as_deref().unwrap_or("—"),
            cell_text(&u.reason)
        );
    }
    out
}

/// A reason up to its first `: ` (the claim; the evidence after it is in
/// every results file's cell), when that leaves a sentence.
fn first_clause(why: &str) -> &str {
    match why.find(": ") {
        Some(i) if i >= 20 => &why[..i],
        _ => why,
    }
}

/// Text safe inside a markdown table cell.
fn cell_text(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_follows_the_runtime_words() {
        assert_eq!(api("blocking: the calling thread"), "blocking");
        assert_eq!(api("tokio 1.x current-thread runtime"), "async");
        assert_eq!(api("none: codec only, no transport"), "—");
        assert_eq!(api(""), "—");
    }

    #[test]
    fn counts_show_supported_of_all_or_a_dash() {
        let mut c = Count::default();
        assert_eq!(c.cell(), "—");
        c.add(true);
        c.add(false);
        assert_eq!(c.cell(), "1/2");
    }

    #[test]
    fn notes_keep_the_claim_of_a_reason() {
        assert_eq!(
            first_clause("rustbus 0.19.3 cannot serve a peer-to-peer connection: its auth module ..."),
            "rustbus 0.19.3 cannot serve a peer-to-peer connection"
        );
        assert_eq!(first_clause("IPC: short"), "IPC: short");
    }

    #[test]
    fn cells_keep_the_table_intact() {
        assert_eq!(cell_text("a | b\nc"), "a \\| b c");
    }
}
