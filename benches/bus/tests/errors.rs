//! A missing or broken daemon is a clear error, never a hang. These tests set
//! process environment variables, so they live in their own test binary and
//! run one after another.

use std::time::{Duration, Instant};

use bus::{BusKind, BusOptions};

#[test]
fn missing_and_broken_daemons() {
    // A private temporary directory: what a failed start leaves there is this test's.
    let tmp = std::env::temp_dir().join(format!("dbus-matrix-errors-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    // SAFETY: this test binary has a single test; nothing else reads the environment concurrently.
    unsafe { std::env::set_var("TMPDIR", &tmp) };
    unsafe { std::env::set_var("DBUS_MATRIX_BUSD", "/nonexistent/busd") };
    let err = bus::start(BusKind::Busd, &BusOptions::default())
        .err()
        .expect("must fail")
        .to_string();
    assert!(
        err.contains("busd not found") && err.contains("cargo install --locked busd@"),
        "{err}"
    );
    // matrix.toml names the version; nixpkgs has no busd, the flake builds it.
    assert!(
        err.contains("matrix.toml") && err.contains("nix/crate-bus.nix"),
        "{err}"
    );

    // A daemon that exits at once: an error naming it, quickly.
    unsafe { std::env::set_var("DBUS_MATRIX_DBUS_DAEMON", "/bin/false") };
    let start = Instant::now();
    let opts = BusOptions {
        ready_timeout: Duration::from_secs(15),
        ..BusOptions::default()
    };
    let err = bus::start(BusKind::DbusDaemon, &opts)
        .err()
        .expect("must fail")
        .to_string();
    assert!(
        err.contains("dbus-daemon did not become ready") && err.contains("exited"),
        "{err}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "waited for the timeout instead of noticing the exit"
    );

    // Failed broker starts remove their directory like any other failed start:
    // a launcher that exits at once, and a socket path too long to bind (a
    // deep $TMPDIR; the broker's listening socket is bound here, not by it).
    unsafe { std::env::set_var("DBUS_MATRIX_DBUS_BROKER_LAUNCH", "/bin/false") };
    let err = bus::start(BusKind::DbusBroker, &opts)
        .err()
        .expect("must fail")
        .to_string();
    // (Without unshare, as in the Nix sandbox, it fails earlier: not found.)
    assert!(err.contains("dbus-broker"), "{err}");
    unsafe { std::env::remove_var("DBUS_MATRIX_DBUS_BROKER_LAUNCH") };
    let deep = tmp.join("d".repeat(110));
    std::fs::create_dir_all(&deep).unwrap();
    unsafe { std::env::set_var("TMPDIR", &deep) };
    let err = bus::start(BusKind::DbusBroker, &opts).err().expect("must fail");
    unsafe { std::env::set_var("TMPDIR", &tmp) };
    let left: Vec<_> = std::fs::read_dir(&deep).unwrap().flatten().map(|e| e.path()).collect();
    assert!(left.is_empty(), "a failed start ({err}) left {left:?}");
    std::fs::remove_dir(&deep).unwrap();
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().flatten().map(|e| e.path()).collect();
    assert!(left.is_empty(), "failed starts left {left:?}");
    let _ = std::fs::remove_dir_all(&tmp);

    assert!("dbus-brokr".parse::<BusKind>().is_err());
}
