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
