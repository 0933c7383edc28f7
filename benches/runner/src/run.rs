//! `dbus-matrix run`: plan the cells, drive the adapters one cell at a time,
//! write the results file after every cell.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use harness::ipc::IpcOp;
use harness::results::{
    AdapterRecord, BusRecord, Cell, CellStatus, Measurement, ResultsFile, RunInfo, FORMAT_NAME, SCHEMA_VERSION,
};
use indicatif::{ProgressBar, ProgressStyle};

use crate::adapters::{self, Described};
use crate::ipc_run::{self, BusSession};
use crate::matrix::{AdapterEntry, BusEntry, Matrix, Profile, ScenarioEntry};
use crate::placement::{self, Placement};
use crate::{costs, environment, exec, instructions, store};

pub struct RunOptions {
    pub matrix: Matrix,
    pub profile: String,
    pub adapters: Vec<String>,
    pub scenarios: Vec<String>,
    pub buses: Vec<String>,
    /// Use the machine's system bus (and p2p) instead of the matrix's private buses.
    pub system_bus: bool,
    pub out_dir: PathBuf,
    pub bin_dir: PathBuf,
    pub resume: Option<PathBuf>,
    /// Per-cell limit; by default derived from the profile.
    pub cell_timeout: Option<Duration>,
    pub progress: bool,
    pub placement: Placement,
    /// Also count instructions per operation of codec cells under callgrind.
    pub instructions: bool,
}

pub struct RunSummary {
    pub path: PathBuf,
    pub results: ResultsFile,
    pub interrupted: bool,
}

impl RunSummary {
    pub fn failed(&self) -> Vec<&Cell> {
        self.results
            .cells
            .iter()
            .filter(|c| c.status == CellStatus::Failed)
            .collect()
    }
}

/// Criterion needs warm-up + measurement, plus analysis and the process start.
fn default_timeout(p: &Profile) -> Duration {
    // The base covers verification plus the slow-operation path (a few
    // operations that may take seconds each, e.g. a quadratic decoder).
    Duration::from_secs_f64(300.0 + 4.0 * (p.warm_up + p.measurement))
}

struct Planned<'a> {
    adapter: &'a AdapterEntry,
    scenario: String,
    /// `None` for marshal/demarshal and the raw-socket floor.
    bus: Option<&'a BusEntry>,
}

/// Which cells exist: codec scenarios for every adapter; the raw-socket floor
/// for baseline adapters only; other IPC scenarios for every library adapter
/// on every bus. Order: scenario-major, rotating the adapter order each
/// scenario so no adapter always runs first (or right after a heavy one).
fn plan<'a>(
    adapters: &[&'a AdapterEntry],
    scenarios: &[&'a ScenarioEntry],
    buses: &[&'a BusEntry],
    done: &HashSet<(String, String, Option<String>)>,
) -> Vec<Planned<'a>> {
    let mut plan = Vec::new();
    let groups = std::iter::once(None).chain(buses.iter().map(|b| Some(*b)));
    for bus in groups {
        for (i, s) in scenarios.iter().enumerate() {
            let op = harness::scenario::find(&s.id).and_then(|sc| sc.ipc_op());
            let is_floor = matches!(op, Some(IpcOp::RawSocket(_)));
            let on_bus = op.is_some() && !is_floor;
            if on_bus != bus.is_some() {
                continue;
            }
            for k in 0..adapters.len() {
                let a = adapters[(i + k) % adapters.len()];
                let wanted = match op {
                    None => true,
                    Some(_) if is_floor => a.baseline,
                    Some(_) => !a.baseline,
                };
                let key = (a.id.clone(), s.id.clone(), bus.map(|b| b.id.clone()));
                if wanted && !done.contains(&key) {
                    plan.push(Planned {
                        adapter: a,
                        scenario: s.id.clone(),
                        bus,
                    });
                }
            }
        }
    }
    plan
}

pub fn run(opts: RunOptions, interrupted: Arc<AtomicBool>) -> Result<RunSummary> {
    let profile = opts.matrix.profile(&opts.profile)?.clone();
    let adapters = opts.matrix.select_adapters(&opts.adapters)?;
    let scenarios = opts.matrix.select_scenarios(&opts.scenarios)?;
    let system_entries;
    let buses = if opts.system_bus {
        system_entries = [ipc_run::SYSTEM_BUS, "p2p"].map(|id| BusEntry {
            id: id.into(),
            debian: None,
            cargo: None,
            crate_sha256: None,
            nix: None,
            nixos_implementation: None,
        });
        system_entries.iter().collect()
    } else {
        opts.matrix.select_buses(&opts.buses)?
    };
    let timeout = opts.cell_timeout.unwrap_or_else(|| default_timeout(&profile));
    let binaries: Vec<PathBuf> = adapters
        .iter()
        .map(|a| adapters::binary(&opts.bin_dir, a))
        .collect::<Result<_>>()?;
    let valgrind = if opts.instructions {
        Some(instructions::check_valgrind()?)
    } else {
        None
    };
    let scratch = ScratchDir::new()?;

    let (path, mut results) = match &opts.resume {
        Some(p) => {
            let r = store::load(p)?;
            if r.run.profile != opts.profile {
                bail!(
                    "{} was run with profile {:?}; resume it with --profile {}",
                    p.display(),
                    r.run.profile,
                    r.run.profile
                );
            }
            (p.clone(), r)
        }
        None => {
            std::fs::create_dir_all(&opts.out_dir)
                .with_context(|| format!("cannot create the output directory {}", opts.out_dir.display()))?;
            check_writable(&opts.out_dir)?;
            let started = environment::now_rfc3339();
            let name = format!("{}-{}.json", started.replace(':', ""), opts.profile);
            let repo = opts.matrix.path.parent().unwrap_or(Path::new("."));
            let results = ResultsFile {
                format: FORMAT_NAME.into(),
                schema_version: SCHEMA_VERSION,
                run: RunInfo {
                    started_at: started,
                    finished_at: None,
                    profile: opts.profile.clone(),
                    revision: environment::revision(repo),
                    tool_version: env!("CARGO_PKG_VERSION").into(),
                    command: std::env::args().collect(),
                    placement: Some(opts.placement.describe()),
                    complete: false,
                },
                environment: environment::detect(),
                adapters: Vec::new(),
                buses: Vec::new(),
                cells: Vec::new(),
            };
            (opts.out_dir.join(name), results)
        }
    };
    if valgrind.is_some() {
        // Also when resuming: the counted cells say which valgrind counted them.
        results.environment.valgrind = valgrind;
    }

    // Ask every adapter what it is; one that cannot answer fails all its cells.
    let mut described: HashMap<&str, Result<Described, String>> = HashMap::new();
    for (a, bin) in adapters.iter().zip(&binaries) {
        let d = adapters::describe(bin, scratch.path(), &interrupted).map_err(|e| format!("{e:#}"));
        if let Ok(d) = &d {
            if d.listing.id != a.id {
                bail!(
                    "{} says it is adapter {:?}, but matrix.toml expects {:?}",
                    bin.display(),
                    d.listing.id,
                    a.id
                );
            }
            if d.listing.library != a.library {
                bail!(
                    "adapter {} measures {:?}, but matrix.toml says {:?}",
                    a.id,
                    d.listing.library,
                    a.library
                );
            }
        }
        // Every cell's adapter is recorded, even one that could not say its version.
        if !results.adapters.iter().any(|r| r.id == a.id) {
            results.adapters.push(AdapterRecord {
                id: a.id.clone(),
                library: a.library.clone(),
                version: d
                    .as_ref()
                    .map_or_else(|_| "unknown".into(), |d| d.listing.version.clone()),
                baseline: a.baseline,
                loaded_bytes: crate::binsize::loaded_bytes(bin).ok(),
                build: None,
            });
        }
        described.insert(a.id.as_str(), d);
    }

    let done: HashSet<_> = results.cells.iter().map(|c| c.key()).collect();
    let plan = plan(&adapters, &scenarios, &buses, &done);

    let bar = progress_bar(plan.len() as u64, opts.progress);
    store::write_atomic(&path, &results)?;
    let mut was_interrupted = false;
    // The bus of the cells being run; replaced (stopping the old one) when the plan moves on.
    let mut session: Option<(String, Result<BusSession, String>)> = None;
    for cell in plan {
        if interrupted.load(Ordering::SeqCst) {
            was_interrupted = true;
            break;
        }
        if let Some(bus) = cell.bus {
            if session.as_ref().map(|(id, _)| id) != Some(&bus.id) {
                drop(session.take()); // stop the previous bus before starting the next
                bar.set_message(format!("starting bus {}", bus.id));
                let started = BusSession::start(bus, &adapters, scratch.path(), opts.placement);
                let description = match &started {
                    Ok(s) => s.description.clone(),
                    Err(e) => format!("could not start: {e}"),
                };
                results.buses.retain(|b| b.id != bus.id);
                results.buses.push(BusRecord {
                    id: bus.id.clone(),
                    description,
                });
                session = Some((bus.id.clone(), started));
            }
        }
        let on = cell.bus.map(|b| format!(" on {}", b.id)).unwrap_or_default();
        bar.set_message(format!("{} {}{on}", cell.adapter.id, cell.scenario));
        let bin = opts.bin_dir.join(&cell.adapter.package);
        let bus_session = match (cell.bus, &mut session) {
            (Some(_), Some((_, s))) => Some(s.as_mut().map_err(|e| e.clone())),
            _ => None,
        };
        let mut c = run_cell(
            &cell,
            &bin,
            &described[cell.adapter.id.as_str()],
            &profile,
            timeout,
            scratch.path(),
            &interrupted,
            bus_session,
            opts.placement.client,
        )?;
        if opts.instructions {
            count_instructions(&mut c, &bin, timeout, scratch.path(), &interrupted);
        }
        if c.status == CellStatus::Failed {
            if interrupted.load(Ordering::SeqCst) {
                // An interrupted cell is missing, not failed: --resume runs it again.
                was_interrupted = true;
                break;
            }
            bar.println(format!(
                "failed: {} {}: {}",
                c.adapter,
                c.scenario,
                c.reason.as_deref().unwrap_or("")
            ));
        }
        results.cells.push(c);
        store::write_atomic(&path, &results)?;
        bar.inc(1);
    }
    drop(session);
    bar.finish_and_clear();
    set_floor_ratios(&mut results);
    results.run.complete = !was_interrupted;
    results.run.finished_at = Some(environment::now_rfc3339());
    store::write_atomic(&path, &results)?;
    Ok(RunSummary {
        path,
        results,
        interrupted: was_interrupted,
    })
}

#[allow(clippy::too_many_arguments)]
fn run_cell(
    cell: &Planned,
    bin: &Path,
    described: &Result<Described, String>,
    profile: &Profile,
    timeout: Duration,
    scratch: &Path,
    interrupted: &AtomicBool,
    session: Option<Result<&mut BusSession, String>>,
    client_cpu: Option<usize>,
) -> Result<Cell> {
    let mut c = Cell {
        adapter: cell.adapter.id.clone(),
        scenario: cell.scenario.clone(),
        bus: cell.bus.map(|b| b.id.clone()),
        status: CellStatus::Failed,
        reason: None,
        measurement: None,
        elapsed_s: 0.0,
    };
    let d = match described {
        Ok(d) => d,
        Err(e) => {
            c.reason = Some(e.clone());
            return Ok(c);
        }
    };
    let p2p = matches!(&session, Some(Ok(s)) if s.is_p2p());
    let unsupported = if p2p { &d.unsupported_p2p } else { &d.unsupported };
    if let Some(reason) = unsupported.get(&cell.scenario) {
        c.status = CellStatus::Unsupported;
        c.reason = Some(reason.clone());
        return Ok(c);
    }
    let op = harness::scenario::find(&cell.scenario).and_then(|s| s.ipc_op());
    let started = std::time::Instant::now();
    // Transport arguments, and the services that must live through the cell.
    let mut extra: Vec<String> = Vec::new();
    let mut subscriber_service = None;
    let mut session = session;
    if let Some(session) = session.as_mut() {
        let op = op.expect("bus cells are IPC cells");
        let prepared = match session {
            Ok(s) => prepare_ipc_cell(s, cell, bin, op, profile, scratch, interrupted),
            Err(e) => Err(e.clone()),
        };
        match prepared {
            Ok(IpcCell::Bench { transport, subscribers }) => {
                extra = transport;
                if let Some((service, fifo)) = subscribers {
                    extra.push("--ack-fifo".into());
                    extra.push(fifo.display().to_string());
                    subscriber_service = Some(service);
                }
            }
            Ok(IpcCell::Measured(m)) => {
                c.status = CellStatus::Ok;
                c.measurement = Some(m);
                c.elapsed_s = started.elapsed().as_secs_f64();
                return Ok(c);
            }
            Err(reason) => {
                c.reason = Some(reason);
                c.elapsed_s = started.elapsed().as_secs_f64();
                return Ok(c);
            }
        }
    }
    let result_file = scratch.join("measurement.json");
    let _ = std::fs::remove_file(&result_file);
    let mut cmd = Command::new(bin);
    cmd.arg("bench")
        .arg("--scenario")
        .arg(&cell.scenario)
        .arg("--result")
        .arg(&result_file)
        .arg("--criterion-dir")
        .arg(scratch.join("criterion"))
        .arg("--sample-size")
        .arg(profile.sample_size.to_string())
        .arg("--warm-up")
        .arg(profile.warm_up.to_string())
        .arg("--measurement")
        .arg(profile.measurement.to_string())
        .arg("--nresamples")
        .arg(profile.nresamples.to_string())
        .args(&extra)
        // Failure reasons are the last stderr lines: the panic message, not a backtrace.
        .env("RUST_BACKTRACE", "0");
    placement::pin_command(&mut cmd, client_cpu);
    let _ = std::fs::remove_dir_all(scratch.join("criterion"));
    let out = exec::run(cmd, None, scratch, timeout, interrupted)?;
    c.elapsed_s = started.elapsed().as_secs_f64();
    if let Some(reason) = out.unsupported_reason() {
        c.status = CellStatus::Unsupported;
        c.reason = Some(reason);
        return Ok(c);
    }
    if !out.success() {
        // Say what broke when the bus or the server went away under the cell.
        let cause = match session.as_mut() {
            Some(Ok(s)) => s.health(cell.adapter).err(),
            _ => None,
        };
        c.reason = Some(match cause {
            Some(cause) => format!("{cause}; the client: {}", out.describe()),
            None => out.describe(),
        });
        return Ok(c);
    }
    match std::fs::read(&result_file)
        .map_err(anyhow::Error::from)
        .and_then(|b| serde_json::from_slice::<Measurement>(&b).map_err(Into::into))
    {
        Ok(mut m) => {
            if op.is_some() {
                let counted = Counted {
                    bin,
                    scenario: &cell.scenario,
                    adapter_id: &cell.adapter.id,
                    transport: &extra,
                    session: session.as_ref().and_then(|s| s.as_ref().ok()).map(|s| &**s),
                    subscribers: subscriber_service.as_ref().map(ipc_run::Service::pid),
                };
                if let Err(why) = add_costs(&mut m, counted, profile, timeout, interrupted, client_cpu) {
                    c.reason = Some(why);
                    return Ok(c); // interrupted: the cell is missing, not done
                }
            }
            c.status = CellStatus::Ok;
            c.measurement = Some(m);
        }
        Err(e) => c.reason = Some(format!("the adapter exited 0 but its result is unreadable: {e}")),
    }
    c.elapsed_s = started.elapsed().as_secs_f64();
    Ok(c)
}

/// An IPC cell whose costs are to be counted, and the processes it involves.
struct Counted<'a> {
    bin: &'a Path,
    scenario: &'a str,
    adapter_id: &'a str,
    transport: &'a [String],
    session: Option<&'a BusSession>,
    subscribers: Option<u32>,
}

/// Adds the per-operation costs of client, server, subscribers and bus to an
/// IPC cell. Costs that cannot be counted leave a note, not a failed cell
/// (the timing stands); `Err` only when the run was interrupted.
fn add_costs(
    m: &mut Measurement,
    cell: Counted,
    profile: &Profile,
    timeout: Duration,
    interrupted: &AtomicBool,
    client_cpu: Option<usize>,
) -> Result<(), String> {
    let median = m.wall.median_ns.point;
    if median > costs::MAX_NATIVE_NS {
        m.verification_notes.push(format!(
            "costs not counted: {:.1} s per operation (limit {:.0} s)",
            median / 1e9,
            costs::MAX_NATIVE_NS / 1e9
        ));
        return Ok(());
    }
    let mut others = Vec::new();
    if let Some(s) = cell.session {
        if let Some(pid) = s.server_pid(cell.adapter_id) {
            others.push(costs::Participant {
                role: "server",
                pids: vec![pid],
            });
        }
        if let Some(pid) = cell.subscribers {
            others.push(costs::Participant {
                role: "subscribers",
                pids: vec![pid],
            });
        }
        let bus = s.bus_pids();
        if !bus.is_empty() {
            others.push(costs::Participant { role: "bus", pids: bus });
        }
    }
    let budget = Duration::from_secs_f64(profile.measurement * costs::WINDOW_SHARE);
    let window = costs::Window {
        bin: cell.bin,
        scenario: cell.scenario,
        transport: cell.transport,
        iterations: costs::iterations(median, budget),
        others,
        bus_socket: cell.session.and_then(BusSession::bus_socket),
        client_cpu,
        timeout,
    };
    match costs::count(&window, interrupted) {
        Ok(c) => m.costs = Some(c),
        Err(_) if interrupted.load(Ordering::SeqCst) => return Err("interrupted".into()),
        Err(why) => m.verification_notes.push(format!("costs not counted: {why}")),
    }
    Ok(())
}

/// Adds instructions per operation to an ok codec cell (IPC cells involve
/// other processes, which callgrind does not follow); a failure to count
/// fails the cell, since the run was asked for instructions.
fn count_instructions(c: &mut Cell, bin: &Path, timeout: Duration, scratch: &Path, interrupted: &AtomicBool) {
    let is_codec = harness::scenario::find(&c.scenario).is_some_and(|s| s.ipc_op().is_none());
    let Some(m) = c
        .measurement
        .as_mut()
        .filter(|_| is_codec && c.status == CellStatus::Ok)
    else {
        return;
    };
    if m.wall.median_ns.point > instructions::MAX_NATIVE_NS {
        m.verification_notes.push(format!(
            "instructions not counted: {:.0} ms per operation is too slow for callgrind (limit {:.0} ms)",
            m.wall.median_ns.point / 1e6,
            instructions::MAX_NATIVE_NS / 1e6
        ));
        return;
    }
    let started = std::time::Instant::now();
    match instructions::count(bin, &c.scenario, scratch, timeout, interrupted) {
        Ok(n) => m.instructions_per_op = Some(n),
        Err(reason) => {
            c.status = CellStatus::Failed;
            c.reason = Some(format!("counting instructions: {reason}"));
            c.measurement = None;
        }
    }
    c.elapsed_s += started.elapsed().as_secs_f64();
}

enum IpcCell {
    /// Run the adapter's `bench` with these transport arguments, while the
    /// subscribers (and their ack FIFO), if any, are alive.
    Bench {
        transport: Vec<String>,
        subscribers: Option<(ipc_run::Service, PathBuf)>,
    },
    /// Measured by the runner itself (cold starts).
    Measured(Measurement),
}

fn prepare_ipc_cell(
    session: &mut BusSession,
    cell: &Planned,
    bin: &Path,
    op: IpcOp,
    profile: &Profile,
    scratch: &Path,
    interrupted: &AtomicBool,
) -> Result<IpcCell, String> {
    let transport = session.server(cell.adapter, bin)?;
    if op == IpcOp::PropertyColdStart {
        return ipc_run::cold_start(bin, &transport, profile.sample_size, scratch, interrupted).map(IpcCell::Measured);
    }
    let subscribers = session.subscribers(cell.adapter, bin, op)?;
    Ok(IpcCell::Bench { transport, subscribers })
}

/// Every IPC cell's ratio to the raw-socket floor of its size, from this run.
fn set_floor_ratios(results: &mut ResultsFile) {
    let baselines: HashSet<&str> = results
        .adapters
        .iter()
        .filter(|a| a.baseline)
        .map(|a| a.id.as_str())
        .collect();
    let floors: HashMap<String, f64> = results
        .cells
        .iter()
        .filter(|c| c.bus.is_none() && baselines.contains(c.adapter.as_str()))
        .filter_map(|c| Some((c.scenario.clone(), c.median_ns()?)))
        .collect();
    for c in &mut results.cells {
        let floor = harness::scenario::find(&c.scenario)
            .and_then(|s| s.ipc_op())
            .and_then(harness::scenario::floor_of)
            .and_then(|f| floors.get(&f).copied());
        if let (Some(m), Some(f)) = (c.measurement.as_mut(), floor) {
            if c.bus.is_some() && f > 0.0 {
                m.floor_ratio = Some(m.wall.median_ns.point / f);
            }
        }
    }
}

/// The progress bar of long commands (`run`, `build-times`); hidden with `--quiet`.
pub fn progress_bar(len: u64, visible: bool) -> ProgressBar {
    let bar = if visible {
        ProgressBar::new(len)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar
}

fn check_writable(dir: &Path) -> Result<()> {
    let probe = dir.join(format!(".dbus-matrix-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"").with_context(|| format!("the output directory {} is not writable", dir.display()))?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

/// A private (0700) scratch directory for one run, removed at the end.
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    pub fn new() -> Result<Self> {
        use std::os::unix::fs::DirBuilderExt;
        let base = std::env::temp_dir();
        for n in 0..1000u32 {
            let p = base.join(format!("dbus-matrix-run-{}-{n}", std::process::id()));
            if std::fs::DirBuilder::new().mode(0o700).create(&p).is_ok() {
                return Ok(ScratchDir(p));
            }
        }
        bail!("cannot create a scratch directory in {}", base.display())
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
