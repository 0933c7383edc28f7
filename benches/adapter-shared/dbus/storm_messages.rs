//! The messages of `property/changed-storm/<n>` in the dbus-rs adapters
//! (harness::ipc::storm is the canon): dbus-rs has no property cache, so the
//! program keeps each announced value itself. The emitter sends each update as
//! the generated `PropertiesPropertiesChanged` (dbus-codegen's struct of the
//! standard interface, `SignalArgs::to_emit_message`), the subscriber reads the
//! same struct back. Blocking (dbus-0.9) and Tokio (dbus-tokio-0.7) differ only in
//! how they send and wait, so the messages are written once here.

use dbus::arg::{prop_cast, PropMap, RefArg, Variant};
pub use dbus::blocking::stdintf::org_freedesktop_dbus::PropertiesPropertiesChanged;
use dbus::message::{MatchRule, SignalArgs};
use dbus::{Message, Path};
use harness::ipc::storm as st;

/// Who holds the value (the storm note's words).
pub const HOLDER: &str = "the program (dbus-rs has no property cache)";

/// The storm object's path.
pub fn path() -> anyhow::Result<Path<'static>> {
    Path::new(st::STORM_PATH).map_err(|e| anyhow::anyhow!("{e}"))
}

/// The rule the subscriber installs (AddMatch on the bus, and the local filter).
pub fn rule(path: &Path<'static>) -> MatchRule<'static> {
    PropertiesPropertiesChanged::match_rule(None, Some(path)).static_clone()
}

/// The update announcing `Level = value`, as the emitter sends it.
pub fn update(path: &Path<'static>, value: i32) -> Message {
    let mut changed = PropMap::new();
    changed.insert(
        st::STORM_PROPERTY.to_owned(),
        Variant(Box::new(value) as Box<dyn RefArg>),
    );
    PropertiesPropertiesChanged {
        interface_name: st::STORM_INTERFACE.to_owned(),
        changed_properties: changed,
        invalidated_properties: Vec::new(),
    }
    .to_emit_message(path)
}

/// The value an update announces: `None` for another interface's change; a message
/// of the storm's interface without the value counts as received and holds
/// nothing new (`i32::MIN`).
pub fn level_of(pc: &PropertiesPropertiesChanged) -> Option<i32> {
    (pc.interface_name == st::STORM_INTERFACE).then(|| {
        prop_cast::<i32>(&pc.changed_properties, st::STORM_PROPERTY)
            .copied()
            .unwrap_or(i32::MIN)
    })
}

/// What the subscriber saw, for `storm_digest`.
pub fn seen(updates: Vec<i32>) -> st::StormSeen {
    st::StormSeen {
        received: updates.len(),
        last: updates.last().copied(),
        updates,
        holder: HOLDER,
    }
}
