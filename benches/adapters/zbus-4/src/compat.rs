//! What zbus 4 spells its own way, for the zbus sources in adapter-shared/zbus/ (the codec,
//! the service, the property objects and the blocking IPC driver that zbus 5 shares): no
//! serial setter (a template header, `Builder::from`), `Message::from_bytes` over
//! `serialized::Data`, `Body::deserialize`; zvariant 4's paths (`SerializeValue`,
//! `DeserializeValue`, string signatures); `SignalContext` (zbus 5 renamed it
//! `SignalEmitter`); the `Interface` signatures without server or connection arguments
//! (`DispatchResult`) and an `OwnedValue` that is not `Clone`; requesting the server's
//! name after connecting; a peer connection on std's `UnixStream`; no `Connection::closed`.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::os::unix::net::UnixStream;
use std::path::Path;

use anyhow::{Context as _, Result};
use harness::ipc as h;
use harness::payload;
use zbus::blocking::{self, fdo as bfdo, MessageIterator};
use zbus::message::{Builder, Type as MessageType};
use zbus::names::InterfaceName;
use zbus::object_server::{DispatchResult, Interface};
use zbus::zvariant::serialized::{Context, Data};
use zbus::zvariant::Endian;
use zbus::{fdo, MatchRule};

/// The executor of the async storm client (adapter-shared/zbus/storm.rs).
pub use zbus::block_on;
pub use zbus::message::Message;
pub use zbus::object_server::SignalContext as SignalEmitter;
pub use zbus::zvariant::{
    DeserializeValue, DynamicDeserialize, DynamicType, Error as WireError, OwnedObjectPath, OwnedValue as OwnedVariant,
    Result as WireResult, SerializeValue as SerializeVariant, Signature, Type, Value as Variant,
};

use crate::props::PropsObject;
use crate::service::BenchService;

// ---- the codec ----

/// zbus 4 takes serials from a global counter when a builder is created and
/// has no serial setter: serial 1 is set on a header, which `Builder::from`
/// accepts. The header comes from a message built once with no body.
pub struct Zbus {
    template: Message,
}

impl Zbus {
    pub fn new() -> zbus::Result<Self> {
        let template = Message::signal(payload::PATH, payload::INTERFACE, payload::MEMBER)?
            .endian(Endian::Little)
            .build(&())?;
        Ok(Zbus { template })
    }
}

const SERIAL: NonZeroU32 = NonZeroU32::new(payload::SERIAL).unwrap();

impl Zbus {
    pub fn signal_builder(&self) -> zbus::Result<Builder<'_>> {
        let mut header = self.template.header();
        header.primary_mut().set_serial_num(SERIAL);
        Ok(Builder::from(header))
    }
}

pub fn codec_unsupported() -> Option<String> {
    None
}

crate::compat_common::message_functions!(Context::new_dbus);

// ---- the IPC side ----

/// The bus server's connection, with the benchmark objects, owning `service_name`.
pub fn bus_server(socket: &Path, service_name: &str) -> Result<blocking::Connection> {
    let conn = peer_builder(UnixStream::connect(socket).context("connecting to the bus")?)
        .serve_at(h::OBJECT_PATH, BenchService::new(service_name))?
        .serve_at(h::OBJECT_PATH, crate::fds::FdService)?
        .build()
        .context("connecting the server to the bus")?;
    // Not the builder's `name`: it requests with REPLACE_EXISTING, which would take
    // the name from an owner that allows replacement. DO_NOT_QUEUE alone fails
    // (zbus::Error::NameTaken) when the name is owned.
    conn.request_name_with_flags(service_name, zbus::fdo::RequestNameFlags::DoNotQueue.into())
        .with_context(|| format!("requesting {service_name}"))?;
    Ok(conn)
}

/// A blocking builder on a connected socket, to a bus or a peer (not
/// `Builder::address`: zbus does not decode an address's `%XX` escapes).
pub fn peer_builder(stream: UnixStream) -> blocking::connection::Builder<'static> {
    blocking::connection::Builder::unix_stream(stream)
}

/// Blocks until the peer has closed `conn`. zbus 4 has no `Connection::closed()`;
/// a message stream ends when the socket does (its reader sends the error to
/// every stream, matching or not, then drops them), so this waits on one whose
/// rule (`org.freedesktop.DBus.Local.Disconnected`, which zbus never delivers)
/// costs only a rule check per incoming message. Subscribing to a connection
/// that is already gone fails, which also means closed.
pub fn wait_closed(conn: &blocking::Connection) {
    let rule = MatchRule::builder()
        .msg_type(MessageType::Signal)
        .interface("org.freedesktop.DBus.Local")
        .and_then(|b| b.member("Disconnected"))
        .map(|b| b.build());
    if let Ok(Ok(messages)) = rule.map(|rule| MessageIterator::for_match_rule(rule, conn, None)) {
        for _ in messages {}
    }
}

pub fn properties_get_all(
    proxy: &bfdo::PropertiesProxy<'_>,
    iface: InterfaceName<'static>,
) -> fdo::Result<HashMap<String, OwnedVariant>> {
    proxy.get_all(Some(iface).into())
}

// ---- the property objects (`property/get-all/<n>`) ----

/// zvariant 4's `OwnedValue` is not `Clone`: `try_clone` (it could hold an fd; these never do).
fn copy(v: &OwnedVariant) -> fdo::Result<OwnedVariant> {
    v.try_clone().map_err(|e| fdo::Error::Failed(e.to_string()))
}

#[async_trait::async_trait]
impl Interface for PropsObject {
    crate::compat_common::interface_common!(DispatchResult);

    async fn get(&self, property_name: &str) -> Option<fdo::Result<OwnedVariant>> {
        self.values.get(property_name).map(copy)
    }

    async fn get_all(&self) -> fdo::Result<HashMap<String, OwnedVariant>> {
        self.values.iter().map(|(k, v)| Ok((k.clone(), copy(v)?))).collect()
    }

    async fn set_mut(
        &mut self,
        property_name: &str,
        _value: &Variant<'_>,
        _ctxt: &SignalEmitter<'_>,
    ) -> Option<fdo::Result<()>> {
        self.values
            .contains_key(property_name)
            .then(|| Err(fdo::Error::PropertyReadOnly(property_name.to_owned())))
    }
}

/// The async builder on a connected socket (adapter-shared/zbus/builders.rs).
pub fn stream_builder(stream: UnixStream) -> zbus::connection::Builder<'static> {
    zbus::connection::Builder::unix_stream(stream)
}
