//! A library's page: per bus (and role), each of its scenarios over the runs
//! that measured the library, under a header row of the library's version in
//! each run (a new version is highlighted), with `history`'s steps; the
//! scenario names lead to their figures. So a library is followed across
//! releases as well as across runs.

use std::fmt::Write;

use harness::results::Role;

use sha2::Digest;

use super::model::{Run, Site};
use super::page::page;
use crate::analyze::history::{Series, Step};
use crate::export::html::esc;
use crate::export::model::table::duration;

/// The longest id part of a page's file name (a file name has at most 255 bytes).
const NAME_PART: usize = 80;

/// The page's file name for `adapter`: `l-ID.html` where the id is short
/// and only letters, digits, `.` and `-`; otherwise its first characters
/// with the others as `_`, then `_` and a hash of the whole id, so that two
/// ids never share a page and no id is too long for a file name.
pub fn page_name(adapter: &str) -> String {
    let base: String = adapter
        .chars()
        .take(NAME_PART)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if base == adapter {
        return format!("l-{base}.html");
    }
    let digest = sha2::Sha256::digest(adapter.as_bytes());
    let hash: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("l-{base}_{hash}.html")
}

pub fn render(site: &Site, adapter: &str) -> String {
    let mut groups: Vec<(Option<String>, Role, Vec<&Series>)> = Vec::new();
    for s in site.history.series.iter().filter(|s| s.adapter == adapter) {
        match groups.iter_mut().find(|(b, r, _)| *b == s.bus && *r == s.role) {
            Some((_, _, v)) => v.push(s),
            None => groups.push((s.bus.clone(), s.role, vec![s])),
        }
    }
    let mut body = String::new();
    let _ = writeln!(
        body,
        "<h1>Library <code>{}</code></h1>\n<p class=\"explain\">Its median wall time per operation in every run that \
         measured it, oldest first, under the library's version in that run (a new version is shaded). ▲/▼: a step \
         (slower/faster) by <code>history</code>'s rule. Scenario names lead to the figure over runs.</p>",
        esc(adapter)
    );
    for (bus, role, series) in &groups {
        group(site, &mut body, adapter, bus.as_deref(), *role, series);
    }
    page(site, &format!("dbus-matrix · {adapter}"), &body, "")
}

fn group(site: &Site, out: &mut String, adapter: &str, bus: Option<&str>, role: Role, series: &[&Series]) {
    let xs: Vec<usize> = (0..site.runs.len())
        .filter(|&j| series.iter().any(|s| s.points[j].status != "absent"))
        .collect();
    let _ = write!(
        out,
        "<section data-bus=\"{}\"><h2>{}{}</h2><div class=\"scroll\"><table class=\"library\"><thead><tr><th>run</th>",
        esc(bus.unwrap_or("")),
        esc(&bus.map_or("no bus".to_string(), |b| format!("on {b}"))),
        esc(role.label_suffix())
    );
    for &j in &xs {
        let _ = write!(
            out,
            "<th class=\"lib\" title=\"{}\"><a href=\"{}\">#{}</a><small>{}</small></th>",
            esc(&site.runs[j].label),
            Run::page(j),
            j + 1,
            esc(&site.runs[j].title())
        );
    }
    out.push_str("</tr><tr><th>version</th>");
    let mut last: Option<String> = None;
    for &j in &xs {
        let v = site.version(j, adapter);
        let new = last.is_some() && v != last;
        let _ = write!(
            out,
            "<th class=\"lib{}\">{}</th>",
            if new { " version-new" } else { "" },
            esc(v.as_deref().unwrap_or("–"))
        );
        last = v;
    }
    out.push_str("</tr></thead><tbody>\n");
    for s in series {
        let name = match site.scenario_page(&s.scenario) {
            Some(p) => format!("<a href=\"{p}\">{}</a>", esc(&s.scenario)),
            None => esc(&s.scenario),
        };
        let _ = write!(out, "<tr data-scenario=\"{}\"><th>{name}</th>", esc(&s.scenario));
        for &j in &xs {
            let p = &s.points[j];
            match p.median_ns {
                Some(m) => {
                    let (class, mark) = match p.step {
                        Some(Step::Up) => (" up", " ▲"),
                        Some(Step::Down) => (" down", " ▼"),
                        None => ("", ""),
                    };
                    let _ = write!(
                        out,
                        "<td class=\"num{class}\" data-run=\"{j}\" data-ns=\"{m}\">{}{mark}</td>",
                        duration(m)
                    );
                }
                None if p.status == "absent" => out.push_str("<td class=\"none\">–</td>"),
                None => {
                    let _ = write!(out, "<td class=\"{0}\">{0}</td>", p.status);
                }
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div></section>\n");
}

#[cfg(test)]
mod tests {
    use super::page_name;

    /// Issue 42 (14): ids differing only outside `[A-Za-z0-9.-]` shared a
    /// page, and a 100,000-character id failed the whole site.
    #[test]
    fn every_id_gets_a_page_of_its_own_with_a_name_a_file_can_have() {
        assert_eq!(page_name("zbus-6"), "l-zbus-6.html");
        let ids = ["a b", "a_b", "a/b", "a\nb", "a-b", "a|b", "a\u{e9}"];
        let mut names: Vec<String> = ids.iter().map(|i| page_name(i)).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ids.len(), "{names:?}");
        let long = page_name(&"x".repeat(100_000));
        assert!(long.len() <= 255 && long.starts_with("l-xxx"), "{long}");
        assert_ne!(long, page_name(&"x".repeat(99_999)));
        for n in &names {
            assert!(
                n.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)),
                "{n}"
            );
        }
    }
}
