//! The command line every adapter binary shares (the adapter contract):
//!
//! ```text
//! <adapter> list                         JSON: id, library, version, scenarios with support
//! <adapter> emit --scenario ID           marshal: the wire bytes on stdout
//! <adapter> demarshal --scenario ID      reads wire bytes on stdin, prints the digest (hex)
//! <adapter> bench --scenario ID --result FILE [criterion settings]
//!                                        verify, count allocations, time with criterion,
//!                                        write a `Measurement` as JSON to FILE
//! <adapter> repeat --scenario ID --iterations N [--windows K] [transport]
//!                                        verify, then run the operation N times inside
//!                                        `dbus_matrix_measured_region` (for callgrind);
//!                                        with K windows, K times, each between
//!                                        WINDOW-BEGIN/WINDOW-END and a `go` on stdin
//! <adapter> serve [transport]            serve the benchmark service; prints READY
//! <adapter> subscribe [transport] --connections N --extra-rules R --ack-fifo PATH
//!                                        N subscriber connections; one byte to PATH each
//!                                        time all got a Ping; prints READY
//! <adapter> cold-start [transport]       connect, read the Items property, print it, exit
//! ```
//! `[transport]` is `--bus-address A --bus-socket P --service-name N` or
//! `--p2p-socket P`; IPC `bench` also takes `--ack-fifo PATH` for signal fan-out.
//! Exit status: 0 success, 1 error (message on stderr), 3 scenario unsupported
//! by this library (reason on stderr).

use std::hint::black_box;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context, Result};
use clap::{Parser, Subcommand};
use serde::{Deserialize, Serialize};

use crate::adapter::{AdapterInfo, Codec};
use crate::digest::Digest;
use crate::ipc::{Ipc, IpcOp, Transport};
use crate::payload::Body;
use crate::results::{AllocCost, Estimate, Measurement, WallTime};
use crate::scenario::{self, Kind, Scenario, Shape};
use crate::{alloc, verify, wire};

pub const EXIT_UNSUPPORTED: u8 = 3;
/// What `serve` and `subscribe` print once they are ready.
pub const READY: &str = "READY";
/// `repeat --windows N` prints these around each window of operations and
/// waits for a line `go` on stdin after each, so the runner can snapshot
/// every process.
pub const WINDOW_BEGIN: &str = "WINDOW-BEGIN";
pub const WINDOW_END: &str = "WINDOW-END";
pub const GO: &str = "go";

#[derive(Parser)]
#[command(about = "A dbus-matrix adapter (see harness::cli for the contract)")]
struct Args {
    #[command(subcommand)]
    command: Command,
}

/// Where the service is, for IPC commands.
#[derive(clap::Args, Clone, Default)]
struct TransportArgs {
    /// Bus address, `unix:path=…`.
    #[arg(long)]
    bus_address: Option<String>,
    /// The bus socket path (libraries that cannot parse addresses connect by path).
    #[arg(long)]
    bus_socket: Option<PathBuf>,
    /// The well-known name the service owns on the bus.
    #[arg(long)]
    service_name: Option<String>,
    /// Peer to peer: the socket the server listens on.
    #[arg(long, conflicts_with_all = ["bus_address", "bus_socket", "service_name"])]
    p2p_socket: Option<PathBuf>,
}

impl TransportArgs {
    fn transport(&self) -> Result<Option<Transport>> {
        Ok(
            match (
                &self.bus_address,
                &self.bus_socket,
                &self.service_name,
                &self.p2p_socket,
            ) {
                (None, None, None, None) => None,
                (_, _, _, Some(socket)) => Some(Transport::P2p { socket: socket.clone() }),
                (Some(address), Some(socket), Some(name), None) => Some(Transport::Bus {
                    address: address.clone(),
                    socket: socket.clone(),
                    service_name: name.clone(),
                }),
                _ => bail!("a bus transport needs --bus-address, --bus-socket and --service-name together"),
            },
        )
    }

    fn required(&self) -> Result<Transport> {
        self.transport()?
            .context("this command needs a transport: --bus-address/--bus-socket/--service-name or --p2p-socket")
    }
}

#[derive(Subcommand)]
enum Command {
    /// Print id, library, version and scenario support as JSON.
    List,
    /// Write the wire bytes of a marshal scenario to stdout.
    Emit {
        #[arg(long)]
        scenario: String,
    },
    /// Decode wire bytes from stdin as a demarshal scenario; print the digest.
    Demarshal {
        #[arg(long)]
        scenario: String,
    },
    /// Verify, then time one scenario with criterion.
    Bench {
        #[arg(long)]
        scenario: String,
        /// Where the `Measurement` JSON goes.
        #[arg(long)]
        result: PathBuf,
        /// Criterion's working directory (a fresh temporary one by default).
        #[arg(long)]
        criterion_dir: Option<PathBuf>,
        #[arg(long, default_value_t = 20)]
        sample_size: usize,
        /// Seconds.
        #[arg(long, default_value_t = 0.3)]
        warm_up: f64,
        /// Seconds.
        #[arg(long, default_value_t = 1.0)]
        measurement: f64,
        /// Bootstrap resamples for criterion's confidence intervals.
        #[arg(long, default_value_t = 100_000)]
        nresamples: usize,
        #[command(flatten)]
        transport: TransportArgs,
        /// For signal fan-out: the subscribers acknowledge through this FIFO.
        #[arg(long)]
        ack_fifo: Option<PathBuf>,
    },
    /// Verify, then run the operation N times in `dbus_matrix_measured_region`.
    Repeat {
        #[arg(long)]
        scenario: String,
        #[arg(long)]
        iterations: u64,
        /// Run the N operations this many times, each time announced with
        /// WINDOW-BEGIN / WINDOW-END on stdout, waiting for a line `go` on
        /// stdin after each (the runner counts costs in between); 0: no handshake.
        #[arg(long, default_value_t = 0)]
        windows: u32,
        #[command(flatten)]
        transport: TransportArgs,
        #[arg(long)]
        ack_fifo: Option<PathBuf>,
    },
    /// Serve the benchmark service until killed.
    Serve {
        #[command(flatten)]
        transport: TransportArgs,
    },
    /// Subscribe to Ping on N connections until killed.
    Subscribe {
        #[command(flatten)]
        transport: TransportArgs,
        #[arg(long)]
        connections: usize,
        #[arg(long, default_value_t = 0)]
        extra_rules: usize,
        #[arg(long)]
        ack_fifo: PathBuf,
    },
    /// Connect, read the Items property, print it, exit.
    ColdStart {
        #[command(flatten)]
        transport: TransportArgs,
    },
}

/// What `list` prints.
#[derive(Debug, Serialize, Deserialize)]
pub struct Listing {
    pub id: String,
    pub library: String,
    pub version: String,
    pub scenarios: Vec<ScenarioSupport>,
}

/// Support of one scenario; IPC scenarios also say whether they work peer to peer.
#[derive(Debug, Serialize, Deserialize)]
pub struct ScenarioSupport {
    pub id: String,
    pub supported: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p2p_supported: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p2p_reason: Option<String>,
}

/// Entry point used by `adapter_main!`.
pub fn main<C: Codec, I: Ipc>(
    info: AdapterInfo,
    make_codec: impl FnOnce() -> C,
    make_ipc: impl FnOnce() -> I,
) -> ExitCode {
    let args = Args::parse();
    match run(info, make_codec, make_ipc, args.command) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn find_scenario(id: &str) -> Result<&'static Scenario> {
    scenario::find(id).with_context(|| {
        let known: Vec<_> = scenario::all().map(|s| s.id.as_str()).collect();
        format!("unknown scenario {id:?}; known: {}", known.join(", "))
    })
}

/// Why `info`'s adapter cannot do `op` (over p2p or a bus), if it cannot.
/// The raw-socket floor is the harness's own code, run by the baseline only.
fn ipc_unsupported(info: &AdapterInfo, ipc: &impl Ipc, op: IpcOp, p2p: bool) -> Option<String> {
    match op {
        IpcOp::RawSocket(_) if info.library == "raw" => None,
        IpcOp::RawSocket(_) => Some("the raw-socket floor is measured once, by the raw baseline".into()),
        _ => ipc.unsupported_ipc(op, p2p),
    }
}

fn unsupported_reason<C: Codec, I: Ipc>(
    info: &AdapterInfo,
    codec: &C,
    ipc: &I,
    s: &Scenario,
    transport: Option<&Transport>,
) -> Option<String> {
    match s.kind {
        Kind::Ipc(op) => ipc_unsupported(info, ipc, op, transport.is_some_and(Transport::is_p2p)),
        _ => codec.unsupported(s),
    }
}

fn print_ready() {
    println!("{READY}");
    let _ = std::io::stdout().flush();
}

fn run<C: Codec, I: Ipc>(
    info: AdapterInfo,
    make_codec: impl FnOnce() -> C,
    make_ipc: impl FnOnce() -> I,
    command: Command,
) -> Result<ExitCode> {
    let mut codec = make_codec();
    let mut ipc = make_ipc();
    let (scenario_id, transport) = match &command {
        Command::List => {
            let scenarios = scenario::all()
                .map(|s| match s.kind {
                    Kind::Ipc(op) => {
                        let bus = ipc_unsupported(&info, &ipc, op, false);
                        let p2p = ipc_unsupported(&info, &ipc, op, true);
                        ScenarioSupport {
                            id: s.id.clone(),
                            supported: bus.is_none(),
                            reason: bus,
                            p2p_supported: Some(p2p.is_none()),
                            p2p_reason: p2p,
                        }
                    }
                    _ => {
                        let reason = codec.unsupported(s);
                        ScenarioSupport {
                            id: s.id.clone(),
                            supported: reason.is_none(),
                            reason,
                            p2p_supported: None,
                            p2p_reason: None,
                        }
                    }
                })
                .collect();
            let listing = Listing {
                id: info.id.into(),
                library: info.library.into(),
                version: info.version.into(),
                scenarios,
            };
            println!("{}", serde_json::to_string_pretty(&listing)?);
            return Ok(ExitCode::SUCCESS);
        }
        Command::Serve { transport } => {
            ipc.serve(&transport.required()?, &mut print_ready)?;
            return Ok(ExitCode::SUCCESS);
        }
        Command::Subscribe {
            transport,
            connections,
            extra_rules,
            ack_fifo,
        } => {
            let mut fifo = std::fs::OpenOptions::new()
                .read(true) // O_RDWR: opening does not wait for the reader
                .write(true)
                .open(ack_fifo)
                .with_context(|| format!("opening the ack FIFO {}", ack_fifo.display()))?;
            let mut ack = || {
                fifo.write_all(b"!").expect("writing to the ack FIFO");
            };
            ipc.subscribe(
                &transport.required()?,
                *connections,
                *extra_rules,
                &mut print_ready,
                &mut ack,
            )?;
            return Ok(ExitCode::SUCCESS);
        }
        Command::ColdStart { transport } => {
            for (id, name) in ipc.cold_start(&transport.required()?)? {
                println!("{id}\t{name}");
            }
            return Ok(ExitCode::SUCCESS);
        }
        Command::Emit { scenario } | Command::Demarshal { scenario } => (scenario.clone(), None),
        Command::Bench {
            scenario, transport, ..
        }
        | Command::Repeat {
            scenario, transport, ..
        } => (scenario.clone(), transport.transport()?),
    };
    let scenario = find_scenario(&scenario_id)?;
    if let Some(reason) = unsupported_reason(&info, &codec, &ipc, scenario, transport.as_ref()) {
        eprintln!("unsupported: {reason}");
        return Ok(ExitCode::from(EXIT_UNSUPPORTED));
    }
    match command {
        Command::Emit { .. } => {
            ensure!(
                scenario.kind == Kind::Marshal,
                "emit takes a marshal scenario, not {}",
                scenario.id
            );
            let wire = codec.marshal(&scenario.body()).context("marshal failed")?;
            std::io::stdout().write_all(wire.as_ref())?;
        }
        Command::Demarshal { .. } => {
            ensure!(
                scenario.kind == Kind::Demarshal,
                "demarshal takes a demarshal scenario, not {}",
                scenario.id
            );
            let mut bytes = Vec::new();
            std::io::stdin().read_to_end(&mut bytes)?;
            let mut digest = Digest::new();
            codec
                .demarshal(&bytes, scenario.shape(), &mut digest)
                .context("demarshal failed")?;
            println!("{:016x}", digest.finish());
        }
        Command::Bench {
            result,
            criterion_dir,
            sample_size,
            warm_up,
            measurement,
            nresamples,
            ack_fifo,
            ..
        } => {
            let settings = Settings {
                sample_size,
                warm_up: Duration::from_secs_f64(warm_up),
                measurement: Duration::from_secs_f64(measurement),
                nresamples,
            };
            let scratch;
            let dir = match criterion_dir {
                Some(d) => d,
                None => {
                    scratch = TempDir::new()?;
                    scratch.0.clone()
                }
            };
            let m = match scenario.kind {
                Kind::Ipc(op) => {
                    let mut prepared = prepare_ipc(&mut ipc, op, transport.as_ref(), ack_fifo.as_deref())?;
                    measure(
                        &mut prepared.op,
                        prepared.throughput_bytes,
                        Vec::new(),
                        info.id,
                        scenario,
                        &settings,
                        &dir,
                    )?
                }
                _ => {
                    let prepared = prepare_codec(&mut codec, scenario)?;
                    let mut op = codec_operation(&mut codec, &prepared.input);
                    measure(
                        &mut op,
                        prepared.throughput_bytes,
                        prepared.notes,
                        info.id,
                        scenario,
                        &settings,
                        &dir,
                    )?
                }
            };
            std::fs::write(&result, serde_json::to_vec_pretty(&m)?)
                .with_context(|| format!("writing {}", result.display()))?;
        }
        Command::Repeat {
            iterations,
            ack_fifo,
            windows,
            ..
        } => match scenario.kind {
            Kind::Ipc(op) => {
                let mut prepared = prepare_ipc(&mut ipc, op, transport.as_ref(), ack_fifo.as_deref())?;
                repeat(&mut prepared.op, iterations, windows)?;
            }
            _ => {
                let prepared = prepare_codec(&mut codec, scenario)?;
                repeat(&mut codec_operation(&mut codec, &prepared.input), iterations, windows)?;
            }
        },
        Command::List | Command::Serve { .. } | Command::Subscribe { .. } | Command::ColdStart { .. } => {
            unreachable!("handled above")
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn repeat(op: &mut dyn FnMut(), iterations: u64, windows: u32) -> Result<()> {
    let mut region = || {
        dbus_matrix_measured_region(&mut || {
            for _ in 0..iterations {
                op();
            }
        })
    };
    if windows == 0 {
        region();
    }
    for _ in 0..windows {
        announce_and_wait(WINDOW_BEGIN)?;
        region();
        announce_and_wait(WINDOW_END)?;
    }
    Ok(())
}

/// Prints `what` and waits for the runner's `go`.
fn announce_and_wait(what: &str) -> Result<()> {
    println!("{what}");
    std::io::stdout().flush()?;
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    ensure!(
        line.trim() == GO,
        "after {what} the runner said {:?}, not {GO:?}",
        line.trim()
    );
    Ok(())
}

fn measure(
    op: &mut dyn FnMut(),
    throughput_bytes: u64,
    notes: Vec<String>,
    adapter_id: &str,
    scenario: &Scenario,
    settings: &Settings,
    dir: &Path,
) -> Result<Measurement> {
    let mut notes = notes;
    // One operation decides: criterion needs at least sample_size x 5.5
    // operations (linear sampling), far beyond the profile's budget for slow ones.
    let start = Instant::now();
    op();
    let first = start.elapsed();
    let (wall, alloc) = if first > settings.measurement {
        let (wall, alloc) = time_single_operations(op, settings.measurement);
        notes.push(format!(
            "slow operation ({:.2} s): timed as {} single operations, not by criterion",
            first.as_secs_f64(),
            wall.samples
        ));
        (wall, alloc)
    } else {
        let alloc = count_allocations(op);
        (time_with_criterion(op, adapter_id, scenario, settings, dir)?, alloc)
    };
    Ok(Measurement {
        wall,
        throughput_bytes,
        alloc: Some(alloc),
        instructions_per_op: None,
        verification_notes: notes,
        floor_ratio: None,
        costs: None,
    })
}

/// The timed work of a codec cell, prepared and verified.
enum Input {
    Marshal(Body),
    Demarshal(Vec<u8>, Shape),
}

struct PreparedCodec {
    input: Input,
    throughput_bytes: u64,
    notes: Vec<String>,
}

/// Builds the input and checks the adapter's result against the canonical
/// one: nothing is timed unless this passes.
fn prepare_codec<C: Codec>(codec: &mut C, scenario: &Scenario) -> Result<PreparedCodec> {
    let body = scenario.body();
    match scenario.kind {
        Kind::Marshal => {
            let wire = codec.marshal(&body).context("marshal failed")?;
            let bytes = wire.as_ref();
            let verdict = verify::verify_signal(bytes, &body)
                .with_context(|| format!("verification of {} failed", scenario.id))?;
            Ok(PreparedCodec {
                throughput_bytes: bytes.len() as u64,
                notes: verdict.notes,
                input: Input::Marshal(body),
            })
        }
        Kind::Demarshal => {
            let bytes = wire::canonical_signal(&body);
            let mut digest = Digest::new();
            codec
                .demarshal(&bytes, scenario.shape(), &mut digest)
                .context("demarshal failed")?;
            verify::verify_digest(digest.finish(), &body)
                .with_context(|| format!("verification of {} failed", scenario.id))?;
            Ok(PreparedCodec {
                throughput_bytes: bytes.len() as u64,
                notes: Vec::new(),
                input: Input::Demarshal(bytes, scenario.shape()),
            })
        }
        Kind::Ipc(_) => unreachable!("IPC scenarios are prepared by prepare_ipc"),
    }
}

/// The timed operation. It was verified by `prepare_codec`, so a failure here
/// is a library fault worth a panic (the runner reports it as a failed cell).
fn codec_operation<'a, C: Codec>(codec: &'a mut C, input: &'a Input) -> impl FnMut() + 'a {
    move || match input {
        Input::Marshal(body) => {
            black_box(
                codec
                    .marshal(black_box(body))
                    .expect("marshal failed after verification"),
            );
        }
        Input::Demarshal(bytes, shape) => {
            let mut digest = Digest::new();
            codec
                .demarshal(black_box(bytes), *shape, &mut digest)
                .expect("demarshal failed after verification");
            black_box(digest.finish());
        }
    }
}

struct PreparedIpc<'a> {
    op: Box<dyn FnMut() + 'a>,
    throughput_bytes: u64,
}

/// Connects, performs the op once and checks what came back (and, for
/// fan-out, that every subscriber acknowledged) before anything is timed.
fn prepare_ipc<'a, I: Ipc>(
    ipc: &'a mut I,
    op: IpcOp,
    transport: Option<&Transport>,
    ack_fifo: Option<&Path>,
) -> Result<PreparedIpc<'a>> {
    let throughput_bytes = match op {
        IpcOp::EchoBytes(n) | IpcOp::RawSocket(n) => n as u64,
        _ => 0,
    };
    let mut client: Box<dyn FnMut() -> Result<u64> + 'a> = match op {
        IpcOp::RawSocket(n) => Box::new(raw_socket_ping_pong(n)?),
        IpcOp::PropertyColdStart => bail!("property/cold-start is timed by the runner (whole processes)"),
        _ => {
            let t = transport.context("IPC scenarios need a transport")?;
            ipc.client(t, op).context("connecting the client")?
        }
    };
    let expected = op.expected_digest(transport.map_or("", Transport::service_name));
    let mut ack = match op.subscribers() {
        Some(_) => {
            let path = ack_fifo.context("signal fan-out needs --ack-fifo")?;
            Some(std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?)
        }
        None => None,
    };
    let got = client().context("the first operation failed")?;
    ensure!(
        got == expected,
        "verification failed: received digest {got:016x}, expected {expected:016x}"
    );
    if let Some(f) = &mut ack {
        wait_ack(f).context("the subscribers did not acknowledge the first Ping")?;
    }
    let op = move || {
        let d = client().expect("IPC operation failed after verification");
        if let Some(f) = &mut ack {
            wait_ack(f).expect("subscribers stopped acknowledging");
        }
        black_box(d);
    };
    Ok(PreparedIpc {
        op: Box::new(op),
        throughput_bytes,
    })
}

fn wait_ack(f: &mut std::fs::File) -> Result<()> {
    let mut b = [0u8; 1];
    f.read_exact(&mut b)
        .context("the ack FIFO closed: a subscriber process died")
}

/// The physical floor: `size` bytes written to one end of a Unix socket pair
/// and echoed back by a thread at the other end.
fn raw_socket_ping_pong(size: usize) -> Result<impl FnMut() -> Result<u64>> {
    use std::os::unix::net::UnixStream;
    let (mut client, mut server) = UnixStream::pair()?;
    std::thread::spawn(move || {
        let mut buf = vec![0u8; size];
        while server.read_exact(&mut buf).is_ok() {
            if server.write_all(&buf).is_err() {
                break;
            }
        }
    });
    let payload = crate::ipc::echo_payload(size);
    let mut reply = vec![0u8; size];
    Ok(move || {
        client.write_all(&payload)?;
        client.read_exact(&mut reply)?;
        let mut d = Digest::new();
        d.bytes(&reply);
        Ok(d.finish())
    })
}

/// The region callgrind counts (`--toggle-collect=dbus_matrix_measured_region`).
#[no_mangle]
#[inline(never)]
pub extern "Rust" fn dbus_matrix_measured_region(f: &mut dyn FnMut()) {
    f();
}

/// For operations slower than the measurement budget: at least two single
/// operations, timed one by one, until the budget is spent; allocations are
/// counted over the first.
fn time_single_operations(op: &mut dyn FnMut(), budget: Duration) -> (WallTime, AllocCost) {
    let mut samples = Vec::new();
    let mut alloc = None;
    let mut spent = Duration::ZERO;
    while samples.len() < 2 || spent < budget {
        let (a0, b0) = alloc::snapshot();
        let start = Instant::now();
        op();
        let took = start.elapsed();
        let (a1, b1) = alloc::snapshot();
        alloc.get_or_insert(AllocCost {
            allocations_per_op: (a1 - a0) as f64,
            bytes_per_op: (b1 - b0) as f64,
        });
        samples.push(took.as_nanos() as f64);
        spent += took;
    }
    (WallTime::from_samples(&samples), alloc.expect("at least one operation"))
}

fn count_allocations(op: &mut dyn FnMut()) -> AllocCost {
    const OPS: u64 = 16;
    op(); // first-call effects (lazy statics, buffer growth) are not per-op costs
    let (a0, b0) = alloc::snapshot();
    for _ in 0..OPS {
        op();
    }
    let (a1, b1) = alloc::snapshot();
    AllocCost {
        allocations_per_op: (a1 - a0) as f64 / OPS as f64,
        bytes_per_op: (b1 - b0) as f64 / OPS as f64,
    }
}

struct Settings {
    sample_size: usize,
    warm_up: Duration,
    measurement: Duration,
    nresamples: usize,
}

fn time_with_criterion(
    op: &mut dyn FnMut(),
    adapter_id: &str,
    scenario: &Scenario,
    settings: &Settings,
    dir: &Path,
) -> Result<WallTime> {
    let mut criterion = criterion::Criterion::default()
        .sample_size(settings.sample_size.max(10))
        .warm_up_time(settings.warm_up)
        .measurement_time(settings.measurement)
        .nresamples(settings.nresamples.max(1000))
        .without_plots()
        .with_output_color(false)
        .output_directory(dir);
    criterion
        .benchmark_group(adapter_id)
        .bench_function(scenario.id.replace('/', "_"), |b| b.iter(&mut *op));
    read_criterion_output(dir)
}

// The subset of criterion's `new/estimates.json` and `new/sample.json` we use.
#[derive(Deserialize)]
struct CriterionInterval {
    lower_bound: f64,
    upper_bound: f64,
}
#[derive(Deserialize)]
struct CriterionEstimate {
    point_estimate: f64,
    confidence_interval: CriterionInterval,
}
#[derive(Deserialize)]
struct CriterionEstimates {
    mean: CriterionEstimate,
    median: CriterionEstimate,
    std_dev: CriterionEstimate,
}
#[derive(Deserialize)]
struct CriterionSample {
    iters: Vec<f64>,
    times: Vec<f64>,
}

impl From<&CriterionEstimate> for Estimate {
    fn from(e: &CriterionEstimate) -> Self {
        Estimate {
            point: e.point_estimate,
            lower: e.confidence_interval.lower_bound,
            upper: e.confidence_interval.upper_bound,
        }
    }
}

fn find_file(dir: &Path, suffix: &Path) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let p = entry.path();
        if p.is_dir() {
            let candidate = p.join(suffix);
            if candidate.is_file() {
                return Some(candidate);
            }
            if let Some(found) = find_file(&p, suffix) {
                return Some(found);
            }
        }
    }
    None
}

/// Reads criterion's saved estimates back (criterion keeps them on disk only).
pub fn read_criterion_output(dir: &Path) -> Result<WallTime> {
    let est_path = find_file(dir, Path::new("new/estimates.json"))
        .with_context(|| format!("criterion wrote no new/estimates.json under {}", dir.display()))?;
    let sample_path = est_path.with_file_name("sample.json");
    let est: CriterionEstimates = serde_json::from_slice(&std::fs::read(&est_path)?)
        .with_context(|| format!("parsing {}", est_path.display()))?;
    let sample: CriterionSample = serde_json::from_slice(&std::fs::read(&sample_path)?)
        .with_context(|| format!("parsing {}", sample_path.display()))?;
    let sample_ns: Vec<f64> = sample.iters.iter().zip(&sample.times).map(|(i, t)| t / i).collect();
    Ok(WallTime {
        median_ns: (&est.median).into(),
        mean_ns: (&est.mean).into(),
        std_dev_ns: est.std_dev.point_estimate,
        samples: sample_ns.len(),
        iterations: sample.iters.iter().sum::<f64>() as u64,
        sample_ns,
    })
}

/// A temporary directory removed on drop (no extra dependency for this).
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<Self> {
        let base = std::env::temp_dir();
        for n in 0..1000u32 {
            let p = base.join(format!("dbus-matrix-criterion-{}-{n}", std::process::id()));
            if std::fs::create_dir(&p).is_ok() {
                return Ok(TempDir(p));
            }
        }
        bail!("could not create a temporary directory in {}", base.display())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
