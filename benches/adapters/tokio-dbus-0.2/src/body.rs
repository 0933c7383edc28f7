//! The test signal's body through tokio-dbus's typed `BodyBuf` writers: the
//! signature is derived from the `ty` markers, the bytes written in place.

use anyhow::{bail, Result};
use harness::payload::Body;
use tokio_dbus::{ty, BodyBuf};

/// Writes `body` into `buf` (cleared first).
pub fn store(buf: &mut BodyBuf, body: &Body) -> Result<()> {
    buf.clear();
    match body {
        Body::Units(units) => {
            for u in units {
                buf.store(u.s.as_str())?;
                buf.store(u.t)?;
                buf.store_struct::<(u64, ty::Str)>()?
                    .store(u.st.0)
                    .store(u.st.1.as_str())
                    .finish();
                let mut dict = buf.store_array::<ty::Dict<ty::Str, i32>>()?;
                for (k, v) in &u.dict {
                    dict.store_entry().store(k.as_str()).store(*v).finish();
                }
                dict.finish();
                let mut at = buf.store_array::<u64>()?;
                for x in &u.at {
                    at.store(*x);
                }
                at.finish();
                let mut as_ = buf.store_array::<ty::Str>()?;
                for s in &u.as_ {
                    as_.store(s.as_str());
                }
                as_.finish();
            }
        }
        // Only `connect/marshal-send` sends a body, the units of `marshal/mixed`.
        Body::AsvDict(_) => bail!("tokio-dbus sends only the units body here"),
    }
    Ok(())
}
