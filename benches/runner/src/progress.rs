//! The progress bar of long commands (`run`, `build-times`); hidden with `--quiet`.

use indicatif::{ProgressBar, ProgressStyle};

pub fn bar(len: u64, visible: bool) -> ProgressBar {
    let bar = if visible {
        ProgressBar::new(len)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar
}

/// The bar of `run`: its unit is the estimated time of the planned cells
/// (rounds, timing and cost windows per the profile), so the ETA holds from
/// the first minute although cells differ a thousandfold in cost.
pub fn run_bar(estimated_ms: u64, cells: usize, visible: bool) -> ProgressBar {
    let bar = if visible {
        ProgressBar::new(estimated_ms.max(1))
    } else {
        ProgressBar::hidden()
    };
    let template = format!("{{elapsed_precise}} [{{bar:30}}] {{percent:>3}}% ETA {{eta}} ({cells} cells) {{msg}}");
    bar.set_style(
        ProgressStyle::with_template(&template)
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar
}
