//! The argument parsers of the program adapters (Python, Ruby, C: each its
//! own) against the Rust contract's own list of commands and flags, as
//! `dbus-matrix canon` exports it (harness::canon, from contract.rs's clap
//! definition). Every program of matrix.toml, and a Rust adapter as the
//! reference that shows each probe holds for the contract itself, must:
//! take every flag of each command (all at once, stopped by a transport
//! conflict or an unknown scenario, never by a flag), refuse an unknown flag
//! and another command's flags, name each missing required flag, and refuse
//! an unknown command, all with exit status 2.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::common::{bin_dir, repo_matrix, repo_root, text, unavailable_here};

/// Every program adapter of matrix.toml (`program = …`), by id; but a row
/// this build mode cannot have (ruby-dbus in Nix: `unavailable_here`), which
/// cannot start there and which the runner never runs there.
fn programs() -> Vec<(String, PathBuf)> {
    let m: toml::Value = toml::from_str(&std::fs::read_to_string(repo_matrix()).unwrap()).unwrap();
    let adapters = m["adapter"].as_array().expect("matrix.toml has [[adapter]] entries");
    let found: Vec<_> = adapters
        .iter()
        .filter_map(|a| {
            let program = a.get("program")?.as_str()?;
            let dir = a["path"].as_str().unwrap();
            Some((
                a["id"].as_str().unwrap().to_string(),
                repo_root().join(dir).join(program),
            ))
        })
        .collect();
    assert!(
        found.len() >= 5,
        "matrix.toml lists the Python, Ruby and C programs: {found:?}"
    );
    found
        .into_iter()
        .filter(|(id, _)| unavailable_here(id).is_none())
        .collect()
}

struct Flag {
    name: String,
    required: bool,
    value: String,
}

struct Cmd {
    name: String,
    flags: Vec<Flag>,
}

fn contract() -> Vec<Cmd> {
    let canon = harness::canon::canon();
    canon["contract"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| Cmd {
            name: c["name"].as_str().unwrap().into(),
            flags: c["flags"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| Flag {
                    name: f["name"].as_str().unwrap().into(),
                    required: f["required"].as_bool().unwrap(),
                    // A valid value: the last choice, the default, or 1 (a count, a path, a name).
                    value: f["choices"]
                        .as_array()
                        .and_then(|c| c.last())
                        .or(f.get("default"))
                        .and_then(Value::as_str)
                        .unwrap_or("1")
                        .into(),
                })
                .collect(),
        })
        .collect()
}

fn run(program: &Path, args: &[String]) -> Output {
    crate::common::adapter_command(program)
        .args(args)
        .env(
            "DBUS_MATRIX_PROGRAM_BUILD_DIR",
            crate::common::workspace().join("target/programs"),
        )
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", program.display()))
}

fn arg(name: &str, value: &str) -> String {
    format!("--{name}={value}")
}

const SCENARIO: &str = "no/such-scenario";

/// Every probe against one program; the failures, one line each.
fn probe(id: &str, program: &Path, commands: &[Cmd]) -> Vec<String> {
    let mut failures = Vec::new();
    let mut expect = |what: String, args: Vec<String>, code: i32, needle: &str| {
        let o = run(program, &args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        if o.status.code() != Some(code) || !stderr.contains(needle) {
            failures.push(format!(
                "{id}: {what}: `{}` gave {:?}, expected {code} with {needle:?} on stderr: {}",
                args.join(" "),
                o.status.code(),
                text(&o).lines().take(4).collect::<Vec<_>>().join(" | ")
            ));
        }
    };
    let all_flags: Vec<&str> = {
        let mut v: Vec<&str> = commands
            .iter()
            .flat_map(|c| c.flags.iter().map(|f| f.name.as_str()))
            .collect();
        v.sort();
        v.dedup();
        v
    };
    for c in commands {
        let takes = |name: &str| c.flags.iter().any(|f| f.name == name);
        let value = |f: &Flag| {
            if f.name == "scenario" {
                SCENARIO.to_string()
            } else {
                f.value.clone()
            }
        };
        // 1. Every flag of the command at once: a transport conflict (both
        // kinds given) or the unknown scenario must stop it, never a flag.
        let mut every = vec![c.name.clone()];
        every.extend(c.flags.iter().map(|f| arg(&f.name, &value(f))));
        if takes("p2p-socket") {
            expect(
                format!("{} takes all its flags", c.name),
                every,
                2,
                "cannot be used with",
            );
        } else if takes("scenario") {
            expect(format!("{} takes all its flags", c.name), every, 1, SCENARIO);
        } else {
            expect(format!("{} takes all its flags", c.name), every, 0, "");
        }
        // 2. A flag no command has.
        expect(
            format!("{} refuses an unknown flag", c.name),
            vec![c.name.clone(), arg("no-such-flag", "1")],
            2,
            "",
        );
        // 4. Each required flag left out (the bus transport given, so nothing
        // else is missing): named on stderr.
        for missing in c.flags.iter().filter(|f| f.required) {
            let mut args = vec![c.name.clone()];
            args.extend(
                c.flags
                    .iter()
                    .filter(|f| f.name != missing.name && f.name != "p2p-socket")
                    .map(|f| arg(&f.name, &value(f))),
            );
            expect(
                format!("{} requires --{}", c.name, missing.name),
                args,
                2,
                &missing.name,
            );
        }
    }
    // 3. Each flag, alone, given to a command that does not take it (the
    // commands taken in turn: one call per flag keeps the test quick).
    for (turn, flag) in all_flags.iter().enumerate() {
        let others: Vec<&Cmd> = commands
            .iter()
            .filter(|c| c.flags.iter().all(|f| f.name != *flag))
            .collect();
        let c = others[turn % others.len()];
        expect(
            format!("{} refuses --{flag}", c.name),
            vec![c.name.clone(), arg(flag, "1")],
            2,
            "",
        );
    }
    expect("an unknown command".into(), vec!["no-such-command".into()], 2, "");
    failures
}

#[test]
fn every_program_parses_the_contracts_commands_and_flags() {
    let commands = contract();
    assert_eq!(commands.len(), 8, "the contract's commands");
    // The reference beside them: the probes must hold for the contract's own parser.
    let mut all = programs();
    all.push(("adapter-raw (the Rust reference)".into(), bin_dir().join("adapter-raw")));
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = all
            .into_iter()
            .map(|(id, path)| {
                let commands = &commands;
                s.spawn(move || probe(&id, &path, commands))
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(
        failures.is_empty(),
        "{} parser deviations:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
