//! The canon against the Rust definitions it is taken from, and the committed
//! canon.json and canon_data.h against a fresh rendering (byte for byte).

use std::path::PathBuf;

use super::*;
use crate::payload;

fn committed(rel: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The one regeneration command, said in every failure.
const REGENERATE: &str = "regenerate with: cd benches && cargo run -p dbus-matrix -- canon > programs/canon.json \
                          && cargo run -p dbus-matrix -- canon --format c-header > programs/libdbus-c-1.14/canon_data.h";

#[test]
fn the_committed_json_is_current() {
    assert!(
        committed(JSON_PATH) == json_text(&canon()),
        "benches/{JSON_PATH} is stale: {REGENERATE}"
    );
}

#[test]
fn the_committed_c_header_is_current() {
    assert!(
        committed(C_HEADER_PATH) == c_header(&canon()),
        "benches/{C_HEADER_PATH} is stale: {REGENERATE}"
    );
}

#[test]
fn the_text_reads_back_as_the_same_value() {
    let v = canon();
    let back: Value = serde_json::from_str(&json_text(&v)).unwrap();
    assert_eq!(back, v);
    assert!(json_text(&v)
        .lines()
        .all(|l| l.len() <= 110 || !l.trim_start().starts_with(['[', '{'])));
}

#[test]
fn every_payload_expands_to_its_body() {
    let v = canon();
    let described = v["payloads"].as_array().unwrap();
    assert_eq!(described.len(), 4);
    for p in described {
        let name = p["name"].as_str().unwrap();
        let body = scenario::find(&format!("marshal/{name}")).unwrap().body();
        assert_eq!(payloads::expand(p), body, "{name}");
        assert_eq!(p["digest"].as_u64(), Some(body.digest()), "{name}");
    }
    assert_eq!(payload::repeated_decimal(37), "37".repeat(payloads::DECIMAL_REPEAT));
}

/// A printf-style template expanded as Python's `%`, Ruby's `format` and C's `snprintf` do.
fn expand(template: &str, args: &[usize]) -> String {
    let mut out = String::new();
    let mut args = args.iter();
    let mut rest = template;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        rest = &rest[at + 1..];
        let (width, after) = match rest.strip_prefix("04d") {
            Some(after) => (4, after),
            None => (0, rest.strip_prefix('d').expect("%d or %04d")),
        };
        out.push_str(&format!("{:0width$}", args.next().unwrap()));
        rest = after;
    }
    out + rest
}

#[test]
fn templates_expand_as_the_functions_they_stand_for() {
    let v = canon();
    let t = |k: &str| v["props"][k].as_str().unwrap().to_string();
    for (n, i) in [(10, 0), (10, 9), (1000, 3), (1000, 999)] {
        assert_eq!(expand(&t("object_child_path"), &[n, i]), props::object_child_path(n, i));
        assert_eq!(expand(&t("props_path"), &[n]), props::props_path(n));
        assert_eq!(expand(&t("objects_path"), &[n]), props::objects_path(n));
        assert_eq!(expand(&t("property_name"), &[i]), props::property_name(i));
        assert_eq!(
            expand(v["service"]["nonmatching_rule"].as_str().unwrap(), &[i]),
            ipc::nonmatching_rule(i)
        );
    }
    let not_implemented = v["contract"]["not_implemented"].as_str().unwrap();
    assert_eq!(
        not_implemented.replace("%s", "property/get-all"),
        ipc::not_implemented(IpcOp::PropertyGetAll(10))
    );
    assert_eq!(
        (0..600).map(|i| (i % ECHO_MODULUS) as u8).collect::<Vec<_>>(),
        ipc::echo_payload(600)
    );
}

#[test]
fn every_scenario_is_listed_with_its_digest() {
    let v = canon();
    let listed = v["scenarios"].as_array().unwrap();
    assert_eq!(listed.len(), scenario::all().count());
    for (s, l) in scenario::all().zip(listed) {
        assert_eq!(l["id"], s.id.as_str());
        if let Some(op) = s.ipc_op() {
            if !l["expected_digest"].is_null() {
                assert_eq!(
                    l["expected_digest"].as_u64(),
                    Some(op.expected_digest("any.name")),
                    "{}",
                    s.id
                );
            } else {
                assert_ne!(op.expected_digest("a.name"), op.expected_digest("b.name"), "{}", s.id);
            }
        }
    }
    let props_rows = v["props"]["properties"].as_array().unwrap();
    assert_eq!(props_rows.len(), 1000);
    assert_eq!(props_rows[2], json!(["P0002", "b", true]));
    assert_eq!(
        v["props"]["item_properties"][3],
        json!([["Enabled", "b", true], ["Id", "s", "item-3"], ["Index", "u", 3]])
    );
}

#[test]
fn the_contract_lists_every_command_and_flag() {
    let v = canon();
    let commands: Vec<&str> = v["contract"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        commands,
        [
            "list",
            "emit",
            "demarshal",
            "bench",
            "repeat",
            "serve",
            "subscribe",
            "cold-start"
        ]
    );
    let bench = &v["contract"]["commands"][3]["flags"];
    assert!(bench
        .as_array()
        .unwrap()
        .contains(&json!({"name": "sample-size", "required": false, "default": "20"})));
    assert!(bench.as_array().unwrap().contains(
        &json!({"name": "timer", "required": false, "default": "criterion", "choices": ["criterion", "direct"]})
    ));
}

#[test]
fn the_subscription_templates_expand_as_the_harness_names_and_rules() {
    use ipc::subscription::{self as sub, RuleScope};
    let v = canon();
    let t = |k: &str| v["service"][k].as_str().unwrap().to_string();
    for pid in [1, 4242, 4_194_304] {
        let (churned, sentinel) = sub::churn_names_of(pid as u32);
        assert_eq!(expand(&t("churn_name"), &[pid]), churned);
        assert_eq!(expand(&t("churn_end_name"), &[pid]), sentinel);
        assert_eq!(
            expand(&t("name_owner_arg0_rule"), &[pid]),
            sub::name_owner_rule(RuleScope::Arg0, &sentinel)
        );
    }
    assert_eq!(t("name_owner_rule"), sub::name_owner_rule(RuleScope::Broad, "any"));
    assert_eq!(v["service"]["name_churns"].as_u64(), Some(sub::NAME_CHURNS as u64));
    let service = "io.killing.spark.Bench.x";
    assert_eq!(
        format!("{service}{}", t("sink_name_suffix")),
        ipc::application::sink_name(service)
    );
    assert_eq!(expand(&t("burst_text"), &[7]), sub::burst_text(7));
    assert_eq!(expand(&t("delivered_noise_text"), &[3]), sub::delivered_noise_text(3));
    assert_eq!(
        v["standard"]["errors"]["match_rule_not_found"].as_str(),
        Some(sub::MATCH_RULE_NOT_FOUND)
    );
}

#[test]
fn the_startup_tree_expands_to_the_servers_xml() {
    use crate::ipc::startup::{self as st, StartupServer};
    let v = canon();
    let s = &v["startup"];
    for n in [0, 1, 20, 200] {
        let mut xml = s["root_xml_head"].as_str().unwrap().to_string();
        for i in 0..n {
            xml.push_str(&expand(s["root_xml_child"].as_str().unwrap(), &[i]));
        }
        xml.push_str(s["root_xml_tail"].as_str().unwrap());
        assert_eq!(xml, st::root_xml(n, StartupServer::Sound), "{n} children");
        assert_eq!(st::child_names_unparsed(&xml).len(), n);
    }
    assert_eq!(s["child_xml"].as_str(), Some(st::child_xml().as_str()));
    assert_eq!(expand(s["child_name"].as_str().unwrap(), &[7]), st::child_name(7));
}

#[test]
fn the_storm_is_the_harness_storm() {
    use crate::ipc::storm as st;
    let v = canon();
    assert_eq!(v["storm"]["changed_rule"].as_str(), Some(st::changed_rule().as_str()));
    assert_eq!(v["storm"]["settle_ms"].as_u64(), Some(st::SETTLE.as_millis() as u64));
}
