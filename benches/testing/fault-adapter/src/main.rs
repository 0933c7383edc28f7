//! An adapter for fault-injection tests. It does the work correctly with the
//! harness's reference codec, except for the fault named by the file name it
//! is invoked as (tests symlink it): `fault-ok`, `fault-hang`, `fault-crash`,
//! `fault-garbage-list`, `fault-wrong-bytes`, `fault-slow`, `fault-exit`,
//! `fault-unwrap`, `fault-wrong-reply` (its server echoes bytes with the
//! first one changed: every client of it fails, its own client is sound),
//! `fault-hang-list` (`list` never answers: a runner interrupted while it
//! asks the adapters what they are), `fault-skip-add-match` (its
//! `signal/match-churn` client never sends AddMatch, only RemoveMatch: the
//! bus's MatchRuleNotFound must fail the cell), `fault-drop-signal` (its
//! `signal/burst/<n>` consumer loses one Ping of each burst: verification
//! must report it lost; its `property/changed-storm/<n>` subscriber loses
//! one update: reported as dropping though it ends with the last value), `fault-broad-rule` (its `signal/delivered/arg0`
//! subscriber installs the broad rule: verification must report 10 Pings
//! delivered where 1 is right), `fault-short-work` (its `call/in-only-bytes/<n>`
//! sends one byte less, its `call/connections-in-process/<k>` skips the last
//! connection and its `proxy/create-call/<server>` makes no call: verification
//! must fail each; `apps.rs`; `fault-wrong-reply`'s sink changes the first byte it
//! got and its proxy calls twice).
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
use harness::ipc::{self, Ipc, IpcOp, Method, SubscriptionOp, Transport};
use harness::scenario::Shape;
use harness::wire::Value;
use harness::{wire, AdapterInfo, Body, Codec, Digest};

mod apps;
mod storm;

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
    /// `signal/match-churn` sends RemoveMatch without the AddMatch before it.
    SkipAddMatch,
    /// `signal/burst/<n>`'s consumer drops the second Ping it receives.
    DropSignal,
    /// `signal/delivered/arg0`'s subscriber installs the broad rule instead.
    BroadRule,
    /// The application families do less than asked (`apps.rs`).
    ShortWork,
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
        "fault-skip-add-match" => Fault::SkipAddMatch,
        "fault-drop-signal" => Fault::DropSignal,
        "fault-broad-rule" => Fault::BroadRule,
        "fault-short-work" => Fault::ShortWork,
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
    skip_add_match: bool,
    drop_signal: bool,
    broad_rule: bool,
    short_work: bool,
}

const SUPPORTED_IPC: &str =
    "the fault adapter serves only call/void, call/echo-bytes/*, signal/match-churn, signal/burst/*, \
     signal/delivered/*, property/changed-storm/*, call/in-only-bytes/*, call/connections-in-process/*, proxy/create-call/* and proxy/startup/* on a bus";

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
            IpcOp::Subscription(_) if !p2p => None,
            IpcOp::App(_) if !p2p => None,
            _ => Some(SUPPORTED_IPC.into()),
        }
    }

    fn implements(&self, op: IpcOp) -> bool {
        !op.opt_in() || matches!(op, IpcOp::Subscription(_) | IpcOp::App(_))
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
            // InOutInt answers the argument + 1 (call/connections-in-process).
            if let (Some("InOutInt"), Some(Value::I32(v))) =
                (call.header.field_str(wire::FIELD_MEMBER), reply.first_mut())
            {
                *v += 1;
            }
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
        if let IpcOp::App(a) = op {
            let fault = match (self.short_work, self.wrong_reply) {
                (true, _) => apps::AppFault::ShortWork,
                (false, true) => apps::AppFault::WrongReply,
                (false, false) => apps::AppFault::None,
            };
            return apps::client(socket, &name, a, fault);
        }
        if op == IpcOp::Subscription(SubscriptionOp::MatchChurn) {
            let rule = vec![Value::Str(ipc::subscription::churn_rule())];
            let skip_add = self.skip_add_match;
            return Ok(Box::new(move || {
                if !skip_add {
                    c.bus_call("AddMatch", &rule)?;
                }
                c.bus_call("RemoveMatch", &rule)?;
                Ok(Digest::new().finish())
            }));
        }
        if let IpcOp::Subscription(SubscriptionOp::Burst(n)) = op {
            let mut texts: Vec<String> = (0..n).map(ipc::subscription::burst_text).collect();
            texts.push(ipc::subscription::BURST_END.into());
            let (rule, drop_one) = (ipc::ping_rule(), self.drop_signal);
            let mut through = pings_through(c, socket, &rule, texts, ipc::subscription::BURST_END)?;
            return Ok(Box::new(move || {
                let mut received = through()?;
                received.pop(); // the end marker
                if drop_one && received.len() > 1 {
                    received.remove(1);
                }
                ipc::subscription::burst_digest(&received, n)
            }));
        }
        if let IpcOp::Subscription(SubscriptionOp::PropertyStorm(n)) = op {
            return storm::client(c, socket, n, self.drop_signal);
        }
        if let IpcOp::Subscription(SubscriptionOp::NameOwnerChurn(scope)) = op {
            return name_owner_churn(c, socket, scope, self.broad_rule);
        }
        if let IpcOp::Subscription(SubscriptionOp::Delivered(scope)) = op {
            let rule = if self.broad_rule {
                ipc::ping_rule()
            } else {
                ipc::subscription::delivered_rule(scope)
            };
            let texts = ipc::subscription::delivered_texts();
            let mut through = pings_through(c, socket, &rule, texts, ipc::SIGNAL_TEXT)?;
            return Ok(Box::new(move || {
                ipc::subscription::delivered_digest(&through()?, scope)
            }));
        }
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

/// The signal families on the bus crate's raw client: a closure that has `tx`
/// emit `texts` as `Ping`s while a second connection (its rule `rule`) reads
/// nothing, then reads that connection up to the Ping `end` and returns the
/// texts delivered, `end` included.
fn pings_through(
    mut tx: RawConnection,
    socket: &std::path::Path,
    rule: &str,
    texts: Vec<String>,
    end: &'static str,
) -> Result<impl FnMut() -> Result<Vec<String>>> {
    let mut rx = RawConnection::connect(socket, Duration::from_secs(10))?;
    rx.hello()?;
    rx.add_matches(&[rule.to_string()])?;
    Ok(move || {
        for text in &texts {
            let text = Value::Str(text.clone());
            tx.signal(ipc::OBJECT_PATH, ipc::INTERFACE, ipc::SIGNAL, &[text])?;
        }
        let mut received = Vec::new();
        loop {
            let m = rx.recv()?;
            if m.header.field_str(wire::FIELD_MEMBER) != Some(ipc::SIGNAL) {
                continue;
            }
            let text = m.values.first().and_then(Value::as_str).unwrap_or_default().to_string();
            let done = text == end;
            received.push(text);
            if done {
                return Ok(received);
            }
        }
    })
}

/// `signal/name-owner-churn/<scope>` on the raw client (`broad` installs the
/// broad rule whatever the scope: `fault-broad-rule`).
fn name_owner_churn<'a>(
    mut tx: RawConnection,
    socket: &std::path::Path,
    scope: ipc::subscription::RuleScope,
    broad: bool,
) -> Result<Box<dyn FnMut() -> Result<u64> + 'a>> {
    use ipc::subscription::{self as sub, RuleScope};
    let names = sub::churn_names();
    let mut rx = RawConnection::connect(socket, Duration::from_secs(10))?;
    rx.hello()?;
    let rule_scope = if broad { RuleScope::Broad } else { scope };
    rx.add_matches(&[sub::name_owner_rule(rule_scope, &names.1)])?;
    Ok(Box::new(move || {
        for name in std::iter::repeat_n(&names.0, sub::NAME_CHURNS).chain([&names.1]) {
            tx.bus_call("RequestName", &[Value::Str(name.clone()), Value::U32(4)])?;
            tx.bus_call("ReleaseName", &[Value::Str(name.clone())])?;
        }
        let mut received = Vec::new();
        loop {
            let m = rx.recv()?;
            if m.header.field_str(wire::FIELD_MEMBER) != Some("NameOwnerChanged") {
                continue;
            }
            let arg = |i: usize| m.values.get(i).and_then(Value::as_str).unwrap_or_default().to_string();
            let (name, new) = (arg(0), arg(2));
            let end = name == names.1 && new.is_empty();
            received.push((name, new));
            if end {
                break;
            }
        }
        sub::name_churn_digest(&received, scope, &names)
    }))
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
            skip_add_match: fault == Fault::SkipAddMatch,
            drop_signal: fault == Fault::DropSignal,
            broad_rule: fault == Fault::BroadRule,
            short_work: fault == Fault::ShortWork,
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
