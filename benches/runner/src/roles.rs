//! Client and server apart: matrix.toml's `[roles]` (the reference adapter),
//! a profile's `roles` and `role_scenarios`, and which of them a run
//! measures (`run --roles`). The cells themselves run in `run/cell.rs`; the
//! interop check is `interop.rs`.

use anyhow::{bail, ensure, Result};
use harness::ipc::IpcOp;
use harness::results::{Role, RolesPlan};
use serde::Deserialize;

use crate::matrix::{AdapterEntry, Matrix, Profile};

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

/// What a run measures beyond the same-library cells.
#[derive(Clone, Debug, PartialEq)]
pub struct RoleSelection {
    pub roles: Vec<Role>,
    pub reference: Option<String>,
    /// `call/*` scenarios measured in the client and server roles.
    pub scenarios: Vec<String>,
}

impl RoleSelection {
    /// `--roles` (or the profile's `roles`, or `same`), against the matrix:
    /// client and server roles need a reference (`--reference` or `[roles]`).
    pub fn resolve(m: &Matrix, profile: &Profile, roles: &[Role], reference: Option<&str>) -> Result<RoleSelection> {
        let mut chosen: Vec<Role> = match (roles.is_empty(), &profile.roles) {
            (false, _) => roles.to_vec(),
            (true, Some(p)) => p.clone(),
            (true, None) => vec![Role::Same],
        };
        chosen.sort();
        chosen.dedup();
        if let Some(id) = reference {
            // Also when no role uses it: a wrong --reference is a mistake either way.
            check_reference(m, "--reference", id)?;
        }
        let reference = reference
            .map(str::to_string)
            .or_else(|| m.roles.as_ref().map(|r| r.reference.clone()));
        let apart = chosen.iter().any(|r| !r.is_same());
        if apart && reference.is_none() {
            bail!("roles client and server need a reference adapter: matrix.toml [roles] reference, or --reference")
        }
        let scenarios = match &profile.role_scenarios {
            Some(s) => s.clone(),
            None => m
                .scenarios
                .iter()
                .map(|s| s.id.clone())
                .filter(|s| has_roles(s))
                .collect(),
        };
        Ok(RoleSelection {
            roles: chosen,
            reference: reference.filter(|_| apart),
            scenarios,
        })
    }

    /// The selection a results file recorded (`None`: same-library only).
    pub fn from_plan(plan: Option<&RolesPlan>) -> RoleSelection {
        match plan {
            None => RoleSelection::same_only(),
            Some(p) => RoleSelection {
                roles: p.roles.clone(),
                reference: Some(p.reference.clone()),
                scenarios: p.scenarios.clone(),
            },
        }
    }

    pub fn same_only() -> RoleSelection {
        RoleSelection {
            roles: vec![Role::Same],
            reference: None,
            scenarios: Vec::new(),
        }
    }

    /// What the results file records (`None` when only same-library cells run).
    pub fn record(&self) -> Option<RolesPlan> {
        let reference = self.reference.clone()?;
        Some(RolesPlan {
            roles: self.roles.clone(),
            reference,
            scenarios: self.scenarios.clone(),
        })
    }

    /// Whether the cell of `adapter` on `scenario` in `role` is measured.
    pub fn wants(&self, adapter: &AdapterEntry, scenario: &str, role: Role) -> bool {
        if !self.roles.contains(&role) {
            return false;
        }
        match role {
            Role::Same => true,
            // The reference against itself is its same-library cell.
            Role::Client | Role::Server => {
                self.reference.as_deref() != Some(adapter.id.as_str()) && self.scenarios.iter().any(|s| s == scenario)
            }
        }
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
