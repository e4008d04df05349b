//! Why a file cannot be signed, in the officer's language. `signing::input` refuses a path
//! with a reason that carries its catalog key ("is a folder; …", `errors.inputs.*`);
//! [`input_problem`] is "PATH REASON." as a [`Text`] with the reason nested in it, so the
//! Sign view and hsmc --lang translate both. A test walks every refusal `signing::input`
//! makes.

#[cfg(test)]
use crate::core::i18n::InLang;

pub use crate::core::error::input_problem;

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use signing::input::{check, check_all};
    use signing::SignError;

    use super::*;
    use crate::core::i18n::Lang;

    fn reason(r: signing::Result<signing::input::InputFile>) -> hsm::Text {
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
        let mut reasons: Vec<hsm::Text> = [
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
            assert!(r.key.starts_with("errors.inputs."), "{r:?}");
            let inner = r.clone();
            for lang in [Lang::ZhHant, Lang::ZhHans] {
                assert_ne!(inner.in_lang(lang), r.text, "no {} for '{r}'", lang.tag());
            }
            let t = input_problem("/srv/a.bin", r);
            assert_eq!(t.text, format!("/srv/a.bin {r}."));
            for lang in [Lang::ZhHant, Lang::ZhHans] {
                let s = t.in_lang(lang);
                assert!(s.starts_with("/srv/a.bin"), "{s}");
                assert!(!s.contains(r.text.as_str()), "{r} untranslated in {s}");
            }
        }
        let unreadable = hsm::text!(
            "errors.inputs.unreadable",
            "cannot be read: {{error}}",
            error = "Permission denied (os error 13)"
        );
        let t = input_problem("/x", &unreadable);
        assert!(t
            .in_lang(Lang::ZhHant)
            .contains("Permission denied (os error 13)"));
        assert!(!t.in_lang(Lang::ZhHant).contains("cannot be read"));
        // A reason whose key no catalog has stays English inside the translated sentence.
        let new = hsm::Text::new("errors.inputs.not_yet_written", "is something new", vec![]);
        let t = input_problem("/x", &new);
        assert!(t.in_lang(Lang::ZhHant).contains("is something new"));
    }
}
