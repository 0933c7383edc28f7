//! matrix.toml's side of client and server apart: its `[roles]` (the
//! reference adapter), which scenarios have roles, and the checks of a
//! profile's `roles` and `role_scenarios` and of a reference. Which roles a
//! run measures is [`crate::roles::RoleSelection`].

use anyhow::{bail, ensure, Result};
use harness::ipc::IpcOp;
use serde::Deserialize;

use super::{Matrix, Profile};

/// matrix.toml's `[roles]`.
#[derive(Debug, Deserialize, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RolesConfig {
    /// The adapter that serves the client-role cells, calls in the
    /// server-role cells, and is every library's other side in interop.
    pub reference: String,
}

/// Whether a scenario can be measured in the client and server roles: a
/// method call (`call/*`, and the `GetAll`/`GetManagedObjects` calls of
/// `property/get-all` and `objects/get-managed-objects`, fd passing), whose two
/// sides are separate processes.
pub fn has_roles(scenario: &str) -> bool {
    matches!(
        harness::scenario::find(scenario).and_then(|s| s.ipc_op()),
        Some(
            IpcOp::Call(_)
                | IpcOp::EchoBytes(_)
                | IpcOp::PropertyGetAll(_)
                | IpcOp::ManagedObjects(_)
                | IpcOp::FdPassing(_)
        )
    )
}

/// The roles of a profile, checked when matrix.toml is read.
pub fn check_profile(name: &str, p: &Profile) -> Result<()> {
    for s in p.role_scenarios.iter().flatten() {
        ensure!(
            has_roles(s),
            "profile {name:?}: role_scenarios names {s:?}, which is not a call/* (or property/get-all, \
             objects/get-managed-objects) scenario"
        );
    }
    Ok(())
}

/// `[roles]` against the adapters: the reference must be a library adapter
/// of the matrix.
pub fn check_config(m: &Matrix) -> Result<()> {
    let Some(r) = &m.roles else { return Ok(()) };
    check_reference(m, "[roles] reference", &r.reference)
}

/// A reference (`what`: where it was given) must be a library adapter of
/// the matrix: checked whenever one is given, whether or not it is used.
pub fn check_reference(m: &Matrix, what: &str, id: &str) -> Result<()> {
    match m.adapters.iter().find(|a| a.id == id) {
        None => bail!("{what} {id:?} is not an adapter of the matrix"),
        Some(a) if a.baseline => bail!("{what} {id:?} is a baseline without IPC"),
        Some(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_call_scenarios_have_roles() {
        assert!(has_roles("call/void"));
        assert!(has_roles("call/echo-bytes/1024"));
        assert!(has_roles("call/fd-passing/4096"));
        assert!(!has_roles("property/get"));
        assert!(has_roles("property/get-all/1000"));
        assert!(has_roles("objects/get-managed-objects/10"));
        assert!(!has_roles("signal/fanout/10"));
        assert!(!has_roles("marshal/mixed"));
    }
}
