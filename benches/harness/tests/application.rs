//! The canon of the application families (`harness/src/ipc/application.rs`): a sink
//! that received exactly the op's bytes once digests to what the op expects, and a
//! sink that received them shortened, twice, or not yet does not; a round over k
//! connections is a `call/in-flight/<k>` batch.

use harness::ipc::application::{self as app, AppOp, SharedTally, SinkTally};
use harness::ipc::{self, IpcOp};

fn tally_of(calls: &[Vec<u8>]) -> u64 {
    let mut t = SinkTally::default();
    for c in calls {
        t.receive(c);
    }
    t.take()
}

#[test]
fn one_whole_call_digests_to_the_expected_digest_and_nothing_else_does() {
    for n in app::IN_ONLY_SIZES {
        let expected = IpcOp::App(AppOp::InOnlyBytes(n)).expected_digest("");
        let payload = ipc::echo_payload(n);
        assert_eq!(tally_of(std::slice::from_ref(&payload)), expected);
        // Not yet received (the tally read before the server got the call).
        assert_ne!(tally_of(&[]), expected);
        // One byte short, one byte changed, received twice.
        assert_ne!(tally_of(&[payload[..n - 1].to_vec()]), expected);
        let mut changed = payload.clone();
        changed[n / 2] ^= 1;
        assert_ne!(tally_of(&[changed]), expected);
        assert_ne!(tally_of(&[payload.clone(), payload.clone()]), expected);
        // Two halves are not the whole: each call's bytes are digested apart.
        assert_ne!(
            tally_of(&[payload[..n / 2].to_vec(), payload[n / 2..].to_vec()]),
            expected
        );
        // Not the echo's digest either: the count of calls is part of it.
        assert_ne!(IpcOp::EchoBytes(n).expected_digest(""), expected);
    }
}

#[test]
fn taking_the_tally_starts_it_again() {
    let tally = SharedTally::default();
    let payload = ipc::echo_payload(16384);
    let expected = IpcOp::App(AppOp::InOnlyBytes(16384)).expected_digest("");
    for _ in 0..3 {
        app::record(&tally, &payload);
        assert_eq!(app::take_tally(&tally), expected);
    }
    assert_eq!(app::take_tally(&tally), tally_of(&[]));
}

#[test]
fn a_round_over_k_connections_is_an_in_flight_batch_of_k() {
    for k in app::CONNECTION_COUNTS {
        let op = IpcOp::App(AppOp::Connections(k));
        assert_eq!(op.expected_digest(""), IpcOp::InFlight(k).expected_digest(""));
        let replies: Vec<i32> = (0..k).map(|i| ipc::in_flight_arg(i) + 1).collect();
        assert_eq!(ipc::in_flight_digest(replies.clone()), op.expected_digest(""));
        // A connection skipped, or every call answered with the first reply.
        assert_ne!(ipc::in_flight_digest(replies[..k - 1].to_vec()), op.expected_digest(""));
        if k > 1 {
            assert_ne!(ipc::in_flight_digest(vec![replies[0]; k]), op.expected_digest(""));
        }
    }
}

#[test]
fn the_families_are_opt_in_and_only_the_in_only_call_needs_a_bus() {
    for op in [AppOp::InOnlyBytes(16384), AppOp::Connections(20)] {
        assert!(IpcOp::App(op).opt_in());
        assert_eq!(
            ipc::not_implemented(IpcOp::App(op)),
            format!("this adapter does not implement {} yet", op.family())
        );
    }
    assert!(ipc::needs_bus(IpcOp::App(AppOp::InOnlyBytes(16384))).is_some());
    assert!(ipc::needs_bus(IpcOp::App(AppOp::Connections(20))).is_none());
    for (id, op) in [
        ("call/in-only-bytes/16384", AppOp::InOnlyBytes(16384)),
        ("call/connections-in-process/1", AppOp::Connections(1)),
        ("call/connections-in-process/20", AppOp::Connections(20)),
    ] {
        let s = harness::scenario::find(id).unwrap_or_else(|| panic!("no scenario {id}"));
        assert_eq!(s.ipc_op(), Some(IpcOp::App(op)), "{id}");
    }
}

mod proxied {
    use harness::ipc::application::AppOp;
    use harness::ipc::proxied::{self as px, answer, proxied_xml, ProxyServer, Reply};
    use harness::ipc::standard::{UNKNOWN_INTERFACE, UNKNOWN_METHOD, UNKNOWN_OBJECT};
    use harness::ipc::{self, IpcOp};
    use harness::wire::Value;

    fn s(v: &str) -> Value {
        Value::Str(v.into())
    }

    fn error_name(r: &Reply) -> Option<&'static str> {
        match r {
            Reply::Error { name, .. } => Some(name),
            Reply::Return { .. } => None,
        }
    }

    #[test]
    fn both_servers_answer_the_call_and_only_one_answers_properties() {
        for server in ProxyServer::ALL {
            let void = answer(server, px::PROXIED_PATH, Some(px::PROXIED_INTERFACE), "Void", &[]);
            assert_eq!(
                void,
                Reply::Return {
                    values: vec![],
                    counted: true
                },
                "{server:?}"
            );
            // A call without INTERFACE means the proxied interface's member.
            assert_eq!(answer(server, px::PROXIED_PATH, None, "Void", &[]), void);
            let get_all = answer(
                server,
                px::PROXIED_PATH,
                Some("org.freedesktop.DBus.Properties"),
                "GetAll",
                &[s(px::PROXIED_INTERFACE)],
            );
            let get = answer(
                server,
                px::PROXIED_PATH,
                Some("org.freedesktop.DBus.Properties"),
                "Get",
                &[s(px::PROXIED_INTERFACE), s(px::PROXIED_PROPERTY)],
            );
            match server {
                ProxyServer::Props => {
                    let count = Value::Variant(Box::new(Value::U32(px::PROXIED_COUNT)));
                    assert_eq!(
                        get,
                        Reply::Return {
                            values: vec![count.clone()],
                            counted: false
                        }
                    );
                    let Reply::Return { values, counted: false } = &get_all else {
                        panic!("{get_all:?}")
                    };
                    assert_eq!(
                        values,
                        &vec![Value::Array(
                            "{sv}".into(),
                            vec![Value::DictEntry(Box::new(s(px::PROXIED_PROPERTY)), Box::new(count))]
                        )]
                    );
                }
                ProxyServer::NoProps => {
                    assert_eq!(error_name(&get_all), Some(UNKNOWN_INTERFACE));
                    assert_eq!(error_name(&get), Some(UNKNOWN_INTERFACE));
                }
            }
            let xml = answer(server, px::PROXIED_PATH, None, "Introspect", &[]);
            assert_eq!(
                xml,
                Reply::Return {
                    values: vec![Value::Str(proxied_xml(server))],
                    counted: false
                }
            );
            assert_eq!(
                error_name(&answer(server, "/elsewhere", None, "Void", &[])),
                Some(UNKNOWN_OBJECT)
            );
            assert_eq!(
                error_name(&answer(
                    server,
                    px::PROXIED_PATH,
                    Some(px::PROXIED_INTERFACE),
                    "Nope",
                    &[]
                )),
                Some(UNKNOWN_METHOD)
            );
        }
    }

    #[test]
    fn the_introspection_lists_properties_only_where_they_are_served() {
        let with = proxied_xml(ProxyServer::Props);
        let without = proxied_xml(ProxyServer::NoProps);
        for x in [&with, &without] {
            assert!(
                x.contains("<interface name=\"io.killing.spark.Proxied\">\n    <method name=\"Void\"/>"),
                "{x}"
            );
            assert!(x.contains("org.freedesktop.DBus.Introspectable"));
        }
        assert!(with.contains("<property name=\"Count\" type=\"u\" access=\"read\"/>"));
        assert!(with.contains("<interface name=\"org.freedesktop.DBus.Properties\">"));
        assert!(!without.contains("property") && !without.contains("org.freedesktop.DBus.Properties"));
    }

    #[test]
    fn one_op_is_one_counted_call_on_a_bus() {
        for server in ProxyServer::ALL {
            let op = IpcOp::App(AppOp::ProxyCreate(server));
            assert!(op.opt_in());
            assert!(ipc::needs_bus(op).is_some());
            let mut t = harness::ipc::application::SinkTally::default();
            t.receive(&[]);
            assert_eq!(t.take(), op.expected_digest(""));
            // No call, or two calls, is not one.
            assert_ne!(t.take(), op.expected_digest(""));
            t.receive(&[]);
            t.receive(&[]);
            assert_ne!(t.take(), op.expected_digest(""));
            let id = format!("proxy/create-call/{}", server.slug());
            assert_eq!(harness::scenario::find(&id).and_then(|s| s.ipc_op()), Some(op), "{id}");
        }
    }
}
