//! Which build mode's `unavailable_in` entries (matrix.toml) apply to this
//! runner. `$DBUS_MATRIX_BUILD_MODE` names it: `host`, or a mode of
//! [`BUILD_MODES`]. Unset (or empty), it is `nix` where the adapters come
//! prebuilt ([`super::PREBUILT_ENV`], the Nix flake's wrapped runner) and host
//! mode otherwise, which builds every adapter. The flake's nextest check and
//! its dev shell set it to `nix`: they run the adapters from their sources,
//! not prebuilt, but with nixpkgs' interpreters, which lack what a row
//! unavailable in Nix needs (ruby-dbus's gem).

use anyhow::{bail, Result};

/// The environment variable that names the build mode.
pub const BUILD_MODE_ENV: &str = "DBUS_MATRIX_BUILD_MODE";

/// The build modes `unavailable_in` may name.
pub const BUILD_MODES: [&str; 1] = ["nix"];

/// The mode of a checkout's build (scripts/build.sh): every adapter built.
const HOST: &str = "host";

/// The build mode whose `unavailable_in` entries apply, `None` in host mode;
/// an unknown `$DBUS_MATRIX_BUILD_MODE` is bad input.
pub fn build_mode() -> Result<Option<&'static str>> {
    match std::env::var(BUILD_MODE_ENV) {
        Ok(v) if v == HOST => Ok(None),
        Ok(v) if !v.is_empty() => match BUILD_MODES.iter().find(|m| **m == v) {
            Some(mode) => Ok(Some(mode)),
            None => bail!(
                "{BUILD_MODE_ENV}={v:?} is no build mode (the modes: {HOST}, {}; unset: nix where \
                 {}=1, else {HOST})",
                BUILD_MODES.join(", "),
                super::PREBUILT_ENV
            ),
        },
        Ok(_) | Err(std::env::VarError::NotPresent) => Ok(super::prebuilt().then_some("nix")),
        Err(std::env::VarError::NotUnicode(v)) => bail!("{BUILD_MODE_ENV}={v:?} is no build mode"),
    }
}
