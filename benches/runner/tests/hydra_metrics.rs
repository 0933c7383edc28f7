//! `dbus-matrix report --format hydra-metrics`: for every committed results
//! file (old schemas included), a line `NAME VALUE UNIT` per ok cell and per
//! instruction count, names and units in the alphabet Hydra's queue runner
//! keeps (`[a-zA-Z0-9._-]+`, `[a-zA-Z0-9._%-]+`), names unique, each value
//! the cell's median to 0.1 ns.

use std::collections::BTreeSet;

use crate::common::*;

fn hydra_alphabet(s: &str, extra: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c) || extra.contains(c))
}

#[test]
fn a_line_per_ok_cell_of_every_committed_file() {
    let dir = repo_root().join("docs/results");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "{files:?}");
    for f in &files {
        let r = validate(f);
        let o = dbus_matrix(&["report", "--format", "hydra-metrics"])
            .arg(f)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}: {}", f.display(), text(&o));
        let out = String::from_utf8(o.stdout).unwrap();
        let ok: Vec<_> = r.cells.iter().filter_map(|c| c.measurement().map(|m| (c, m))).collect();
        let counted = ok.iter().filter(|(_, m)| m.instructions_per_op.is_some()).count();
        assert_eq!(out.lines().count(), ok.len() + counted, "{}", f.display());
        let mut names = BTreeSet::new();
        for (line, (cell, m)) in out.lines().filter(|l| l.ends_with(" ns")).zip(&ok) {
            let f3: Vec<&str> = line.split(' ').collect();
            assert_eq!(f3.len(), 3, "{line}");
            assert!(hydra_alphabet(f3[0], ""), "name {line}");
            assert!(hydra_alphabet(f3[2], "%"), "unit {line}");
            assert!(names.insert(f3[0].to_string()), "{line} named twice");
            // A row's `@` or `+` (`zbus-6@6.1.0`) is `_` there, as any character outside Hydra's alphabet.
            let adapter = cell
                .adapter
                .replace('/', ".")
                .replace(|c: char| !(c.is_ascii_alphanumeric() || "._-".contains(c)), "_");
            assert!(f3[0].starts_with(&format!("{adapter}.")), "{line}");
            let v: f64 = f3[1].parse().unwrap();
            assert!(
                (v - m.wall.median_ns.point).abs() <= 0.050_001,
                "{line}: {}",
                m.wall.median_ns.point
            );
        }
    }
}
