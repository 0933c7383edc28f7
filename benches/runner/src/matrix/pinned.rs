//! The version axis: a `[[pinned]]` entry of matrix.toml names an adapter
//! (`of`) and another release of its library crate (`pin`), and becomes a row
//! of its own (`id`, such as `zbus-6@6.1`) beside the adapter, built from the
//! registry at run time ([`crate::pin`]) with the same adapter code. The
//! entry, its checks and the built row's type live here, with the matrix
//! entries they mark.

use std::path::PathBuf;

use anyhow::{bail, ensure, Result};
use harness::results::PinRecord;
use serde::Deserialize;

use super::{AdapterEntry, Matrix};

/// `[[pinned]]` in matrix.toml.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct PinnedEntry {
    /// The row's id: `<of>@<anything>` (`zbus-6@6.1`).
    pub id: String,
    /// The adapter (a member of the benches workspace) whose code is built.
    pub of: String,
    /// `CRATE@X.Y` (the newest X.Y.z the registry has) or `CRATE@=X.Y.Z`.
    pub pin: String,
}

/// A parsed `pin`: the crate and the release it is held to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    pub crate_name: String,
    /// `6.1` (a patch line) or `6.1.0` (exact, written `=6.1.0`).
    pub version: String,
    pub exact: bool,
}

impl Pin {
    pub fn parse(text: &str) -> Result<Pin> {
        let Some((name, version)) = text.split_once('@') else {
            bail!("pin {text:?}: expected CRATE@X.Y (the newest X.Y.z) or CRATE@=X.Y.Z");
        };
        ensure!(
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
            "pin {text:?}: {name:?} is not a crate name"
        );
        let (exact, version) = match version.strip_prefix('=') {
            Some(v) => (true, v),
            None => (false, version),
        };
        let parts: Vec<&str> = version.split('.').collect();
        let numeric = parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 9 && p.chars().all(|c| c.is_ascii_digit()));
        let want = if exact { 3 } else { 2 };
        ensure!(
            numeric && parts.len() == want,
            "pin {text:?}: expected CRATE@X.Y (a patch line: the newest X.Y.z) or CRATE@=X.Y.Z (one release), \
             numbers only"
        );
        Ok(Pin {
            crate_name: name.to_string(),
            version: version.to_string(),
            exact,
        })
    }

    /// The requirement written into the adapter's manifest.
    pub fn requirement(&self) -> String {
        if self.exact {
            format!("={}", self.version)
        } else {
            format!("~{}", self.version)
        }
    }

    /// Whether a resolved version is this pin's.
    pub fn admits(&self, version: &str) -> bool {
        if self.exact {
            version == self.version
        } else {
            version.strip_prefix(&self.version).is_some_and(|r| r.starts_with('.'))
        }
    }
}

/// What makes an adapter entry a version-axis row: where its executable is
/// and what it was built from.
#[derive(Debug, Clone)]
pub struct Pinned {
    /// The adapter whose code was built (its listing says this id).
    pub of: String,
    pub bin: PathBuf,
    pub record: PinRecord,
}

/// The checks of `[[pinned]]` against the whole file.
pub(super) fn check(m: &Matrix) -> Result<()> {
    for p in &m.pinned {
        let Some(of) = m.adapters.iter().find(|a| a.id == p.of) else {
            bail!("pinned {}: `of` names no adapter ({:?})", p.id, p.of);
        };
        check_row_id(&p.id, of)?;
        ensure!(
            !m.adapters.iter().any(|a| a.id == p.id),
            "pinned {}: an adapter has this id",
            p.id
        );
        ensure!(
            m.pinned.iter().filter(|q| q.id == p.id).count() == 1,
            "duplicate pinned id {:?}",
            p.id
        );
        Pin::parse(&p.pin).map_err(|e| anyhow::anyhow!("pinned {}: {e}", p.id))?;
        ensure!(
            !of.is_program() && !of.own_lockfile && of.version_line.is_none(),
            "pinned {}: adapter {} is not a member of the benches workspace built from the registry \
             (a program, an own-lockfile adapter or a machine's package cannot be pinned)",
            p.id,
            of.id
        );
    }
    Ok(())
}

/// A row's id is `<of>@<tail>`, the tail letters, digits, '-', '.' and '='.
pub fn check_row_id(id: &str, of: &AdapterEntry) -> Result<()> {
    let tail = id.strip_prefix(&format!("{}@", of.id));
    ensure!(
        tail.is_some_and(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || "-.=".contains(c))),
        "pinned {id:?}: the id must be `{}@<release>` (letters, digits, '-', '.', '=' after the '@')",
        of.id
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_parse_and_admit_their_versions() {
        let line = Pin::parse("zbus@6.1").unwrap();
        assert_eq!(line.requirement(), "~6.1");
        assert!(line.admits("6.1.0") && line.admits("6.1.12"));
        assert!(!line.admits("6.10.0") && !line.admits("6.2.0") && !line.admits("16.1.0"));
        let exact = Pin::parse("zbus@=6.2.0").unwrap();
        assert_eq!(exact.requirement(), "=6.2.0");
        assert!(exact.admits("6.2.0") && !exact.admits("6.2.1"));
        for bad in [
            "zbus",
            "zbus@",
            "@6.1",
            "zbus@6",
            "zbus@6.1.0",
            "zbus@=6.1",
            "zbus@^6.1",
            "zb us@6.1",
            "zbus@6.x",
        ] {
            assert!(Pin::parse(bad).is_err(), "{bad}");
        }
    }
}
