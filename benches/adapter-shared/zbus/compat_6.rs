//! What zbus 6 spells its own way, for the zbus sources in adapter-shared/zbus/ (the codec,
//! the service, the property objects; its IPC driver is ipc_async.rs, zbus 6 having no
//! blocking API). Compiled as `crate::compat` by adapter-zbus-6 and adapter-zbus-6-tokio,
//! which differ only in `crate::runtime` (the executor behind `block_on`), so this file
//! is shared rather than kept in one adapter's src/: `Message::signal(..)` without `?`,
//! `Context::new`, zvariant merged in as `zbus::wire` (`as_variant`, `OwnedVariant`,
//! signature trees), the `Interface` signatures with `BoxDBusError` and
//! `DispatchResult`.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::os::unix::net::UnixStream;

use harness::payload;
use zbus::message::Builder;
use zbus::object_server::{DispatchResult, Interface};
use zbus::wire::serialized::{Context, Data};
use zbus::wire::Endian;
use zbus::{fdo, message, BoxDBusError, Connection, ObjectServer};

/// The executor of the async storm client (adapter-shared/zbus/storm.rs).
pub use crate::runtime::block_on;
pub use zbus::message::Message;
pub use zbus::object_server::SignalEmitter;
pub use zbus::wire::as_variant::Serialize as SerializeVariant;
pub use zbus::wire::{as_variant, DynamicDeserialize, DynamicType, Signature};
pub use zbus::{Error as WireError, OwnedObjectPath, OwnedVariant, Result as WireResult, Type, Variant};

use crate::props::PropsObject;

// ---- the codec ----

pub struct Zbus;

const SERIAL: NonZeroU32 = NonZeroU32::new(payload::SERIAL).unwrap();

impl Zbus {
    pub fn signal_builder(&self) -> zbus::Result<Builder<'static>> {
        Ok(Message::signal(payload::PATH, payload::INTERFACE, payload::MEMBER)
            .serial(SERIAL)
            .endian(Endian::Little))
    }
}

pub fn codec_unsupported() -> Option<String> {
    None
}

crate::compat_common::message_functions!(Context::new);

// ---- the property objects (`property/get-all/<n>`) ----

#[async_trait::async_trait]
impl Interface for PropsObject {
    crate::compat_common::interface_common!(DispatchResult);

    async fn get(
        &self,
        property_name: &str,
        _server: &ObjectServer,
        _connection: &Connection,
        _header: Option<&message::Header<'_>>,
        _emitter: &SignalEmitter<'_>,
    ) -> Option<Result<OwnedVariant, BoxDBusError>> {
        self.values.get(property_name).map(|v| Ok(v.clone()))
    }

    async fn get_all(
        &self,
        _server: &ObjectServer,
        _connection: &Connection,
        _header: Option<&message::Header<'_>>,
        _emitter: &SignalEmitter<'_>,
    ) -> fdo::Result<HashMap<String, OwnedVariant>> {
        Ok(self.values.clone())
    }

    async fn set_mut(
        &mut self,
        property_name: &str,
        _value: &Variant<'_>,
        _server: &ObjectServer,
        _connection: &Connection,
        _header: Option<&message::Header<'_>>,
        _emitter: &SignalEmitter<'_>,
    ) -> Option<Result<(), BoxDBusError>> {
        self.values
            .contains_key(property_name)
            .then(|| Err(Box::new(fdo::Error::PropertyReadOnly(property_name.to_owned())) as BoxDBusError))
    }
}

/// The builder on a connected socket (adapter-shared/zbus/builders.rs); zbus 6
/// takes a std stream whichever runtime it runs on.
pub fn stream_builder(stream: UnixStream) -> zbus::connection::Builder<'static> {
    zbus::connection::Builder::unix_stream(stream)
}
