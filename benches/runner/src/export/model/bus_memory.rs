//! The bus daemons' own memory with 0, 10, 100 (and 1000) idle peers (issue
//! 31: dbus-broker#377 says it uses about 8 MB more than dbus-daemon), from
//! what `connect/idle-connections/<n>` cells already record
//! (`ConnectionMemory`): the VmRSS of a fresh daemon before the client
//! connects (0 peers) and with its n connections held. One row per bus, the
//! median over the run's cells of that bus (each cell a fresh daemon, each
//! adapter its own client), with the range.

use std::collections::BTreeMap;

use harness::results::ResultsFile;

use super::connection_memory::{self, bytes};
use super::section::Section;

pub const EXPLAIN: &str = "Each bus daemon's resident memory (VmRSS of all its processes: dbus-broker is a launcher \
     and a broker) on a fresh daemon before any client connects (0 peers) and with n idle connections (SASL + Hello) \
     held, read by the runner in the connect/idle-connections/<n> cells. Median over the run's cells of that bus (one \
     per adapter, each with a fresh daemon), and in brackets how many cells and their range.";

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

fn text(v: &mut [f64]) -> String {
    if v.is_empty() {
        return "—".into();
    }
    let (lo, hi) = (
        v.iter().copied().fold(f64::MAX, f64::min),
        v.iter().copied().fold(f64::MIN, f64::max),
    );
    let n = v.len();
    let m = median(v);
    if n == 1 {
        return bytes(m);
    }
    format!("{} ({n} cells: {}–{})", bytes(m), bytes(lo), bytes(hi))
}

/// Per bus, per count of peers (0 first), the daemon's VmRSS of every cell.
pub fn readings(r: &ResultsFile) -> BTreeMap<String, BTreeMap<usize, Vec<f64>>> {
    let mut out: BTreeMap<String, BTreeMap<usize, Vec<f64>>> = BTreeMap::new();
    for row in connection_memory::rows(r) {
        let (Some(mem), Some(bus)) = (row.memory(), row.cell.bus.clone()) else {
            continue;
        };
        let by_peers = out.entry(bus).or_default();
        by_peers.entry(0).or_default().push(mem.bus_rss_before_bytes as f64);
        by_peers
            .entry(row.connections)
            .or_default()
            .push(mem.bus_rss_held_bytes as f64);
    }
    out
}

/// The section, when the file has idle-connection cells with memory.
pub fn section(r: &ResultsFile) -> Option<Section> {
    let readings = readings(r);
    let mut counts: Vec<usize> = readings.values().flat_map(|m| m.keys().copied()).collect();
    counts.sort_unstable();
    counts.dedup();
    if counts.is_empty() {
        return None;
    }
    let mut head = vec!["bus".to_string()];
    head.extend(counts.iter().map(|n| match n {
        0 => "0 peers".to_string(),
        n => format!("{n} idle peers"),
    }));
    let rows = readings
        .into_iter()
        .map(|(bus, mut by_peers)| {
            let mut row = vec![bus];
            row.extend(
                counts
                    .iter()
                    .map(|n| text(by_peers.get_mut(n).map(Vec::as_mut_slice).unwrap_or(&mut []))),
            );
            row
        })
        .collect();
    Some(Section {
        id: "bus-memory",
        title: "Bus daemon memory with idle peers",
        explain: EXPLAIN.into(),
        head,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_range() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        let mib = 1024.0 * 1024.0;
        assert_eq!(
            text(&mut [2.0 * mib, 4.0 * mib, 3.0 * mib]),
            "3.0 MiB (3 cells: 2.0 MiB–4.0 MiB)"
        );
        assert_eq!(text(&mut [mib]), "1.0 MiB");
        assert_eq!(text(&mut []), "—");
    }
}
