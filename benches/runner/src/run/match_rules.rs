//! `signal/match-rules/<kind>/<n>`: the runner's own connections hold `n`
//! never-matching rules while the adapter's `signal/fanout/1` is timed, so
//! the rules are the same for every library and what grows with `n` is the
//! bus's matching. They are installed pipelined (one round trip per
//! connection, `RawConnection::add_matches`) and kept across the cells
//! that want the same rules, so a run installs each set once per bus and
//! adapter order, not once per round.

use std::path::Path;
use std::time::Duration;

use bus::raw_client::RawConnection;
use harness::ipc::RuleKind;

/// Rules per connection: below our configs' `max_match_rules_per_connection`
/// (bus/src/config.rs, 20 000), so 2^17 rules take 8 connections.
pub const RULES_PER_CONNECTION: usize = 16_384;

/// Which rules are held.
pub type RuleSet = (RuleKind, usize);

/// Open connections holding a [`RuleSet`]; the rules go with them on drop.
pub struct HeldRules {
    pub set: RuleSet,
    _connections: Vec<RawConnection>,
}

impl HeldRules {
    /// Connects to `socket` and installs the rules of `set`, verified: every
    /// AddMatch answered without an error.
    pub fn install(socket: &Path, set: RuleSet) -> Result<HeldRules, String> {
        let (kind, n) = set;
        let rules: Vec<String> = (0..n).map(|i| kind.rule(i)).collect();
        let connections = rules
            .chunks(RULES_PER_CONNECTION)
            .map(|chunk| {
                let mut c = RawConnection::connect(socket, Duration::from_secs(120))?;
                c.hello()?;
                c.add_matches(chunk)?;
                Ok(c)
            })
            .collect::<anyhow::Result<Vec<_>>>()
            .map_err(|e| format!("the runner could not hold {n} {} match rules: {e:#}", kind.slug()))?;
        Ok(HeldRules {
            set,
            _connections: connections,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_are_distinct_and_never_match_the_ping() {
        for kind in RuleKind::ALL {
            let a = kind.rule(0);
            assert_ne!(a, kind.rule(1));
            assert!(a.starts_with("type='signal',"), "{a}");
        }
        assert!(RuleKind::Sender
            .rule(3)
            .contains("sender='org.dbusmatrix.NoSuchSender.N3'"));
        assert!(!RuleKind::Wildcard.rule(3).contains("sender="));
        assert!(!RuleKind::Wildcard
            .rule(3)
            .contains(&format!("member='{}'", harness::ipc::SIGNAL)));
    }
}
