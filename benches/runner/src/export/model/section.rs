//! A plain table section of the report (a heading, what it measures, a head
//! and rows of texts), for the sections the formats for people print alike:
//! the idle costs ([`super::idle_cost`]) and the bus daemons' memory
//! ([`super::bus_memory`]). Markdown and HTML print every such section the
//! same way, so a new one needs no printer code.

/// One section; built only when the run has its cells.
#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    /// The HTML anchor.
    pub id: &'static str,
    pub title: &'static str,
    pub explain: String,
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
}
