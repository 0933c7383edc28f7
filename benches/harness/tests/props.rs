//! `property/get-all/<n>` and `objects/get-managed-objects/<n>`: the scenario
//! ids, and digests that ignore order and the standard interfaces but catch
//! a missing, extra or wrong property or object.

use harness::ipc::props::{self as p, PropValue};
use harness::ipc::IpcOp;
use harness::scenario;

#[test]
fn every_count_is_a_scenario_of_both_families() {
    for n in [10, 1000] {
        let s = scenario::find(&format!("property/get-all/{n}")).expect("property/get-all scenario");
        assert_eq!(s.ipc_op(), Some(IpcOp::PropertyGetAll(n)));
        let s = scenario::find(&format!("objects/get-managed-objects/{n}")).expect("get-managed-objects scenario");
        assert_eq!(s.ipc_op(), Some(IpcOp::ManagedObjects(n)));
        assert!(IpcOp::PropertyGetAll(n).opt_in() && IpcOp::ManagedObjects(n).opt_in());
    }
    assert_eq!(p::PROPS_COUNTS, [10, 1000]);
    assert_eq!(
        harness::ipc::not_implemented(IpcOp::ManagedObjects(10)),
        "this adapter does not implement objects/get-managed-objects yet"
    );
}

#[test]
fn get_all_digest_ignores_order_and_catches_every_wrong_property() {
    let want = IpcOp::PropertyGetAll(10).expected_digest("ignored");
    let props = p::properties(10);
    assert_eq!(p::properties_digest(props.clone()), want);
    let mut reversed = props.clone();
    reversed.reverse();
    assert_eq!(p::properties_digest(reversed), want, "a dict in another order");

    let mut missing = props.clone();
    missing.remove(4);
    let mut wrong_value = props.clone();
    wrong_value[1].1 = PropValue::U32(8);
    let mut wrong_type = props.clone();
    wrong_type[1].1 = PropValue::Str("7".into());
    let mut wrong_name = props.clone();
    wrong_name[0].0 = "P0010".into();
    let mut extra = props.clone();
    extra.push(("P0010".into(), p::property_value(10)));
    for (what, v) in [
        ("missing", missing),
        ("wrong value", wrong_value),
        ("wrong type", wrong_type),
        ("wrong name", wrong_name),
        ("extra", extra),
    ] {
        assert_ne!(p::properties_digest(v), want, "{what}");
    }
    assert_ne!(want, IpcOp::PropertyGetAll(1000).expected_digest(""));
}

fn objects(n: usize) -> Vec<(String, Vec<(&'static str, PropValue)>)> {
    (0..n)
        .map(|i| (p::object_child_path(n, i), p::item_properties(i)))
        .collect()
}

#[test]
fn managed_objects_digest_ignores_order_and_catches_every_wrong_object() {
    let want = IpcOp::ManagedObjects(10).expected_digest("ignored");
    assert_eq!(p::managed_objects_digest(objects(10)), want);
    let mut shuffled = objects(10);
    shuffled.reverse();
    for (_, props) in shuffled.iter_mut() {
        props.reverse();
    }
    assert_eq!(p::managed_objects_digest(shuffled), want, "dicts in another order");

    let mut missing_object = objects(10);
    missing_object.remove(3);
    let mut missing_property = objects(10);
    missing_property[3].1.remove(0);
    let mut wrong_value = objects(10);
    wrong_value[3].1[1].1 = PropValue::Str("item-4".into());
    let mut wrong_path = objects(10);
    wrong_path[3].0 = p::object_child_path(10, 11);
    for (what, v) in [
        ("missing object", missing_object),
        ("missing property", missing_property),
        ("wrong value", wrong_value),
        ("wrong path", wrong_path),
    ] {
        assert_ne!(p::managed_objects_digest(v), want, "{what}");
    }
    assert_ne!(want, IpcOp::ManagedObjects(1000).expected_digest(""));
}

#[test]
fn the_items_have_three_typed_properties() {
    assert_eq!(
        p::item_properties(3),
        vec![
            ("Enabled", PropValue::Bool(true)),
            ("Id", PropValue::Str("item-3".into())),
            ("Index", PropValue::U32(3)),
        ]
    );
    assert_eq!(p::objects_path(1000), "/org/dbusmatrix/objects/1000");
    assert_eq!(p::props_path(10), "/org/dbusmatrix/props/10");
}
