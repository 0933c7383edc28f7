//! The scenarios the harness knows. `matrix.toml` chooses among these ids;
//! docs/scenarios.md describes each precisely.

use std::sync::OnceLock;

use crate::ipc::{self, AppOp, IpcOp, Method, RuleKind, SubscriptionOp};
use crate::payload::{self, Body};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Plain Rust values -> complete wire bytes of the test signal.
    Marshal,
    /// Canonical wire bytes -> the library's typed values -> every field read.
    Demarshal,
    /// Talking to a service over a bus or peer to peer.
    Ipc(IpcOp),
}

/// What a demarshal adapter is told about the bytes it gets: the body's
/// shape, never its values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `count` units of `st(ts)a{si}atas`.
    Units { count: usize },
    /// One `a{sv}` whose values are all strings.
    AsvDict,
}

/// Who drives a cell. Most cells are the adapter's own `bench`; a few are
/// the runner's arrangement around an adapter scenario it already knows
/// (`Kind::Ipc` of such a scenario is the op each adapter process performs,
/// and [`Scenario::adapter_scenario`] the id the runner passes it), so that
/// no adapter needs code of its own for them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Driver {
    Adapter,
    /// K client processes (`repeat` of `call/void`) released together against one server.
    ParallelClients(usize),
    /// `signal/fanout/1` while the runner's own connections hold `n` rules of `kind`.
    MatchRules(RuleKind, usize),
}

#[derive(Debug)]
pub struct Scenario {
    pub id: String,
    pub kind: Kind,
    pub summary: String,
    pub driver: Driver,
    build_body: Option<fn() -> Body>,
}

impl Scenario {
    /// The message body of a marshal/demarshal scenario.
    pub fn body(&self) -> Body {
        (self.build_body.expect("only marshal/demarshal scenarios have a body"))()
    }

    pub fn shape(&self) -> Shape {
        match self.body() {
            Body::Units(u) => Shape::Units { count: u.len() },
            Body::AsvDict(_) => Shape::AsvDict,
        }
    }

    pub fn ipc_op(&self) -> Option<IpcOp> {
        match self.kind {
            Kind::Ipc(op) => Some(op),
            _ => None,
        }
    }

    /// The scenario id an adapter process is given for this cell: its own id,
    /// or for a runner-driven cell the adapter scenario it arranges.
    pub fn adapter_scenario(&self) -> &str {
        match self.driver {
            Driver::Adapter => &self.id,
            Driver::ParallelClients(_) => "call/void",
            Driver::MatchRules(..) => "signal/fanout/1",
        }
    }

    /// Why a runner-driven cell cannot run peer to peer (whatever the library).
    pub fn runner_needs_bus(&self) -> Option<&'static str> {
        match self.driver {
            Driver::Adapter => None,
            Driver::ParallelClients(_) => Some(
                "parallel clients are measured against one bus: peer to peer each client would \
                 need a server connection of its own",
            ),
            Driver::MatchRules(..) => {
                Some("match rules are held by a bus (AddMatch); peer to peer there is no bus to hold them")
            }
        }
    }
}

/// (name after the slash, body builder, summary) of each codec payload.
type CodecPayload = (&'static str, fn() -> Body, &'static str);

fn codec_scenarios(out: &mut Vec<Scenario>) {
    let payloads: [CodecPayload; 4] = [
        (
            "mixed",
            payload::mixed,
            "10 units of st(ts)a{si}atas; dict A..E, 15 x u64::MAX, [\"\"]",
        ),
        (
            "big-array",
            payload::big_array,
            "1 unit with an array of 10240 u64 zeros",
        ),
        ("str-array", payload::str_array, "1 unit with an array of 10240 strings"),
        (
            "asv-dict",
            payload::asv_dict,
            "a{sv} of 10240 string variants (the properties pattern)",
        ),
    ];
    for (kind, prefix) in [(Kind::Marshal, "marshal"), (Kind::Demarshal, "demarshal")] {
        for (name, build, summary) in payloads {
            out.push(Scenario {
                id: format!("{prefix}/{name}"),
                kind,
                summary: summary.to_string(),
                driver: Driver::Adapter,
                build_body: Some(build),
            });
        }
    }
}

fn ipc_scenarios(out: &mut Vec<Scenario>) {
    let mut add = |id: String, op: IpcOp, summary: String| out.push(ipc_scenario(id, op, summary, Driver::Adapter));
    for m in Method::ALL {
        add(
            format!("call/{}", m.slug()),
            IpcOp::Call(m),
            format!("round trip of {}", m.member()),
        );
    }
    for n in ipc::ECHO_SIZES.into_iter().chain(ipc::BIG_ECHO_SIZES) {
        add(
            format!("call/echo-bytes/{n}"),
            IpcOp::EchoBytes(n),
            format!("EchoBytes of {n} bytes (ay)"),
        );
    }
    for n in ipc::IN_FLIGHT_COUNTS {
        add(
            format!("call/in-flight/{n}"),
            IpcOp::InFlight(n),
            format!("{n} InOutInt calls on one connection, all sent before the first reply is awaited"),
        );
    }
    for n in ipc::fd_passing::FD_SIZES {
        add(
            format!("call/fd-passing/{n}"),
            IpcOp::FdPassing(n),
            format!("ReadFd of a {n}-byte memfd passed as a Unix fd (h): the server reads it, replies its digest"),
        );
    }
    application_scenarios(&mut add);
    add(
        "property/get".into(),
        IpcOp::PropertyGet,
        "read the a(ss) property Items".into(),
    );
    add(
        "property/get-x100".into(),
        IpcOp::PropertyGetX100,
        "100 reads of Items on one connection".into(),
    );
    for n in ipc::props::PROPS_COUNTS {
        add(
            format!("property/get-all/{n}"),
            IpcOp::PropertyGetAll(n),
            format!("one Properties.GetAll of an interface with {n} properties (s, u, b)"),
        );
    }
    for n in ipc::props::PROPS_COUNTS {
        add(
            format!("objects/get-managed-objects/{n}"),
            IpcOp::ManagedObjects(n),
            format!("one ObjectManager.GetManagedObjects returning {n} objects of 3 properties each"),
        );
    }
    add(
        "property/cold-start".into(),
        IpcOp::PropertyColdStart,
        "new process: connect, read Items, print, exit".into(),
    );
    add(
        "signal/emit-receive".into(),
        IpcOp::EmitReceive,
        "emit Ping, receive it on a second connection".into(),
    );
    for n in ipc::FANOUT_SIZES {
        add(
            format!("signal/fanout/{n}"),
            IpcOp::Fanout(n),
            format!("emit Ping until {n} subscribers got it"),
        );
    }
    for n in ipc::NONMATCHING_RULE_COUNTS {
        add(
            format!("signal/nonmatching-rules/{n}"),
            IpcOp::NonmatchingRules(n),
            format!("emit Ping to one subscriber while {n} non-matching rules are installed"),
        );
    }
    subscription_scenarios(&mut add);
    add(
        "connect/hello".into(),
        IpcOp::ConnectHello,
        "connect: SASL + Hello, disconnect".into(),
    );
    for n in ipc::IDLE_CONNECTION_COUNTS {
        add(
            format!("connect/idle-connections/{n}"),
            IpcOp::IdleConnections(n),
            format!("open {n} connections (SASL + Hello) and hold them idle"),
        );
    }
    add(
        "connect/marshal-send".into(),
        IpcOp::ConnectMarshalSend,
        "connect, build and send the marshal/mixed signal".into(),
    );
    for n in ipc::ECHO_SIZES.into_iter().chain(ipc::BIG_ECHO_SIZES) {
        add(
            format!("baseline/raw-socket/{n}"),
            IpcOp::RawSocket(n),
            format!("{n} bytes ping-ponged over a Unix socket pair (the floor)"),
        );
    }
}

/// The subscription families of issue 31 (`ipc/subscription.rs`).
fn subscription_scenarios(add: &mut impl FnMut(String, IpcOp, String)) {
    add(
        "signal/match-churn".into(),
        IpcOp::Subscription(SubscriptionOp::MatchChurn),
        "AddMatch then RemoveMatch of one rule, both replies awaited".into(),
    );
    for n in ipc::subscription::BURST_SIZES {
        add(
            format!("signal/burst/{n}"),
            IpcOp::Subscription(SubscriptionOp::Burst(n)),
            format!("emit {n} Pings while the subscribed connection does not read, then read them all"),
        );
    }
    for scope in ipc::subscription::RuleScope::ALL {
        add(
            format!("signal/delivered/{}", scope.slug()),
            IpcOp::Subscription(SubscriptionOp::Delivered(scope)),
            format!(
                "emit 9 non-matching Pings and 1 matching; a {} subscription delivers {}",
                scope.slug(),
                scope.delivered()
            ),
        );
    }
    for n in ipc::storm::STORM_SIZES {
        add(
            format!("property/changed-storm/{n}"),
            IpcOp::Subscription(SubscriptionOp::PropertyStorm(n)),
            format!(
                "emit {n} PropertiesChanged of one property into a caching proxy, which must end with the last value"
            ),
        );
    }
    for scope in ipc::subscription::RuleScope::ALL {
        add(
            format!("signal/name-owner-churn/{}", scope.slug()),
            IpcOp::Subscription(SubscriptionOp::NameOwnerChurn(scope)),
            format!(
                "request and release a name 10 times under a {} NameOwnerChanged subscription",
                scope.slug()
            ),
        );
    }
}

/// How applications use a library (issue 31, items 10, 5 and 6: `ipc/application.rs`).
fn application_scenarios(add: &mut impl FnMut(String, IpcOp, String)) {
    use ipc::application as app;
    for n in app::IN_ONLY_SIZES {
        add(
            format!("call/in-only-bytes/{n}"),
            IpcOp::App(AppOp::InOnlyBytes(n)),
            format!("SinkBytes of {n} bytes (ay in, nothing out) to a service of the same process, through the bus"),
        );
    }
    for k in app::CONNECTION_COUNTS {
        add(
            format!("call/connections-in-process/{k}"),
            IpcOp::App(AppOp::Connections(k)),
            format!("{k} connections in one process, one InOutInt call on each in turn"),
        );
    }
    for server in ipc::proxied::ProxyServer::ALL {
        add(
            format!("proxy/create-call/{}", server.slug()),
            IpcOp::App(AppOp::ProxyCreate(server)),
            format!(
                "build a proxy and make one call, against an object {} the Properties interface",
                if server == ipc::proxied::ProxyServer::Props {
                    "with"
                } else {
                    "without"
                }
            ),
        );
    }
    for n in ipc::startup::STARTUP_SIZES {
        add(
            format!("proxy/startup/{n}"),
            IpcOp::App(AppOp::Startup(n)),
            format!("introspect a root, then introspect, parse, build a proxy of and call each of its {n} children"),
        );
    }
}

fn ipc_scenario(id: String, op: IpcOp, summary: String, driver: Driver) -> Scenario {
    Scenario {
        id,
        kind: Kind::Ipc(op),
        summary,
        driver,
        build_body: None,
    }
}

/// The cells the runner arranges around adapter scenarios ([`Driver`]).
fn runner_driven_scenarios(out: &mut Vec<Scenario>) {
    for k in ipc::PARALLEL_CLIENTS {
        out.push(ipc_scenario(
            format!("call/parallel-clients/{k}"),
            IpcOp::Call(Method::Void),
            format!("{k} client processes calling Void against one server, released together"),
            Driver::ParallelClients(k),
        ));
    }
    for kind in RuleKind::ALL {
        for n in ipc::MATCH_RULE_COUNTS {
            out.push(ipc_scenario(
                format!("signal/match-rules/{}/{n}", kind.slug()),
                IpcOp::Fanout(1),
                format!(
                    "emit Ping to one subscriber while the runner holds {n} {} rules",
                    kind.slug()
                ),
                Driver::MatchRules(kind, n),
            ));
        }
    }
}

/// Every scenario: marshal, demarshal, then IPC.
pub fn all() -> impl Iterator<Item = &'static Scenario> {
    static ALL: OnceLock<Vec<Scenario>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut v = Vec::new();
        codec_scenarios(&mut v);
        ipc_scenarios(&mut v);
        runner_driven_scenarios(&mut v);
        v
    })
    .iter()
}

pub fn find(id: &str) -> Option<&'static Scenario> {
    all().find(|s| s.id == id)
}

/// The floor cell an IPC scenario is compared with: the raw-socket ping-pong
/// of the same payload size (echo sizes), else of 1 byte (pure latency).
pub fn floor_of(op: IpcOp) -> Option<String> {
    match op {
        IpcOp::RawSocket(_) | IpcOp::PropertyColdStart => None,
        // fd passing: the same size, though its bytes never cross the socket.
        IpcOp::EchoBytes(n) | IpcOp::FdPassing(n) => Some(format!("baseline/raw-socket/{n}")),
        _ => Some("baseline/raw-socket/1".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_found() {
        let ids: Vec<_> = all().map(|s| s.id.clone()).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(ids.len(), sorted.len());
        assert_eq!(all().filter(|s| s.ipc_op().is_none()).count(), 8);
        assert!(find("marshal/mixed").is_some());
        assert!(find("marshal/nope").is_none());
        assert_eq!(find("demarshal/mixed").unwrap().shape(), Shape::Units { count: 10 });
        assert_eq!(
            find("call/echo-bytes/1024").unwrap().ipc_op(),
            Some(IpcOp::EchoBytes(1024))
        );
        assert_eq!(find("signal/fanout/100").unwrap().ipc_op(), Some(IpcOp::Fanout(100)));
    }

    #[test]
    fn runner_driven_cells_name_an_adapter_scenario() {
        let p = find("call/parallel-clients/8").unwrap();
        assert_eq!(p.driver, Driver::ParallelClients(8));
        assert_eq!(p.adapter_scenario(), "call/void");
        let m = find("signal/match-rules/sender/16384").unwrap();
        assert_eq!(m.driver, Driver::MatchRules(RuleKind::Sender, 16384));
        assert_eq!(find(m.adapter_scenario()).unwrap().ipc_op(), m.ipc_op());
        assert!(find("signal/match-rules/wildcard/131072").is_some());
        assert!(find("signal/match-rules/wildcard/262144").is_none());
        assert_eq!(find("call/void").unwrap().adapter_scenario(), "call/void");
    }

    #[test]
    fn every_floor_exists() {
        for s in all() {
            if let Some(f) = s.ipc_op().and_then(floor_of) {
                assert!(find(&f).is_some(), "{} has floor {f}", s.id);
            }
        }
    }
}
