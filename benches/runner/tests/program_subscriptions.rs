//! The subscription families of issue 31 in the programs in other languages
//! (Python: dbus-fast, dbus-python, jeepney through
//! benches/programs/python/dbus_matrix_py/subscription.py; Ruby: ruby-dbus
//! through benches/programs/ruby/dbus_matrix/subscription.rb): their one
//! check per language words every failure as the harness's own check
//! (`harness::ipc::subscription`) on the same broken inputs, the four
//! programs give verified values on a bus, and a mutant program (a signal
//! lost on the way, the broad rule where arg0 was asked for) fails its cells
//! with the counts.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use harness::ipc::subscription::{self as sub, RuleScope};
use harness::results::CellStatus;
use serde_json::{json, Value};

use crate::common::*;

const PROGRAMS: [&str; 4] = ["dbus-fast-5.2", "dbus-python-1.3", "jeepney-0.8", "ruby-dbus-0.16"];
const SCENARIOS: [&str; 6] = [
    "signal/match-churn",
    "signal/burst/100",
    "signal/delivered/broad",
    "signal/delivered/arg0",
    "signal/name-owner-churn/broad",
    "signal/name-owner-churn/arg0",
];
/// A pid for the churned names, the same in every language.
const PID: u32 = 4242;

fn programs_dir() -> PathBuf {
    workspace().join("programs")
}

fn scope(s: &str) -> RuleScope {
    if s == "broad" {
        RuleScope::Broad
    } else {
        RuleScope::Arg0
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect()
}

/// Right and broken inputs of each check: what a consumer was handed.
fn cases() -> Vec<Value> {
    let burst: Vec<String> = (0..100).map(sub::burst_text).collect();
    let without = |i: usize| -> Vec<String> { burst.iter().filter(|t| **t != sub::burst_text(i)).cloned().collect() };
    let mut duplicated = burst.clone();
    duplicated.insert(8, sub::burst_text(7));
    let mut swapped = burst.clone();
    swapped.swap(3, 4);
    let mut foreign = burst.clone();
    foreign.push("noise 1".into());
    let mut out_of_range = burst.clone();
    out_of_range.push(sub::burst_text(100));
    let delivered = sub::delivered_texts();
    let (churned, sentinel) = sub::churn_names_of(PID);
    let change = |n: &str, new: &str| json!([n, new]);
    let mut broad_churn: Vec<Value> = (0..sub::NAME_CHURNS)
        .flat_map(|_| [change(&churned, ":1.9"), change(&churned, "")])
        .collect();
    broad_churn.push(change(":1.77", ":1.77"));
    broad_churn.extend([change(&sentinel, ":1.9"), change(&sentinel, "")]);
    let sentinel_only = vec![change(&sentinel, ":1.9"), change(&sentinel, "")];
    let mut one_short = broad_churn.clone();
    one_short.remove(0);
    let mut arg0_other = sentinel_only.clone();
    arg0_other.insert(0, change(":1.77", ""));
    let names = json!([churned, sentinel]);
    let mut cases = vec![];
    for received in [
        burst.clone(),
        without(42),
        without(0),
        duplicated,
        swapped,
        foreign,
        out_of_range,
        vec![],
    ] {
        cases.push(json!({"family": "burst", "n": 100, "received": received}));
    }
    for (s, received) in [
        ("broad", delivered.clone()),
        ("arg0", delivered[delivered.len() - 1..].to_vec()),
        ("arg0", delivered.clone()),
        ("broad", delivered[delivered.len() - 1..].to_vec()),
        ("broad", delivered.iter().rev().cloned().collect()),
    ] {
        cases.push(json!({"family": "delivered", "scope": s, "received": received}));
    }
    for (s, received) in [
        ("broad", broad_churn.clone()),
        ("arg0", sentinel_only.clone()),
        ("arg0", broad_churn),
        ("broad", one_short),
        ("broad", sentinel_only),
        ("arg0", arg0_other),
    ] {
        cases.push(json!({"family": "name-churn", "scope": s, "received": received, "names": names}));
    }
    cases
}

/// The harness's verdict on a case: `{"ok": digest}` or `{"err": message}`.
fn harness_verdict(case: &Value) -> Value {
    let received = &case["received"];
    let result = match case["family"].as_str().unwrap() {
        "burst" => sub::burst_digest(&strings(received), case["n"].as_u64().unwrap() as usize),
        "delivered" => sub::delivered_digest(&strings(received), scope(case["scope"].as_str().unwrap())),
        _ => {
            let pairs: Vec<(String, String)> = received
                .as_array()
                .unwrap()
                .iter()
                .map(|p| (p[0].as_str().unwrap().into(), p[1].as_str().unwrap().into()))
                .collect();
            let names = strings(&case["names"]);
            sub::name_churn_digest(
                &pairs,
                scope(case["scope"].as_str().unwrap()),
                &(names[0].clone(), names[1].clone()),
            )
        }
    };
    match result {
        Ok(d) => json!({"ok": format!("{d:016x}")}),
        Err(e) => json!({"err": e.to_string()}),
    }
}

const PYTHON: &str = r#"
import json, sys
from dbus_matrix_py import subscription as sub
given = json.load(sys.stdin)
out = []
for c in given["cases"]:
    try:
        if c["family"] == "burst":
            d = sub.burst_digest(c["received"], c["n"])
        elif c["family"] == "delivered":
            d = sub.delivered_digest(c["received"], c["scope"])
        else:
            d = sub.name_churn_digest([tuple(p) for p in c["received"]], c["scope"], tuple(c["names"]))
        out.append({"ok": "%016x" % d})
    except RuntimeError as e:
        out.append({"err": str(e)})
pid = given["pid"]
print(json.dumps({"verdicts": out, "names": list(sub.churn_names(pid)),
                  "rules": [sub.name_owner_rule("broad"), sub.name_owner_rule("arg0", pid),
                            sub.delivered_rule("broad"), sub.delivered_rule("arg0"), sub.CHURN_RULE],
                  "texts": sub.burst_texts(3) + [sub.BURST_END] + sub.delivered_texts()}))
"#;

const RUBY: &str = r#"
require "json"
require "dbus_matrix/subscription"
S = DbusMatrix::Subscription
given = JSON.parse($stdin.read)
out = given["cases"].map do |c|
  d = case c["family"]
      when "burst" then S.burst_digest(c["received"], c["n"])
      when "delivered" then S.delivered_digest(c["received"], c["scope"])
      else S.name_churn_digest(c["received"], c["scope"], c["names"])
      end
  { "ok" => format("%016x", d) }
rescue RuntimeError => e
  { "err" => e.message }
end
pid = given["pid"]
puts JSON.generate({ "verdicts" => out, "names" => S.churn_names(pid),
                     "rules" => [S.name_owner_rule("broad"), S.name_owner_rule("arg0", pid),
                                 S.delivered_rule("broad"), S.delivered_rule("arg0"), S::CHURN_RULE],
                     "texts" => S.burst_texts(3) + [S::BURST_END] + S.delivered_texts })
"#;

fn run_checks(mut c: Command, input: &Value) -> Value {
    let mut child = c
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
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)))
}

#[test]
fn the_python_and_ruby_checks_judge_and_word_as_the_harness() {
    let cases = cases();
    let input = json!({"cases": cases, "pid": PID});
    let mut python = Command::new(interpreter_of("jeepney-0.8/adapter.py"));
    python
        .args(["-c", PYTHON])
        .env("PYTHONPATH", programs_dir().join("python"));
    let mut ruby = Command::new(interpreter_of("ruby-dbus-0.16/adapter.rb"));
    ruby.arg("-I").arg(programs_dir().join("ruby")).args(["-e", RUBY]);
    let (churned, sentinel) = sub::churn_names_of(PID);
    let mut texts: Vec<String> = (0..3).map(sub::burst_text).collect();
    texts.push(sub::BURST_END.into());
    texts.extend(sub::delivered_texts());
    for (language, command) in [("Python", python), ("Ruby", ruby)] {
        let got = run_checks(command, &input);
        let verdicts = got["verdicts"].as_array().unwrap();
        assert_eq!(verdicts.len(), cases.len());
        for (case, verdict) in cases.iter().zip(verdicts) {
            assert_eq!(*verdict, harness_verdict(case), "{language}: {case}");
        }
        assert_eq!(got["names"], json!([churned, sentinel]), "{language}");
        assert_eq!(
            got["rules"],
            json!([
                sub::name_owner_rule(RuleScope::Broad, &sentinel),
                sub::name_owner_rule(RuleScope::Arg0, &sentinel),
                sub::delivered_rule(RuleScope::Broad),
                sub::delivered_rule(RuleScope::Arg0),
                sub::churn_rule(),
            ]),
            "{language}"
        );
        assert_eq!(got["texts"], json!(texts), "{language}");
    }
    // The broken inputs did fail, with the counts (and the right ones passed).
    let verdicts: Vec<Value> = cases.iter().map(harness_verdict).collect();
    let failed = |i: usize| verdicts[i]["err"].as_str().unwrap_or_default().to_string();
    assert!(verdicts[0]["ok"].is_string());
    assert!(failed(1).contains("received 99, lost 1, duplicated 0, foreign 0, in order (the first lost: Some(42))"));
    assert!(failed(3).contains("duplicated 1"), "{}", failed(3));
    assert!(
        failed(10).contains("delivered 10 Pings (9 non-matching)"),
        "{}",
        failed(10)
    );
    assert!(
        failed(15).contains("for the churned name 20 (must be 0)"),
        "{}",
        failed(15)
    );
}

#[test]
fn the_programs_run_every_subscription_family_on_a_bus() {
    let out = TempDir::new("program-subscriptions");
    let r = repo_smoke_results(
        out.path(),
        &[
            "--adapters",
            &format!("{},libdbus-c-1.14", PROGRAMS.join(",")),
            "--scenarios",
            &SCENARIOS.join(","),
            "--buses",
            "dbus-daemon,p2p",
        ],
    );
    for a in PROGRAMS.into_iter().chain(["libdbus-c-1.14"]) {
        // A row this build mode cannot have (ruby-dbus in Nix): every cell
        // unsupported with the matrix's reason, on each bus.
        if let Some(why) = unavailable_here(a) {
            for s in SCENARIOS {
                for bus in ["dbus-daemon", "p2p"] {
                    assert_eq!(status_on(&r, a, s, bus), CellStatus::Unsupported, "{a} {s} {bus}");
                    assert_eq!(reason_of(&r, a, s, bus), why, "{a} {s} {bus}");
                }
            }
            continue;
        }
        for s in SCENARIOS {
            let c = cell(&r, a, s, "dbus-daemon");
            assert_eq!(c.status(), CellStatus::Ok, "{a} {s}: {:?}", c.outcome);
            assert!(c.measurement().unwrap().wall.median_ns.point > 0.0);
            let why = reason_of(&r, a, s, "p2p");
            assert!(why.contains("peer to peer"), "{a} {s} p2p: {why}");
        }
    }
}

/// A matrix of the mutant programs in `dir` on dbus-daemon.
fn mutant_matrix(dir: &Path) -> PathBuf {
    let mut toml = format!(
        "schema = 1\n[[adapter]]\nid = \"jeepney-0.8\"\npackage = \"adapter-jeepney-0-8\"\npath = \"{d}\"\n\
         program = \"mutant.py\"\nlibrary = \"jeepney\"\n[[adapter]]\nid = \"ruby-dbus-0.16\"\n\
         package = \"adapter-ruby-dbus-0-16\"\npath = \"{d}\"\nprogram = \"mutant.rb\"\nlibrary = \"ruby-dbus\"\n\
         {unavailable}",
        d = dir.display(),
        // As in the repository's matrix: unavailable where the build mode cannot have it.
        unavailable = unavailable_in_toml("ruby-dbus-0.16"),
    );
    for s in SCENARIOS {
        toml += &format!("[[scenario]]\nid = \"{s}\"\n");
    }
    toml += "[[bus]]\nid = \"dbus-daemon\"\n[profile.smoke]\nsample_size = 10\nwarm_up = 0.05\nmeasurement = 0.1\n\
             nresamples = 1000\ntimer = \"direct\"\n";
    let path = dir.join("matrix.toml");
    std::fs::write(&path, toml).unwrap();
    path
}

/// jeepney's and ruby-dbus's programs with the shared code mutated: the
/// emitter leaves out "burst 42", and the arg0 rules are the broad ones.
fn write_mutants(dir: &Path) {
    let programs = programs_dir();
    let py = format!(
        "#!{python3}\nimport runpy, sys\nsys.path[:0] = [{python:?}, {beside:?}]\n\
         from dbus_matrix_py import subscription as sub\n\
         burst_texts = sub.burst_texts\n\
         sub.burst_texts = lambda n: [t for t in burst_texts(n) if t != sub.burst_text(42)]\n\
         broad, names_broad = sub.delivered_rule('broad'), sub.name_owner_rule('broad')\n\
         sub.delivered_rule = lambda scope: broad\n\
         sub.name_owner_rule = lambda scope, pid=None: names_broad\n\
         real = {real:?}\nsys.argv[0] = real\nrunpy.run_path(real, run_name='__main__')\n",
        python3 = interpreter_of("jeepney-0.8/adapter.py").display(),
        python = programs.join("python").display().to_string(),
        beside = programs.join("jeepney-0.8").display().to_string(),
        real = programs.join("jeepney-0.8/adapter.py").display().to_string(),
    );
    let rb = format!(
        "#!{ruby_bin}\n$LOAD_PATH.unshift({ruby:?})\nrequire \"dbus_matrix/subscription\"\n\
         module DbusMatrix::Subscription\n  class << self\n    alias_method :real_burst_texts, :burst_texts\n\
         \x20   def burst_texts(n) = real_burst_texts(n).reject {{ |t| t == format(S[\"burst_text\"], 42) }}\n\
         \x20   def delivered_rule(_scope) = C.ping_rule\n\
         \x20   def name_owner_rule(_scope, _pid = nil) = NAME_OWNER_RULE\n  end\nend\nload {real:?}\n",
        ruby_bin = interpreter_of("ruby-dbus-0.16/adapter.rb").display(),
        ruby = programs.join("ruby").display().to_string(),
        real = programs.join("ruby-dbus-0.16/adapter.rb").display().to_string(),
    );
    use std::os::unix::fs::PermissionsExt;
    for (name, body) in [("mutant.py", py), ("mutant.rb", rb)] {
        let path = dir.join(name);
        std::fs::write(&path, body).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
fn a_lost_signal_and_an_ignored_arg0_fail_the_programs_cells_with_the_counts() {
    let tmp = TempDir::new("program-subscription-mutants");
    write_mutants(tmp.path());
    let matrix = mutant_matrix(tmp.path());
    let out = tmp.path().join("out");
    let o = smoke_run_of(&matrix, &out).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "failed cells give exit 1:\n{}", text(&o));
    let r = validate(&results_file(&out));
    for a in ["jeepney-0.8", "ruby-dbus-0.16"] {
        // A row this build mode cannot have (ruby-dbus in Nix): its mutant
        // never runs, every cell is unsupported with the matrix's reason.
        if let Some(why) = unavailable_here(a) {
            assert_unavailable_cells(&r, a, &why);
            assert_eq!(
                r.cells.iter().filter(|c| c.adapter == a).count(),
                SCENARIOS.len(),
                "{a}"
            );
            continue;
        }
        // Untouched by the mutation: still verified.
        for s in [
            "signal/match-churn",
            "signal/delivered/broad",
            "signal/name-owner-churn/broad",
        ] {
            assert_eq!(status_on(&r, a, s, "dbus-daemon"), CellStatus::Ok, "{a} {s}");
        }
        for (s, words) in [
            (
                "signal/burst/100",
                "received 99, lost 1, duplicated 0, foreign 0, in order (the first lost: Some(42))",
            ),
            (
                "signal/delivered/arg0",
                "arg0 rule: the subscription delivered 10 Pings (9 non-matching)",
            ),
            ("signal/name-owner-churn/arg0", "for the churned name 20 (must be 0)"),
        ] {
            assert_eq!(status_on(&r, a, s, "dbus-daemon"), CellStatus::Failed, "{a} {s}");
            let why = reason_of(&r, a, s, "dbus-daemon");
            assert!(why.contains(words), "{a} {s}: {why}");
        }
    }
}
