//! Text people read, written where it is decided: a catalog key, the arguments of its
//! `{{name}}` placeholders and the English with them filled in. `hsm`, `signing` and the
//! console all make their messages as a [`Text`] with [`text!`]; the console shows them in
//! the officer's language from the catalogs (`locales/*.json` at the repository root),
//! whose English must be the template written at the `text!` (the console's catalogs test
//! reads every `text!` in the workspace and checks that).
//!
//! ```
//! let t = text::text!("errors.module_unreadable", "The module {{path}} cannot be read: {{error}}.",
//!     path = "/x.so", error = "gone");
//! assert_eq!(t.text, "The module /x.so cannot be read: gone.");
//! assert_eq!(t.key, "errors.module_unreadable");
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A message: its catalog key, arguments and English text.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Text {
    /// The catalog key (`errors.pin_incorrect`, `overview.hss.days_left`).
    pub key: String,
    /// The values of the template's `{{name}}` placeholders.
    pub args: BTreeMap<String, String>,
    /// The English text with the arguments filled in.
    pub text: String,
}

impl Text {
    /// A message from its key, English template and arguments (see [`text!`]).
    pub fn new(key: &str, template: &str, args: Vec<(&str, String)>) -> Text {
        let args: BTreeMap<String, String> =
            args.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        Text {
            key: key.to_string(),
            text: fill(template, |name| args.get(name).map(String::as_str)),
            args,
        }
    }

    /// `inner` as the argument `name` (whose English it already holds): its key and
    /// arguments travel as `name.key` and `name.ARG`, so a language translates the whole
    /// sentence, the part inside too. An inner text without a key is plain English and
    /// stays only that.
    pub fn nest(mut self, name: &str, inner: &Text) -> Text {
        if inner.key.is_empty() {
            return self;
        }
        self.args.insert(format!("{name}.key"), inner.key.clone());
        for (k, v) in &inner.args {
            self.args.insert(format!("{name}.{k}"), v.clone());
        }
        self
    }
}

impl std::fmt::Display for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// `text!(KEY, TEMPLATE, name = value, …)`: a [`Text`] (KEY and TEMPLATE are literals, so
/// the catalogs test can read them).
#[macro_export]
macro_rules! text {
    ($key:literal, $template:literal $(, $name:ident = $value:expr)* $(,)?) => {
        $crate::Text::new($key, $template, vec![$((stringify!($name), ($value).to_string())),*])
    };
}

/// Fill `{{name}}` placeholders with what `value` gives for each name (unknown ones stay as
/// they are). The console's catalogs fill their templates with this too.
pub fn fill<'a>(template: &str, value: impl Fn(&str) -> Option<&'a str>) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find("}}") {
            Some(end) => {
                match value(after[..end].trim()) {
                    Some(v) => out.push_str(v),
                    None => out.push_str(&rest[start..start + 2 + end + 2]),
                }
                rest = &after[end + 2..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_filled_and_unknown_ones_kept() {
        // `Text::new`, not `text!`: the catalogs test reads every `text!` as a catalog entry.
        let m = Text::new(
            "x",
            "{{a}} and {{ b }} but {{c}}",
            vec![("a", "1".into()), ("b", "2".into())],
        );
        assert_eq!(m.text, "1 and 2 but {{c}}");
        assert_eq!(m.to_string(), m.text);
        let inner = Text::new("y", "in {{z}}", vec![("z", "3".into())]);
        let n = m.nest("a", &inner);
        assert_eq!(n.args.get("a.key").map(String::as_str), Some("y"));
        assert_eq!(n.args.get("a.z").map(String::as_str), Some("3"));
        let plain = Text {
            text: "English only".into(),
            ..Text::default()
        };
        assert_eq!(
            n.clone().nest("b", &plain),
            n,
            "a keyless text adds nothing"
        );
    }
}
