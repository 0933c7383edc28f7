//! Each daemon starts privately, answers, enforces the policy, and leaves
//! nothing behind. These need the daemons installed (scripts/install-deps-debian.sh).

use std::path::PathBuf;
use std::time::Duration;

use bus::raw_client::RawConnection;
use bus::{BusKind, BusOptions};
use harness::wire::Value;

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.contains(") Z "))
        .unwrap_or(false)
}

fn processes_mentioning(needle: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
        .filter(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&cmd).contains(needle) && alive(*pid)
        })
        .collect()
}

const SERVICE: &str = "io.killing.spark.Bench.test";

fn exercise(kind: BusKind) {
    let opts = BusOptions {
        services: vec![SERVICE.into()],
        ..BusOptions::default()
    };
    let bus = bus::start(kind, &opts).unwrap_or_else(|e| panic!("{kind}: {e}"));
    assert!(!bus.version().is_empty());
    assert!(bus.address().starts_with("unix:path="));
    let dir: PathBuf = bus.socket_path().parent().unwrap().to_path_buf();
    let mode = std::fs::metadata(&dir).unwrap().permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
        0o700,
        "{kind}: private dir not 0700"
    );
    let pids = bus.pids();
    assert!(!pids.is_empty(), "{kind}: no processes");

    let mut a = RawConnection::connect(bus.socket_path(), Duration::from_secs(5)).unwrap();
    let name = a.hello().unwrap();
    assert!(name.starts_with(':'), "{kind}: unique name {name}");
    let names = a.bus_call("ListNames", &[]).unwrap();
    let Some(Value::Array(_, list)) = names.values.first() else {
        panic!("{kind}: ListNames reply {names:?}")
    };
    assert!(list.contains(&Value::Str(name.clone())), "{kind}: own name not listed");
    // A benchmark name may be owned.
    let r = a
        .bus_call("RequestName", &[Value::Str(SERVICE.into()), Value::U32(4)])
        .unwrap();
    assert_eq!(
        r.values.first(),
        Some(&Value::U32(1)),
        "{kind}: RequestName of a benchmark name"
    );
    // Another connection may call it (the policy lets the benchmark through).
    let server = std::thread::spawn(move || {
        let call = a.next_call().unwrap();
        a.reply(&call, &[Value::U32(7)]).unwrap();
        a
    });
    let mut b = RawConnection::connect(bus.socket_path(), Duration::from_secs(5)).unwrap();
    b.hello().unwrap();
    let reply = b
        .call(SERVICE, "/io/killing/spark", "io.killing.spark.Bench", "Ping", &[])
        .unwrap_or_else(|e| panic!("{kind}: calling the benchmark service: {e:#}"));
    assert_eq!(reply.values, vec![Value::U32(7)], "{kind}: reply");
    drop(server.join().unwrap());
    drop(b);

    bus.stop().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    for pid in pids {
        assert!(!alive(pid), "{kind}: process {pid} survived");
    }
    assert!(!dir.exists(), "{kind}: {} survived", dir.display());
    assert!(
        processes_mentioning(&dir.display().to_string()).is_empty(),
        "{kind}: a process still names the dir"
    );
}

#[test]
fn dbus_daemon_lifecycle() {
    exercise(BusKind::DbusDaemon);
}

#[test]
fn dbus_broker_lifecycle() {
    exercise(BusKind::DbusBroker);
}

#[test]
fn busd_lifecycle() {
    exercise(BusKind::Busd);
}

#[test]
fn dbus_daemon_refuses_names_outside_the_benchmark_prefix() {
    let bus = bus::start(BusKind::DbusDaemon, &BusOptions::default()).unwrap();
    let mut c = RawConnection::connect(bus.socket_path(), Duration::from_secs(5)).unwrap();
    c.hello().unwrap();
    let err = c
        .bus_call(
            "RequestName",
            &[Value::Str("org.example.NotOurs".into()), Value::U32(4)],
        )
        .unwrap_err();
    assert!(format!("{err:#}").contains("AccessDenied"), "{err:#}");
}

#[test]
fn dropping_a_bus_stops_it() {
    let bus = bus::start(BusKind::DbusDaemon, &BusOptions::default()).unwrap();
    let pids = bus.pids();
    let socket = bus.socket_path().to_path_buf();
    drop(bus);
    std::thread::sleep(Duration::from_millis(50));
    assert!(pids.iter().all(|p| !alive(*p)));
    assert!(!socket.exists());
}
