//! Issue 31, large byte arrays: where each bus daemon stops a big message,
//! and what it says. Every private bus is configured with the spec's
//! `max_message_size` of 128 MiB (`bus::config::LIMITS`), and the spec allows
//! one array at most 64 MiB, so no `ay` argument reaches a daemon's message
//! limit: the `call/echo-bytes` sizes stop at 16 MiB, and this test sends
//! the runner's own signals past both limits to each daemon and records its
//! answer (the connection goes on, or is closed) with its log.
//!
//! Measured here (Debian 12: dbus-daemon 1.14, dbus-broker 33, busd 0.6.1):
//! all three carry 16 MiB and 64 MiB arrays; an array of 64 MiB + 4 bytes
//! (over the spec's limit) is carried by dbus-broker, while dbus-daemon and
//! busd close the connection; a message over 128 MiB makes all three close
//! the connection as soon as its header is read (the sender gets EPIPE while
//! still writing). None of them sends an error or logs a line: the client
//! sees the connection end.

use std::time::Duration;

use bus::raw_client::RawConnection;
use bus::BusKind;
use harness::wire::{self, Value};

const MIB: usize = 1 << 20;

/// A signal whose body is one `ay` per size (each `size` bytes), built by
/// hand: the reference encoder would hold every byte as a `Value`.
fn big_signal(serial: u32, sizes: &[usize]) -> Vec<u8> {
    let fields = vec![
        (wire::FIELD_PATH, Value::ObjectPath("/org/dbusmatrix/Big".into())),
        (wire::FIELD_INTERFACE, Value::Str("org.dbusmatrix.Big".into())),
        (wire::FIELD_MEMBER, Value::Str("Big".into())),
        (wire::FIELD_SIGNATURE, Value::Signature("ay".repeat(sizes.len()))),
    ];
    let mut m = wire::encode_message(wire::MESSAGE_SIGNAL, wire::FLAG_NO_REPLY_EXPECTED, serial, &fields, &[]);
    assert_eq!(m[0], b'l', "little-endian header");
    while !m.len().is_multiple_of(8) {
        m.push(0);
    }
    let body_start = m.len();
    for &n in sizes {
        while !(m.len() - body_start).is_multiple_of(4) {
            m.push(0);
        }
        m.extend_from_slice(&(n as u32).to_le_bytes());
        m.extend((0..n).map(|i| (i % 251) as u8));
    }
    let body_len = (m.len() - body_start) as u32;
    m[4..8].copy_from_slice(&body_len.to_le_bytes());
    m
}

/// What one daemon did with one message: `Ok` the connection still answers
/// (`GetId`), `Err` why not.
fn send_then_ping(socket: &std::path::Path, message: &[u8]) -> Result<(), String> {
    let mut c = RawConnection::connect(socket, Duration::from_secs(30)).map_err(|e| format!("{e:#}"))?;
    c.hello().map_err(|e| format!("{e:#}"))?;
    c.send(message).map_err(|e| format!("sending: {e:#}"))?;
    c.bus_call("GetId", &[]).map(|_| ()).map_err(|e| format!("{e:#}"))
}

#[test]
fn each_daemon_carries_the_largest_array_and_refuses_a_message_over_its_limit() {
    // (what, the arrays, whether each daemon carries it: dbus-daemon, dbus-broker, busd)
    let cases: [(&str, Vec<usize>, [bool; 3]); 4] = [
        ("one ay of 16 MiB", vec![16 * MIB], [true; 3]),
        ("one ay of 64 MiB (the spec's largest array)", vec![64 * MIB], [true; 3]),
        (
            "one ay of 64 MiB + 4 (over the spec's array limit)",
            vec![64 * MIB + 4],
            [false, true, false],
        ),
        (
            "two ay of 64 MiB (over the 128 MiB message limit)",
            vec![64 * MIB, 64 * MIB],
            [false; 3],
        ),
    ];
    let mut table = Vec::new();
    let mut wrong = Vec::new();
    for (k, kind) in [BusKind::DbusDaemon, BusKind::DbusBroker, BusKind::Busd]
        .into_iter()
        .enumerate()
    {
        let bus = match bus::start(kind, &bus::BusOptions::default()) {
            Ok(b) => b,
            Err(e) => panic!("starting {}: {e}", kind.id()),
        };
        for (what, sizes, carried) in &cases {
            let message = big_signal(0x7000_0000, sizes);
            let outcome = send_then_ping(bus.socket_path(), &message);
            table.push(format!(
                "{} | {what} ({} bytes) | {}",
                kind.id(),
                message.len(),
                match &outcome {
                    Ok(()) => "carried".to_string(),
                    Err(why) => format!("refused: {}", why.replace('\n', " ")),
                }
            ));
            if outcome.is_ok() != carried[k] {
                wrong.push(format!("{} {what}: {outcome:?}", kind.id()));
            }
        }
        // What the daemon logged meanwhile (nothing about the refused messages, here).
        let log = bus.log();
        table.push(format!("{} log: {}", kind.id(), log.trim().replace('\n', " / ")));
        bus.stop().unwrap();
    }
    eprintln!("{}", table.join("\n"));
    assert!(wrong.is_empty(), "{}\n{}", wrong.join("\n"), table.join("\n"));
}
