//! What a run is, resolved once before its first cell ([`RunSetup`]): a new
//! run takes its selection and settings from the options and the profile, a
//! resumed one from its file's plan ([`Origin`]). The places where the two
//! differ are here, and nowhere else: the roles, the default cell timeout,
//! the check that the selection has cells, the results file begun, and how
//! it is recorded (admitted against its plan, or created with a new plan).
//! `run --preflight` and `--list-builds` see the same adapters
//! ([`adapters_needed`]).

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use harness::results::{CellKey, Fingerprint, Plan, ResultsFile};
use harness::scenario::Scenario;

use super::plan;
use super::resume::{self, Resumed};
use super::RunOptions;
use crate::matrix::{AdapterEntry, BusEntry, Matrix, Profile, ScenarioEntry};
use crate::placement::PlacementPolicy;
use crate::roles::RoleSelection;
use crate::{environment, store};

/// A new run, or the file a resumed one continues.
pub enum Origin {
    New,
    Resumed(Box<Resumed>),
}

impl Origin {
    /// Opens `--resume FILE` (its write lock taken) and puts its plan into
    /// `opts`; a new run as it is.
    pub fn open(opts: &mut RunOptions) -> Result<Origin> {
        let Some(req) = &opts.resume else {
            return Ok(Origin::New);
        };
        let r = resume::open(req, opts)?;
        resume::apply_plan(opts, &r.plan)?;
        Ok(Origin::Resumed(Box::new(r)))
    }

    /// A new run's selection must have a cell on `buses` (a resumed run may
    /// have none left to run).
    pub fn check_has_cells(&self, setup: &RunSetup, buses: &[&BusEntry]) -> Result<()> {
        if matches!(self, Origin::New) && setup.plan(buses, &HashSet::new()).is_empty() {
            // Not an empty success: a typo'd or mismatched selection would look like a run.
            anyhow::bail!(
                "the selection has no cell to run (adapters {}; scenarios {}): e.g. a baseline scenario needs              the baseline adapter, an IPC scenario a library with a transport and a bus",
                ids(setup.adapters.iter().map(|a| &a.id)),
                ids(setup.scenarios.iter().map(|s| &s.id))
            );
        }
        Ok(())
    }

    /// The results file the run starts from: the resumed file's, or a new
    /// one (and the stem its name will have).
    pub fn begin(&self, setup: &RunSetup, opts: &RunOptions) -> Result<Begun> {
        Ok(match self {
            Origin::Resumed(r) => Begun {
                results: r.results.clone(),
                stem: None,
            },
            Origin::New => {
                let (stem, results) = plan::new_results(opts, &setup.profile_name, &setup.placement)?;
                Begun {
                    results,
                    stem: Some(stem),
                }
            }
        })
    }

    /// Records the run in `results` and on disk: a resumed file admitted
    /// against its plan (what changed since, `--force`, `--rerun`), a new
    /// one created with its plan. The file's path and its write lock.
    pub fn record(
        self,
        setup: &RunSetup,
        opts: &RunOptions,
        buses: &[&BusEntry],
        begun: &mut Begun,
        fingerprint: Fingerprint,
        valgrind: Option<String>,
    ) -> Result<(PathBuf, store::WriteLock)> {
        let results = &mut begun.results;
        match self {
            Origin::Resumed(r) => {
                let r = *r;
                let mut now = environment::detect();
                now.valgrind = valgrind;
                let differences = resume::differences(results, &r.plan.fingerprint, &fingerprint, &now);
                let record = resume::record(opts.cell_timeout.map(|t| t.as_secs_f64()), r.rerun);
                let force = opts.resume.as_ref().is_some_and(|q| q.force);
                resume::admit(&r.path, results, differences, force, record)?;
                resume::learn_versions(results, &fingerprint);
                Ok((r.path, r.lock))
            }
            Origin::New => {
                let (requested, resolved) = plan::selection(opts, &setup.adapters, &setup.scenarios, buses);
                results.plan = Some(Plan {
                    requested,
                    resolved,
                    system_bus: opts.system_bus,
                    profile: setup.profile_name.clone(),
                    cell_timeout_s: setup.timeout.as_secs_f64(),
                    placement: setup.placement.describe(),
                    instructions: opts.instructions,
                    roles: setup.roles.record(),
                    fingerprint,
                });
                store::create_new(&opts.out_dir, &begun.stem.take().unwrap_or_default(), results)
            }
        }
    }
}

/// The results file a run starts from, and the stem a new one's name will have.
pub struct Begun {
    pub results: ResultsFile,
    stem: Option<String>,
}

/// The selection and settings of a run, new or resumed.
pub struct RunSetup<'m> {
    pub profile_name: String,
    pub profile: Profile,
    pub placement: PlacementPolicy,
    pub roles: RoleSelection,
    /// The selected adapters.
    pub adapters: Vec<&'m AdapterEntry>,
    /// The selected adapters and the reference of the roles.
    pub involved: Vec<&'m AdapterEntry>,
    pub scenarios: Vec<&'m ScenarioEntry>,
    /// The harness's scenario of each of `scenarios` ([`plan::resolve`]).
    pub resolved: Vec<&'static Scenario>,
    pub timeout: Duration,
}

impl<'m> RunSetup<'m> {
    /// Resolves `opts` (with a resumed file's plan already applied by
    /// [`Origin::open`]) against the matrix.
    pub fn resolve(opts: &'m RunOptions, origin: &Origin) -> Result<RunSetup<'m>> {
        let (profile_name, profile) = profile_of(opts)?;
        let placement = match opts.placement {
            Some(p) => p,
            None => profile.placement_policy()?,
        };
        if !placement.allows_jobs(profile.jobs) {
            // Fixed CPUs would put two workers' clients, servers and buses together.
            anyhow::bail!(
                "profile {profile_name:?} runs {} cells at once (jobs), which --pin cannot place on fixed CPUs ({}): \
                 use --pin one-cpu (a CPU per worker), or a profile of jobs = 1",
                profile.jobs,
                placement.describe()
            );
        }
        let (roles, adapters, involved) = who(opts, origin, &profile)?;
        let mut scenarios = opts.matrix.select_scenarios(&opts.scenarios)?;
        if opts.scenarios.is_empty() {
            // Named scenarios run whatever the profile; otherwise the profile's own.
            scenarios.retain(|s| s.in_profile(&profile_name));
        }
        let resolved = plan::resolve(&scenarios)?;
        let timeout = opts.cell_timeout.unwrap_or_else(|| match origin {
            Origin::Resumed(r) => r.cell_timeout,
            Origin::New => plan::default_timeout(&profile),
        });
        Ok(RunSetup {
            profile_name,
            profile,
            placement,
            roles,
            adapters,
            involved,
            scenarios,
            resolved,
            timeout,
        })
    }

    /// The cells still to run on `buses` (those not `done`), in order.
    pub fn plan<'b>(&self, buses: &[&'b BusEntry], done: &HashSet<CellKey>) -> Vec<plan::Planned<'b>>
    where
        'm: 'b,
    {
        plan::plan(&self.adapters, &self.resolved, buses, &self.roles, done)
    }
}

/// The profile a run uses: `--profile`, the resumed file's, or `quick`.
fn profile_of(opts: &RunOptions) -> Result<(String, Profile)> {
    let name = opts.profile.clone().unwrap_or_else(|| "quick".into());
    let profile = opts.matrix.profile(&name)?.clone();
    Ok((name, profile))
}

/// The roles, the selected adapters, and those with the reference.
type Who<'m> = (RoleSelection, Vec<&'m AdapterEntry>, Vec<&'m AdapterEntry>);

/// Which adapters a run involves and in which roles: a new run's from
/// `--roles`/`--reference` and the profile, a resumed one's from its plan.
fn who<'m>(opts: &'m RunOptions, origin: &Origin, profile: &Profile) -> Result<Who<'m>> {
    let roles = match origin {
        Origin::Resumed(r) => RoleSelection::from_plan(r.plan.roles.as_ref()),
        Origin::New => RoleSelection::resolve(&opts.matrix, profile, &opts.roles, opts.reference.as_deref())?,
    };
    let adapters = opts.matrix.select_adapters(&opts.adapters)?;
    let involved = involved(&opts.matrix, &adapters, &roles)?;
    Ok((roles, adapters, involved))
}

/// The selected adapters and the reference: it serves and calls in the other
/// roles' cells, so it is asked what it is and allowed on the bus like them.
fn involved<'m>(
    matrix: &'m Matrix,
    adapters: &[&'m AdapterEntry],
    roles: &RoleSelection,
) -> Result<Vec<&'m AdapterEntry>> {
    let mut involved = adapters.to_vec();
    if let Some(id) = &roles.reference {
        if !involved.iter().any(|a| &a.id == id) {
            involved.extend(matrix.select_adapters(std::slice::from_ref(id))?);
        }
    }
    Ok(involved)
}

/// The adapters a new run of `opts` involves (its selection and the
/// reference of its roles), for `run --preflight` and `--list-builds`:
/// resolved as [`RunSetup::resolve`] resolves them.
pub fn adapters_needed(opts: &RunOptions) -> Result<Vec<&AdapterEntry>> {
    let (_, profile) = profile_of(opts)?;
    Ok(who(opts, &Origin::New, &profile)?.2)
}

fn ids<'a>(ids: impl Iterator<Item = &'a String>) -> String {
    let ids: Vec<&str> = ids.map(String::as_str).collect();
    match ids.is_empty() {
        true => "none".into(),
        false => ids.join(","),
    }
}
