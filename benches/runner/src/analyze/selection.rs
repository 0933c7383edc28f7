//! Which cells a reading command looks at (`--adapters`, `--scenarios`,
//! `--buses`), shared by `history` and `spread`.

use std::collections::BTreeMap;

use harness::results::{Cell, CellKey, ResultsFile};

#[derive(Clone, Debug, Default)]
pub struct CellSelection {
    /// Only these adapters; empty: all.
    pub adapters: Vec<String>,
    /// Only these scenarios; empty: all.
    pub scenarios: Vec<String>,
    /// Only IPC cells on these buses; empty: every cell.
    pub buses: Vec<String>,
}

impl CellSelection {
    /// The selected cells of a results file, by key.
    pub fn index<'r>(&self, r: &'r ResultsFile) -> BTreeMap<CellKey, &'r Cell> {
        r.cells.iter().filter(|c| self.wants(c)).map(|c| (c.key(), c)).collect()
    }

    pub fn wants(&self, c: &Cell) -> bool {
        (self.adapters.is_empty() || self.adapters.contains(&c.adapter))
            && (self.scenarios.is_empty() || self.scenarios.contains(&c.scenario))
            && (self.buses.is_empty() || c.bus.as_ref().is_some_and(|b| self.buses.contains(b)))
    }

    /// A name no cell has is a typo, not an empty result: an error naming
    /// it, "no adapter \"x\" in {nowhere}".
    pub fn check_names<'a>(&self, cells: impl Iterator<Item = &'a Cell> + Clone, nowhere: &str) -> anyhow::Result<()> {
        let check = |names: &[String], what: &str, has: &dyn Fn(&Cell, &str) -> bool| -> anyhow::Result<()> {
            for n in names {
                anyhow::ensure!(cells.clone().any(|c| has(c, n)), "no {what} {n:?} in {nowhere}");
            }
            Ok(())
        };
        check(&self.adapters, "adapter", &|c, n| c.adapter == n)?;
        check(&self.scenarios, "scenario", &|c, n| c.scenario == n)?;
        check(&self.buses, "bus", &|c, n| c.bus.as_deref() == Some(n))
    }
}
