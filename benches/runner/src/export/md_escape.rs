//! Untrusted text (ids, revisions, environment strings from results files)
//! in Markdown: the one place `compare --format markdown` and `--format pr`
//! make such text inert. A newline, `|`, `<!--` or `</details>` from a file
//! must not end a table row, open a comment or close the comment's fold.

/// The longest id or revision shown; longer ones end in `…`.
pub const MAX_CHARS: usize = 120;

/// Text for a table cell or a line: control characters as spaces, and
/// `& < > \ | `` ` `` as HTML entities (GitHub renders them as the character).
pub fn md_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in cut(s).chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' => out.push_str("&#92;"),
            '|' => out.push_str("&#124;"),
            '`' => out.push_str("&#96;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Text for a code span (`` `…` ``), where entities are not decoded: its
/// backticks as `'`, control characters as spaces, `|` as `/` (a table
/// row ends at any `|`), `<` and `>` as `‹` and `›` (so that no renderer
/// can take `</details>` or `<!--` for markup).
pub fn md_code(s: &str) -> String {
    cut(s)
        .chars()
        .map(|c| match c {
            '`' => '\'',
            '|' => '/',
            '<' => '‹',
            '>' => '›',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect()
}

fn cut(s: &str) -> std::borrow::Cow<'_, str> {
    match s.char_indices().nth(MAX_CHARS) {
        Some((at, _)) => format!("{}…", &s[..at]).into(),
        None => s.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_text_stays_text() {
        assert_eq!(md_text("zbus-6@6.1.0+patch call/void"), "zbus-6@6.1.0+patch call/void");
        assert_eq!(
            md_text("a|b\n</details><!-- `x` \\"),
            "a&#124;b &lt;/details&gt;&lt;!-- &#96;x&#96; &#92;"
        );
        assert_eq!(md_code("ab`c|d\ne<!--"), "ab'c/d e‹!--");
        let long = "é".repeat(1000);
        assert_eq!(md_text(&long).chars().count(), MAX_CHARS + 1);
        assert_eq!(md_code(&long).chars().count(), MAX_CHARS + 1);
    }
}
