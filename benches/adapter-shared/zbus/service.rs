//! The benchmark service of zbus 4, 5 and 6 (compiled by adapter-zbus-4, -5, -6 and
//! -6-tokio through `#[path]`): the served object as an `#[interface]` (member names
//! are the PascalCase of the Rust names), the client's `#[proxy]` trait (zbus generates
//! `BenchProxy` and, where the major has a blocking API, `BenchProxyBlocking`), and how a
//! reply, a property value or a received `Ping` is digested. zbus 3's `#[dbus_interface]`
//! and `#[dbus_proxy]` take other inner attributes, so zbus 2 and 3 keep theirs in
//! adapter-shared/zbus/ipc_2_3.rs. How a connection is driven (the blocking API in 4 and
//! 5, `block_on` in 6) is in adapter-shared/zbus/ipc_blocking.rs and ipc_async.rs.

use anyhow::{Context, Result};
use harness::ipc::{self as h, AppOp, IpcOp, SubscriptionOp};
use harness::Digest;
use serde::{Deserialize, Serialize};
use serde_bytes::{ByteBuf, Bytes};
use zbus::{interface, proxy, MatchRule, Message};

use crate::compat::{OwnedObjectPath, SignalEmitter, Type};

/// `(so)`: a bus name and an object path (`ObjectRef`, the elements of `RelationSet`).
#[derive(Clone, Serialize, Deserialize, Type)]
pub struct ObjectRef {
    name: String,
    path: OwnedObjectPath,
}

fn object_ref(service_name: &str, i: usize) -> ObjectRef {
    ObjectRef {
        name: service_name.to_owned(),
        path: h::object_path(i).try_into().expect("a valid object path"),
    }
}

/// The served object (`harness::ipc`'s table).
pub struct BenchService {
    object_ref: ObjectRef,
    relation_set: Vec<ObjectRef>,
    items: Vec<(String, String)>,
}

impl BenchService {
    pub fn new(service_name: &str) -> Self {
        BenchService {
            object_ref: object_ref(service_name, 0),
            relation_set: (0..10).map(|i| object_ref(service_name, i)).collect(),
            items: h::items(),
        }
    }
}

// Member names are the PascalCase of the Rust names (`in_out_int` -> `InOutInt`).
#[interface(name = "io.killing.spark.Bench")]
impl BenchService {
    fn void(&self) {}

    fn in_int(&self, value: i32) {
        let _ = value;
    }

    fn out_int(&self) -> i32 {
        h::OUT_INT
    }

    fn in_out_int(&self, value: i32) -> i32 {
        value + 1
    }

    fn in_string(&self, value: &str) {
        let _ = value;
    }

    fn out_string(&self) -> &str {
        h::OUT_STRING
    }

    fn in_out_string(&self, value: String) -> String {
        value
    }

    // A single struct is returned as a 1-tuple: a bare struct would be spread into out-args `so`.
    fn object_ref(&self) -> (ObjectRef,) {
        (self.object_ref.clone(),)
    }

    fn relation_set(&self) -> Vec<ObjectRef> {
        self.relation_set.clone()
    }

    /// `ay` through serde_bytes: one slice, not a sequence of 1-byte elements.
    fn echo_bytes(&self, data: ByteBuf) -> ByteBuf {
        data
    }

    #[zbus(property)]
    fn items(&self) -> Vec<(String, String)> {
        self.items.clone()
    }

    /// Emitted by clients (any connection can emit it through a `SignalEmitter`).
    #[zbus(signal)]
    pub async fn ping(emitter: &SignalEmitter<'_>, text: &str) -> zbus::Result<()>;
}

// On p2p the destination is not used by the peer; the default is the interface name.
#[proxy(
    interface = "io.killing.spark.Bench",
    default_service = "io.killing.spark.Bench",
    default_path = "/io/killing/spark"
)]
pub trait Bench {
    fn void(&self) -> zbus::Result<()>;
    fn in_int(&self, value: i32) -> zbus::Result<()>;
    fn out_int(&self) -> zbus::Result<i32>;
    fn in_out_int(&self, value: i32) -> zbus::Result<i32>;
    fn in_string(&self, value: &str) -> zbus::Result<()>;
    fn out_string(&self) -> zbus::Result<String>;
    fn in_out_string(&self, value: &str) -> zbus::Result<String>;
    fn object_ref(&self) -> zbus::Result<ObjectRef>;
    fn relation_set(&self) -> zbus::Result<Vec<ObjectRef>>;
    fn echo_bytes(&self, data: &Bytes) -> zbus::Result<ByteBuf>;

    /// The default `CacheProperties::Lazily`: the first read subscribes to
    /// `PropertiesChanged` (an AddMatch on a bus) and fetches every property with
    /// `GetAll`; every later read is answered from that cache (kept up to date by
    /// the signal) without a message, only converting the cached value.
    #[zbus(property)]
    fn items(&self) -> zbus::Result<Vec<(String, String)>>;
}

pub fn digest_object_ref(d: &mut Digest, r: &ObjectRef) {
    d.str(&r.name);
    d.str(r.path.as_str());
}

pub fn digest_items(d: &mut Digest, items: &[(String, String)]) {
    for (a, b) in items {
        d.str(a);
        d.str(b);
    }
    d.len(items.len());
}

/// The digest of a `Method` call's reply values (the caller has made the call).
pub fn digest_relation_set(d: &mut Digest, set: &[ObjectRef]) {
    for r in set {
        digest_object_ref(d, r);
    }
    d.len(set.len());
}

pub fn ping_rule() -> Result<MatchRule<'static>> {
    Ok(MatchRule::try_from(h::ping_rule().as_str())?.into_owned())
}

/// The digest of a received `Ping`: its text.
pub fn ping_digest(msg: Option<zbus::Result<Message>>) -> Result<u64> {
    let msg = msg.context("the signal stream ended")??;
    let mut d = Digest::new();
    d.str(msg.body().deserialize::<&str>()?);
    Ok(d.finish())
}

/// The property and object-manager families are served on the bus only (`NOT_PEER_TO_PEER`
/// of the including driver says why).
pub fn unsupported_ipc(op: IpcOp, p2p: bool, not_peer_to_peer: &str) -> Option<String> {
    (p2p && matches!(op, IpcOp::PropertyGetAll(_) | IpcOp::ManagedObjects(_))).then(|| not_peer_to_peer.to_owned())
}

pub fn implements(op: IpcOp) -> bool {
    !op.opt_in()
        || matches!(
            op,
            IpcOp::App(AppOp::InOnlyBytes(_) | AppOp::Connections(_) | AppOp::ProxyCreate(_) | AppOp::Startup(_))
        )
        || matches!(op, IpcOp::InFlight(_) | IpcOp::IdleConnections(_) | IpcOp::FdPassing(_))
        || matches!(op, IpcOp::PropertyGetAll(_) | IpcOp::ManagedObjects(_))
        // property/changed-storm: storm.rs (zbus's caching proxy; zbus 4's set-up once hung
        // waiting for a first stream item zbus 4 never yields, storm.rs says why).
        || matches!(
            op,
            IpcOp::Subscription(
                SubscriptionOp::MatchChurn
                    | SubscriptionOp::Burst(_)
                    | SubscriptionOp::Delivered(_)
                    | SubscriptionOp::NameOwnerChurn(_)
                    | SubscriptionOp::PropertyStorm(_)
            )
        )
}
