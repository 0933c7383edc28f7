//! The issue-31 families the ruby-dbus and libdbus-c programs run themselves
//! (`property/changed-storm/<n>` in both, `signal/name-owner-churn/<scope>`,
//! `call/connections-in-process/<k>` and `proxy/create-call/<server>` in C,
//! `proxy/startup/<n>` in Ruby): the Ruby storm check
//! (benches/programs/ruby/dbus_matrix/storm.rb) judges and words every broken
//! input as the harness's `storm::storm_digest`, and mutant programs (an update
//! lost on the way, the broad rule where arg0 was asked for, a wrong argument,
//! an uncounted call, a child never called) fail their cells, the C program's
//! and the Ruby program's own checks with the harness's wording.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use harness::ipc::storm as st;
use harness::results::CellStatus;
use serde_json::{json, Value};

use crate::common::*;

const STORM: &str = "property/changed-storm/100";
const C: &str = "libdbus-c-1.14";
const RUBY: &str = "ruby-dbus-0.16";
const C_HOLDER: &str = "the program (libdbus has no property cache)";
const RUBY_HOLDER: &str = "the program (ruby-dbus has no property cache)";

/// The harness's verdict on what a storm's subscriber kept.
fn harness_verdict(received: usize, updates: &[i32], n: usize, holder: &'static str) -> Value {
    let seen = st::StormSeen {
        received,
        updates: updates.to_vec(),
        last: updates.last().copied(),
        holder,
    };
    match st::storm_digest(&seen, n) {
        Ok(d) => json!({"ok": format!("{d:016x}")}),
        Err(e) => json!({"err": e.to_string()}),
    }
}

const RUBY_CHECK: &str = r#"
require "json"
require "dbus_matrix/storm"
out = JSON.parse($stdin.read).map do |c|
  { "ok" => format("%016x", DbusMatrix::Storm.storm_digest(c["received"], c["updates"], c["n"], c["holder"])) }
rescue RuntimeError => e
  { "err" => e.message }
end
puts JSON.generate(out)
"#;

#[test]
fn the_ruby_storm_check_judges_and_words_as_the_harness() {
    let all: Vec<i32> = (0..100).map(st::level).collect();
    let without = |v: i32| -> Vec<i32> { all.iter().copied().filter(|x| *x != v).collect() };
    let mut swapped = all.clone();
    swapped.swap(3, 4);
    let mut beyond = all.clone();
    beyond.push(101);
    let cases: Vec<(usize, Vec<i32>)> = vec![
        (100, all.clone()),
        (99, without(43)),
        (99, without(100)),
        (101, all.clone()),
        (100, swapped),
        (101, beyond),
        (100, all[..50].to_vec()),
        (0, vec![]),
        (100, vec![100]),
    ];
    let input: Vec<Value> = cases
        .iter()
        .map(|(r, u)| json!({"received": r, "updates": u, "n": 100, "holder": RUBY_HOLDER}))
        .collect();
    let mut child = Command::new(interpreter_of("ruby-dbus-0.16/adapter.rb"))
        .arg("-I")
        .arg(workspace().join("programs/ruby"))
        .args(["-e", RUBY_CHECK])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(json!(input).to_string().as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let got: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    assert_eq!(got.len(), cases.len());
    let want: Vec<Value> = cases
        .iter()
        .map(|(r, u)| harness_verdict(*r, u, 100, RUBY_HOLDER))
        .collect();
    for ((case, g), w) in cases.iter().zip(&got).zip(&want) {
        assert_eq!(g, w, "{case:?}");
    }
    // The sound storm and the coalesced one pass; every broken one fails with the counts.
    assert!(want[0]["ok"].is_string() && want[8]["ok"].is_string());
    for (i, words) in [
        (1, "received 99, lost 1, extra 0"),
        (3, "received 101, lost 0, extra 1"),
        (4, "(out of order or unknown values)"),
        (6, "holds 50"),
        (7, "holds no value"),
    ] {
        let e = want[i]["err"].as_str().unwrap_or_default();
        assert!(e.contains(words), "{i}: {e}");
    }
}

const STARTUP: &str = "proxy/startup/20";

#[test]
fn both_programs_keep_every_update_of_a_storm_and_ruby_starts_up_on_a_bus() {
    let out = TempDir::new("program-storm");
    let r = repo_smoke_results(
        out.path(),
        &[
            "--adapters",
            &[C, RUBY].join(","),
            "--scenarios",
            &[STORM, STARTUP].join(","),
            "--buses",
            "dbus-daemon,busd,p2p",
        ],
    );
    for a in [C, RUBY] {
        if let Some(why) = unavailable_here(a) {
            assert_unavailable_cells(&r, a, &why);
            continue;
        }
        let served: &[&str] = if a == RUBY { &[STORM, STARTUP] } else { &[STORM] };
        for bus in ["dbus-daemon", "busd"] {
            for s in served {
                let c = cell(&r, a, s, bus);
                assert_eq!(c.status(), CellStatus::Ok, "{a} {s} {bus}: {:?}", c.outcome);
            }
        }
        for s in served {
            let why = reason_of(&r, a, s, "p2p");
            assert!(why.contains("peer to peer"), "{a} {s} p2p: {why}");
        }
    }
    // libdbus has no introspection parser: the library's reason, on a bus too.
    if unavailable_here(C).is_none() {
        let why = reason_of(&r, C, STARTUP, "dbus-daemon");
        assert!(why.starts_with("libdbus 1.14 has no introspection parser"), "{why}");
    }
}

/// The C program copied into `dir`/c/libdbus-c-1.14 with `(file, from, to)`
/// replaced once each (adapter.sh builds it into `dir`/target/programs): update 42
/// of the storm never sent, the broad rule where arg0 was asked for, `InOutInt(i + 1)`
/// on connection i, the proxied `Void` answered but not counted.
fn c_mutant(dir: &Path, edits: &[(&str, &str, &str)]) -> PathBuf {
    let from = workspace().join("programs").join(C);
    let to = dir.join("c").join(C);
    std::fs::create_dir_all(&to).unwrap();
    for e in std::fs::read_dir(&from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
    for (file, old, new) in edits {
        let path = to.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches(old).count(), 1, "{file}: {old:?} once");
        std::fs::write(&path, text.replacen(old, new, 1)).unwrap();
    }
    to
}

/// ruby-dbus's program with the storm's update 42 sent to another path and the
/// startup client calling every child but the last.
fn ruby_mutant(dir: &Path) -> PathBuf {
    let programs = workspace().join("programs");
    let rb = format!(
        "#!{ruby_bin}\n$LOAD_PATH.unshift({ruby:?})\nrequire {storm:?}\nrequire {startup:?}\n\
         module RubyDbusStorm\n  class << self\n    alias_method :real_changed, :changed\n\
         \x20   def changed(level) = real_changed(level).tap {{ |m| m.path = \"/elsewhere\" if level == 43 }}\n\
         \x20 end\nend\n\
         class DBus::ProxyObject\n  alias_method :real_subnodes, :subnodes\n\
         \x20 def subnodes = real_subnodes[0...-1]\nend\nload {real:?}\n",
        ruby_bin = interpreter_of("ruby-dbus-0.16/adapter.rb").display(),
        ruby = programs.join("ruby").display().to_string(),
        storm = programs.join("ruby-dbus-0.16/storm.rb").display().to_string(),
        startup = programs.join("ruby-dbus-0.16/startup.rb").display().to_string(),
        real = programs.join("ruby-dbus-0.16/adapter.rb").display().to_string(),
    );
    let path = dir.join("mutant.rb");
    std::fs::write(&path, rb).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

const SCENARIOS: [&str; 6] = [
    STORM,
    "signal/name-owner-churn/broad",
    "signal/name-owner-churn/arg0",
    "call/connections-in-process/20",
    "proxy/create-call/props",
    "proxy/startup/20",
];

#[test]
fn a_lost_update_a_broad_rule_and_a_skipped_call_fail_the_programs_cells() {
    let tmp = TempDir::new("program-broken");
    let c = c_mutant(
        tmp.path(),
        &[
            (
                "storm.c",
                "        s->level = (dbus_int32_t)(i + 1);",
                "        if (i == 42) {\n            dbus_message_unref(m);\n            continue;\n        }\n        \
                 s->level = (dbus_int32_t)(i + 1);",
            ),
            ("churn.c", "    if (arg0) snprintf", "    if (0) snprintf"),
            ("apps.c", "dbus_int32_t arg = (dbus_int32_t)i, got", "dbus_int32_t arg = (dbus_int32_t)i + 1, got"),
            ("proxied.c", "        p->calls++;\n", ""),
        ],
    );
    ruby_mutant(tmp.path());
    let mut toml = format!(
        "schema = 1\n[[adapter]]\nid = \"{C}\"\npackage = \"adapter-libdbus-c-1-14\"\npath = \"{c}\"\n\
         program = \"adapter.sh\"\nlibrary = \"libdbus\"\n{c_unavailable}[[adapter]]\nid = \"{RUBY}\"\n\
         package = \"adapter-ruby-dbus-0-16\"\npath = \"{d}\"\nprogram = \"mutant.rb\"\nlibrary = \"ruby-dbus\"\n\
         {unavailable}",
        c = c.display(),
        d = tmp.path().display(),
        c_unavailable = unavailable_in_toml(C),
        unavailable = unavailable_in_toml(RUBY),
    );
    for s in SCENARIOS {
        toml += &format!("[[scenario]]\nid = \"{s}\"\n");
    }
    toml += "[[bus]]\nid = \"dbus-daemon\"\n[profile.smoke]\nsample_size = 10\nwarm_up = 0.05\nmeasurement = 0.1\n\
             nresamples = 1000\ntimer = \"direct\"\n";
    let matrix = tmp.path().join("matrix.toml");
    std::fs::write(&matrix, toml).unwrap();
    let out = tmp.path().join("out");
    let o = smoke_run_of(&matrix, &out).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "failed cells give exit 1:\n{}", text(&o));
    let r = validate(&results_file(&out));
    let lost: Vec<i32> = (0..100).map(st::level).filter(|v| *v != 43).collect();
    // The runner's words where it compares (Ruby), the C program's own where it does.
    let digest = "verification failed: received digest";
    let c_digest = "verification failed: the received digest is not the expected one";
    let expect: [(&str, &str, Option<String>); 6] = [
        (
            C,
            STORM,
            harness_verdict(99, &lost, 100, C_HOLDER)["err"]
                .as_str()
                .map(str::to_string),
        ),
        (
            C,
            "signal/name-owner-churn/arg0",
            Some("for the churned name 20 (must be 0)".into()),
        ),
        (C, "call/connections-in-process/20", Some(c_digest.into())),
        (C, "proxy/create-call/props", Some(c_digest.into())),
        (
            RUBY,
            STORM,
            harness_verdict(99, &lost, 100, RUBY_HOLDER)["err"]
                .as_str()
                .map(str::to_string),
        ),
        (RUBY, "proxy/startup/20", Some(digest.into())),
    ];
    for a in [C, RUBY] {
        if let Some(why) = unavailable_here(a) {
            assert_unavailable_cells(&r, a, &why);
            continue;
        }
        // Untouched by the mutation: still verified.
        assert_eq!(
            status_on(&r, a, "signal/name-owner-churn/broad", "dbus-daemon"),
            CellStatus::Ok,
            "{a}"
        );
        for (_, s, words) in expect.iter().filter(|(p, _, _)| *p == a) {
            let words = words.as_deref().expect("the harness fails the broken storm too");
            assert_eq!(status_on(&r, a, s, "dbus-daemon"), CellStatus::Failed, "{a} {s}");
            let why = reason_of(&r, a, s, "dbus-daemon");
            assert!(why.contains(words), "{a} {s}: {why}\nexpected: {words}");
        }
    }
}
