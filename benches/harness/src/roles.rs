//! Client and server apart: which side of an IPC cell is the library under
//! test ([`Role`]), and the interop table of every client library against
//! every server library ([`InteropTable`]). Both are part of the results
//! schema (docs/results-schema.md).

use serde::{Deserialize, Serialize};

/// Which side of a `call/*` cell the adapter plays.
///
/// `Same` is the adapter calling its own server (every file from before
/// roles is that, so it is the default and is not written). `Client`: the
/// adapter calls the reference server; `Server`: the reference client calls
/// the adapter's server.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    #[default]
    Same,
    Client,
    Server,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::Same, Role::Client, Role::Server];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Same => "same",
            Role::Client => "client",
            Role::Server => "server",
        }
    }

    pub fn is_same(&self) -> bool {
        *self == Role::Same
    }

    /// What a report calls the view of this role's cells.
    pub fn view(self) -> &'static str {
        match self {
            Role::Same => "same library (client and server)",
            Role::Client => "client cost (this library calling the reference server)",
            Role::Server => "server cost (the reference client calling this library's server)",
        }
    }

    /// The suffix a cell's label gets (`zbus-6 call/void on busd as client`).
    pub fn label_suffix(self) -> &'static str {
        match self {
            Role::Same => "",
            Role::Client => " as client",
            Role::Server => " as server",
        }
    }
}

impl std::str::FromStr for Role {
    type Err = String;

    fn from_str(s: &str) -> Result<Role, String> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| format!("unknown role {s:?} (known: same, client, server)"))
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The roles a run measured and against what (absent in files from before
/// roles: same-library cells only).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RolesPlan {
    pub roles: Vec<Role>,
    /// The adapter that serves (client role) and calls (server role).
    pub reference: String,
    /// The `call/*` scenarios measured in the client and server roles.
    pub scenarios: Vec<String>,
}

/// Which client libraries interoperate with which server libraries (not
/// timed): every client adapter runs each check once against every server.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct InteropTable {
    /// The bus the checks ran over.
    pub bus: String,
    /// The scenarios every pair was checked with, in order.
    pub checks: Vec<String>,
    /// Adapter ids, in matrix order (rows: clients, columns: servers).
    pub adapters: Vec<String>,
    pub pairs: Vec<InteropPair>,
}

impl InteropTable {
    pub fn pair(&self, client: &str, server: &str) -> Option<&InteropPair> {
        self.pairs.iter().find(|p| p.client == client && p.server == server)
    }
}

/// One client adapter against one server adapter.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct InteropPair {
    pub client: String,
    pub server: String,
    pub checks: Vec<InteropCheck>,
}

impl InteropPair {
    /// Every check passed (none failed; unsupported ones are not failures).
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.status != InteropStatus::Failed)
    }

    pub fn failed(&self) -> impl Iterator<Item = &InteropCheck> {
        self.checks.iter().filter(|c| c.status == InteropStatus::Failed)
    }
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum InteropStatus {
    Passed,
    /// The client or the server says it cannot do this scenario.
    Unsupported,
    Failed,
}

/// One scenario between one client and one server.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct InteropCheck {
    pub scenario: String,
    pub status: InteropStatus,
    /// Why it failed or is unsupported (short).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::Role;

    #[test]
    fn roles_parse_and_print() {
        for r in Role::ALL {
            assert_eq!(r.as_str().parse::<Role>(), Ok(r));
        }
        assert!("both".parse::<Role>().is_err());
        assert_eq!(serde_json::to_string(&Role::Server).unwrap(), "\"server\"");
    }
}
