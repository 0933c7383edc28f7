//! The objects of `property/get-all/<n>` and `objects/get-managed-objects/<n>`
//! (issue 15: what desktop clients do at start-up), defined once: paths,
//! interfaces, property names and values, and the digests a client's reply
//! must match. They live beside the benchmark service, never on its object,
//! so its introspection, `Items` and cold-start counts stay as they were.
//!
//! - `property/get-all/<n>`: object [`props_path`]`(n)`, interface
//!   [`PROPS_INTERFACE`], `n` read-only properties `P0000`, `P0001`, … whose
//!   types cycle string, `u`, `b` ([`property_value`]).
//! - `objects/get-managed-objects/<n>`: an `org.freedesktop.DBus.ObjectManager`
//!   at [`objects_path`]`(n)` with `n` children [`object_child_path`]`(n, i)`,
//!   each with interface [`ITEM_INTERFACE`]: `Id` (s), `Index` (u), `Enabled` (b)
//!   ([`item_properties`]).
//!
//! Libraries return dicts in any order and servers may add the standard
//! interfaces to each object's entry: the digests sort by name (or path),
//! keep the benchmark interface only, and count entries, so a missing,
//! extra or wrong property or object changes them.

use crate::digest::Digest;

/// `n` of both families (properties of one interface; objects of one manager).
pub const PROPS_COUNTS: [usize; 2] = [10, 1000];
pub const PROPS_INTERFACE: &str = "org.dbusmatrix.Props";
pub const ITEM_INTERFACE: &str = "org.dbusmatrix.Item";
pub const OBJECT_MANAGER_INTERFACE: &str = "org.freedesktop.DBus.ObjectManager";
pub const PROPERTIES_INTERFACE: &str = "org.freedesktop.DBus.Properties";

/// The object holding the `n` properties of `property/get-all/<n>`.
pub fn props_path(n: usize) -> String {
    format!("/org/dbusmatrix/props/{n}")
}

/// The ObjectManager of `objects/get-managed-objects/<n>`.
pub fn objects_path(n: usize) -> String {
    format!("/org/dbusmatrix/objects/{n}")
}

/// Child `i` of the manager of `objects/get-managed-objects/<n>`.
pub fn object_child_path(n: usize, i: usize) -> String {
    format!("/org/dbusmatrix/objects/{n}/o{i:04}")
}

/// A property value: the three types the benchmark properties have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PropValue {
    Str(String),
    U32(u32),
    Bool(bool),
}

impl PropValue {
    /// The D-Bus signature of the value.
    pub fn signature(&self) -> &'static str {
        match self {
            PropValue::Str(_) => "s",
            PropValue::U32(_) => "u",
            PropValue::Bool(_) => "b",
        }
    }

    /// A type tag, then the value: a `u` 1 and a `b` true differ.
    fn digest(&self, d: &mut Digest) {
        match self {
            PropValue::Str(s) => {
                d.u64(0);
                d.str(s);
            }
            PropValue::U32(v) => {
                d.u64(1);
                d.u64(u64::from(*v));
            }
            PropValue::Bool(b) => {
                d.u64(2);
                d.u64(u64::from(*b));
            }
        }
    }
}

/// Name of property `i` of [`PROPS_INTERFACE`].
pub fn property_name(i: usize) -> String {
    format!("P{i:04}")
}

/// Value of property `i`: `i % 3` = 0 a string, 1 a `u`, 2 a `b`.
pub fn property_value(i: usize) -> PropValue {
    match i % 3 {
        0 => PropValue::Str(format!("value {i}")),
        1 => PropValue::U32(i as u32 * 7),
        _ => PropValue::Bool(i.is_multiple_of(2)),
    }
}

/// Every property of the `property/get-all/<n>` object, in name order.
pub fn properties(n: usize) -> Vec<(String, PropValue)> {
    (0..n).map(|i| (property_name(i), property_value(i))).collect()
}

/// The properties of [`ITEM_INTERFACE`] on child `i`, in name order.
pub fn item_properties(i: usize) -> Vec<(&'static str, PropValue)> {
    vec![
        ("Enabled", PropValue::Bool(!i.is_multiple_of(2))),
        ("Id", PropValue::Str(format!("item-{i}"))),
        ("Index", PropValue::U32(i as u32)),
    ]
}

/// Digest of one interface's properties as a client received them (any order):
/// sorted by name, each name and value, then the count.
pub fn properties_digest<S: AsRef<str>>(props: impl IntoIterator<Item = (S, PropValue)>) -> u64 {
    let mut d = Digest::new();
    digest_properties(&mut d, props);
    d.finish()
}

fn digest_properties<S: AsRef<str>>(d: &mut Digest, props: impl IntoIterator<Item = (S, PropValue)>) {
    let mut props: Vec<_> = props.into_iter().collect();
    props.sort_by(|a, b| a.0.as_ref().cmp(b.0.as_ref()));
    for (name, value) in &props {
        d.str(name.as_ref());
        value.digest(d);
    }
    d.len(props.len());
}

/// Digest of a `GetManagedObjects` reply: for each object that has
/// [`ITEM_INTERFACE`] (the caller passes only that interface's properties;
/// other interfaces, such as the standard ones a server may list, are not
/// part of it), sorted by path: the path and its properties' digest; then the count.
pub fn managed_objects_digest<P, S>(objects: impl IntoIterator<Item = (P, Vec<(S, PropValue)>)>) -> u64
where
    P: AsRef<str>,
    S: AsRef<str>,
{
    let mut objects: Vec<_> = objects.into_iter().collect();
    objects.sort_by(|a, b| a.0.as_ref().cmp(b.0.as_ref()));
    let mut d = Digest::new();
    for (path, props) in objects.iter_mut() {
        d.str(path.as_ref());
        digest_properties(&mut d, props.drain(..));
    }
    d.len(objects.len());
    d.finish()
}

/// What `property/get-all/<n>` must digest to.
pub fn expected_get_all_digest(n: usize) -> u64 {
    properties_digest(properties(n))
}

/// What `objects/get-managed-objects/<n>` must digest to.
pub fn expected_managed_objects_digest(n: usize) -> u64 {
    managed_objects_digest((0..n).map(|i| (object_child_path(n, i), item_properties(i))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_cycle_and_names_sort() {
        let p = properties(4);
        assert_eq!(p[0], ("P0000".into(), PropValue::Str("value 0".into())));
        assert_eq!(p[1], ("P0001".into(), PropValue::U32(7)));
        assert_eq!(p[2], ("P0002".into(), PropValue::Bool(true)));
        assert_eq!(property_name(999), "P0999");
        assert_eq!(object_child_path(10, 3), "/org/dbusmatrix/objects/10/o0003");
    }
}
