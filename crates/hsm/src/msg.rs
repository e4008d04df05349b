//! Messages an officer reads, written where the refusal is made: a catalog key, the
//! arguments of its `{{name}}` placeholders and the English text. `hsm` knows no languages;
//! the console turns a [`Msg`] into its `Text`, so the UI and `hsmc --lang` show it from the
//! catalogs (`locales/*.json`), whose English must be the template written here (the
//! console's catalogs test reads every `text!` in the workspace, this crate's too).

/// A message: its catalog key, arguments and English text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Msg {
    /// The catalog key (`errors.selector_not_hex`).
    pub key: String,
    /// The values of the template's `{{name}}` placeholders, in order.
    pub args: Vec<(String, String)>,
    /// The English text with the arguments filled in.
    pub text: String,
}

impl Msg {
    /// A message from its key, English template and arguments (see [`text!`](crate::text)).
    pub fn new(key: &str, template: &str, args: Vec<(&str, String)>) -> Msg {
        let args: Vec<(String, String)> =
            args.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        Msg {
            key: key.to_string(),
            text: fill(template, |name| {
                args.iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.as_str())
            }),
            args,
        }
    }

    /// `inner` as the argument `name` (whose English it already holds): its key and
    /// arguments travel as `name.key` and `name.ARG`, as the console's `Text::nest` does,
    /// so a language translates the part inside too.
    pub fn nest(mut self, name: &str, inner: &Msg) -> Msg {
        self.args.push((format!("{name}.key"), inner.key.clone()));
        for (k, v) in &inner.args {
            self.args.push((format!("{name}.{k}"), v.clone()));
        }
        self
    }
}

impl std::fmt::Display for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// `hsm::text!(KEY, TEMPLATE, name = value, …)`: a [`Msg`] (KEY and TEMPLATE are literals),
/// the same syntax as the console's `text!`.
#[macro_export]
macro_rules! text {
    ($key:literal, $template:literal $(, $name:ident = $value:expr)* $(,)?) => {
        $crate::msg::Msg::new($key, $template, vec![$((stringify!($name), ($value).to_string())),*])
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
        let m = Msg::new(
            "x",
            "{{a}} and {{ b }} but {{c}}",
            vec![("a", "1".into()), ("b", "2".into())],
        );
        assert_eq!(m.text, "1 and 2 but {{c}}");
        assert_eq!(m.to_string(), m.text);
        let inner = Msg::new("y", "in {{z}}", vec![("z", "3".into())]);
        let n = m.nest("a", &inner);
        assert!(n.args.contains(&("a.key".into(), "y".into())));
        assert!(n.args.contains(&("a.z".into(), "3".into())));
    }
}
