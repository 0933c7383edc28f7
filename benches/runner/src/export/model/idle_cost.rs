//! The idle-cost section (issue 31, "threads and idle cost"): per
//! `connect/idle-connections/<n>` cell the client's threads, and on the
//! smallest count (n = 10), over a quiet window, the
//! threads, CPU time and wake-ups per second of the client holding its
//! connections, of the server holding its own and of the bus daemon holding
//! the client's (`ConnectionMemory::idle`, read by
//! `run/cell/held_memory.rs`).

use harness::results::{IdleProcess, ResultsFile};

use super::connection_memory;
use super::section::Section;
use super::table::duration;

const DASH: &str = "—";
const ROLES: [&str; 3] = ["client", "server", "bus"];

pub const EXPLAIN: &str = "What holding connections idle costs, over a quiet window in which nothing is asked of \
     any process: the client holding n connections, the cell's server holding its own (idle on the cell's bus), and a \
     fresh bus daemon holding the client's (n = 10 only; larger counts show the client's threads). Threads: `Threads` of /proc/PID/status. CPU: CPU time per second of the \
     window (after 0.1 s of settling). Wake-ups: voluntary context switches per second (a thread slept and was woken: a library that polls or \
     runs timers shows here; one that sleeps until a message comes shows 0).";

fn rate(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v < 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

fn role_texts(p: Option<&IdleProcess>) -> [String; 3] {
    match p {
        None => [DASH.into(), DASH.into(), DASH.into()],
        Some(p) => [
            p.threads.to_string(),
            match p.cpu_ns_per_s {
                0.0 => "0".into(),
                ns => format!("{}/s", duration(ns)),
            },
            format!("{}/s", rate(p.wakeups_per_s)),
        ],
    }
}

/// The section, when the file has idle-connection cells with the client's threads
/// (every count; the quiet window's figures on the smallest).
pub fn section(r: &ResultsFile) -> Option<Section> {
    let rows: Vec<Vec<String>> = connection_memory::rows(r)
        .iter()
        .filter_map(|row| {
            let mem = row.memory()?;
            let threads = mem.client_threads?;
            let mut texts = vec![
                row.cell.adapter.clone(),
                row.cell.bus.clone().unwrap_or_default(),
                row.connections.to_string(),
            ];
            match &mem.idle {
                // Larger counts: the client's threads only (no quiet window).
                None => {
                    texts.push(DASH.into());
                    texts.extend([threads.to_string(), DASH.into(), DASH.into()]);
                    texts.extend(std::iter::repeat_n(DASH.to_string(), 6));
                }
                Some(idle) => {
                    texts.push(format!("{:.2} s", idle.window_s));
                    for role in ROLES {
                        texts.extend(role_texts(idle.process(role)));
                    }
                    if !idle.notes.is_empty() {
                        texts[3] = format!("{} ({})", texts[3], idle.notes.join("; "));
                    }
                }
            }
            Some(texts)
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut head: Vec<String> = ["adapter", "bus", "connections", "window"].map(String::from).to_vec();
    for role in ROLES {
        head.extend([
            format!("{role} threads"),
            format!("{role} CPU"),
            format!("{role} wake-ups"),
        ]);
    }
    Some(Section {
        id: "idle-cost",
        title: "Threads and idle cost",
        explain: EXPLAIN.into(),
        head,
        rows,
    })
}
