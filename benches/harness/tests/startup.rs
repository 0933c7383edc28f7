//! The canon of `proxy/startup/<n>` (`harness::ipc::startup`): the root lists its n
//! children, each child answers its index, the server tallies Introspect and `Id`
//! calls, and the expected digest is that of a sound operation only: a child left
//! out, a wrong Id, an Introspect or a call too few each change it.

use harness::ipc::proxied::Reply;
use harness::ipc::startup::{self as st, StartupServer, StartupTally};
use harness::ipc::{AppOp, IpcOp};
use harness::wire::Value;

fn ask(n: usize, server: StartupServer, tally: &st::SharedStartupTally, path: &str, member: &str) -> Reply {
    let interface = match member {
        "Introspect" => "org.freedesktop.DBus.Introspectable",
        _ => st::STARTUP_INTERFACE,
    };
    st::answer(n, server, tally, path, Some(interface), member)
}

fn text(r: &Reply) -> String {
    match r {
        Reply::Return { values, .. } => values.first().and_then(Value::as_str).unwrap_or_default().to_string(),
        Reply::Error { name, message } => panic!("{name}: {message}"),
    }
}

/// What a sound client does against `server`: the Ids it gets and the digest of the op.
fn one_op(n: usize, server: StartupServer) -> u64 {
    let tally = st::SharedStartupTally::default();
    let root = text(&ask(n, server, &tally, st::STARTUP_ROOT, "Introspect"));
    let mut ids = Vec::new();
    for child in st::child_names_unparsed(&root) {
        let path = format!("{}/{child}", st::STARTUP_ROOT);
        assert!(text(&ask(n, server, &tally, &path, "Introspect")).contains(st::STARTUP_INTERFACE));
        match ask(n, server, &tally, &path, st::STARTUP_METHOD) {
            Reply::Return { values, .. } => match values.as_slice() {
                [Value::U32(id)] => ids.push(*id),
                other => panic!("Id replied {other:?}"),
            },
            Reply::Error { name, message } => panic!("{name}: {message}"),
        }
    }
    // In reverse: the digest does not depend on the order.
    ids.reverse();
    st::op_digest(ids, st::take_tally(&tally))
}

#[test]
fn a_sound_operation_digests_to_the_expected_value_for_every_size() {
    for n in st::STARTUP_SIZES {
        assert_eq!(one_op(n, StartupServer::Sound), st::expected_digest(n), "n = {n}");
        assert_eq!(
            IpcOp::App(AppOp::Startup(n)).expected_digest("io.killing.spark.Bench.x"),
            st::expected_digest(n)
        );
        assert_eq!(
            st::child_names_unparsed(&st::root_xml(n, StartupServer::Sound)).len(),
            n
        );
    }
    assert_ne!(st::expected_digest(20), st::expected_digest(200));
}

#[test]
fn a_broken_server_or_a_skipped_call_changes_the_digest() {
    let n = 20;
    let sound = st::expected_digest(n);
    assert_ne!(one_op(n, StartupServer::OmitLastChild), sound, "a child left out");
    assert_ne!(one_op(n, StartupServer::WrongId), sound, "a wrong Id");
    let ids: Vec<u32> = (0..n as u32).collect();
    let skipped_introspect = StartupTally { introspects: n, ids: n };
    assert_ne!(
        st::op_digest(ids.clone(), skipped_introspect),
        sound,
        "an Introspect too few"
    );
    let extra_call = StartupTally {
        introspects: n + 1,
        ids: n + 1,
    };
    assert_ne!(st::op_digest(ids, extra_call), sound, "an Id call too many");
}

#[test]
fn the_tally_counts_what_was_asked_and_starts_again_when_taken() {
    let tally = st::SharedStartupTally::default();
    let s = StartupServer::Sound;
    ask(3, s, &tally, st::STARTUP_ROOT, "Introspect");
    ask(3, s, &tally, &st::child_path(2), "Introspect");
    ask(3, s, &tally, &st::child_path(2), st::STARTUP_METHOD);
    assert_eq!(st::take_tally(&tally), StartupTally { introspects: 2, ids: 1 });
    assert_eq!(st::take_tally(&tally), StartupTally::default());
    // No such child, no Id on the root: errors, not counted.
    assert!(matches!(
        ask(3, s, &tally, &st::child_path(3), "Introspect"),
        Reply::Error { .. }
    ));
    assert!(matches!(
        ask(3, s, &tally, "/io/killing/spark/startup/o01", "Introspect"),
        Reply::Error { .. }
    ));
    assert!(matches!(
        ask(3, s, &tally, st::STARTUP_ROOT, st::STARTUP_METHOD),
        Reply::Error { .. }
    ));
    assert_eq!(st::take_tally(&tally), StartupTally::default());
}

#[test]
fn the_child_xml_declares_id_with_one_u_out_and_the_standard_interfaces() {
    let xml = st::child_xml();
    assert!(xml.contains("<interface name=\"io.killing.spark.Startup\">"));
    assert!(xml.contains("<method name=\"Id\">\n      <arg name=\"id\" type=\"u\" direction=\"out\"/>"));
    for i in [
        "org.freedesktop.DBus.Introspectable",
        "org.freedesktop.DBus.Peer",
        "org.freedesktop.DBus.Properties",
    ] {
        assert!(xml.contains(&format!("<interface name=\"{i}\">")), "{i}");
    }
}
