//! The adapter contract: the commands every adapter binary understands, as
//! data, and the words adapter and runner exchange while one runs.
//!
//! ```text
//! <adapter> list                         JSON: id, library, version, scenarios with support
//! <adapter> emit --scenario ID           marshal: the wire bytes on stdout
//! <adapter> demarshal --scenario ID      reads wire bytes on stdin, prints the digest (hex)
//! <adapter> bench --scenario ID --result FILE [criterion settings] [transport] [--ack-fifo P]
//!                                        verify, count allocations, time with criterion,
//!                                        write a `Measurement` as JSON to FILE
//! <adapter> repeat --scenario ID --iterations N [--windows K] [transport] [--ack-fifo P]
//!                                        verify, then run the operation N times inside
//!                                        `dbus_matrix_measured_region` (for callgrind);
//!                                        with K windows, K times, each between
//!                                        WINDOW-BEGIN/WINDOW-END and a `go` on stdin
//! <adapter> serve TRANSPORT              serve the benchmark service; prints READY
//! <adapter> subscribe TRANSPORT --connections N --extra-rules R --ack-fifo PATH
//!                                        N subscriber connections; one byte to PATH each
//!                                        time all got a Ping; prints READY
//! <adapter> cold-start TRANSPORT         connect, read the Items property, print it, exit
//! ```
//! A transport is `--bus-address A --bus-socket P --service-name N` or
//! `--p2p-socket P`. Exit status: 0 success, 1 error (message on stderr),
//! 2 bad arguments, [`EXIT_UNSUPPORTED`] scenario unsupported by this library
//! (the last stderr line is [`unsupported_line`]).
//!
//! The adapter parses a [`Command`] with [`Command::parse`]; the runner turns
//! one back into arguments with [`Command::to_args`]. Both directions are this
//! file, so the flags are spelled here only.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser, Subcommand};

use crate::ipc::Transport;

/// Exit status of a command whose scenario this library cannot do.
pub const EXIT_UNSUPPORTED: u8 = 3;
/// What precedes the reason on the last stderr line of an unsupported command.
const UNSUPPORTED_PREFIX: &str = "unsupported: ";
/// What `serve` and `subscribe` print once they are ready.
pub const READY: &str = "READY";
/// `repeat --windows N` prints these around each window of operations and
/// waits for a line [`GO`] on stdin after each, so the runner can snapshot
/// every process.
pub const WINDOW_BEGIN: &str = "WINDOW-BEGIN";
pub const WINDOW_END: &str = "WINDOW-END";
pub const GO: &str = "go";

/// The stderr line of an unsupported command (exit [`EXIT_UNSUPPORTED`]).
pub fn unsupported_line(reason: &str) -> String {
    format!("{UNSUPPORTED_PREFIX}{reason}")
}

/// The reason in a line written by [`unsupported_line`] (the line itself if
/// it is not one).
pub fn unsupported_reason(line: &str) -> &str {
    line.trim_start_matches(UNSUPPORTED_PREFIX)
}

/// One adapter command with its arguments.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Print id, library, version and scenario support as JSON ([`crate::cli::Listing`]).
    List,
    /// Write the wire bytes of a marshal scenario to stdout.
    Emit { scenario: String },
    /// Decode wire bytes from stdin as a demarshal scenario; print the digest.
    Demarshal { scenario: String },
    /// Verify, then time one scenario with criterion.
    Bench(Bench),
    /// Verify, then run the operation N times in `dbus_matrix_measured_region`.
    Repeat(Repeat),
    /// Serve the benchmark service until killed.
    Serve { transport: Transport },
    /// Subscribe to Ping on N connections until killed.
    Subscribe(Subscribe),
    /// Connect, read the Items property, print it, exit.
    ColdStart { transport: Transport },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Bench {
    pub scenario: String,
    /// Where the `Measurement` JSON goes.
    pub result: PathBuf,
    /// Criterion's working directory (a fresh temporary one when `None`).
    pub criterion_dir: Option<PathBuf>,
    pub settings: CriterionSettings,
    /// IPC scenarios: where the service is.
    pub transport: Option<Transport>,
    /// Signal fan-out: the subscribers acknowledge through this FIFO.
    pub ack_fifo: Option<PathBuf>,
}

/// How long and how often one round of a cell samples.
#[derive(Clone, Debug, PartialEq)]
pub struct CriterionSettings {
    pub sample_size: usize,
    /// Seconds.
    pub warm_up: f64,
    /// Seconds.
    pub measurement: f64,
    /// Bootstrap resamples for criterion's confidence intervals.
    pub nresamples: usize,
    pub timer: Timer,
    /// Seconds: an operation slower than this is timed once and the cell
    /// says it was cut (`Measurement::cut`); `None`: no cut.
    pub budget: Option<f64>,
}

/// What times the operation in `bench`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Timer {
    /// criterion: warm-up, linear sampling, bootstrap intervals.
    #[default]
    Criterion,
    /// `sample_size` samples of a fixed iteration count sized from the
    /// warm-up, no analysis: for the smoke profile, which checks
    /// correctness and needs only a plausible figure.
    Direct,
}

impl Timer {
    pub fn name(self) -> &'static str {
        match self {
            Timer::Criterion => "criterion",
            Timer::Direct => "direct",
        }
    }
}

impl Default for CriterionSettings {
    fn default() -> Self {
        CriterionSettings {
            sample_size: 20,
            warm_up: 0.3,
            measurement: 1.0,
            nresamples: 100_000,
            timer: Timer::Criterion,
            budget: None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Repeat {
    pub scenario: String,
    pub iterations: u64,
    /// Run the N operations this many times, each announced with
    /// [`WINDOW_BEGIN`] / [`WINDOW_END`] and followed by a wait for [`GO`]; 0: no handshake.
    pub windows: u32,
    pub transport: Option<Transport>,
    pub ack_fifo: Option<PathBuf>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Subscribe {
    pub transport: Transport,
    pub connections: usize,
    /// Match rules that never match, added by the first connection.
    pub extra_rules: usize,
    /// One byte is written here each time every connection received a Ping.
    pub ack_fifo: PathBuf,
}

impl Command {
    /// The command of this process's arguments; on bad arguments, prints
    /// clap's message and exits 2.
    pub fn parse() -> Command {
        Command::try_parse_from(std::env::args_os()).unwrap_or_else(|e| e.exit())
    }

    /// `args` starts with the program name, as `std::env::args_os()` does.
    pub fn try_parse_from<I, T>(args: I) -> Result<Command, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        let parsed = Args::try_parse_from(&args)?;
        parsed.command.into_command().map_err(|msg| {
            // The usage line names this binary, as clap's own errors do.
            let mut cli = Args::command();
            if let Some(name) = args.first().map(std::path::Path::new).and_then(|p| p.file_name()) {
                cli = cli.bin_name(name.to_string_lossy().into_owned());
            }
            clap::Error::raw(ErrorKind::MissingRequiredArgument, msg).format(&mut cli)
        })
    }

    /// The arguments (after the program name) that [`Command::try_parse_from`]
    /// turns back into `self`.
    pub fn to_args(&self) -> Vec<OsString> {
        let mut a = Argv::default();
        match self {
            Command::List => a.word("list"),
            Command::Emit { scenario } => a.word("emit").flag("scenario", scenario),
            Command::Demarshal { scenario } => a.word("demarshal").flag("scenario", scenario),
            Command::Bench(b) => {
                let s = &b.settings;
                a.word("bench")
                    .flag("scenario", &b.scenario)
                    .flag("result", &b.result)
                    .opt("criterion-dir", b.criterion_dir.as_ref())
                    .flag("sample-size", s.sample_size.to_string())
                    .flag("warm-up", s.warm_up.to_string())
                    .flag("measurement", s.measurement.to_string())
                    .flag("nresamples", s.nresamples.to_string())
                    .flag("timer", s.timer.name())
                    .opt("budget", s.budget.map(|b| b.to_string()))
                    .transport(b.transport.as_ref())
                    .opt("ack-fifo", b.ack_fifo.as_ref())
            }
            Command::Repeat(r) => a
                .word("repeat")
                .flag("scenario", &r.scenario)
                .flag("iterations", r.iterations.to_string())
                .flag("windows", r.windows.to_string())
                .transport(r.transport.as_ref())
                .opt("ack-fifo", r.ack_fifo.as_ref()),
            Command::Serve { transport } => a.word("serve").transport(Some(transport)),
            Command::Subscribe(s) => a
                .word("subscribe")
                .transport(Some(&s.transport))
                .flag("connections", s.connections.to_string())
                .flag("extra-rules", s.extra_rules.to_string())
                .flag("ack-fifo", &s.ack_fifo),
            Command::ColdStart { transport } => a.word("cold-start").transport(Some(transport)),
        };
        a.0
    }
}

/// Builds an argument list; every flag is written `--name=value`, so a value
/// starting with `-` is never read as a flag.
#[derive(Default)]
struct Argv(Vec<OsString>);

impl Argv {
    fn word(&mut self, w: &str) -> &mut Self {
        self.0.push(w.into());
        self
    }

    fn flag(&mut self, name: &str, value: impl AsRef<OsStr>) -> &mut Self {
        let mut arg = OsString::from(format!("--{name}="));
        arg.push(value.as_ref());
        self.0.push(arg);
        self
    }

    fn opt(&mut self, name: &str, value: Option<impl AsRef<OsStr>>) -> &mut Self {
        if let Some(v) = value {
            self.flag(name, v);
        }
        self
    }

    fn transport(&mut self, t: Option<&Transport>) -> &mut Self {
        match t {
            None => self,
            Some(Transport::Bus {
                address,
                socket,
                service_name,
            }) => self
                .flag("bus-address", address)
                .flag("bus-socket", socket)
                .flag("service-name", service_name),
            Some(Transport::P2p { socket }) => self.flag("p2p-socket", socket),
        }
    }
}

/// The adapter command line as clap describes it: every command with its
/// flags, defaults and choices (exported by `crate::canon`, against which the
/// Python, Ruby and C parsers are tested).
pub fn command_line() -> clap::Command {
    Args::command()
}

// What clap parses; turned into a `Command` by `into_command`.

#[derive(Parser)]
#[command(about = "A dbus-matrix adapter (see harness::contract for the contract)")]
struct Args {
    #[command(subcommand)]
    command: Raw,
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
    fn optional(self) -> Result<Option<Transport>, &'static str> {
        Ok(
            match (self.bus_address, self.bus_socket, self.service_name, self.p2p_socket) {
                (None, None, None, None) => None,
                (_, _, _, Some(socket)) => Some(Transport::P2p { socket }),
                (Some(address), Some(socket), Some(service_name), None) => Some(Transport::Bus {
                    address,
                    socket,
                    service_name,
                }),
                _ => return Err("a bus transport needs --bus-address, --bus-socket and --service-name together"),
            },
        )
    }

    fn required(self) -> Result<Transport, &'static str> {
        self.optional()?
            .ok_or("this command needs a transport: --bus-address/--bus-socket/--service-name or --p2p-socket")
    }
}

#[derive(Subcommand)]
enum Raw {
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
        #[arg(long, default_value_t = CriterionSettings::default().sample_size, value_parser = at_least_one)]
        sample_size: usize,
        /// Seconds.
        #[arg(long, default_value_t = CriterionSettings::default().warm_up, value_parser = positive_seconds)]
        warm_up: f64,
        /// Seconds.
        #[arg(long, default_value_t = CriterionSettings::default().measurement, value_parser = positive_seconds)]
        measurement: f64,
        /// Bootstrap resamples for criterion's confidence intervals.
        #[arg(long, default_value_t = CriterionSettings::default().nresamples)]
        nresamples: usize,
        #[arg(long, value_enum, default_value_t = Timer::Criterion)]
        timer: Timer,
        /// Seconds: an operation slower than this is timed once (the cell says it was cut).
        #[arg(long, value_parser = positive_seconds)]
        budget: Option<f64>,
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

/// A number of seconds above 0 that a `Duration` holds (bad input is a
/// usage error, exit 2, never a panic further on).
fn positive_seconds(text: &str) -> Result<f64, String> {
    let v: f64 = text.parse().map_err(|e| format!("{e}"))?;
    match std::time::Duration::try_from_secs_f64(v) {
        Ok(d) if !d.is_zero() => Ok(v),
        _ => Err(format!("{v} is not a number of seconds above 0")),
    }
}

fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        Ok(_) => Err("at least 1".into()),
        Err(e) => Err(e.to_string()),
    }
}

impl Raw {
    fn into_command(self) -> Result<Command, &'static str> {
        Ok(match self {
            Raw::List => Command::List,
            Raw::Emit { scenario } => Command::Emit { scenario },
            Raw::Demarshal { scenario } => Command::Demarshal { scenario },
            Raw::Bench {
                scenario,
                result,
                criterion_dir,
                sample_size,
                warm_up,
                measurement,
                nresamples,
                timer,
                budget,
                transport,
                ack_fifo,
            } => Command::Bench(Bench {
                scenario,
                result,
                criterion_dir,
                settings: CriterionSettings {
                    sample_size,
                    warm_up,
                    measurement,
                    nresamples,
                    timer,
                    budget,
                },
                transport: transport.optional()?,
                ack_fifo,
            }),
            Raw::Repeat {
                scenario,
                iterations,
                windows,
                transport,
                ack_fifo,
            } => Command::Repeat(Repeat {
                scenario,
                iterations,
                windows,
                transport: transport.optional()?,
                ack_fifo,
            }),
            Raw::Serve { transport } => Command::Serve {
                transport: transport.required()?,
            },
            Raw::Subscribe {
                transport,
                connections,
                extra_rules,
                ack_fifo,
            } => Command::Subscribe(Subscribe {
                transport: transport.required()?,
                connections,
                extra_rules,
                ack_fifo,
            }),
            Raw::ColdStart { transport } => Command::ColdStart {
                transport: transport.required()?,
            },
        })
    }
}

#[cfg(test)]
mod tests;
