//! A missing or broken daemon is a clear error, never a hang. These tests set
//! process environment variables, so they live in their own test binary and
//! run one after another.

use std::time::{Duration, Instant};

use bus::{BusKind, BusOptions};

#[test]
fn missing_and_broken_daemons() {
    // SAFETY: this test binary has a single test; nothing else reads the environment concurrently.
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

    assert!("dbus-brokr".parse::<BusKind>().is_err());
}
