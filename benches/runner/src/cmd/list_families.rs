//! What `dbus-matrix list` says about an adapter's unsupported scenarios: one
//! line per scenario family (the id's first segment: `marshal`, `call`,
//! `signal`, ...) with how many of the matrix's scenarios of that family are
//! unsupported and the first one's reason (its first [`SHORT`] characters; a
//! reason already given for an earlier family is named, not repeated), so
//! that an adapter reads in a few lines rather than a hundred ids.
//! `--verbose` adds every id, grouped by whole reason.

use std::collections::HashMap;

/// How many characters of a reason the summary line shows.
pub const SHORT: usize = 100;

/// The family of a scenario id: what comes before its first `/`.
pub fn family(id: &str) -> &str {
    id.split('/').next().unwrap_or(id)
}

/// The lines for one adapter, families in the matrix's order (`order`, the
/// matrix's scenario ids), only those with an unsupported scenario.
pub fn summarise(order: &[&str], unsupported: &HashMap<String, String>, verbose: bool) -> Vec<String> {
    let mut families: Vec<&str> = Vec::new();
    for id in order {
        if !families.contains(&family(id)) {
            families.push(family(id));
        }
    }
    let mut lines = Vec::new();
    // (reason, the family whose line gave it first).
    let mut given: Vec<(&str, &str)> = Vec::new();
    for f in families {
        let ids: Vec<&str> = order.iter().copied().filter(|id| family(id) == f).collect();
        let missing: Vec<&str> = ids.iter().copied().filter(|id| unsupported.contains_key(*id)).collect();
        let Some(first) = missing.first() else {
            continue;
        };
        // Reasons in order of first appearance, each with its ids.
        let mut reasons: Vec<(&str, Vec<&str>)> = Vec::new();
        for id in &missing {
            let reason = unsupported[*id].as_str();
            match reasons.iter_mut().find(|(r, _)| *r == reason) {
                Some((_, ids)) => ids.push(id),
                None => reasons.push((reason, vec![id])),
            }
        }
        let others = match reasons.len() - 1 {
            0 => String::new(),
            1 => " (+1 other reason)".to_owned(),
            n => format!(" (+{n} other reasons)"),
        };
        let reason = match given.iter().find(|(r, _)| *r == reasons[0].0) {
            Some((_, earlier)) => format!("as for {earlier}"),
            None => {
                given.push((reasons[0].0, f));
                short(reasons[0].0)
            }
        };
        lines.push(format!(
            "{f}: {} of {} unsupported; {first}: {reason}{others}",
            missing.len(),
            ids.len(),
        ));
        if verbose {
            for (reason, ids) in &reasons {
                lines.push(format!("  - {}: {reason}", ids.join(", ")));
            }
        }
    }
    lines
}

/// The first [`SHORT`] characters of `reason`, `…` where it goes on.
fn short(reason: &str) -> String {
    match reason.char_indices().nth(SHORT) {
        Some((end, _)) => format!("{}…", reason[..end].trim_end()),
        None => reason.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORDER: [&str; 6] = [
        "marshal/mixed",
        "call/void",
        "call/relation-set",
        "call/fd-passing/4096",
        "call/fd-passing/1048576",
        "signal/fanout/1",
    ];

    fn unsupported(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(i, r)| (i.to_string(), r.to_string())).collect()
    }

    #[test]
    fn one_line_per_family_with_counts_and_the_first_reason() {
        let u = unsupported(&[
            ("call/relation-set", "arrays of structs"),
            ("call/fd-passing/4096", "no fds"),
            ("call/fd-passing/1048576", "no fds"),
            ("signal/fanout/1", "no signals"),
        ]);
        assert_eq!(
            summarise(&ORDER, &u, false),
            [
                "call: 3 of 4 unsupported; call/relation-set: arrays of structs (+1 other reason)",
                "signal: 1 of 1 unsupported; signal/fanout/1: no signals",
            ]
        );
    }

    #[test]
    fn verbose_keeps_every_id_grouped_by_reason() {
        let u = unsupported(&[
            ("call/relation-set", "arrays of structs"),
            ("call/fd-passing/4096", "no fds"),
            ("call/fd-passing/1048576", "no fds"),
        ]);
        assert_eq!(
            summarise(&ORDER, &u, true),
            [
                "call: 3 of 4 unsupported; call/relation-set: arrays of structs (+1 other reason)",
                "  - call/relation-set: arrays of structs",
                "  - call/fd-passing/4096, call/fd-passing/1048576: no fds",
            ]
        );
    }

    #[test]
    fn a_reason_given_for_an_earlier_family_is_named_and_a_long_one_is_cut() {
        let long = "x".repeat(SHORT + 20);
        let u = unsupported(&[
            ("marshal/mixed", long.as_str()),
            ("call/void", long.as_str()),
            ("call/relation-set", long.as_str()),
        ]);
        let summary = summarise(&ORDER, &u, false);
        assert_eq!(
            summary,
            [
                format!("marshal: 1 of 1 unsupported; marshal/mixed: {}…", "x".repeat(SHORT)),
                "call: 2 of 4 unsupported; call/void: as for marshal".to_owned(),
            ]
        );
        // --verbose keeps the whole reason.
        assert!(summarise(&ORDER, &u, true).contains(&format!("  - call/void, call/relation-set: {long}")));
    }

    #[test]
    fn nothing_unsupported_is_no_line() {
        assert!(summarise(&ORDER, &HashMap::new(), true).is_empty());
    }
}
