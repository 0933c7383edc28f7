//! Which roles a run measures (`run --roles`, a profile's `roles`, or a
//! results file's plan). matrix.toml's `[roles]` and the checks are in
//! [`crate::matrix::roles`]; the cells themselves run in `run/cell/`; the
//! interop check is `run/interop.rs`.

use anyhow::{bail, Result};
use harness::results::{Role, RolesPlan};

use crate::matrix::roles::{check_reference, has_roles};
use crate::matrix::{AdapterEntry, Matrix, Profile};

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
