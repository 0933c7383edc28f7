//! Report formats, one module each (as hyperfine's src/export does),
//! printing what [`model`] computes.

pub mod bmf;
pub mod critcmp;
pub mod csv;
pub mod html;
pub mod hydra_metrics;
pub mod json;
pub mod markdown;
pub mod md_escape;
pub mod model;
pub mod portable;
#[cfg(test)]
pub mod test_fixtures;

use harness::results::ResultsFile;

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Format {
    Markdown,
    Csv,
    Json,
    /// Bencher Metric Format JSON (bencher run --adapter json).
    Bmf,
    /// One self-contained HTML page: tables and inline SVG charts, nothing fetched.
    Html,
    /// A critcmp baseline (`critcmp --export` JSON): `critcmp old.json new.json` compares two runs.
    Critcmp,
    /// Hydra's nix-support/hydra-metrics: `NAME VALUE UNIT` per ok cell (median ns, instructions).
    HydraMetrics,
}

pub fn render(r: &ResultsFile, format: Format) -> String {
    match format {
        Format::Markdown => markdown::render(r),
        Format::Csv => csv::render(r),
        Format::Json => json::render(r),
        Format::Bmf => bmf::render(r),
        Format::Html => html::render(r),
        Format::Critcmp => critcmp::render(r, &critcmp::default_baseline(r)),
        Format::HydraMetrics => hydra_metrics::render(r),
    }
}
