//! A profile of `matrix.toml`: how it measures, and the checks of its numbers.

use anyhow::{ensure, Context, Result};
use harness::contract::Timer;
use serde::Deserialize;

use crate::placement::PlacementPolicy;

/// How a profile measures: the sampling of one round, how many rounds a
/// cell gets, what runs at once, what is counted (docs/scenarios.md,
/// "Rounds, intervals and budgets").
#[derive(Debug, Deserialize, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub sample_size: usize,
    /// Seconds.
    pub warm_up: f64,
    /// Seconds.
    pub measurement: f64,
    /// Bootstrap resamples for criterion's confidence intervals.
    #[serde(default = "default_nresamples")]
    pub nresamples: usize,
    #[serde(default)]
    pub timer: Timer,
    /// Rounds every timed cell gets, spread over the run.
    #[serde(default = "one")]
    pub rounds: u32,
    /// Rounds a cell may get while its interval is wider than `target_width`
    /// (default: `rounds`).
    #[serde(default)]
    pub max_rounds: Option<u32>,
    /// The relative interval width ((upper - lower) / median) a cell should
    /// reach; wider cells get more rounds and are flagged in reports.
    #[serde(default)]
    pub target_width: Option<f64>,
    /// Buses (and the codec cells) measured at once, each by its own worker.
    #[serde(default = "one")]
    pub jobs: u32,
    /// `"all"` (default), `"none"`, or the IPC scenario ids whose costs are counted.
    #[serde(default)]
    pub costs: CostSelection,
    /// Seconds: one operation slower than this is timed once (the cell says it was cut).
    #[serde(default)]
    pub cell_budget: Option<f64>,
    /// Roles measured by default (`run --roles`): `same` when absent.
    #[serde(default)]
    pub roles: Option<Vec<harness::results::Role>>,
    /// How IPC cells are placed on CPUs (`run --pin` replaces it): `one-cpu`,
    /// `none` (the default), or `client=C,server=S,bus=B` ([`crate::placement`]).
    #[serde(default)]
    pub placement: Option<String>,
    /// The `call/*` scenarios measured in the client and server roles
    /// (default: every `call/*` scenario of the matrix).
    #[serde(default)]
    pub role_scenarios: Option<Vec<String>>,
}

/// Which IPC cells get their costs counted.
#[derive(Debug, Deserialize, Clone, PartialEq)]
#[serde(untagged)]
pub enum CostSelection {
    Keyword(CostKeyword),
    Scenarios(Vec<String>),
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum CostKeyword {
    All,
    None,
}

impl Default for CostSelection {
    fn default() -> Self {
        CostSelection::Keyword(CostKeyword::All)
    }
}

impl CostSelection {
    pub fn counts(&self, scenario: &str) -> bool {
        match self {
            CostSelection::Keyword(CostKeyword::All) => true,
            CostSelection::Keyword(CostKeyword::None) => false,
            CostSelection::Scenarios(ids) => ids.iter().any(|s| s == scenario),
        }
    }

    /// As the fingerprint records it: `None` for all.
    pub fn scenarios(&self) -> Option<Vec<String>> {
        match self {
            CostSelection::Keyword(CostKeyword::All) => None,
            CostSelection::Keyword(CostKeyword::None) => Some(Vec::new()),
            CostSelection::Scenarios(ids) => Some(ids.clone()),
        }
    }
}

fn default_nresamples() -> usize {
    100_000
}

fn one() -> u32 {
    1
}

impl Profile {
    /// Every number finite and in range, naming the key that is not.
    pub(super) fn check(&self) -> Result<()> {
        ensure!(
            SAMPLE_SIZE.contains(&self.sample_size),
            "sample_size = {} must be from {} (criterion's minimum) to {}",
            self.sample_size,
            SAMPLE_SIZE.start(),
            SAMPLE_SIZE.end()
        );
        ensure!(
            NRESAMPLES.contains(&self.nresamples),
            "nresamples = {} must be from {} to {}",
            self.nresamples,
            NRESAMPLES.start(),
            NRESAMPLES.end()
        );
        let budget = self.cell_budget.map(|b| ("cell_budget", b));
        for (key, secs) in [("warm_up", self.warm_up), ("measurement", self.measurement)]
            .into_iter()
            .chain(budget)
        {
            ensure!(
                secs.is_finite() && secs > 0.0 && secs <= MAX_SECONDS,
                "{key} = {secs} must be a number of seconds above 0 and at most {MAX_SECONDS}"
            );
        }
        ensure!(
            ROUNDS.contains(&self.rounds),
            "rounds = {} must be from {} to {}",
            self.rounds,
            ROUNDS.start(),
            ROUNDS.end()
        );
        if let Some(max) = self.max_rounds {
            ensure!(
                (self.rounds..=*ROUNDS.end()).contains(&max),
                "max_rounds = {max} must be from rounds ({}) to {}",
                self.rounds,
                ROUNDS.end()
            );
        }
        if let Some(w) = self.target_width {
            ensure!(
                w.is_finite() && w > 0.0 && w <= 10.0,
                "target_width = {w} must be a relative width above 0 and at most 10"
            );
        }
        ensure!(
            JOBS.contains(&self.jobs),
            "jobs = {} must be from {} to {}",
            self.jobs,
            JOBS.start(),
            JOBS.end()
        );
        let placement = self.placement_policy().context("placement")?;
        ensure!(
            placement.allows_jobs(self.jobs),
            "placement = {:?} pins every cell to the same CPUs, but jobs = {} runs cells at once: \
             use \"one-cpu\" (a CPU per worker) or jobs = 1",
            placement.describe(),
            self.jobs
        );
        if let CostSelection::Scenarios(ids) = &self.costs {
            for id in ids {
                let ipc = harness::scenario::find(id).is_some_and(|s| s.ipc_op().is_some());
                ensure!(ipc, "costs: {id:?} is not an IPC scenario id");
            }
        }
        Ok(())
    }

    /// The profile's placement of IPC cells ([`Profile::placement`]).
    pub fn placement_policy(&self) -> Result<PlacementPolicy> {
        self.placement
            .as_deref()
            .map_or(Ok(PlacementPolicy::Unpinned), PlacementPolicy::parse)
    }

    /// Rounds a cell may get at most.
    pub fn max_rounds(&self) -> u32 {
        self.max_rounds.unwrap_or(self.rounds)
    }
}

/// Bounds of a profile's numbers: criterion's minimum sample size, and
/// limits far above any useful run that keep every derived time finite.
const SAMPLE_SIZE: std::ops::RangeInclusive<usize> = 10..=100_000;
const NRESAMPLES: std::ops::RangeInclusive<usize> = 1..=10_000_000;
const MAX_SECONDS: f64 = 3600.0;
const ROUNDS: std::ops::RangeInclusive<u32> = 1..=1000;
const JOBS: std::ops::RangeInclusive<u32> = 1..=64;
