//! What the report formats print, computed apart from any one format: the
//! matrix as tables ([`table`]), a cell's interval width facts ([`width`]),
//! the idle-connections rows ([`connection_memory`]) and the interop table's
//! texts ([`interop`]). The printers (markdown, csv, json, bmf, critcmp,
//! html) read these, and these import no printer. Not yet a report built
//! once: each printer still asks [`table`] as it goes, and
//! `connection_memory` and `interop` still write their own Markdown sections.

pub mod connection_memory;
pub mod interop;
pub mod report;
pub mod table;
pub mod width;
