//! Set-ups that tests of more than one crate repeat: a token key made the way another tool
//! makes it, a lunasim token steered through its control file.

use std::io::Write;
use std::path::PathBuf;

use p11::sys::*;
use p11::Template;

use crate::{Backend, TestToken};

/// The template of an AES-256 token key, private and sensitive, as another program makes
/// one (the console makes its own keys non-extractable): `extractable` as given, labelled
/// `label` with the ID `id`. Add what the key may do (`CKA_ENCRYPT`, `CKA_WRAP`, …).
pub fn aes256_template(label: &str, id: &[u8], extractable: bool) -> Template {
    Template::new()
        .ulong(CKA_CLASS, CKO_SECRET_KEY)
        .ulong(CKA_KEY_TYPE, CKK_AES)
        .ulong(CKA_VALUE_LEN, 32)
        .bool(CKA_TOKEN, true)
        .bool(CKA_PRIVATE, true)
        .bool(CKA_SENSITIVE, true)
        .bool(CKA_EXTRACTABLE, extractable)
        .text(CKA_LABEL, label)
        .bytes(CKA_ID, id)
}

/// A lunasim token whose faults and delays a test sets from outside, through the control
/// file every process that loads the module reads (`control_file`).
pub struct LunasimControl {
    /// The test's folder: the control file, and whatever else the test writes.
    pub dir: tempfile::TempDir,
    /// The control file, empty at first.
    pub file: PathBuf,
}

impl LunasimControl {
    /// A fresh lunasim token reading an empty control file in a folder of its own.
    pub fn token() -> (TestToken, LunasimControl) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("control.jsonl");
        std::fs::write(&file, "").unwrap();
        let t = TestToken::with_lunasim_extra(
            Backend::LunaSim,
            &format!("control_file = \"{}\"\n", file.display()),
        );
        (t, LunasimControl { dir, file })
    }

    /// One command (a JSON line: `{"op":"slow",…}`, `{"op":"clear"}`) appended for every
    /// process to read.
    pub fn send(&self, line: &str) {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.file)
            .unwrap();
        writeln!(f, "{line}").unwrap();
    }
}
