//! Every relative link in README.md and the Markdown under docs/ points at a
//! file that exists, and a `#fragment` into a Markdown file at one of its
//! headings (GitHub's anchors): moving a page cannot leave a dead link behind.

use std::path::{Path, PathBuf};

use crate::common::*;

/// README.md and every `.md` under docs/.
fn pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    let mut out = vec![repo_root().join("README.md")];
    walk(&repo_root().join("docs"), &mut out);
    out.sort();
    out
}

/// The targets of `[text](target)` outside fenced code blocks.
fn links(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(i) = rest.find("](") {
            rest = &rest[i + 2..];
            if let Some(end) = rest.find(')') {
                out.push(rest[..end].to_owned());
                rest = &rest[end..];
            }
        }
    }
    out
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces to `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(markdown: &str) -> Vec<String> {
    markdown
        .lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| anchor(l.trim_start_matches('#')))
        .collect()
}

#[test]
fn relative_links_in_the_readme_and_docs_resolve() {
    let mut dead = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for link in links(&text) {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            let (path, fragment) = link.split_once('#').unwrap_or((link.as_str(), ""));
            let target = if path.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(path)
            };
            checked += 1;
            if !target.exists() {
                dead.push(format!("{}: {link} (no {})", page.display(), target.display()));
            } else if !fragment.is_empty() && target.extension().is_some_and(|x| x == "md") {
                let headings = anchors(&std::fs::read_to_string(&target).unwrap());
                if !headings.iter().any(|h| h == fragment) {
                    dead.push(format!("{}: {link} (no heading #{fragment})", page.display()));
                }
            }
        }
    }
    // The premise: the pages have relative links at all (README links docs/).
    assert!(checked > 50, "only {checked} relative links found");
    assert!(dead.is_empty(), "dead links:\n{}", dead.join("\n"));
}

#[test]
fn anchors_and_links_are_read_as_github_does() {
    assert_eq!(
        anchor(" Fd passing: the second interface and who passes fds"),
        "fd-passing-the-second-interface-and-who-passes-fds"
    );
    assert_eq!(anchor("Library notes (quirks)"), "library-notes-quirks");
    assert_eq!(
        links("see [a](a.md) and [b](docs/b.md#x)\n```\n[c](c.md)\n```\n"),
        ["a.md", "docs/b.md#x"]
    );
}
