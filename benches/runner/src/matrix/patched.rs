//! A patched row (`run --patch`): a matrix entry whose executable was built
//! against a local source of its library. The type lives with the entries
//! it marks; `crate::patch` builds them.

use std::path::PathBuf;

use harness::results::PatchRecord;

/// The suffix of a patched row's id (and of the name its sockets take).
pub const SUFFIX: &str = "+patch";

/// What makes an adapter entry a patched row: where its executable is and
/// what it was built from.
#[derive(Debug, Clone)]
pub struct Patched {
    /// The adapter built against the patched sources (its listing says this id).
    pub of: String,
    /// The executable: the patched build's binary, or the program's wrapper.
    pub bin: PathBuf,
    pub record: PatchRecord,
}
