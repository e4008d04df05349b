//! Messages in the console's languages. The backend writes English (what `hsmc`, its JSON
//! and the logs show); a message an officer reads also carries a stable key and its
//! arguments, so the UI can show it from its catalogs (`locales/*.json` at the repository root, read by the UI build and by this crate, i18next's
//! format: nested keys, `{{name}}` placeholders), and `hsmc --lang` can too.
//!
//! ```
//! use console::text;
//! let t = text!("errors.module_unreadable", "The module {{path}} cannot be read: {{error}}.",
//!     path = "/x.so", error = "gone");
//! assert_eq!(t.text, "The module /x.so cannot be read: gone.");
//! assert_eq!(t.key, "errors.module_unreadable");
//! ```
//!
//! The English template in the code and the one in `en.json` must be the same; a test reads
//! every `text!` in the sources and checks that, and that each key is in every catalog.

use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The one message type of the workspace (the `text` crate's), made with [`text!`](crate::text).
pub use hsm::Text;

/// A message in one of the console's languages.
pub trait InLang {
    /// The message in `lang` (English when the catalog lacks the key).
    fn in_lang(&self, lang: Lang) -> String;
}

impl InLang for Text {
    fn in_lang(&self, lang: Lang) -> String {
        translate(lang, &self.key, &with_nested(lang, &self.args))
            .unwrap_or_else(|| self.text.clone())
    }
}

/// Fill `{{name}}` placeholders (unknown ones stay as they are).
pub fn fill(template: &str, args: &BTreeMap<String, String>) -> String {
    hsm::fill(template, |name| args.get(name).map(String::as_str))
}

/// The console's languages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Lang {
    #[default]
    En,
    /// Traditional Chinese (Taiwan, Hong Kong, Macau).
    ZhHant,
    /// Simplified Chinese (mainland China, Singapore).
    ZhHans,
}

impl Lang {
    pub const ALL: [Lang; 3] = [Lang::En, Lang::ZhHant, Lang::ZhHans];

    /// The BCP 47 tag the UI uses (`en`, `zh-Hant`, `zh-Hans`).
    pub fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::ZhHant => "zh-Hant",
            Lang::ZhHans => "zh-Hans",
        }
    }

    /// From a language tag or a POSIX locale: `zh-Hant`, `zh-TW`, `zh_HK.UTF-8` → Traditional;
    /// `zh-Hans`, `zh_CN.UTF-8`, `zh` → Simplified; anything else → English.
    pub fn parse(tag: &str) -> Lang {
        let t = tag
            .split(['.', '@'])
            .next()
            .unwrap_or("")
            .replace('_', "-")
            .to_ascii_lowercase();
        if !(t == "zh" || t.starts_with("zh-")) {
            return Lang::En;
        }
        if t.contains("hant") || t.ends_with("-tw") || t.ends_with("-hk") || t.ends_with("-mo") {
            Lang::ZhHant
        } else {
            Lang::ZhHans
        }
    }

    /// The language a person at a terminal reads: `LC_ALL`, then `LC_MESSAGES`, then `LANG`
    /// (the first one set), as gettext decides.
    pub fn from_env() -> Lang {
        ["LC_ALL", "LC_MESSAGES", "LANG"]
            .iter()
            .filter_map(|v| std::env::var(v).ok())
            .find(|v| !v.is_empty())
            .map(|v| Lang::parse(&v))
            .unwrap_or(Lang::En)
    }

    fn catalog_source(self) -> &'static str {
        match self {
            Lang::En => include_str!("../../../../locales/en.json"),
            Lang::ZhHant => include_str!("../../../../locales/zh-Hant.json"),
            Lang::ZhHans => include_str!("../../../../locales/zh-Hans.json"),
        }
    }

    /// The language's catalog, parsed once.
    pub fn catalog(self) -> &'static serde_json::Value {
        static CATALOGS: [OnceLock<serde_json::Value>; 3] =
            [OnceLock::new(), OnceLock::new(), OnceLock::new()];
        let i = Lang::ALL.iter().position(|l| *l == self).unwrap_or(0);
        CATALOGS[i].get_or_init(|| {
            serde_json::from_str(self.catalog_source()).unwrap_or(serde_json::Value::Null)
        })
    }
}

/// A catalog entry by its dotted key.
pub fn lookup(lang: Lang, key: &str) -> Option<&'static str> {
    let mut v = lang.catalog();
    for part in key.split('.') {
        v = v.get(part)?;
    }
    v.as_str()
}

/// `args` with the texts nested in them ([`Text::nest`]: `name.key`, `name.ARG`) translated
/// into `lang`, each filling `name` (which keeps its English when the catalog lacks the key).
pub fn with_nested(lang: Lang, args: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut out = args.clone();
    for (k, key) in args {
        let Some(name) = k.strip_suffix(".key") else {
            continue;
        };
        let prefix = format!("{name}.");
        let inner: BTreeMap<String, String> = args
            .iter()
            .filter(|(a, _)| a.as_str() != k.as_str())
            .filter_map(|(a, v)| Some((a.strip_prefix(&prefix)?.to_string(), v.clone())))
            .collect();
        // The inner text's own nested texts too (a TSA's certificate's reason inside the
        // time-stamp failure): a deeper level has shorter keys, so this ends.
        if let Some(s) = translate(lang, key, &with_nested(lang, &inner)) {
            out.insert(name.to_string(), s);
        }
    }
    out
}

/// The entry for `key` in `lang` with the arguments filled in.
pub fn translate(lang: Lang, key: &str, args: &BTreeMap<String, String>) -> Option<String> {
    lookup(lang, key).map(|t| fill(t, args))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_filled_and_unknown_ones_kept() {
        let t = Text::new(
            "x",
            "{{a}} and {{ b }} but {{c}}",
            vec![("a", "1".into()), ("b", "2".into())],
        );
        assert_eq!(t.text, "1 and 2 but {{c}}");
        assert_eq!(fill("no braces {", &BTreeMap::new()), "no braces {");
        assert_eq!(fill("open {{a", &BTreeMap::new()), "open {{a");
    }

    #[test]
    fn a_nested_text_is_translated_with_the_sentence_around_it() {
        let inner = crate::text!(
            "audit.findings.missing",
            "Record {{seq}} is missing: it was deleted from the trail.",
            seq = 8
        );
        let t = crate::text!(
            "overview.items.audit_broken",
            "The audit trail is broken at record {{seq}}: {{explanation}}",
            seq = 8,
            explanation = inner.text
        )
        .nest("explanation", &inner);
        assert_eq!(
            t.text,
            "The audit trail is broken at record 8: Record 8 is missing: it was deleted from the trail."
        );
        assert_eq!(t.in_lang(Lang::En), t.text);
        let zh = t.in_lang(Lang::ZhHant);
        assert!(zh.contains(&inner.in_lang(Lang::ZhHant)), "{zh}");
        assert!(!zh.contains("deleted"), "{zh}");
        // Without the nested key the English part stays: the sentence still reads.
        let mut plain = t.clone();
        plain.args.retain(|k, _| !k.starts_with("explanation."));
        assert!(plain
            .in_lang(Lang::ZhHant)
            .contains("deleted from the trail"));
    }

    #[test]
    fn locales_choose_the_script() {
        for (tag, lang) in [
            ("zh_TW.UTF-8", Lang::ZhHant),
            ("zh-Hant", Lang::ZhHant),
            ("zh_HK", Lang::ZhHant),
            ("zh-Hant-TW", Lang::ZhHant),
            ("zh_CN.UTF-8", Lang::ZhHans),
            ("zh-Hans", Lang::ZhHans),
            ("zh", Lang::ZhHans),
            ("en_US.UTF-8", Lang::En),
            ("C.UTF-8", Lang::En),
            ("", Lang::En),
        ] {
            assert_eq!(Lang::parse(tag), lang, "{tag}");
        }
    }

    #[test]
    fn the_catalogs_are_embedded_and_translate() {
        for l in Lang::ALL {
            assert!(l.catalog().is_object(), "{} catalog parses", l.tag());
        }
        let t = crate::text!(
            "errors.module_unreadable",
            "The module {{path}} cannot be read: {{error}}.",
            path = "/x.so",
            error = "gone"
        );
        assert!(t.in_lang(Lang::ZhHant).contains("/x.so"));
        assert_ne!(t.in_lang(Lang::ZhHant), t.text);
        assert_eq!(t.in_lang(Lang::En), t.text);
    }
}
