//! `call/in-flight/<n>`: the scenario ids and the digest that checks every
//! reply of a batch, in the order the calls were sent.

use harness::ipc::{IpcOp, IN_FLIGHT_COUNTS};
use harness::scenario;

#[test]
fn every_batch_size_is_a_scenario() {
    for n in [1, 10, 100, 1000] {
        let id = format!("call/in-flight/{n}");
        let s = scenario::find(&id).unwrap_or_else(|| panic!("{id} is not a scenario"));
        assert_eq!(s.ipc_op(), Some(IpcOp::InFlight(n)));
        assert_eq!(
            scenario::floor_of(IpcOp::InFlight(n)).as_deref(),
            Some("baseline/raw-socket/1")
        );
    }
    assert_eq!(IN_FLIGHT_COUNTS, [1, 10, 100, 1000]);
}

#[test]
fn the_digest_covers_every_reply_and_its_order() {
    let want = IpcOp::InFlight(3).expected_digest("ignored");
    // Call i sends i and gets i + 1.
    assert_eq!(harness::ipc::in_flight_digest([1, 2, 3]), want);
    assert_eq!(harness::ipc::in_flight_arg(2), 2);
    // A reply lost, duplicated, swapped or wrong changes it.
    for wrong in [vec![1, 2], vec![1, 2, 3, 3], vec![2, 1, 3], vec![1, 2, 4]] {
        assert_ne!(harness::ipc::in_flight_digest(wrong.clone()), want, "{wrong:?}");
    }
    assert_ne!(
        IpcOp::InFlight(10).expected_digest(""),
        IpcOp::InFlight(100).expected_digest("")
    );
}

#[test]
fn an_adapter_without_the_op_says_the_gap_is_its_own() {
    assert!(IpcOp::InFlight(10).opt_in());
    assert!(!IpcOp::Call(harness::ipc::Method::Void).opt_in());
    assert_eq!(
        harness::ipc::not_implemented(IpcOp::InFlight(10)),
        "this adapter does not implement call/in-flight yet"
    );
}
