//! Why a file cannot be signed, in the officer's language. `signing::input` refuses a path
//! with an English reason ("is a folder; …"); [`input_problem`] is "PATH REASON." as a
//! [`Text`] with the reason nested in it (`errors.inputs.*`), so the Sign view and hsmc
//! --lang translate both. A test walks every refusal `signing::input` makes.

use crate::i18n::Text;
use crate::text;

/// The reason as a catalog message (`None` for one this table does not know: it then
/// stays English inside the translated sentence).
fn reason_text(reason: &str) -> Option<Text> {
    Some(match reason {
        "does not exist" => text!("errors.inputs.missing", "does not exist"),
        "is a symbolic link to a file that does not exist" => text!(
            "errors.inputs.dangling_link",
            "is a symbolic link to a file that does not exist"
        ),
        "is a folder; drop the files inside it (or an archive of it)" => text!(
            "errors.inputs.folder",
            "is a folder; drop the files inside it (or an archive of it)"
        ),
        "is a named pipe (FIFO); its content is not a file that can be signed" => text!(
            "errors.inputs.fifo",
            "is a named pipe (FIFO); its content is not a file that can be signed"
        ),
        "is a socket, not a file" => text!("errors.inputs.socket", "is a socket, not a file"),
        "is a device, not a file" => text!("errors.inputs.device", "is a device, not a file"),
        "is not a regular file" => text!("errors.inputs.not_regular", "is not a regular file"),
        "is empty (0 bytes); an empty release artifact is almost certainly a mistake" => text!(
            "errors.inputs.empty",
            "is empty (0 bytes); an empty release artifact is almost certainly a mistake"
        ),
        "is in the batch twice; it is signed once" => text!(
            "errors.inputs.twice",
            "is in the batch twice; it is signed once"
        ),
        r => {
            if let Some(e) = r.strip_prefix("cannot be read: ") {
                text!(
                    "errors.inputs.unreadable",
                    "cannot be read: {{error}}",
                    error = e
                )
            } else if let Some(e) = r.strip_prefix("cannot be examined: ") {
                text!(
                    "errors.inputs.unexaminable",
                    "cannot be examined: {{error}}",
                    error = e
                )
            } else if let Some(e) = r.strip_prefix("cannot be resolved: ") {
                text!(
                    "errors.inputs.unresolvable",
                    "cannot be resolved: {{error}}",
                    error = e
                )
            } else {
                return None;
            }
        }
    })
}

/// "PATH REASON." with the reason translatable.
pub fn input_problem(path: &str, reason: &str) -> Text {
    let t = text!(
        "errors.path_reason",
        "{{path}} {{reason}}.",
        path = path,
        reason = reason
    );
    match reason_text(reason) {
        Some(r) => t.nest("reason", &r),
        None => t,
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use signing::input::{check, check_all};
    use signing::SignError;

    use super::*;
    use crate::i18n::Lang;

    fn reason(r: signing::Result<signing::input::InputFile>) -> String {
        match r {
            Err(SignError::Input { reason, .. }) => reason,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn every_refusal_of_a_path_has_its_own_words_in_each_language() {
        let d = tempfile::tempdir().unwrap();
        let ok = d.path().join("release.tar.gz");
        std::fs::write(&ok, b"content").unwrap();
        let empty = d.path().join("empty");
        std::fs::write(&empty, b"").unwrap();
        let fifo = d.path().join("fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let dangling = d.path().join("dangling");
        std::os::unix::fs::symlink(d.path().join("gone"), &dangling).unwrap();
        let mut reasons: Vec<String> = [
            d.path().to_path_buf(),
            empty,
            fifo,
            PathBuf::from("/dev/null"),
            dangling,
            d.path().join("missing"),
        ]
        .iter()
        .map(|p| reason(check(p)))
        .collect();
        reasons.push(reason(check_all(&[ok.clone(), ok]).remove(1)));
        for r in &reasons {
            let inner = reason_text(r).unwrap_or_else(|| panic!("no catalog key for '{r}'"));
            assert_eq!(&inner.text, r);
            let t = input_problem("/srv/a.bin", r);
            assert_eq!(t.text, format!("/srv/a.bin {r}."));
            for lang in [Lang::ZhHant, Lang::ZhHans] {
                let s = t.in_lang(lang);
                assert!(s.starts_with("/srv/a.bin"), "{s}");
                assert!(!s.contains(r.as_str()), "{r} untranslated in {s}");
            }
        }
        let t = input_problem("/x", "cannot be read: Permission denied (os error 13)");
        assert!(t
            .in_lang(Lang::ZhHant)
            .contains("Permission denied (os error 13)"));
        assert!(!t.in_lang(Lang::ZhHant).contains("cannot be read"));
        // A reason not in the table stays English inside the translated sentence.
        let t = input_problem("/x", "is something new");
        assert!(t.in_lang(Lang::ZhHant).contains("is something new"));
    }
}
