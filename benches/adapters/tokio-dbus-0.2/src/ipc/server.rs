//! The benchmark service on a bus: tokio-dbus has no object layer, so calls
//! are answered by hand from `harness::ipc`'s table.

use super::*;

/// The served object's state (`harness::ipc`'s table).
struct Service {
    name: String,
    /// "/io/killing/spark/object/i"; `ObjectRef` returns the first.
    paths: Vec<ObjectPathBuf>,
    items: Vec<(String, String)>,
    /// The objects of property/get-all and objects/get-managed-objects.
    objects: super::props::Objects,
}

/// The body of the reply to a benchmark method whose argument signature the
/// harness checked ([`standard::answer`]), read and written with tokio-dbus.
fn bench_reply(svc: &Service, call: &Message<'_>, member: &str, out: &mut BodyBuf) -> tokio_dbus::Result<()> {
    let mut args = call.body();
    match member {
        "Void" => {}
        "InInt" => {
            args.load::<i32>()?;
        }
        "OutInt" => out.store(h::OUT_INT)?,
        "InOutInt" => out.store(args.load::<i32>()?.wrapping_add(1))?,
        "InString" => {
            args.read::<str>()?;
        }
        "OutString" => out.store(h::OUT_STRING)?,
        "InOutString" => out.store(args.read::<str>()?)?,
        "ObjectRef" => out
            .store_struct::<(ty::Str, ty::ObjectPath)>()?
            .store(&svc.name)
            .store(&svc.paths[0])
            .finish(),
        "RelationSet" => {
            let mut set = out.store_array::<(ty::Str, ty::ObjectPath)>()?;
            for path in &svc.paths {
                set.store_struct().store(&svc.name).store(path).finish();
            }
            set.finish();
        }
        // `ay` both ways as one slice.
        "EchoBytes" => out.store(args.read::<[u8]>()?)?,
        _ => unreachable!("standard::answer returns only the interface's members"),
    }
    Ok(())
}

/// `Properties.Get(.., "Items")`'s reply body: a variant holding `a(ss)`.
fn items_reply(svc: &Service, out: &mut BodyBuf) -> tokio_dbus::Result<()> {
    let mut items = out
        .store_variant(Signature::new("a(ss)")?)?
        .store_array::<(ty::Str, ty::Str)>();
    for (id, name) in &svc.items {
        items.store_struct().store(id).store(name).finish();
    }
    items.finish();
    Ok(())
}

/// A reply body the harness encoded, written as is under its signature.
fn raw_reply(out: &mut BodyBuf, signature: &str, body: &[u8]) -> tokio_dbus::Result<()> {
    out.store_raw(Signature::new(signature)?)?.write_slice(body);
    Ok(())
}

/// Answers the last message if it is a call (benchmark methods with
/// tokio-dbus, the standard interfaces and every error as
/// `harness::ipc::standard` says); anything else is dropped. Never fails on
/// what a client sends, only on the connection.
fn answer(svc: &Service, sender: &str, msg: &Message<'_>, send: &mut SendBuf, out: &mut BodyBuf) -> Result<()> {
    let MessageKind::MethodCall { path, member } = msg.kind() else {
        return Ok(());
    };
    let call = standard::Call {
        path: path_str(path)?,
        interface: msg.interface(),
        member,
        signature: msg.signature().as_str(),
    };
    let mut string_args = || -> Result<Vec<String>, String> {
        let mut args = msg.body();
        let strings = msg.signature().as_bytes().iter().take_while(|c| **c == b's').count();
        (0..strings)
            .map(|_| args.read::<str>().map(str::to_owned).map_err(|e| e.to_string()))
            .collect()
    };
    out.clear();
    // property/get-all and objects/get-managed-objects (props.rs) first.
    let outcome = match svc.objects.reply(msg, out) {
        Some(outcome) => outcome,
        None => standard_outcome(svc, msg, &call, &mut string_args, out),
    };
    let reply = match outcome {
        Ok(()) => msg.method_return(send.next_serial()),
        Err((name, message)) => {
            out.clear();
            out.store(message.as_str())?;
            msg.error(name, send.next_serial())
        }
    };
    // SENDER: `method_return`/`error` copy the call's DESTINATION (our well-known name)
    // into it, and busd drops a connection whose SENDER is not its unique name.
    send.write_message(reply.with_sender(sender).with_body(&*out))?;
    Ok(())
}

/// The outcome of a call `harness::ipc::standard` describes (the benchmark
/// interface, the standard interfaces, every error), its body written into `out`.
fn standard_outcome(
    svc: &Service,
    msg: &Message<'_>,
    call: &standard::Call<'_>,
    string_args: &mut dyn FnMut() -> Result<Vec<String>, String>,
    out: &mut BodyBuf,
) -> Result<(), (&'static str, String)> {
    match standard::answer(call, string_args) {
        Answer::Bench(member) => {
            bench_reply(svc, msg, member, out).map_err(|e| (standard::INVALID_ARGS, e.to_string()))
        }
        Answer::ItemsProperty => items_reply(svc, out).map_err(|e| (standard::FAILED, e.to_string())),
        Answer::Reply { signature, body } => {
            raw_reply(out, &signature, &body).map_err(|e| (standard::FAILED, e.to_string()))
        }
        Answer::Error { name, message } => Err((name, message)),
    }
}

pub(super) async fn serve_bus(transport: &Transport, ready: &mut dyn FnMut()) -> Result<()> {
    let name = transport.service_name().to_owned();
    let mut peer = Peer::connect(transport).await.context("connecting to the bus")?;
    peer.bus_call("RequestName", |b| {
        b.store(name.as_str())?;
        b.store(NameFlag::DO_NOT_QUEUE)
    })
    .await?;
    let code = peer.reply_body("u")?.load::<u32>()?;
    ensure!(code == PRIMARY_OWNER, "requesting {name}: reply {code}");
    let svc = Service {
        paths: (0..10)
            .map(|i| Ok(ObjectPathBuf::try_from(h::object_path(i))?))
            .collect::<Result<_>>()?,
        name,
        items: h::items(),
        objects: super::props::Objects::new()?,
    };
    ready();
    loop {
        peer.conn.wait(&mut peer.buf).await.context("receiving")?;
        let msg = peer.buf.recv.last_message()?;
        answer(&svc, &peer.unique_name, &msg, &mut peer.buf.send, &mut peer.buf.body)?;
        peer.conn.flush(&mut peer.buf).await.context("sending a reply")?;
    }
}
