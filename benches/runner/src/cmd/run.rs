//! `dbus-matrix run`: run the matrix, print it, say which cells failed.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::{bail, Context as _, Result};

use super::{exit_code, Context, EXIT_CELL_FAILED, EXIT_INTERRUPTED};
use crate::output::{errln, out};
use crate::placement::PlacementPolicy;
use crate::run::interop::Pairs;
use crate::{export, run};

#[derive(clap::Args)]
pub struct Args {
    /// smoke (minutes, for tests), quick (15 minutes), standard (every size, about an hour), full (publication) [default: quick].
    #[arg(long)]
    profile: Option<String>,
    /// Only these adapters (comma-separated ids from matrix.toml).
    #[arg(long, value_delimiter = ',')]
    adapters: Vec<String>,
    /// Only these scenarios (comma-separated ids).
    #[arg(long, value_delimiter = ',')]
    scenarios: Vec<String>,
    /// Only these buses for IPC scenarios (comma-separated ids; default all).
    #[arg(long, value_delimiter = ',')]
    buses: Vec<String>,
    /// IPC over this machine's system bus ($DBUS_SYSTEM_BUS_ADDRESS or
    /// /run/dbus/system_bus_socket) and p2p, instead of private buses (NixOS VM tests).
    #[arg(long, conflicts_with = "buses")]
    system_bus: bool,
    /// Directory for the results file [default: results].
    #[arg(long, conflicts_with = "resume")]
    out: Option<PathBuf>,
    /// Finish the run of FILE: its recorded plan (selection, profile, settings),
    /// only the cells missing from FILE. Selection and settings flags given
    /// with it must equal the plan's; a file of another setup (adapter
    /// versions, matrix.toml, machine, profile settings) is refused.
    #[arg(long, value_name = "FILE")]
    resume: Option<PathBuf>,
    /// With --resume: measure these finished cells of FILE again
    /// (comma-separated `adapter/scenario[@bus]`, `*` matches any text).
    #[arg(long, value_delimiter = ',', value_name = "CELLS", requires = "resume")]
    rerun: Vec<String>,
    /// With --resume: resume although the setup differs from FILE's
    /// (the differences are recorded in FILE, under run.resumes).
    #[arg(long, requires = "resume")]
    force: bool,
    /// Seconds after which a cell is killed and marked failed (above 0, at most a week;
    /// with --resume: replaces the plan's limit for this resume, recorded).
    #[arg(long, value_name = "SECONDS", value_parser = super::parse_cell_timeout)]
    cell_timeout: Option<Duration>,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
    /// CPU placement of IPC cells: `one-cpu` (client, server and bus of a cell on one CPU), `none` (unpinned), or `client=0,server=1,bus=1` [default: the profile's `placement`]
    #[arg(long)]
    pin: Option<String>,
    /// Also count instructions per operation under valgrind's callgrind
    /// (portable between machines; needs valgrind): marshal/demarshal cells,
    /// and every process of IPC cells (client, server, subscribers, bus).
    #[arg(long)]
    instructions: bool,
    /// Which sides of `call/*` cells to measure (comma-separated): `same`
    /// (the library calling itself), `client` (the library calling the
    /// reference server), `server` (the reference client calling the
    /// library's server) [default: the profile's `roles`, else same].
    #[arg(long, value_delimiter = ',', conflicts_with = "resume")]
    roles: Vec<harness::results::Role>,
    /// The reference adapter of the client and server roles [default:
    /// matrix.toml's `[roles] reference`].
    #[arg(long, value_name = "ADAPTER", conflicts_with = "resume")]
    reference: Option<String>,
    /// After the cells, check (untimed) which client libraries interoperate
    /// with which servers, as `dbus-matrix interop` does, and record the table
    /// in the results file: `reference` (each adapter with itself and with the
    /// reference, both ways) or `all` (every client against every server).
    /// Over dbus-daemon when the run has it, else the run's first bus.
    #[arg(long, value_enum, value_name = "PAIRS", conflicts_with = "system_bus")]
    interop: Option<Pairs>,
    /// Check what this run needs and stop before any cell: every adapter's
    /// binary (all missing ones named at once, with the command that builds
    /// them), each adapter asked what it is (which prepares the program
    /// adapters: the dbus-fast venv, the C build). Exit 0 when all are ready.
    #[arg(long, conflicts_with_all = ["resume", "list_builds"])]
    preflight: bool,
    /// Print what must be built for this run and stop, a line each: `package
    /// NAME` (a member of the benches workspace) or `manifest PATH` (an
    /// adapter with a lockfile of its own). scripts/build.sh reads it.
    #[arg(long, conflicts_with = "resume")]
    list_builds: bool,
    /// Also run the selected adapters built against a local source of their
    /// library, as rows `<adapter>+patch` beside the released ones
    /// (comma-separated `CRATE=DIR`; a program adapter's library name for a
    /// Python or Ruby source). Built in a copy of the workspace into
    /// benches/target/patch/; with --resume, give the same patches again.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "CRATE=DIR",
        conflicts_with = "list_builds"
    )]
    patch: Vec<String>,
}

pub fn exec(args: Args, ctx: &Context) -> Result<ExitCode> {
    // clap's `requires` gives way when an argument that conflicts with
    // --resume (--out) is present: checked here too.
    if args.resume.is_none() && (args.force || !args.rerun.is_empty()) {
        bail!("--rerun and --force need --resume FILE (they change how a results file is resumed)");
    }
    crate::process::scratch::remove_dead_runs();
    let matrix = ctx.load_matrix()?;
    if args.interop == Some(Pairs::Reference) && args.resume.is_none() {
        // Checked before any cell: after_run would find no reference only at the end.
        match args
            .reference
            .as_deref()
            .or(matrix.roles.as_ref().map(|r| r.reference.as_str()))
        {
            Some(id) => crate::matrix::roles::check_reference(&matrix, "--reference", id)?,
            None => {
                bail!("--interop reference needs a reference adapter: matrix.toml [roles] reference, or --reference")
            }
        }
    }
    let mut opts = run::RunOptions {
        matrix,
        profile: args.profile,
        adapters: args.adapters,
        scenarios: args.scenarios,
        buses: args.buses,
        system_bus: args.system_bus,
        out_dir: args.out.unwrap_or_else(|| "results".into()),
        bin_dir: ctx.bin_dir()?,
        resume: args.resume.map(|file| run::ResumeRequest {
            file,
            rerun: args.rerun,
            force: args.force,
        }),
        cell_timeout: args.cell_timeout,
        progress: !args.quiet,
        placement: args
            .pin
            .as_deref()
            .map(|pin| PlacementPolicy::parse(pin).with_context(|| format!("--pin {pin:?}")))
            .transpose()?,
        instructions: args.instructions,
        roles: args.roles,
        reference: args.reference.clone(),
    };
    // The version-axis rows (matrix.toml [[pinned]]) are built in a copy, not by scripts/build.sh.
    let pinned = super::pinned::take(&opts.matrix, &mut opts.adapters)?;
    if args.list_builds {
        if !pinned.1 {
            run::preflight::list_builds(&opts)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    super::pinned::check_patch(pinned.1, !args.patch.is_empty())?;
    if !args.patch.is_empty() {
        super::patch::add_rows(&mut opts.matrix, &mut opts.adapters, &opts.bin_dir, &args.patch, ctx)?;
    }
    super::pinned::add(&mut opts.matrix, &mut opts.adapters, pinned, &opts.bin_dir, ctx)?;
    if args.preflight {
        run::preflight::check(&opts, &ctx.interrupted)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut summary = run::run(opts, ctx.interrupted.clone())?;
    let mut interop_passed = true;
    let mut interop_interrupted = false;
    if let (Some(pairs), false) = (args.interop, summary.interrupted) {
        match super::interop::after_run(&mut summary.results, &summary.path, pairs, args.reference, ctx) {
            Ok(table) => interop_passed = table.pairs.iter().all(|p| p.passed()),
            // Whatever failed once the signal came (a check's process killed,
            // the bus stopped) is the interruption: the cells are kept as in any
            // interrupted run.
            Err(_) if ctx.interrupted().load(Ordering::SeqCst) => interop_interrupted = true,
            Err(e) => return Err(e),
        }
    }
    out!("{}", export::markdown::render(&summary.results))?;
    let failed = summary.failed();
    for c in &failed {
        errln!(
            "failed: {} {}{}: {}",
            c.adapter,
            c.scenario,
            c.role.label_suffix(),
            c.reason().unwrap_or("")
        );
    }
    errln!(
        "results: {} ({} cells: {} failed)",
        summary.path.display(),
        summary.results.cells.len(),
        failed.len()
    );
    if interop_interrupted {
        errln!(
            "interrupted during the interop check: every cell is in {}; check the pairs with \
             `dbus-matrix interop --into {}`",
            summary.path.display(),
            summary.path.display()
        );
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }
    if summary.interrupted {
        errln!(
            "interrupted: finish with `dbus-matrix run --resume {}`",
            summary.path.display()
        );
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }
    if !interop_passed {
        errln!("interop: a pair failed (the report's interop table says which and why)");
    }
    Ok(exit_code(failed.is_empty() && interop_passed, EXIT_CELL_FAILED))
}
