//! What zbus 3 spells its own way, for the codec in adapter-shared/zbus/codec.rs (which zbus
//! 4, 5 and 6 compile too): a header built by hand (no serial setter, `MessageBuilder::from`),
//! `Message::as_bytes`, `Message::from_bytes` over a byte vector and fds, `Message::body`
//! straight from the message; zvariant 3's paths (`SerializeValue`, `DeserializeValue`,
//! string signatures, as zvariant 4). zbus 3's IPC stays in adapter-shared/zbus/ipc_2_3.rs,
//! which zbus 2 shares: its `#[dbus_interface]`/`#[dbus_proxy]` macros take other inner
//! attributes than zbus 4's `#[interface]`/`#[proxy]`.

use anyhow::Result;
use harness::payload;
use serde::de::value::SeqDeserializer;
use serde::de::{self, Deserialize};
use zbus::names::{InterfaceName, MemberName};
use zbus::zvariant::ObjectPath;
use zbus::{EndianSig, MessageBuilder, MessageField, MessageFields, MessageHeader, MessagePrimaryHeader, MessageType};

pub use zbus::zvariant::{
    DeserializeValue, DynamicDeserialize, DynamicType, Error as WireError, Result as WireResult,
    SerializeValue as SerializeVariant, Signature, Type,
};
pub use zbus::Message;

/// The test signal's header. zbus 3 leaves serials to the connection that
/// sends a message (`Connection::assign_serial_num`) and has no setter, so the
/// header is built once with serial 1 and `MessageBuilder::from` takes a copy.
pub struct Zbus {
    header: MessageHeader<'static>,
}

impl Zbus {
    pub fn new() -> Result<Self> {
        // The primary header is `Deserialize`: read it from its six values
        // (endianness, type, flags, version, body length, serial).
        let values = [
            EndianSig::Little as u32,
            MessageType::Signal as u32,
            0,
            1,
            0,
            payload::SERIAL,
        ];
        let primary =
            MessagePrimaryHeader::deserialize(SeqDeserializer::<_, de::value::Error>::new(values.into_iter()))?;
        let mut fields = MessageFields::new();
        fields.add(MessageField::Path(ObjectPath::try_from(payload::PATH)?));
        fields.add(MessageField::Interface(InterfaceName::try_from(payload::INTERFACE)?));
        fields.add(MessageField::Member(MemberName::try_from(payload::MEMBER)?));
        Ok(Zbus {
            header: MessageHeader::new(primary, fields),
        })
    }
}

impl Zbus {
    pub fn signal_builder(&self) -> zbus::Result<MessageBuilder<'static>> {
        Ok(MessageBuilder::from(self.header.clone()))
    }
}

pub fn codec_unsupported() -> Option<String> {
    cfg!(target_endian = "big").then(|| "zbus 3 always encodes in the host's byte order, not little endian".into())
}

pub fn message_bytes(msg: &Message) -> &[u8] {
    msg.as_bytes()
}

pub fn message_from_bytes(bytes: &[u8]) -> zbus::Result<Message> {
    // SAFETY: zbus checks the header here and the body while deserializing it; the
    // message carries no file descriptors.
    unsafe { Message::from_bytes(bytes.to_vec(), Vec::new()) }
}

/// zbus 3 reads the body from the message itself.
pub fn body(msg: &Message) -> &Message {
    msg
}

pub fn deserialize<'b, T: DynamicDeserialize<'b>>(msg: &&'b Message) -> zbus::Result<T> {
    msg.body()
}
