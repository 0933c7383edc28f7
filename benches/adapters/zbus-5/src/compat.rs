//! What zbus 5 spells its own way, for the zbus sources in adapter-shared/zbus/ (the codec,
//! the service, the property objects and the blocking IPC driver that zbus 4 shares): the
//! signal builder with `serial` and `endian` setters, `Message::from_bytes` over
//! `serialized::Data`, `Body::deserialize`; zvariant 5's paths (`as_value`, signature trees);
//! `SignalEmitter`; the `Interface` signatures with server, connection, header and emitter
//! arguments (`DispatchResult2`); requesting the server's name through the builder; a peer
//! connection on async-io's `UnixStream`; `Connection::closed`.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::os::unix::net::UnixStream;
use std::path::Path;

use anyhow::{Context as _, Result};
use harness::ipc as h;
use harness::payload;
use zbus::blocking::{self, fdo as bfdo};
use zbus::message::Builder;
use zbus::names::InterfaceName;
use zbus::object_server::{DispatchResult2, Interface};
use zbus::zvariant::serialized::{Context, Data};
use zbus::zvariant::Endian;
use zbus::{fdo, message, Connection, ObjectServer};

/// The executor of the async storm client (adapter-shared/zbus/storm.rs).
pub use zbus::block_on;
pub use zbus::message::Message;
pub use zbus::object_server::SignalEmitter;
pub use zbus::zvariant::as_value::Serialize as SerializeVariant;
pub use zbus::zvariant::{
    as_value as as_variant, DynamicDeserialize, DynamicType, Error as WireError, OwnedObjectPath,
    OwnedValue as OwnedVariant, Result as WireResult, Signature, Type, Value as Variant,
};

use crate::props::PropsObject;
use crate::service::BenchService;

// ---- the codec ----

pub struct Zbus;

const SERIAL: NonZeroU32 = NonZeroU32::new(payload::SERIAL).unwrap();

impl Zbus {
    pub fn signal_builder(&self) -> zbus::Result<Builder<'static>> {
        Ok(Message::signal(payload::PATH, payload::INTERFACE, payload::MEMBER)?
            .serial(SERIAL)
            .endian(Endian::Little))
    }
}

pub fn codec_unsupported() -> Option<String> {
    None
}

crate::compat_common::message_functions!(Context::new_dbus);

// ---- the IPC side ----

/// The bus server's connection, with the benchmark objects, owning `service_name`.
pub fn bus_server(socket: &Path, service_name: &str) -> Result<blocking::Connection> {
    // zbus 5 requests names with ALLOW_REPLACEMENT | REPLACE_EXISTING | DO_NOT_QUEUE by
    // default: a second server would take the name over. DO_NOT_QUEUE alone fails
    // (zbus::Error::NameTaken) when the name is owned.
    peer_builder(UnixStream::connect(socket).context("connecting to the bus")?)
        .name(service_name)?
        .allow_name_replacements(false)
        .replace_existing_names(false)
        .serve_at(h::OBJECT_PATH, BenchService::new(service_name))?
        .serve_at(h::OBJECT_PATH, crate::fds::FdService)?
        .build()
        .with_context(|| format!("connecting the server to the bus and requesting {service_name}"))
}

/// A blocking builder on a connected socket, to a bus or a peer (not
/// `Builder::address`: zbus does not decode an address's `%XX` escapes).
pub fn peer_builder(stream: UnixStream) -> blocking::connection::Builder<'static> {
    blocking::connection::Builder::async_io_unix_stream(stream)
}

/// Blocks until the peer has closed `conn`.
pub fn wait_closed(conn: &blocking::Connection) {
    conn.closed()
}

pub fn properties_get_all(
    proxy: &bfdo::PropertiesProxy<'_>,
    iface: InterfaceName<'static>,
) -> fdo::Result<HashMap<String, OwnedVariant>> {
    proxy.get_all(iface)
}

// ---- the property objects (`property/get-all/<n>`) ----

#[async_trait::async_trait]
impl Interface for PropsObject {
    crate::compat_common::interface_common!(DispatchResult2);

    async fn get(
        &self,
        property_name: &str,
        _server: &ObjectServer,
        _connection: &Connection,
        _header: Option<&message::Header<'_>>,
        _emitter: &SignalEmitter<'_>,
    ) -> Option<fdo::Result<OwnedVariant>> {
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
    ) -> Option<fdo::Result<()>> {
        self.values
            .contains_key(property_name)
            .then(|| Err(fdo::Error::PropertyReadOnly(property_name.to_owned())))
    }
}

/// The async builder on a connected socket (adapter-shared/zbus/builders.rs).
pub fn stream_builder(stream: UnixStream) -> zbus::connection::Builder<'static> {
    zbus::connection::Builder::async_io_unix_stream(stream)
}
