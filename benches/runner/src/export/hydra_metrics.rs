//! `report --format hydra-metrics`: the lines of Hydra's
//! `$out/nix-support/hydra-metrics`, which Hydra plots per job over
//! evaluations: one line `NAME VALUE UNIT` per headline figure of every ok
//! cell:
//! - `<adapter>.<scenario>[.<bus>][.<role>] <median> ns`: the median wall time
//!   per operation (the scenario's `/` as `.`);
//! - the same name with `.instructions`, when counted (`run --instructions`):
//!   callgrind instructions per operation, unit `instructions`.
//!
//! Hydra's queue runner keeps a line only when its name matches
//! `[a-zA-Z0-9._-]+` and its unit `[a-zA-Z0-9._%-]+`: every other character
//! of an id becomes `_`. Cells that did not run (unsupported, failed) have no
//! figure and no line.

use std::fmt::Write;

use harness::results::ResultsFile;

/// An id as Hydra takes it: `/` as `.`, anything outside `[A-Za-z0-9._-]` as `_`.
fn part(id: &str) -> String {
    id.chars()
        .map(|c| match c {
            '/' => '.',
            c if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') => c,
            _ => '_',
        })
        .collect()
}

pub fn render(r: &ResultsFile) -> String {
    let mut s = String::new();
    for c in &r.cells {
        let Some(m) = c.measurement() else { continue };
        let mut name = format!("{}.{}", part(&c.adapter), part(&c.scenario));
        if let Some(bus) = &c.bus {
            let _ = write!(name, ".{}", part(bus));
        }
        if !c.role.is_same() {
            let _ = write!(name, ".{}", part(&c.role.to_string()));
        }
        let _ = writeln!(s, "{name} {:.1} ns", m.wall.median_ns.point);
        if let Some(i) = m.instructions_per_op {
            let _ = writeln!(s, "{name}.instructions {i:.1} instructions");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::test_fixtures::tiny;

    #[test]
    fn a_line_per_ok_cell_in_hydras_alphabet() {
        let mut r = tiny();
        r.cells[0].measurement_mut().unwrap().instructions_per_op = Some(12_345.0);
        let out = render(&r);
        let ok = r.cells.iter().filter(|c| c.measurement().is_some()).count();
        assert_eq!(out.lines().count(), ok + 1, "{out}");
        for line in out.lines() {
            let f: Vec<&str> = line.split(' ').collect();
            assert_eq!(f.len(), 3, "{line}");
            assert!(
                f[0].chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)),
                "{line}"
            );
            assert!(f[1].parse::<f64>().is_ok_and(|v| v > 0.0), "{line}");
            assert!(["ns", "instructions"].contains(&f[2]), "{line}");
        }
        assert!(out.contains(".instructions 12345.0 instructions"), "{out}");
        assert_eq!(part("call/echo-bytes/1024"), "call.echo-bytes.1024");
        assert_eq!(part("a b@c"), "a_b_c");
    }
}
