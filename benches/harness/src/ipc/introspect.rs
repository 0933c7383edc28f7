//! The introspection XML of the benchmark service, written once from the
//! method table ([`super::interface_methods`]). Adapters that build replies by
//! hand answer `org.freedesktop.DBus.Introspectable.Introspect` with it; object
//! servers (zbus, dbus-crossroads) generate their own, which the real-client
//! test checks against the same table.

use super::{interface_methods, INTERFACE, OBJECT_PATH, PROPERTY, SIGNAL};

pub const INTROSPECTABLE: &str = "org.freedesktop.DBus.Introspectable";
pub const PEER: &str = "org.freedesktop.DBus.Peer";
pub const PROPERTIES: &str = "org.freedesktop.DBus.Properties";

pub(crate) const DOCTYPE: &str = "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\"\n \
     \"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">\n";

/// The standard interfaces a hand-built server answers on every object it serves.
pub(crate) const INTROSPECTABLE_XML: &str = r#"  <interface name="org.freedesktop.DBus.Introspectable">
    <method name="Introspect">
      <arg name="xml_data" type="s" direction="out"/>
    </method>
  </interface>
  <interface name="org.freedesktop.DBus.Peer">
    <method name="Ping"/>
    <method name="GetMachineId">
      <arg name="machine_uuid" type="s" direction="out"/>
    </method>
  </interface>
"#;

pub(crate) const PROPERTIES_XML: &str = r#"  <interface name="org.freedesktop.DBus.Properties">
    <method name="Get">
      <arg name="interface_name" type="s" direction="in"/>
      <arg name="property_name" type="s" direction="in"/>
      <arg name="value" type="v" direction="out"/>
    </method>
    <method name="GetAll">
      <arg name="interface_name" type="s" direction="in"/>
      <arg name="properties" type="a{sv}" direction="out"/>
    </method>
    <method name="Set">
      <arg name="interface_name" type="s" direction="in"/>
      <arg name="property_name" type="s" direction="in"/>
      <arg name="value" type="v" direction="in"/>
    </method>
    <signal name="PropertiesChanged">
      <arg name="interface_name" type="s"/>
      <arg name="changed_properties" type="a{sv}"/>
      <arg name="invalidated_properties" type="as"/>
    </signal>
  </interface>
"#;

/// One `<arg>` per single complete type of `signature`.
fn args(out: &mut String, signature: &str, name: &str, direction: &str) {
    let types = crate::wire::split_types(signature).expect("the method table holds valid signatures");
    for (i, t) in types.iter().enumerate() {
        let name = if types.len() == 1 {
            name.to_string()
        } else {
            format!("{name}{i}")
        };
        out.push_str(&format!(
            "      <arg name=\"{name}\" type=\"{t}\" direction=\"{direction}\"/>\n"
        ));
    }
}

/// The benchmark interface: every method with its argument types, the
/// read-only property and the signal.
fn bench_interface() -> String {
    let mut x = format!("  <interface name=\"{INTERFACE}\">\n");
    for (member, args_in, args_out) in interface_methods() {
        if args_in.is_empty() && args_out.is_empty() {
            x.push_str(&format!("    <method name=\"{member}\"/>\n"));
            continue;
        }
        x.push_str(&format!("    <method name=\"{member}\">\n"));
        args(&mut x, args_in, "value", "in");
        args(&mut x, args_out, "result", "out");
        x.push_str("    </method>\n");
    }
    x.push_str(&format!(
        "    <property name=\"{PROPERTY}\" type=\"a(ss)\" access=\"read\"/>\n    <signal name=\"{SIGNAL}\">\n      \
         <arg name=\"text\" type=\"s\"/>\n    </signal>\n  </interface>\n"
    ));
    x
}

/// The XML of [`OBJECT_PATH`]: the benchmark interface and the standard ones.
pub fn introspection_xml() -> String {
    format!(
        "{DOCTYPE}<node>\n{}{INTROSPECTABLE_XML}{PROPERTIES_XML}</node>\n",
        bench_interface()
    )
}

/// The XML of `path`: the object itself, or one of its ancestors (which list
/// the next path element as a child node, so tools can walk the tree from
/// `/`); `None` for any other path.
pub fn introspection_xml_of(path: &str) -> Option<String> {
    if path == OBJECT_PATH {
        return Some(introspection_xml());
    }
    let rest = if path == "/" {
        OBJECT_PATH.strip_prefix('/')?
    } else {
        OBJECT_PATH.strip_prefix(path)?.strip_prefix('/')?
    };
    let child = rest.split('/').next()?;
    Some(format!(
        "{DOCTYPE}<node>\n{INTROSPECTABLE_XML}  <node name=\"{child}\"/>\n</node>\n"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_object_lists_every_method_with_its_arguments() {
        let x = introspection_xml();
        assert!(x.contains("<method name=\"Void\"/>"));
        assert!(x.contains(
            "<method name=\"InOutInt\">\n      <arg name=\"value\" type=\"i\" direction=\"in\"/>\n      \
             <arg name=\"result\" type=\"i\" direction=\"out\"/>\n    </method>"
        ));
        assert!(x.contains("<arg name=\"result\" type=\"a(so)\" direction=\"out\"/>"));
        assert!(x.contains("<property name=\"Items\" type=\"a(ss)\" access=\"read\"/>"));
        assert!(x.contains("<signal name=\"Ping\">\n      <arg name=\"text\" type=\"s\"/>"));
        for i in [INTROSPECTABLE, PEER, PROPERTIES] {
            assert!(x.contains(&format!("<interface name=\"{i}\">")), "{i}");
        }
        assert_eq!(x.matches("<method ").count(), 10 + 1 + 2 + 3);
    }

    #[test]
    fn ancestors_name_the_next_element_and_others_are_unknown() {
        assert!(introspection_xml_of("/").unwrap().contains("<node name=\"io\"/>"));
        assert!(introspection_xml_of("/io/killing")
            .unwrap()
            .contains("<node name=\"spark\"/>"));
        assert!(!introspection_xml_of("/io").unwrap().contains(INTERFACE));
        assert_eq!(introspection_xml_of(OBJECT_PATH), Some(introspection_xml()));
        for other in ["/i", "/io/kill", "/io/killing/spark/object", "/org"] {
            assert_eq!(introspection_xml_of(other), None, "{other}");
        }
    }
}
