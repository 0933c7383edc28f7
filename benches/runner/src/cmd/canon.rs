//! `dbus-matrix canon`: the canon as data (harness::canon), for the programs in
//! other languages: the JSON committed as benches/programs/canon.json, or the
//! C header committed as benches/programs/libdbus-c-1.14/canon_data.h.

use std::process::ExitCode;

use anyhow::Result;

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum CanonFormat {
    /// benches/programs/canon.json (Python, Ruby).
    Json,
    /// benches/programs/libdbus-c-1.14/canon_data.h (C), rendered from the same JSON value.
    CHeader,
}

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, value_enum, default_value = "json")]
    format: CanonFormat,
}

pub fn exec(args: Args) -> Result<ExitCode> {
    let canon = harness::canon::canon();
    let text = match args.format {
        CanonFormat::Json => harness::canon::json_text(&canon),
        CanonFormat::CHeader => harness::canon::c_header(&canon),
    };
    crate::output::out!("{text}")?;
    Ok(ExitCode::SUCCESS)
}
