//! The canon's tables beyond the service: the objects of the property
//! families (ipc/props.rs) and the adapter command line (contract.rs), plus
//! the printf-style templates the programs expand (`%d`, `%04d`, `%s`: the
//! same in Python's `%`, Ruby's `format` and C's `snprintf`).

use serde_json::{json, Value};

use crate::contract;
use crate::ipc::{self, props, IpcOp};

/// A number no template's fixed text holds, to find where the argument goes.
const SENTINEL: usize = 987_654_321;

/// `f`'s output with its one decimal argument replaced by `%d`.
pub(super) fn template_of(f: impl Fn(usize) -> String) -> String {
    let text = f(SENTINEL);
    assert_eq!(text.matches(&SENTINEL.to_string()).count(), 1, "{text}");
    text.replace(&SENTINEL.to_string(), "%d")
}

/// [`props::object_child_path`] as a template of (n, i): the index is
/// zero-padded to 4 digits, which no sentinel shows; a test expands it
/// against the function.
pub(super) const OBJECT_CHILD_PATH: &str = "/org/dbusmatrix/objects/%d/o%04d";
/// [`props::property_name`] as a template of i (tested the same way).
pub(super) const PROPERTY_NAME: &str = "P%04d";

fn prop_value(v: &props::PropValue) -> Value {
    match v {
        props::PropValue::Str(s) => json!(["s", s]),
        props::PropValue::U32(u) => json!(["u", u]),
        props::PropValue::Bool(b) => json!(["b", b]),
    }
}

fn prop_row(name: &str, v: &props::PropValue) -> Value {
    let mut row = vec![json!(name)];
    if let Value::Array(typed) = prop_value(v) {
        row.extend(typed);
    }
    Value::Array(row)
}

/// The objects of `property/get-all/<n>` and `objects/get-managed-objects/<n>`:
/// the properties of the largest `n` (object `n` holds the first `n`) and the
/// children's properties, each row `[name, signature, value]`.
pub(super) fn props() -> Value {
    let max = *props::PROPS_COUNTS.iter().max().expect("two counts");
    let properties: Vec<Value> = props::properties(max).iter().map(|(n, v)| prop_row(n, v)).collect();
    let items: Vec<Value> = (0..max)
        .map(|i| Value::Array(props::item_properties(i).iter().map(|(n, v)| prop_row(n, v)).collect()))
        .collect();
    json!({
        "get_all_interface": props::PROPS_INTERFACE,
        "item_interface": props::ITEM_INTERFACE,
        "props_path": template_of(props::props_path),
        "objects_path": template_of(props::objects_path),
        "object_child_path": OBJECT_CHILD_PATH,
        "property_name": PROPERTY_NAME,
        "properties": properties,
        "item_properties": items,
    })
}

/// One flag of a command: its name, whether it is required, its default and choices.
fn flag(arg: &clap::Arg) -> Option<Value> {
    let long = arg.get_long()?;
    if long == "help" {
        return None;
    }
    let mut m = serde_json::Map::new();
    m.insert("name".into(), json!(long));
    m.insert("required".into(), json!(arg.is_required_set()));
    if let Some(d) = arg.get_default_values().first() {
        m.insert("default".into(), json!(d.to_string_lossy()));
    }
    let choices: Vec<String> = arg
        .get_possible_values()
        .iter()
        .map(|p| p.get_name().to_string())
        .collect();
    if !choices.is_empty() {
        m.insert("choices".into(), json!(choices));
    }
    Some(Value::Object(m))
}

/// The adapter command line (contract.rs): the commands in order, each with
/// its flags, and the words and exit status of the protocol.
pub(super) fn contract() -> Value {
    let cli = contract::command_line();
    let commands: Vec<Value> = cli
        .get_subcommands()
        .filter(|c| c.get_name() != "help")
        .map(|c| json!({"name": c.get_name(), "flags": c.get_arguments().filter_map(flag).collect::<Vec<_>>()}))
        .collect();
    json!({
        "commands": commands,
        "transport": {
            "bus": ["bus-address", "bus-socket", "service-name"],
            "p2p": "p2p-socket",
        },
        "exit_unsupported": contract::EXIT_UNSUPPORTED,
        "unsupported_prefix": contract::unsupported_line(""),
        "ready": contract::READY,
        "window_begin": contract::WINDOW_BEGIN,
        "window_end": contract::WINDOW_END,
        "go": contract::GO,
        "raw_socket_reason": crate::cli::RAW_SOCKET_REASON,
        "not_implemented": ipc::not_implemented(IpcOp::InFlight(0)).replace(IpcOp::InFlight(0).family(), "%s"),
    })
}
