//! The scenarios the harness knows. `matrix.toml` chooses among these ids;
//! docs/scenarios.md describes each precisely.

use crate::payload::{self, Body};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Plain Rust values -> complete wire bytes of the test signal.
    Marshal,
    /// Canonical wire bytes -> the library's typed values -> every field read.
    Demarshal,
}

/// What a demarshal adapter is told about the bytes it gets: the body's
/// shape, never its values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `count` units of `st(ts)a{si}atas`.
    Units { count: usize },
    /// One `a{sv}` whose values are all strings.
    AsvDict,
}

#[derive(Debug)]
pub struct Scenario {
    pub id: &'static str,
    pub kind: Kind,
    /// The part after the slash, shared by the marshal and demarshal twins.
    pub payload: &'static str,
    pub build_body: fn() -> Body,
    pub summary: &'static str,
}

impl Scenario {
    pub fn body(&self) -> Body {
        (self.build_body)()
    }

    pub fn shape(&self) -> Shape {
        match self.body() {
            Body::Units(u) => Shape::Units { count: u.len() },
            Body::AsvDict(_) => Shape::AsvDict,
        }
    }
}

macro_rules! pair {
    ($payload:literal, $build:path, $summary:literal) => {
        [
            Scenario {
                id: concat!("marshal/", $payload),
                kind: Kind::Marshal,
                payload: $payload,
                build_body: $build,
                summary: $summary,
            },
            Scenario {
                id: concat!("demarshal/", $payload),
                kind: Kind::Demarshal,
                payload: $payload,
                build_body: $build,
                summary: $summary,
            },
        ]
    };
}

static SCENARIOS: [[Scenario; 2]; 4] = [
    pair!(
        "mixed",
        payload::mixed,
        "10 units of st(ts)a{si}atas; dict A..E, 15 x u64::MAX, [\"\"]"
    ),
    pair!(
        "big-array",
        payload::big_array,
        "1 unit with an array of 10240 u64 zeros"
    ),
    pair!("str-array", payload::str_array, "1 unit with an array of 10240 strings"),
    pair!(
        "asv-dict",
        payload::asv_dict,
        "a{sv} of 10240 string variants (the properties pattern)"
    ),
];

/// Every scenario, marshal ones first.
pub fn all() -> impl Iterator<Item = &'static Scenario> {
    SCENARIOS.iter().map(|p| &p[0]).chain(SCENARIOS.iter().map(|p| &p[1]))
}

pub fn find(id: &str) -> Option<&'static Scenario> {
    all().find(|s| s.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_found() {
        let ids: Vec<_> = all().map(|s| s.id).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(ids.len(), sorted.len());
        assert_eq!(ids.len(), 8);
        assert!(find("marshal/mixed").is_some());
        assert!(find("marshal/nope").is_none());
        assert_eq!(find("demarshal/mixed").unwrap().shape(), Shape::Units { count: 10 });
    }
}
