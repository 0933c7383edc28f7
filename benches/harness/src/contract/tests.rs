//! Every command survives `to_args` then parsing: the runner's arguments and
//! the adapter's parser cannot drift apart.

use std::path::PathBuf;

use super::*;

fn transports() -> Vec<Transport> {
    vec![
        Transport::Bus {
            address: "unix:path=/tmp/bus dir/socket,guid=abc".into(),
            socket: PathBuf::from("/tmp/bus dir/socket"),
            service_name: "io.killing.spark.Bench.zbus_6".into(),
        },
        Transport::P2p {
            socket: PathBuf::from("/tmp/scratch/-odd name.sock"),
        },
    ]
}

/// Every variant; those with an optional transport without and with each kind.
fn every_command() -> Vec<Command> {
    let mut all = vec![
        Command::List,
        Command::Emit {
            scenario: "marshal/mixed".into(),
        },
        // A value that looks like a flag must stay a value.
        Command::Demarshal {
            scenario: "--scenario".into(),
        },
    ];
    let optional: Vec<Option<Transport>> = std::iter::once(None)
        .chain(transports().into_iter().map(Some))
        .collect();
    for transport in &optional {
        for ack_fifo in [None, Some(PathBuf::from("/tmp/ack fifo"))] {
            all.push(Command::Bench(Bench {
                scenario: "call/void".into(),
                result: "/tmp/out/measurement.json".into(),
                criterion_dir: ack_fifo.as_ref().map(|_| PathBuf::from("/tmp/criterion")),
                settings: CriterionSettings {
                    sample_size: 11,
                    warm_up: 0.1 + 0.2, // not a short decimal: the float must round-trip exactly
                    measurement: 2.5,
                    nresamples: 1001,
                    // both timers, with and without a cut budget
                    timer: if ack_fifo.is_some() {
                        Timer::Direct
                    } else {
                        Timer::Criterion
                    },
                    budget: ack_fifo.as_ref().map(|_| 0.7 + 0.1),
                },
                transport: transport.clone(),
                ack_fifo: ack_fifo.clone(),
            }));
            all.push(Command::Repeat(Repeat {
                scenario: "signal/fanout/10".into(),
                iterations: u64::MAX,
                windows: 2,
                transport: transport.clone(),
                ack_fifo,
            }));
        }
    }
    for transport in transports() {
        all.push(Command::Serve {
            transport: transport.clone(),
        });
        all.push(Command::ColdStart {
            transport: transport.clone(),
        });
        all.push(Command::Subscribe(Subscribe {
            transport,
            connections: 100,
            extra_rules: 10_000,
            ack_fifo: "/tmp/ack".into(),
        }));
    }
    all
}

fn parse(args: Vec<OsString>) -> Result<Command, clap::Error> {
    Command::try_parse_from(std::iter::once(OsString::from("adapter")).chain(args))
}

#[test]
fn every_command_round_trips() {
    let all = every_command();
    assert_eq!(all.len(), 3 + 3 * 2 * 2 + 2 * 3);
    for command in all {
        let args = command.to_args();
        let parsed = parse(args.clone()).unwrap_or_else(|e| panic!("{args:?} does not parse: {e}"));
        assert_eq!(parsed, command, "{args:?}");
    }
}

#[test]
fn the_defaults_are_the_parser_defaults() {
    let parsed = parse(vec![
        "bench".into(),
        "--scenario".into(),
        "x".into(),
        "--result".into(),
        "r".into(),
    ])
    .unwrap();
    let Command::Bench(b) = parsed else { panic!("not bench") };
    assert_eq!(b.settings, CriterionSettings::default());
    assert_eq!((b.transport, b.ack_fifo, b.criterion_dir), (None, None, None));
}

#[test]
fn an_incomplete_or_missing_transport_is_a_usage_error() {
    let half_bus = vec!["serve".into(), "--bus-address".into(), "unix:path=/x".into()];
    assert_eq!(parse(half_bus).unwrap_err().exit_code(), 2);
    let missing = parse(vec!["cold-start".into()]).unwrap_err();
    assert_eq!(missing.exit_code(), 2);
    assert!(
        missing.to_string().contains("this command needs a transport"),
        "{missing}"
    );
    assert!(missing.to_string().contains("Usage: adapter "), "{missing}");
    let both = vec![
        "cold-start".into(),
        "--p2p-socket".into(),
        "/s".into(),
        "--bus-address".into(),
        "a".into(),
    ];
    assert_eq!(parse(both).unwrap_err().exit_code(), 2);
}

#[test]
fn the_unsupported_line_gives_its_reason_back() {
    assert_eq!(unsupported_reason(&unsupported_line("no transport")), "no transport");
}

#[test]
fn bench_numbers_out_of_range_are_usage_errors_not_panics() {
    let bench = |extra: &str| -> Vec<OsString> {
        vec![
            "bench".into(),
            "--scenario=marshal/mixed".into(),
            "--result=/tmp/r".into(),
            extra.into(),
        ]
    };
    for bad in [
        "--sample-size=0",
        "--warm-up=-1",
        "--warm-up=nan",
        "--measurement=0",
        "--measurement=1e300",
        "--budget=inf",
        "--budget=-0.5",
    ] {
        let e = parse(bench(bad)).unwrap_err();
        assert_eq!(e.exit_code(), 2, "{bad}: {e}");
    }
    assert!(parse(bench("--budget=0.5")).is_ok());
}
