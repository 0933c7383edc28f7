//! An adapter for fault-injection tests. It does the work correctly with the
//! harness's reference codec, except for the fault named by the file name it
//! is invoked as (tests symlink it): `fault-ok`, `fault-hang`, `fault-crash`,
//! `fault-garbage-list`, `fault-wrong-bytes`, `fault-slow`, `fault-exit`,
//! `fault-unwrap`, `fault-wrong-reply` (its server echoes bytes with the
//! first one changed: every client of it fails, its own client is sound),
//! `fault-hang-list` (`list` never answers: a runner interrupted while it
//! asks the adapters what they are).
//! The adapter id is that file name, so one binary plays many adapters.
//! `FAULT_ADAPTER_AS=<name>` picks the fault instead, keeping the id (the same
//! adapter, deliberately slowed, for `compare` tests). `FAULT_ADAPTER_LOG=FILE`
//! appends `<id> <command> <scenario>` to FILE for every command run (the
//! order in which the runner measures cells, for the rounds tests).

use std::hint::black_box;
use std::process::ExitCode;

use std::time::Duration;

use anyhow::{Context, Result};
use bus::raw_client::RawConnection;
use harness::ipc::{self, Ipc, IpcOp, Method, Transport};
use harness::scenario::Shape;
use harness::wire::Value;
use harness::{wire, AdapterInfo, Body, Codec, Digest};

#[global_allocator]
static ALLOCATOR: harness::alloc::CountingAllocator = harness::alloc::CountingAllocator;

#[derive(Clone, Copy, PartialEq)]
enum Fault {
    None,
    /// `bench` never finishes (the runner's timeout must kill it).
    Hang,
    /// Aborts in the middle of the timed loop.
    Crash,
    /// `list` prints something that is not JSON.
    GarbageList,
    /// `list` never answers.
    HangList,
    /// Emits a body with one byte changed (verification must catch it).
    WrongBytes,
    /// Correct but slower by a fixed amount of work per operation.
    Slow,
    /// `bench` exits 1 with a message, like a library error.
    Exit,
    /// Panics by unwrapping a library error (an `anyhow::Error`, which
    /// carries a backtrace when `RUST_LIB_BACKTRACE` or `RUST_BACKTRACE` asks).
    Unwrap,
    /// The server answers `EchoBytes` with its first byte changed (a broken
    /// server for the interop check; the client side is correct).
    WrongReply,
}

struct Faulty {
    fault: Fault,
    calls: u64,
}

fn fault_from_name(name: &str) -> Fault {
    match name {
        "fault-hang" => Fault::Hang,
        "fault-crash" => Fault::Crash,
        "fault-garbage-list" => Fault::GarbageList,
        "fault-hang-list" => Fault::HangList,
        "fault-wrong-bytes" => Fault::WrongBytes,
        "fault-slow" => Fault::Slow,
        "fault-exit" => Fault::Exit,
        "fault-unwrap" => Fault::Unwrap,
        "fault-wrong-reply" => Fault::WrongReply,
        _ => Fault::None,
    }
}

impl Faulty {
    fn on_operation(&mut self) {
        self.calls += 1;
        match self.fault {
            // The first calls are verification and allocation counting.
            Fault::Crash if self.calls > 100 => std::process::abort(),
            Fault::Hang if self.calls > 20 => loop {
                std::thread::sleep(std::time::Duration::from_secs(1));
            },
            // About 1 ms of extra work: 20x and more a 10-50 µs operation, far
            // above run-to-run noise on a shared machine.
            Fault::Slow => {
                let mut x = 0u64;
                for i in 0..1_000_000u64 {
                    x = black_box(x.wrapping_mul(31).wrapping_add(i));
                }
                black_box(x);
            }
            _ => {}
        }
    }
}

impl Codec for Faulty {
    type Wire = Vec<u8>;

    fn marshal(&mut self, body: &Body) -> Result<Vec<u8>> {
        self.on_operation();
        if self.fault == Fault::Exit {
            anyhow::bail!("injected library error");
        }
        if self.fault == Fault::Unwrap {
            failing_library_call().unwrap();
        }
        let mut bytes = wire::canonical_signal(body);
        if self.fault == Fault::WrongBytes {
            let last = bytes.len() - 1;
            bytes[last] ^= 0xff;
        }
        Ok(bytes)
    }

    fn demarshal(&mut self, bytes: &[u8], _shape: Shape, digest: &mut Digest) -> Result<()> {
        self.on_operation();
        if self.fault == Fault::Exit {
            anyhow::bail!("injected library error");
        }
        let msg = wire::decode_message(bytes)?;
        plain_body(&msg.values)
            .context("unexpected body shape")?
            .digest_into(digest);
        if self.fault == Fault::WrongBytes {
            digest.u64(1);
        }
        Ok(())
    }
}

/// What a library error looks like to an adapter that unwraps it.
fn failing_library_call() -> Result<()> {
    Err(anyhow::anyhow!("injected library error"))
}

fn plain_body(values: &[wire::Value]) -> Option<Body> {
    use wire::Value as V;
    let str_of = |v: &V| v.as_str().map(str::to_string);
    if let [V::Array(sig, entries)] = values {
        if sig == "{sv}" {
            let mut out = Vec::new();
            for e in entries {
                let V::DictEntry(k, v) = e else { return None };
                let V::Variant(inner) = &**v else { return None };
                out.push((str_of(k)?, str_of(inner)?));
            }
            return Some(Body::AsvDict(out));
        }
    }
    let mut units = Vec::new();
    for chunk in values.chunks(6) {
        let [V::Str(s), V::U64(t), V::Struct(st), V::Array(_, dict), V::Array(_, at), V::Array(_, as_)] = chunk else {
            return None;
        };
        let [V::U64(st0), V::Str(st1)] = st.as_slice() else {
            return None;
        };
        units.push(harness::Unit {
            s: s.clone(),
            t: *t,
            st: (*st0, st1.clone()),
            dict: dict
                .iter()
                .map(|e| match e {
                    V::DictEntry(k, v) => match (&**k, &**v) {
                        (V::Str(k), V::I32(v)) => Some((k.clone(), *v)),
                        _ => None,
                    },
                    _ => None,
                })
                .collect::<Option<_>>()?,
            at: at
                .iter()
                .map(|v| if let V::U64(x) = v { Some(*x) } else { None })
                .collect::<Option<_>>()?,
            as_: as_.iter().map(str_of).collect::<Option<_>>()?,
        });
    }
    Some(Body::Units(units))
}

/// A minimal IPC side on the test client of the `bus` crate: enough for
/// `call/void` and `call/echo-bytes/*` on a bus, to test how the runner copes
/// with buses and servers that die.
struct RawIpc {
    wrong_reply: bool,
}

const SUPPORTED_IPC: &str = "the fault adapter serves only call/void and call/echo-bytes/* on a bus";

fn bus_socket(t: &Transport) -> Result<(&std::path::Path, &str)> {
    match t {
        Transport::Bus {
            socket, service_name, ..
        } => Ok((socket, service_name)),
        Transport::P2p { .. } => anyhow::bail!("{SUPPORTED_IPC}"),
    }
}

impl Ipc for RawIpc {
    fn unsupported_ipc(&self, op: IpcOp, p2p: bool) -> Option<String> {
        match op {
            IpcOp::Call(Method::Void) | IpcOp::EchoBytes(_) if !p2p => None,
            _ => Some(SUPPORTED_IPC.into()),
        }
    }

    fn serve(&mut self, t: &Transport, ready: &mut dyn FnMut()) -> Result<()> {
        let (socket, name) = bus_socket(t)?;
        let mut c = RawConnection::connect(socket, Duration::from_secs(10))?;
        c.hello()?;
        c.bus_call("RequestName", &[Value::Str(name.into()), Value::U32(4)])?;
        c.wait_forever()?;
        ready();
        loop {
            let call = c.next_call()?;
            let mut reply: Vec<Value> = call.values.iter().take(1).cloned().collect();
            if let (true, Some(Value::Array(_, bytes))) = (self.wrong_reply, reply.first_mut()) {
                if let Some(Value::Byte(b)) = bytes.first_mut() {
                    *b ^= 0xff;
                }
            }
            c.reply(&call, &reply)?;
        }
    }

    fn subscriber(&mut self, _: &Transport, _: usize) -> Result<ipc::Subscriber> {
        anyhow::bail!("{SUPPORTED_IPC}")
    }

    fn client<'a>(&'a mut self, t: &Transport, op: IpcOp) -> Result<Box<dyn FnMut() -> Result<u64> + 'a>> {
        let (socket, name) = bus_socket(t)?;
        let (mut c, name) = (
            RawConnection::connect(socket, Duration::from_secs(10))?,
            name.to_string(),
        );
        c.hello()?;
        let (member, args) = match op {
            IpcOp::Call(Method::Void) => ("Void", vec![]),
            IpcOp::EchoBytes(n) => {
                let bytes = ipc::echo_payload(n).into_iter().map(Value::Byte).collect();
                ("EchoBytes", vec![Value::Array("y".into(), bytes)])
            }
            _ => anyhow::bail!("{SUPPORTED_IPC}"),
        };
        Ok(Box::new(move || {
            let reply = c.call(&name, ipc::OBJECT_PATH, ipc::INTERFACE, member, &args)?;
            let mut d = Digest::new();
            if let Some(Value::Array(_, bytes)) = reply.values.first() {
                let bytes: Vec<u8> = bytes
                    .iter()
                    .map(|b| if let Value::Byte(b) = b { *b } else { 0 })
                    .collect();
                d.bytes(&bytes);
            }
            Ok(d.finish())
        }))
    }

    fn cold_start(&mut self, _: &Transport) -> Result<Vec<(String, String)>> {
        anyhow::bail!("{SUPPORTED_IPC}")
    }
}

fn main() -> ExitCode {
    let argv0 = std::env::args().next().unwrap_or_default();
    let name = std::path::Path::new(&argv0)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("fault-ok")
        .to_string();
    let fault = fault_from_name(&std::env::var("FAULT_ADAPTER_AS").unwrap_or_else(|_| name.clone()));
    if fault == Fault::GarbageList && std::env::args().nth(1).as_deref() == Some("list") {
        println!("this is not JSON {{{{");
        return ExitCode::SUCCESS;
    }
    if let Ok(log) = std::env::var("FAULT_ADAPTER_LOG") {
        log_invocation(&log, &name);
    }
    if fault == Fault::HangList && std::env::args().nth(1).as_deref() == Some("list") {
        loop {
            std::thread::sleep(Duration::from_secs(1));
        }
    }
    let id: &'static str = Box::leak(name.into_boxed_str());
    harness::cli::main(
        AdapterInfo {
            id,
            library: "fault",
            version: "0.0.0",
            runtime: "blocking: the calling thread",
        },
        move || Faulty { fault, calls: 0 },
        move || RawIpc {
            wrong_reply: fault == Fault::WrongReply,
        },
    )
}

/// One line per invocation: the id, the command, its `--scenario` value and
/// the CPUs it may run on (`cpus=0-1`).
fn log_invocation(log: &str, name: &str) {
    use std::io::Write;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let command = args.first().map(String::as_str).unwrap_or("");
    let scenario = args.iter().find_map(|a| a.strip_prefix("--scenario=")).unwrap_or("-");
    // The CPUs it may run on: what the runner's placement (`--pin`) gave it.
    let cpus = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:").map(|v| v.trim().to_string()))
        })
        .unwrap_or_else(|| "?".into());
    let line = format!("{name} {command} {scenario} cpus={cpus}\n");
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = appended {
        eprintln!("fault-adapter: cannot log to {log}: {e}");
    }
}
