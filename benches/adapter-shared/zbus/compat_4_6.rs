//! What the `crate::compat` of zbus 4, 5 and 6 write alike, as macros that each compat
//! expands (compiled as `compat_common` by adapter-zbus-4, -5, -6 and -6-tokio through
//! `#[path]`; zbus 3's compat is its own). A macro, not functions: the names in them
//! (`Message`, `Data`, `Endian`, `DispatchResult`) are each major's own types.

/// The message functions of `crate::compat` that zbus 4, 5 and 6 write alike, expanded in
/// their compat (zbus 3's are its own): `$context` makes the serialization context
/// (`Context::new_dbus` in zbus 4 and 5, `Context::new` in 6).
macro_rules! message_functions {
    ($context:path) => {
        pub fn message_bytes(msg: &Message) -> &[u8] {
            msg.data()
        }

        pub fn message_from_bytes(bytes: &[u8]) -> zbus::Result<Message> {
            // 'static, as when zbus reads one off a socket.
            let data = Data::new(bytes.to_vec(), $context(Endian::Little, 0));
            // SAFETY: zbus checks the header here and the body while deserializing it; the
            // message carries no file descriptors.
            unsafe { Message::from_bytes(data) }
        }

        pub fn body(msg: &Message) -> zbus::message::Body {
            msg.body()
        }

        pub fn deserialize<'b, T: DynamicDeserialize<'b>>(body: &'b zbus::message::Body) -> zbus::Result<T> {
            body.deserialize()
        }
    };
}
pub(crate) use message_functions;

/// What `impl Interface for PropsObject` says alike in zbus 4, 5 and 6, expanded inside each
/// `crate::compat`'s impl (which writes `get`, `get_all` and `set_mut`, whose signatures change
/// with every major): the name, no methods (`$dispatch` is `DispatchResult`, or zbus 5's
/// `DispatchResult2`), the introspection.
macro_rules! interface_common {
    ($dispatch:ident) => {
        fn name() -> zbus::names::InterfaceName<'static> {
            zbus::names::InterfaceName::from_static_str_unchecked(harness::ipc::props::PROPS_INTERFACE)
        }

        fn call<'call>(
            &'call self,
            _server: &'call zbus::ObjectServer,
            _connection: &'call zbus::Connection,
            _msg: &'call zbus::message::Message,
            _name: zbus::names::MemberName<'call>,
        ) -> $dispatch<'call> {
            $dispatch::NotFound
        }

        fn call_mut<'call>(
            &'call mut self,
            _server: &'call zbus::ObjectServer,
            _connection: &'call zbus::Connection,
            _msg: &'call zbus::message::Message,
            _name: zbus::names::MemberName<'call>,
        ) -> $dispatch<'call> {
            $dispatch::NotFound
        }

        fn introspect_to_writer(&self, writer: &mut dyn std::fmt::Write, level: usize) {
            crate::props::PropsObject::introspect_to_writer(self, writer, level)
        }
    };
}
pub(crate) use interface_common;
