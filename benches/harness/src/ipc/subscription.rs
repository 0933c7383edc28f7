//! What users of the libraries complain about on the subscribing side of
//! signals (issue 31): match-rule churn, delivered counts, name-owner churn,
//! floods into slow consumers, PropertiesChanged storms ([`super::storm`]). Each is one variant
//! of [`SubscriptionOp`], carried by [`super::IpcOp::Subscription`], so that
//! an adapter without code for them needs one match arm for the whole group.
//!
//! Every one is opt-in ([`super::IpcOp::opt_in`]) and needs a bus (match
//! rules are the bus's). The definitions in prose: docs/scenarios.md,
//! "Subscriptions under load".

/// One operation of the subscription families.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubscriptionOp {
    /// `signal/match-churn`: AddMatch of [`churn_rule`] then RemoveMatch of
    /// the same rule through the library's API, both replies awaited (two
    /// round trips to the bus). The bus answers RemoveMatch of a rule it does
    /// not hold with `org.freedesktop.DBus.Error.MatchRuleNotFound`, so a
    /// client whose AddMatch never reached the bus fails the operation.
    MatchChurn,
    /// `signal/burst/<n>`: a stalled consumer. One connection emits `n`
    /// `Ping`s ([`burst_text`]`(i)`) and then [`BURST_END`] while a second
    /// connection of the same process, subscribed with [`super::ping_rule`],
    /// is not read; then the second reads until [`BURST_END`]. The op checks
    /// what arrived with [`burst_digest`]: every Ping lost, duplicated or
    /// reordered on the way (by the library, or by a bus that disconnected
    /// the consumer) fails it with the counts.
    Burst(usize),
    /// `signal/delivered/<scope>`: how many signals a subscription delivers.
    /// One connection emits [`delivered_texts`] (9 non-matching `Ping`s, then
    /// the matching one, [`super::SIGNAL_TEXT`]); a second connection of the
    /// same process, subscribed with [`delivered_rule`]`(scope)` through the
    /// library, reads up to the matching one. Checked by [`delivered_digest`]:
    /// the broad rule must deliver all 10, the `arg0` rule only the matching one.
    Delivered(RuleScope),
    /// `signal/name-owner-churn/<scope>`: one connection requests and releases
    /// a well-known name [`NAME_CHURNS`] times, then the sentinel name once
    /// ([`churn_names`]); a second connection of the same process, subscribed
    /// to NameOwnerChanged with [`name_owner_rule`]`(scope)`, reads up to the
    /// sentinel's release. Checked by [`name_churn_digest`].
    NameOwnerChurn(RuleScope),
    /// `property/changed-storm/<n>`: `n` PropertiesChanged of one property
    /// into a caching proxy, which must end with the last value
    /// ([`super::storm`]; checked by [`super::storm::storm_digest`]).
    PropertyStorm(usize),
}

/// RequestName + ReleaseName pairs of the churned name per `signal/name-owner-churn` operation.
pub const NAME_CHURNS: usize = 10;

/// (churned name, sentinel name) of this process: under the bus policy's
/// `io.killing.spark` prefix, distinct per process.
pub fn churn_names() -> (String, String) {
    churn_names_of(std::process::id())
}

/// [`churn_names`] of process `pid` (the canon exports them as templates of the pid).
pub fn churn_names_of(pid: u32) -> (String, String) {
    (
        format!("io.killing.spark.Churn.p{pid}"),
        format!("io.killing.spark.ChurnEnd.p{pid}"),
    )
}

/// The NameOwnerChanged rule of `signal/name-owner-churn/<scope>`: every
/// change (broad), or only the sentinel's (`arg0`, the bus filters).
pub fn name_owner_rule(scope: RuleScope, sentinel: &str) -> String {
    let broad = "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',\
                 member='NameOwnerChanged'";
    match scope {
        RuleScope::Broad => broad.to_string(),
        RuleScope::Arg0 => format!("{broad},arg0='{sentinel}'"),
    }
}

/// What a `signal/name-owner-churn/<scope>` subscriber was handed: the
/// `(name, new_owner)` of each NameOwnerChanged up to the sentinel's release,
/// checked. The broad rule must deliver the churned name's 2 ×
/// [`NAME_CHURNS`] changes and the sentinel's 2 (other names' changes, from
/// peers coming and going, are counted and allowed); the `arg0` rule only the
/// sentinel's 2.
pub fn name_churn_digest(
    received: &[(String, String)],
    scope: RuleScope,
    names: &(String, String),
) -> anyhow::Result<u64> {
    let (churned, sentinel) = names;
    let count = |n: &str| received.iter().filter(|(name, _)| name == n).count();
    let (c, s) = (count(churned), count(sentinel));
    let other = received.len() - c - s;
    let want_churned = match scope {
        RuleScope::Broad => 2 * NAME_CHURNS,
        RuleScope::Arg0 => 0,
    };
    let other_ok = scope == RuleScope::Broad || other == 0;
    anyhow::ensure!(
        c == want_churned && s == 2 && other_ok,
        "{} rule: NameOwnerChanged delivered for the churned name {c} (must be {want_churned}), for the sentinel \
         {s} (must be 2), for other names {other}",
        scope.slug()
    );
    Ok(name_churn_expected(scope))
}

fn name_churn_expected(scope: RuleScope) -> u64 {
    let mut d = crate::digest::Digest::new();
    d.len(match scope {
        RuleScope::Broad => 2 * NAME_CHURNS,
        RuleScope::Arg0 => 0,
    });
    d.len(2);
    d.finish()
}

/// The subscriber's rule in `signal/delivered/<scope>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleScope {
    /// [`super::ping_rule`]: every `Ping`, whatever its text (the program filters).
    Broad,
    /// [`super::ping_rule`] with `arg0='Testtest'`: the bus filters.
    Arg0,
}

impl RuleScope {
    pub const ALL: [RuleScope; 2] = [RuleScope::Broad, RuleScope::Arg0];

    /// The part of the scenario id after `signal/delivered/`.
    pub fn slug(self) -> &'static str {
        match self {
            RuleScope::Broad => "broad",
            RuleScope::Arg0 => "arg0",
        }
    }

    /// How many `Ping`s of [`delivered_texts`] the subscription must deliver.
    pub fn delivered(self) -> usize {
        match self {
            RuleScope::Broad => DELIVERED_NOISE + 1,
            RuleScope::Arg0 => 1,
        }
    }
}

/// Non-matching `Ping`s emitted before the matching one in `signal/delivered/<scope>`.
pub const DELIVERED_NOISE: usize = 9;

/// The texts `signal/delivered/<scope>` emits, in order: [`DELIVERED_NOISE`]
/// `"noise <i>"`, then [`super::SIGNAL_TEXT`] (the one an `arg0` rule matches, and the end).
pub fn delivered_texts() -> Vec<String> {
    let mut t: Vec<String> = (0..DELIVERED_NOISE).map(delivered_noise_text).collect();
    t.push(super::SIGNAL_TEXT.to_string());
    t
}

/// The text of the `i`-th non-matching `Ping` of `signal/delivered/<scope>`.
pub fn delivered_noise_text(i: usize) -> String {
    format!("noise {i}")
}

/// The subscriber's match rule in `signal/delivered/<scope>`.
pub fn delivered_rule(scope: RuleScope) -> String {
    match scope {
        RuleScope::Broad => super::ping_rule(),
        RuleScope::Arg0 => format!("{},arg0='{}'", super::ping_rule(), super::SIGNAL_TEXT),
    }
}

/// The texts a `signal/delivered/<scope>` subscriber was handed, up to and
/// including [`super::SIGNAL_TEXT`], checked: their digest, or an error with
/// how many were delivered against how many the rule lets through.
pub fn delivered_digest<S: AsRef<str>>(received: &[S], scope: RuleScope) -> anyhow::Result<u64> {
    let texts = delivered_texts();
    let expected: &[String] = &texts[texts.len() - scope.delivered()..];
    let got: Vec<&str> = received.iter().map(AsRef::as_ref).collect();
    anyhow::ensure!(
        got == expected,
        "{} rule: the subscription delivered {} Pings ({} non-matching) of the {} emitted; it must deliver {}",
        scope.slug(),
        got.len(),
        got.iter().filter(|t| **t != super::SIGNAL_TEXT).count(),
        texts.len(),
        scope.delivered()
    );
    Ok(delivered_expected(scope))
}

fn delivered_expected(scope: RuleScope) -> u64 {
    let texts = delivered_texts();
    let mut d = crate::digest::Digest::new();
    for t in &texts[texts.len() - scope.delivered()..] {
        d.str(t);
    }
    d.len(scope.delivered());
    d.finish()
}

/// Sizes of `signal/burst/<n>`: smoke and quick run the small one, full both
/// (sd-bus once failed with ENOBUFS at 10K signals).
pub const BURST_SIZES: [usize; 2] = [100, 10000];

/// The text of the `i`-th `Ping` of a burst.
pub fn burst_text(i: usize) -> String {
    format!("burst {i}")
}

/// The text of the `Ping` that ends a burst.
pub const BURST_END: &str = "burst end";

/// What a burst's consumer received before [`BURST_END`], in order, checked
/// against the `n` sent: the digest of the texts (as
/// [`SubscriptionOp::expected_digest`] of `Burst(n)`), or an error that says
/// how many were received, lost, duplicated or out of order.
pub fn burst_digest<S: AsRef<str>>(received: &[S], n: usize) -> anyhow::Result<u64> {
    let mut seen = vec![0usize; n];
    let mut foreign = 0;
    let mut in_order = true;
    let mut last = None;
    for text in received {
        match text
            .as_ref()
            .strip_prefix("burst ")
            .and_then(|i| i.parse::<usize>().ok())
        {
            Some(i) if i < n => {
                seen[i] += 1;
                in_order &= last.is_none_or(|l| l < i);
                last = Some(i);
            }
            _ => foreign += 1,
        }
    }
    let lost = seen.iter().filter(|&&c| c == 0).count();
    let duplicated: usize = seen.iter().map(|&c| c.saturating_sub(1)).sum();
    anyhow::ensure!(
        lost == 0 && duplicated == 0 && foreign == 0 && in_order,
        "burst of {n} Pings into a consumer that did not read: received {}, lost {lost}, duplicated {duplicated}, foreign {foreign}, {} (the first lost: {:?})",
        received.len(),
        if in_order { "in order" } else { "out of order" },
        seen.iter().position(|&c| c == 0),
    );
    let mut d = crate::digest::Digest::new();
    for t in received {
        d.str(t.as_ref());
    }
    d.len(received.len());
    Ok(d.finish())
}

impl SubscriptionOp {
    /// The scenario id without its size, for reasons.
    pub fn family(self) -> &'static str {
        match self {
            SubscriptionOp::MatchChurn => "signal/match-churn",
            SubscriptionOp::Burst(_) => "signal/burst",
            SubscriptionOp::Delivered(_) => "signal/delivered",
            SubscriptionOp::NameOwnerChurn(_) => "signal/name-owner-churn",
            SubscriptionOp::PropertyStorm(_) => "property/changed-storm",
        }
    }

    /// Digest of what the client must receive per operation.
    pub fn expected_digest(self) -> u64 {
        let mut d = crate::digest::Digest::new();
        match self {
            SubscriptionOp::MatchChurn => {}
            SubscriptionOp::Burst(n) => {
                for i in 0..n {
                    d.str(&burst_text(i));
                }
                d.len(n);
            }
            SubscriptionOp::Delivered(scope) => return delivered_expected(scope),
            SubscriptionOp::NameOwnerChurn(scope) => return name_churn_expected(scope),
            SubscriptionOp::PropertyStorm(n) => return super::storm::expected_digest(n),
        }
        d.finish()
    }

    /// The size in the scenario id, if any (the canon's argument).
    pub fn size(self) -> Option<usize> {
        match self {
            SubscriptionOp::MatchChurn => None,
            SubscriptionOp::Burst(n) | SubscriptionOp::PropertyStorm(n) => Some(n),
            SubscriptionOp::Delivered(_) | SubscriptionOp::NameOwnerChurn(_) => None,
        }
    }

    /// The op's name in the canon (`canon::op_json`).
    pub fn canon_kind(self) -> &'static str {
        match self {
            SubscriptionOp::MatchChurn => "match-churn",
            SubscriptionOp::Burst(_) => "burst",
            SubscriptionOp::Delivered(RuleScope::Broad) => "delivered-broad",
            SubscriptionOp::Delivered(RuleScope::Arg0) => "delivered-arg0",
            SubscriptionOp::NameOwnerChurn(RuleScope::Broad) => "name-owner-churn-broad",
            SubscriptionOp::NameOwnerChurn(RuleScope::Arg0) => "name-owner-churn-arg0",
            SubscriptionOp::PropertyStorm(_) => "property-storm",
        }
    }

    /// Why the op cannot run peer to peer.
    pub fn needs_bus(self) -> &'static str {
        match self {
            SubscriptionOp::MatchChurn => {
                "AddMatch and RemoveMatch are calls to the bus; peer to peer there is no bus to hold a rule"
            }
            SubscriptionOp::Delivered(_) => {
                "match rules are the bus's (AddMatch): peer to peer nothing filters or routes a signal"
            }
            SubscriptionOp::NameOwnerChurn(_) => {
                "names and NameOwnerChanged are the bus's; peer to peer there is no bus to own a name on"
            }
            SubscriptionOp::Burst(_) => {
                "a burst is routed by the bus to a subscribed connection; peer to peer nothing routes a signal \
                 to a second client connection"
            }
            SubscriptionOp::PropertyStorm(_) => {
                "the storm is routed by the bus from the emitting connection to the caching proxy's; peer to peer \
                 nothing routes a signal to a second client connection"
            }
        }
    }
}

/// The rule `signal/match-churn` adds and removes: valid, and never matching
/// anything the benchmark emits.
pub fn churn_rule() -> String {
    format!(
        "type='signal',interface='{}',member='ChurnSignal',path='{}'",
        super::INTERFACE,
        super::OBJECT_PATH
    )
}

/// The error name a bus answers RemoveMatch with when it holds no such rule.
pub const MATCH_RULE_NOT_FOUND: &str = "org.freedesktop.DBus.Error.MatchRuleNotFound";
