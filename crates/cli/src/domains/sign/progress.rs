//! One progress bar per file while a batch is signed (drawn only for a person at a
//! terminal).

use std::path::PathBuf;
use std::sync::Arc;

use console::sign::SignProgress;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct FileBars {
    multi: MultiProgress,
    bars: Vec<ProgressBar>,
}

impl FileBars {
    pub fn new(files: &[PathBuf], visible: bool) -> FileBars {
        let multi = MultiProgress::with_draw_target(if visible {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        });
        let style =
            ProgressStyle::with_template("{prefix:30!} {bar:30} {bytes}/{total_bytes} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar());
        let bars = files
            .iter()
            .map(|f| {
                let b = multi.add(ProgressBar::new(0));
                b.set_style(style.clone());
                b.set_prefix(
                    f.file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                );
                b
            })
            .collect();
        FileBars { multi, bars }
    }

    /// The signing service's progress callback.
    pub fn callback(&self) -> Arc<dyn Fn(SignProgress) + Send + Sync> {
        let bars = self.bars.clone();
        Arc::new(move |p: SignProgress| match p {
            SignProgress::Hashing { index, done, total } => {
                if let Some(b) = bars.get(index) {
                    b.set_length(total);
                    b.set_position(done);
                    b.set_message("hashing");
                }
            }
            SignProgress::Signing { index } => {
                if let Some(b) = bars.get(index) {
                    b.set_message("signing on the HSM");
                }
            }
            SignProgress::Done { index } => {
                if let Some(b) = bars.get(index) {
                    b.finish_with_message("signed, verified");
                }
            }
            SignProgress::Failed { index, message } => {
                if let Some(b) = bars.get(index) {
                    b.abandon_with_message(format!("FAILED: {message}"));
                }
            }
        })
    }

    pub fn clear(&self) {
        self.multi.clear().ok();
    }
}
