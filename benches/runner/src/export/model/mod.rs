//! What the report formats print, computed apart from any one format: the
//! matrix as tables ([`table`]), a cell's interval width facts ([`width`]),
//! the idle-connections rows ([`connection_memory`]), plain sections
//! ([`section`]: idle costs, bus daemon memory), the interop table's
//! texts ([`interop`]) and the charts' data ([`charts`]), put together once as a [`report::Report`];
//! the portable table every format leads with and the labels of figures ([`portable`]). The
//! printers read these, and these import no printer: Markdown and HTML print
//! the `Report` and the portable table only; csv, json, bmf and critcmp are one row or record per
//! cell and read [`table`], [`width`] and [`connection_memory`] directly.

pub mod bus_memory;
pub mod charts;
pub mod connection_memory;
pub mod idle_cost;
pub mod interop;
pub mod portable;
pub mod report;
pub mod section;
pub mod table;
pub mod width;
