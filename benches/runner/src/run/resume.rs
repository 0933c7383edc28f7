//! `run --resume FILE`: the contract. FILE's plan is the run's plan; flags
//! given with it must agree with the plan; the present setup must match the
//! file's fingerprint (or `--force`, recorded); `--rerun CELLS` drops chosen
//! cells so that they are measured again.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use harness::results::{
    AdapterVersion, Cell, Environment, Fingerprint, Plan, ProfileSettings, ResultsFile, ResumeRecord,
};
use sha2::{Digest, Sha256};

use super::roster::{RunAdapter, UNKNOWN_VERSION};
use super::RunOptions;
use crate::matrix::{AdapterEntry, Matrix, Profile};
use crate::placement::PlacementPolicy;
use crate::{environment, store};

/// What `--resume` asks for.
pub struct ResumeRequest {
    pub file: PathBuf,
    /// `--rerun`: cell patterns (`adapter/scenario[@bus]`, `*` matches any text).
    pub rerun: Vec<String>,
    /// `--force`: resume although the setup differs from the file's.
    pub force: bool,
}

/// A results file opened for resuming: its plan, and the cells `--rerun` dropped.
pub struct Resumed {
    pub path: PathBuf,
    /// Taken before the file was read, held until the run ends.
    pub lock: store::WriteLock,
    pub results: ResultsFile,
    pub plan: Plan,
    /// The plan's cell timeout, checked.
    pub cell_timeout: Duration,
    pub rerun: Vec<String>,
}

/// Loads FILE, checks the given flags against its plan and drops the cells
/// to measure again. Nothing is written yet, but the file's write lock is
/// taken (before reading it), so that a second writer is refused.
pub fn open(req: &ResumeRequest, given: &RunOptions) -> Result<Resumed> {
    let lock = store::lock_existing(&req.file)?;
    let mut results = store::load(&req.file)?;
    let Some(plan) = results.plan.clone() else {
        bail!(
            "{} has no recorded plan (schema_version {}, written before resuming was a contract): \
             it cannot be resumed; start a new run with the selection of its `run.command`",
            req.file.display(),
            results.schema_version
        );
    };
    let cell_timeout = super::cell_timeout_of_secs(plan.cell_timeout_s).map_err(|e| {
        anyhow::anyhow!(
            "{}: plan.cell_timeout_s is {}: {e}; the file was edited or damaged",
            req.file.display(),
            plan.cell_timeout_s
        )
    })?;
    check_flags(&req.file, given, &plan)?;
    let rerun = drop_cells(&req.file, &mut results, &req.rerun)?;
    Ok(Resumed {
        path: req.file.clone(),
        lock,
        results,
        plan,
        cell_timeout,
        rerun,
    })
}

/// Flags given with `--resume` must say what the plan says.
fn check_flags(file: &std::path::Path, given: &RunOptions, plan: &Plan) -> Result<()> {
    let matrix = &given.matrix;
    let mut bad = Vec::new();
    let mut differ = |flag: &str, recorded: String, now: String| {
        if recorded != now {
            bad.push(format!("  {flag}: recorded {recorded}, given {now}"));
        }
    };
    if let Some(p) = &given.profile {
        differ("--profile", plan.profile.clone(), p.clone());
    }
    let ids = |v: Vec<&String>| v.into_iter().cloned().collect::<Vec<_>>().join(",");
    if !given.adapters.is_empty() {
        let now = matrix
            .select_adapters(&given.adapters)?
            .into_iter()
            .map(|a| &a.id)
            .collect();
        differ("--adapters", plan.resolved.adapters.join(","), ids(now));
    }
    if !given.scenarios.is_empty() {
        let now = matrix
            .select_scenarios(&given.scenarios)?
            .into_iter()
            .map(|s| &s.id)
            .collect();
        differ("--scenarios", plan.resolved.scenarios.join(","), ids(now));
    }
    if !given.buses.is_empty() {
        let now = matrix.select_buses(&given.buses)?.into_iter().map(|b| &b.id).collect();
        differ("--buses", plan.resolved.buses.join(","), ids(now));
    }
    if given.system_bus {
        differ("--system-bus", plan.system_bus.to_string(), "true".into());
    }
    if let Some(p) = &given.placement {
        differ("--pin", plan.placement.clone(), p.describe());
    }
    if given.instructions {
        differ("--instructions", plan.instructions.to_string(), "true".into());
    }
    if !bad.is_empty() {
        bail!(
            "--resume {} runs the plan recorded in the file; these options disagree with it \
             (leave them out, or give the recorded values):\n{}",
            file.display(),
            bad.join("\n")
        );
    }
    Ok(())
}

/// The run's selection and settings become the plan's.
pub fn apply_plan(opts: &mut RunOptions, plan: &Plan) -> Result<()> {
    opts.profile = Some(plan.profile.clone());
    opts.adapters = plan.resolved.adapters.clone();
    opts.scenarios = plan.resolved.scenarios.clone();
    opts.buses = plan.resolved.buses.clone();
    opts.system_bus = plan.system_bus;
    opts.placement = Some(PlacementPolicy::parse(&plan.placement).context("the recorded placement")?);
    opts.instructions = plan.instructions;
    Ok(())
}

/// How a cell is named on the command line: `adapter/scenario[@bus][#role]`
/// (the names of the BMF and critcmp exports; `#client`, `#server` for the
/// roles apart, nothing for the same-library cell).
pub fn cell_name(c: &Cell) -> String {
    let role = match c.role.is_same() {
        true => String::new(),
        false => format!("#{}", c.role),
    };
    match &c.bus {
        Some(b) => format!("{}/{}@{b}{role}", c.adapter, c.scenario),
        None => format!("{}/{}{role}", c.adapter, c.scenario),
    }
}

/// Removes the cells matching `patterns` from `results`; each pattern must
/// match a cell.
fn drop_cells(file: &std::path::Path, results: &mut ResultsFile, patterns: &[String]) -> Result<Vec<String>> {
    for p in patterns {
        if !results.cells.iter().any(|c| glob_match(p, &cell_name(c))) {
            bail!(
                "--rerun {p:?} matches no cell of {} (cells are named adapter/scenario[@bus], `*` matches any text)",
                file.display()
            );
        }
    }
    let mut dropped = Vec::new();
    results.cells.retain(|c| {
        let name = cell_name(c);
        let keep = !patterns.iter().any(|p| glob_match(p, &name));
        if !keep {
            dropped.push(name);
        }
        keep
    });
    if !dropped.is_empty() {
        results.run.complete = false;
    }
    Ok(dropped)
}

/// `*` matches any text (also `/` and `@`); everything else itself.
/// Linear in the text for each star (the two-pointer wildcard match): on a
/// mismatch only the last star takes one more character, since any earlier
/// star's longer match is covered by it; a backtracking matcher is
/// exponential in the stars.
fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    // The pattern index after the last star seen, and the text index its match ends at.
    let mut last_star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if p.get(pi) == Some(&'*') {
            pi += 1;
            last_star = Some((pi, ti));
        } else if p.get(pi) == Some(&t[ti]) {
            pi += 1;
            ti += 1;
        } else if let Some((after_star, matched_to)) = last_star {
            pi = after_star;
            ti = matched_to + 1;
            last_star = Some((after_star, ti));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// The fingerprint of the present setup: matrix.toml, the adapters as they
/// describe themselves, the profile's settings.
pub fn fingerprint(
    matrix: &Matrix,
    profile: &Profile,
    adapters: &[&AdapterEntry],
    roster: &HashMap<String, RunAdapter>,
) -> Result<Fingerprint> {
    let bytes = std::fs::read(&matrix.path).with_context(|| format!("cannot read {}", matrix.path.display()))?;
    let matrix_sha256 = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
    let adapters = adapters
        .iter()
        .map(|a| AdapterVersion {
            id: a.id.clone(),
            library: a.library.clone(),
            version: roster[&a.id]
                .described
                .as_ref()
                .map_or_else(|_| UNKNOWN_VERSION.into(), |d| d.listing.version.clone()),
        })
        .collect();
    Ok(Fingerprint {
        matrix_sha256,
        adapters,
        profile: ProfileSettings {
            sample_size: profile.sample_size,
            warm_up_s: profile.warm_up,
            measurement_s: profile.measurement,
            nresamples: profile.nresamples,
            timer: profile.timer.name().into(),
            rounds: profile.rounds,
            max_rounds: profile.max_rounds(),
            target_width: profile.target_width,
            jobs: profile.jobs,
            cost_scenarios: profile.costs.scenarios(),
            cell_budget_s: profile.cell_budget,
        },
    })
}

/// Every difference between the file's setup and the present one, as
/// `field: recorded X, now Y`.
pub fn differences(results: &ResultsFile, recorded: &Fingerprint, now: &Fingerprint, env: &Environment) -> Vec<String> {
    let mut d = Vec::new();
    let mut field = |what: String, was: &str, is: &str| {
        let line = format!("{what}: recorded {was}, now {is}");
        if was != is && !d.contains(&line) {
            d.push(line);
        }
    };
    field("matrix.toml sha256".into(), &recorded.matrix_sha256, &now.matrix_sha256);
    let (rp, np) = (&recorded.profile, &now.profile);
    field(
        "profile sample_size".into(),
        &rp.sample_size.to_string(),
        &np.sample_size.to_string(),
    );
    field(
        "profile warm_up".into(),
        &rp.warm_up_s.to_string(),
        &np.warm_up_s.to_string(),
    );
    field(
        "profile measurement".into(),
        &rp.measurement_s.to_string(),
        &np.measurement_s.to_string(),
    );
    field(
        "profile nresamples".into(),
        &rp.nresamples.to_string(),
        &np.nresamples.to_string(),
    );
    // The plan's adapters, and what the file says of them elsewhere.
    let recorded_adapters = recorded
        .adapters
        .iter()
        .cloned()
        .chain(results.adapters.iter().map(|a| AdapterVersion {
            id: a.id.clone(),
            library: a.library.clone(),
            version: a.version.clone(),
        }));
    for r in recorded_adapters {
        match now.adapters.iter().find(|n| n.id == r.id) {
            Some(n) => {
                // Unknown on either side is no difference: a version not yet
                // known (a run interrupted while listing the adapters), or an
                // adapter that cannot say, whose cells fail unmeasured.
                if r.version != UNKNOWN_VERSION && n.version != UNKNOWN_VERSION {
                    field(format!("adapter {} version", r.id), &r.version, &n.version);
                }
                field(format!("adapter {} library", r.id), &r.library, &n.library);
            }
            None if recorded.adapters.iter().any(|a| a.id == r.id) => {
                field(format!("adapter {}", r.id), "in the plan", "not in matrix.toml")
            }
            None => {}
        }
    }
    let e = &results.environment;
    field("host (hostname_hash)".into(), &e.hostname_hash, &env.hostname_hash);
    field("CPU model".into(), &e.cpu_model, &env.cpu_model);
    field("CPUs".into(), &e.cpus.to_string(), &env.cpus.to_string());
    field(
        "memory bytes".into(),
        &e.memory_bytes.to_string(),
        &env.memory_bytes.to_string(),
    );
    field("kernel".into(), &e.kernel, &env.kernel);
    field("OS".into(), &e.os, &env.os);
    field("rustc".into(), &e.rustc, &env.rustc);
    field("mode".into(), &e.mode, &env.mode);
    if let (Some(was), Some(is)) = (&e.valgrind, &env.valgrind) {
        field("valgrind".into(), was, is);
    }
    d
}

/// Refuses a file of another setup unless `force`; records the resume.
pub fn admit(
    file: &std::path::Path,
    results: &mut ResultsFile,
    differences: Vec<String>,
    force: bool,
    record: ResumeRecord,
) -> Result<()> {
    if !differences.is_empty() && !force {
        bail!(
            "{} was measured on another setup; resuming would mix measurements of both:\n  {}\n\
             Start a new run, or pass --force to resume anyway (the differences are recorded in the file).",
            file.display(),
            differences.join("\n  ")
        );
    }
    results.run.resumes.push(ResumeRecord {
        forced_differences: differences,
        ..record
    });
    Ok(())
}

/// The plan's adapter versions not known when it was written, as known now.
pub fn learn_versions(results: &mut ResultsFile, now: &Fingerprint) {
    let Some(plan) = results.plan.as_mut() else {
        return;
    };
    for a in plan
        .fingerprint
        .adapters
        .iter_mut()
        .filter(|a| a.version == UNKNOWN_VERSION)
    {
        if let Some(n) = now.adapters.iter().find(|n| n.id == a.id) {
            a.version = n.version.clone();
        }
    }
}

pub fn record(cell_timeout_s: Option<f64>, rerun: Vec<String>) -> ResumeRecord {
    ResumeRecord {
        started_at: environment::now_rfc3339(),
        command: std::env::args().collect(),
        cell_timeout_s,
        rerun,
        forced_differences: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn globs() {
        assert!(glob_match("raw/marshal/mixed", "raw/marshal/mixed"));
        assert!(!glob_match("raw/marshal/mixed", "raw/marshal/mixed@dbus-daemon"));
        assert!(glob_match("raw/*", "raw/marshal/mixed@dbus-daemon"));
        assert!(glob_match("*@busd", "zbus-6/method/echo@busd"));
        assert!(!glob_match("*@busd", "zbus-6/method/echo@dbus-broker"));
        assert!(glob_match("zbus-*/method/*@*", "zbus-6/method/echo@busd"));
        assert!(glob_match("*", ""));
        assert!(glob_match("a*", "a"));
        assert!(!glob_match("a*b", "ab/c"));
        assert!(glob_match("*/é*", "x/éé"));
        assert!(glob_match("**a**", "bab"));
    }

    /// Many stars answer at once: a backtracking matcher took 12.6 s for 6
    /// stars and never ended for 28 (a text with no match tries every split).
    #[test]
    fn many_stars_are_not_exponential() {
        let (tx, rx) = std::sync::mpsc::channel();
        // A thread, so that a slow matcher fails the test instead of hanging it.
        std::thread::spawn(move || {
            let text = "a".repeat(60);
            let answers = [
                glob_match(&format!("{}b", "*a".repeat(28)), &text),
                glob_match(&"*a".repeat(28), &text),
                glob_match(&format!("{}*b", "*".repeat(28)), &text),
            ];
            let _ = tx.send(answers);
        });
        let answers = rx
            .recv_timeout(std::time::Duration::from_secs(5))
            .expect("28 stars took more than 5 s");
        assert_eq!(answers, [false, true, false]);
    }
}
