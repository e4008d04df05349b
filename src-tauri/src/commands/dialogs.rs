//! Native file dialogs (GTK): where the officer chooses files, never the page.

use std::path::PathBuf;

/// Ask where to save; `None` when the officer cancels.
pub async fn save(title: &str, file_name: &str, filter: (&str, &[&str])) -> Option<PathBuf> {
    rfd::AsyncFileDialog::new()
        .set_title(title)
        .set_file_name(file_name)
        .add_filter(filter.0, filter.1)
        .save_file()
        .await
        .map(|f| f.path().to_path_buf())
}
