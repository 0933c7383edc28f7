//! How a server on rustbus-style messages answers any call, shared by the
//! rustbus-0.19 and async-rustbus-0.2 adapters: their `MarshalledMessage`,
//! `DynamicHeader` and `MessageBodyParser` are different types (async-rustbus
//! has its own message layer) with the same fields and methods, hence a macro
//! expanded in each crate. `harness::ipc::standard` says what the call is;
//! benchmark methods are answered by the adapter, `Items` and the standard
//! interfaces with the library's message body.

/// The reply to the call `$msg`: `Ok(method return)` or `Err((error name,
/// message))`. `$next_is_string(&parser)` says whether the next argument is
/// a string, `$signature(String)` is the library's signature of a raw body,
/// `$items` the `Items` value and `$bench_reply(member)` the adapter's answer
/// to a benchmark method (an `anyhow::Result` of the reply).
macro_rules! standard_reply {
    ($msg:expr, $next_is_string:expr, $signature:expr, $items:expr, $bench_reply:expr) => {{
        use harness::ipc::standard::{self, Answer};
        let msg = $msg;
        let hdr = &msg.dynheader;
        let call = standard::Call {
            path: hdr.object.as_deref().unwrap_or("/"),
            interface: hdr.interface.as_deref(),
            member: hdr.member.as_deref().unwrap_or_default(),
            signature: msg.get_sig(),
        };
        let mut string_args = || -> Result<Vec<String>, String> {
            let mut p = msg.body.parser();
            let mut args = Vec::new();
            while $next_is_string(&p) {
                args.push(p.get::<String>().map_err(|e| format!("{e:?}"))?);
            }
            Ok(args)
        };
        match standard::answer(&call, &mut string_args) {
            Answer::Bench(member) => {
                $bench_reply(member).map_err(|e: anyhow::Error| (standard::INVALID_ARGS, format!("{e:#}")))
            }
            Answer::ItemsProperty => {
                let mut reply = hdr.make_response();
                match reply.body.push_variant($items) {
                    Ok(()) => Ok(reply),
                    Err(e) => Err((standard::FAILED, format!("{e:?}"))),
                }
            }
            Answer::Reply { signature, body } => {
                let mut reply = hdr.make_response();
                reply.body =
                    MarshalledMessageBody::from_parts(body, Vec::new(), $signature(signature), ByteOrder::LittleEndian);
                Ok(reply)
            }
            Answer::Error { name, message } => Err((name, message)),
        }
    }};
}
pub(crate) use standard_reply;
