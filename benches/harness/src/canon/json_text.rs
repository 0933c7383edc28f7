//! The canon's JSON text: indented like `serde_json::to_string_pretty`, except
//! that an array or object whose compact form fits in [`WIDTH`] columns stays
//! on one line, so a table of a thousand properties is a thousand lines, not
//! eight thousand. Deterministic: the same value gives the same bytes.

use serde_json::Value;

/// The widest line a container is kept on (indentation included).
const WIDTH: usize = 110;

/// `v` as text, ending in a newline.
pub fn to_text(v: &Value) -> String {
    let mut out = String::new();
    write(v, 0, 0, &mut out);
    out.push('\n');
    out
}

fn compact(v: &Value) -> String {
    serde_json::to_string(v).expect("a JSON value serialises")
}

/// `v` at `indent`, where `used` columns of the current line are taken already.
fn write(v: &Value, indent: usize, used: usize, out: &mut String) {
    let flat = compact(v);
    let container = matches!(v, Value::Array(a) if !a.is_empty()) || matches!(v, Value::Object(o) if !o.is_empty());
    if !container || used + flat.len() <= WIDTH {
        out.push_str(&flat);
        return;
    }
    let pad = " ".repeat(indent + 2);
    match v {
        Value::Array(items) => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                out.push_str(&pad);
                write(item, indent + 2, indent + 2, out);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            out.push_str(&" ".repeat(indent));
            out.push(']');
        }
        Value::Object(map) => {
            out.push_str("{\n");
            for (i, (k, item)) in map.iter().enumerate() {
                let key = format!("{}: ", compact(&Value::String(k.clone())));
                out.push_str(&pad);
                out.push_str(&key);
                write(item, indent + 2, indent + 2 + key.len(), out);
                out.push_str(if i + 1 < map.len() { ",\n" } else { "\n" });
            }
            out.push_str(&" ".repeat(indent));
            out.push('}');
        }
        _ => unreachable!("scalars are written flat"),
    }
}
