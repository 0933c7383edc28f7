//! The canon of the subscription families (`harness/src/ipc/subscription.rs`):
//! what a consumer that got everything digests to is what the op expects,
//! and every way of getting it wrong is an error that says how.

use harness::ipc::subscription::{
    self as sub, burst_digest, burst_text, delivered_digest, delivered_texts, RuleScope, SubscriptionOp,
};
use harness::ipc::{self, IpcOp};

fn burst(n: usize) -> Vec<String> {
    (0..n).map(burst_text).collect()
}

#[test]
fn a_whole_burst_digests_to_the_expected_digest() {
    for n in sub::BURST_SIZES {
        let op = IpcOp::Subscription(SubscriptionOp::Burst(n));
        assert_eq!(burst_digest(&burst(n), n).unwrap(), op.expected_digest(""));
    }
}

#[test]
fn a_burst_with_a_loss_a_duplicate_or_a_reordering_is_an_error_with_counts() {
    let mut lost = burst(100);
    lost.remove(7);
    let e = burst_digest(&lost, 100).unwrap_err().to_string();
    assert!(
        e.contains("received 99, lost 1, duplicated 0") && e.contains("Some(7)"),
        "{e}"
    );
    let mut dup = burst(100);
    dup.insert(3, burst_text(2));
    let e = burst_digest(&dup, 100).unwrap_err().to_string();
    assert!(e.contains("lost 0, duplicated 1") && e.contains("out of order"), "{e}");
    let mut swapped = burst(100);
    swapped.swap(10, 11);
    let e = burst_digest(&swapped, 100).unwrap_err().to_string();
    assert!(e.contains("lost 0, duplicated 0, foreign 0, out of order"), "{e}");
    let mut foreign = burst(100);
    foreign.push(ipc::SIGNAL_TEXT.into());
    assert!(burst_digest(&foreign, 100)
        .unwrap_err()
        .to_string()
        .contains("foreign 1"));
    // Only the newest 64 kept (a bounded queue dropping the oldest): reported lost.
    let newest: Vec<String> = (36..100).map(burst_text).collect();
    let e = burst_digest(&newest, 100).unwrap_err().to_string();
    assert!(e.contains("received 64, lost 36") && e.contains("Some(0)"), "{e}");
}

#[test]
fn delivered_counts_follow_the_rule() {
    let texts = delivered_texts();
    assert_eq!(texts.len(), sub::DELIVERED_NOISE + 1);
    assert_eq!(texts.last().map(String::as_str), Some(ipc::SIGNAL_TEXT));
    let broad = IpcOp::Subscription(SubscriptionOp::Delivered(RuleScope::Broad));
    let arg0 = IpcOp::Subscription(SubscriptionOp::Delivered(RuleScope::Arg0));
    assert_eq!(
        delivered_digest(&texts, RuleScope::Broad).unwrap(),
        broad.expected_digest("")
    );
    let only_match = &texts[sub::DELIVERED_NOISE..];
    assert_eq!(
        delivered_digest(only_match, RuleScope::Arg0).unwrap(),
        arg0.expected_digest("")
    );
    assert_ne!(broad.expected_digest(""), arg0.expected_digest(""));
    // arg0 asked, everything delivered: the client filtered, not the bus.
    let e = delivered_digest(&texts, RuleScope::Arg0).unwrap_err().to_string();
    assert!(e.contains("delivered 10 Pings (9 non-matching)"), "{e}");
    // A broad rule that delivered only the match dropped the rest.
    let e = delivered_digest(only_match, RuleScope::Broad).unwrap_err().to_string();
    assert!(
        e.contains("delivered 1 Pings (0 non-matching)") && e.contains("must deliver 10"),
        "{e}"
    );
    assert!(sub::delivered_rule(RuleScope::Arg0).ends_with(",arg0='Testtest'"));
    assert_eq!(sub::delivered_rule(RuleScope::Broad), ipc::ping_rule());
}

#[test]
fn name_owner_changes_are_counted_per_name() {
    let names = sub::churn_names();
    let (churned, sentinel) = (&names.0, &names.1);
    let change = |n: &str, new: &str| (n.to_string(), new.to_string());
    let mut broad: Vec<_> = (0..sub::NAME_CHURNS)
        .flat_map(|_| [change(churned, ":1.5"), change(churned, "")])
        .collect();
    broad.push(change(":1.9", ":1.9")); // another peer connecting meanwhile: allowed
    broad.extend([change(sentinel, ":1.5"), change(sentinel, "")]);
    let arg0 = vec![change(sentinel, ":1.5"), change(sentinel, "")];
    let op = |s| IpcOp::Subscription(SubscriptionOp::NameOwnerChurn(s));
    let d = sub::name_churn_digest(&broad, RuleScope::Broad, &names).unwrap();
    assert_eq!(d, op(RuleScope::Broad).expected_digest(""));
    let d = sub::name_churn_digest(&arg0, RuleScope::Arg0, &names).unwrap();
    assert_eq!(d, op(RuleScope::Arg0).expected_digest(""));
    // arg0 asked, the churn delivered anyway.
    let e = sub::name_churn_digest(&broad, RuleScope::Arg0, &names)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("for the churned name 20 (must be 0)") && e.contains("other names 1"),
        "{e}"
    );
    // A change lost under the broad rule.
    let e = sub::name_churn_digest(&broad[1..], RuleScope::Broad, &names)
        .unwrap_err()
        .to_string();
    assert!(e.contains("for the churned name 19 (must be 20)"), "{e}");
    assert!(sub::name_owner_rule(RuleScope::Arg0, sentinel).ends_with(&format!(",arg0='{sentinel}'")));
}

#[test]
fn every_family_needs_a_bus_and_is_opt_in() {
    for op in [
        SubscriptionOp::MatchChurn,
        SubscriptionOp::Burst(100),
        SubscriptionOp::Delivered(RuleScope::Arg0),
        SubscriptionOp::NameOwnerChurn(RuleScope::Broad),
    ] {
        let op = IpcOp::Subscription(op);
        assert!(op.opt_in());
        assert!(ipc::needs_bus(op).is_some());
        assert!(op.family().starts_with("signal/"));
    }
}
