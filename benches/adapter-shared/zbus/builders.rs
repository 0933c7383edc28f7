//! zbus's builders as zbus 4, 5 and 6 all accept them (compiled by adapter-zbus-4, -5,
//! -6 and -6-tokio through `#[path]`): their setters return `Result<Self>` in 4 and 5
//! and `Self` in 6 ([`IntoResult`]), [`to_socket`], a builder on a connected socket,
//! and [`serving`], a bus connection whose object server already reads method calls
//! when it is returned.

use std::os::unix::net::UnixStream;
use std::path::Path;

use zbus::object_server::Interface;
use zbus::Connection;

/// `Result<Self>` (zbus 4 and 5) or `Self` (zbus 6) from the builders' setters, as one type.
pub(crate) trait IntoResult<T> {
    fn into_result(self) -> zbus::Result<T>;
}

impl<T> IntoResult<T> for zbus::Result<T> {
    fn into_result(self) -> zbus::Result<T> {
        self
    }
}

impl<'a> IntoResult<zbus::connection::Builder<'a>> for zbus::connection::Builder<'a> {
    fn into_result(self) -> zbus::Result<Self> {
        Ok(self)
    }
}

impl<'a, P> IntoResult<zbus::proxy::Builder<'a, P>> for zbus::proxy::Builder<'a, P> {
    fn into_result(self) -> zbus::Result<Self> {
        Ok(self)
    }
}

/// A builder on a new connection to `socket`. Not `Builder::address`: zbus does not
/// decode an address's `%XX` escapes, so in a $TMPDIR with a space, a quote or a
/// non-ASCII letter it connected to another path (issue 42, 3).
pub(crate) fn to_socket(socket: &Path) -> zbus::Result<zbus::connection::Builder<'static>> {
    Ok(crate::compat::stream_builder(UnixStream::connect(socket)?))
}

/// A new connection to the bus at `socket`, serving `object` at `path` (and owning
/// `name`, when given), whose object server reads method calls before this returns.
///
/// Why not `connection.object_server().at(…)` on a built connection: zbus 4 to 6 then
/// start the object server's task without waiting for it, and the task subscribes to
/// method calls only when it first runs. A call the socket reader reads before that is
/// handed to no one and never answered: the zbus 4 storm's `GetAll` hung its set-up
/// about once in 170 on a loaded machine (CI, 2026-11-27). The builder's `serve_at`
/// waits for the task.
pub(crate) async fn serving<I: Interface>(
    socket: &Path,
    path: &str,
    object: I,
    name: Option<&str>,
) -> zbus::Result<Connection> {
    let builder = to_socket(socket)?.serve_at(path, object).into_result()?;
    let builder = match name {
        Some(name) => builder.name(name).into_result()?,
        None => builder,
    };
    builder.build().await
}
