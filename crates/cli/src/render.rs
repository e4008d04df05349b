//! The one place that chooses between text for people and JSON for programs.
//!
//! A handler returns a view; its command's router hands the view to [`Renderer::show`],
//! which asks the view for its text or its JSON (never both), prints it, and answers the
//! exit code the view implies (3 for a failed verification, …). A new view is a type that
//! derives `Serialize` (its JSON form) and implements [`Render::text`]; nothing else picks
//! an output format.

use std::fmt::{self, Display};
use std::io::{IsTerminal, Write};

use console::i18n::InLang;
use console::i18n::Lang;
use console::{text, ApiError, ApiResult};
use serde::Serialize;

/// Something a command shows.
pub trait Render: Serialize {
    /// The text for a person, on `page` (standard output, or `page.err()`).
    fn text(&self, page: &mut Page) -> ApiResult<()>;

    /// The JSON for a program: one pretty document unless the view says otherwise.
    fn json(&self, page: &mut Page) {
        page.document(self);
    }

    /// The exit code once the view is shown.
    fn exit_code(&self) -> u8 {
        0
    }
}

/// Chooses the form, prints, and prints errors.
#[derive(Debug, Clone, Copy)]
pub struct Renderer {
    json: bool,
    /// The language of messages for people (`--lang`, `LANG`); JSON stays English.
    lang: Lang,
}

impl Renderer {
    pub fn new(json: bool, lang: Lang) -> Renderer {
        Renderer { json, lang }
    }

    /// The language of messages for people.
    pub fn lang(&self) -> Lang {
        self.lang
    }

    fn page(&self) -> Page {
        Page {
            lang: self.lang,
            ..Page::default()
        }
    }

    /// Print the view in the form asked for; the exit code it implies.
    pub fn show<V: Render>(&self, view: &V) -> ApiResult<u8> {
        let mut page = self.page();
        if self.json {
            view.json(&mut page);
        } else {
            view.text(&mut page)?;
        }
        page.print();
        Ok(view.exit_code())
    }

    /// Whether progress bars are drawn: for a person at a terminal, not in a pipeline nor
    /// around a JSON document.
    pub fn draws_progress(&self) -> bool {
        !self.json && std::io::stderr().is_terminal()
    }

    /// A remark while a command runs (standard error, in either form).
    pub fn note(&self, line: impl Display) {
        let mut page = self.page();
        writeln!(page.err(), "{line}");
        page.print();
    }

    /// Errors go to stderr: code, message, details, suggestion (as JSON with `--json`).
    pub fn error(&self, e: &ApiError) {
        let mut page = self.page();
        let lang = self.lang;
        let err = page.err();
        if self.json {
            writeln!(
                err,
                "{}",
                serde_json::to_string(&serde_json::json!({ "error": e })).unwrap_or_default()
            );
        } else {
            let code = serde_json::to_value(e.code)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default();
            writeln!(err, "error [{code}]: {}", e.message_in(lang));
            if let Some(d) = e.details_in(lang) {
                writeln!(err, "  {d}");
            }
            if let Some(p) = &e.pkcs11 {
                writeln!(
                    err,
                    "  PKCS#11: {} returned {} (0x{:08X})",
                    p.function, p.name, p.code
                );
            }
            if let Some(s) = e.suggestion_in(lang) {
                let label = text!("cli.what_to_do", "what to do").in_lang(lang);
                writeln!(err, "  {label}: {s}");
            }
        }
        page.print();
    }
}

/// What one view prints: standard output, and standard error for remarks. Written with
/// `write!`/`writeln!` (which cannot fail on a page), printed in one go.
#[derive(Debug, Default)]
pub struct Page {
    out: Stream,
    err: Stream,
    lang: Lang,
}

/// One of a page's two streams.
#[derive(Debug, Default)]
pub struct Stream(Vec<u8>);

impl Stream {
    /// `write!(stream, …)`.
    pub fn write_fmt(&mut self, args: fmt::Arguments<'_>) {
        let _ = self.0.write_fmt(args);
    }
}

impl Page {
    /// `write!(page, …)` writes to standard output.
    pub fn write_fmt(&mut self, args: fmt::Arguments<'_>) {
        self.out.write_fmt(args);
    }

    /// Text exactly as it is (a PEM, a man page).
    pub fn verbatim(&mut self, text: &str) {
        self.out.0.extend_from_slice(text.as_bytes());
    }

    /// Bytes exactly as they are (a DER key into a pipe).
    pub fn binary(&mut self, bytes: &[u8]) {
        self.out.0.extend_from_slice(bytes);
    }

    /// The language a person reads messages in (`--lang`, `LANG`).
    pub fn lang(&self) -> Lang {
        self.lang
    }

    /// Standard error.
    pub fn err(&mut self) -> &mut Stream {
        &mut self.err
    }

    /// One JSON document, pretty-printed, keys in the order the type declares them.
    pub fn document<T: Serialize + ?Sized>(&mut self, v: &T) {
        let _ = serde_json::to_writer_pretty(&mut self.out.0, v);
        self.out.0.push(b'\n');
    }

    /// One JSON document, pretty-printed, keys in alphabetical order at every level (how
    /// the documents `hsmc` composes from several views have always been printed).
    pub fn sorted_document<T: Serialize + ?Sized>(&mut self, v: &T) {
        match serde_json::to_value(v) {
            Ok(v) => self.document(&v),
            Err(_) => self.out.0.push(b'\n'),
        }
    }

    /// One JSON document on one line (JSON Lines, for a stream of samples).
    pub fn json_line<T: Serialize + ?Sized>(&mut self, v: &T) {
        let _ = serde_json::to_writer(&mut self.out.0, v);
        self.out.0.push(b'\n');
    }

    /// A plain text table with aligned columns.
    pub fn table(&mut self, headers: &[&str], rows: &[Vec<String>]) {
        let mut width: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
        for r in rows {
            for (i, c) in r.iter().enumerate() {
                if i < width.len() {
                    width[i] = width[i].max(c.chars().count());
                }
            }
        }
        let line = |cells: Vec<&str>| {
            let n = cells.len();
            cells
                .into_iter()
                .enumerate()
                .map(|(i, c)| {
                    if i + 1 == n {
                        c.to_string()
                    } else {
                        format!("{c:<w$}", w = width[i])
                    }
                })
                .collect::<Vec<_>>()
                .join("  ")
        };
        writeln!(self, "{}", line(headers.to_vec()));
        for r in rows {
            writeln!(self, "{}", line(r.iter().map(String::as_str).collect()));
        }
    }

    /// Print: standard output, then standard error. A closed pipe is not an error here
    /// (`hsmc keys ls | head -1`).
    fn print(self) {
        if !self.out.0.is_empty() {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(&self.out.0);
            let _ = out.flush();
        }
        if !self.err.0.is_empty() {
            let _ = std::io::stderr().lock().write_all(&self.err.0);
        }
    }

    #[cfg(test)]
    pub fn into_bytes(self) -> Vec<u8> {
        self.out.0
    }

    #[cfg(test)]
    pub fn into_text(self) -> (String, String) {
        (
            String::from_utf8(self.out.0).expect("UTF-8"),
            String::from_utf8(self.err.0).expect("UTF-8"),
        )
    }
}

/// Text that is the same for people and programs (a PEM, a man page, a completion script).
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct Verbatim(pub String);

impl Render for Verbatim {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        page.verbatim(&self.0);
        Ok(())
    }
    fn json(&self, page: &mut Page) {
        page.verbatim(&self.0);
    }
}

pub fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

#[cfg(test)]
pub mod testing {
    //! Views rendered into strings, for the views' own tests.

    use super::{Page, Render};

    /// (stdout, stderr) of the text form.
    pub fn text(v: &impl Render) -> (String, String) {
        let mut page = Page::default();
        v.text(&mut page).expect("a text form");
        page.into_text()
    }

    /// (stdout, stderr) of the JSON form.
    pub fn json(v: &impl Render) -> (String, String) {
        let mut page = Page::default();
        v.json(&mut page);
        page.into_text()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Pair {
        zeta: u8,
        alpha: Inner,
    }
    #[derive(Serialize)]
    struct Inner {
        y: u8,
        b: u8,
    }

    impl Render for Pair {
        fn text(&self, page: &mut Page) -> ApiResult<()> {
            writeln!(page, "zeta {}", self.zeta);
            writeln!(page.err(), "note");
            Ok(())
        }
    }

    fn pair() -> Pair {
        Pair {
            zeta: 1,
            alpha: Inner { y: 2, b: 3 },
        }
    }

    #[test]
    fn text_and_json_are_separate_forms() {
        assert_eq!(
            testing::text(&pair()),
            ("zeta 1\n".to_string(), "note\n".to_string())
        );
        let (out, err) = testing::json(&pair());
        assert_eq!(
            out,
            "{\n  \"zeta\": 1,\n  \"alpha\": {\n    \"y\": 2,\n    \"b\": 3\n  }\n}\n"
        );
        assert!(err.is_empty());
    }

    #[test]
    fn sorted_documents_sort_every_level_and_lines_are_compact() {
        let mut page = Page::default();
        page.sorted_document(&pair());
        page.json_line(&pair());
        assert_eq!(
            page.into_text().0,
            "{\n  \"alpha\": {\n    \"b\": 3,\n    \"y\": 2\n  },\n  \"zeta\": 1\n}\n\
             {\"zeta\":1,\"alpha\":{\"y\":2,\"b\":3}}\n"
        );
    }

    #[test]
    fn tables_align_every_column_but_the_last() {
        let mut page = Page::default();
        page.table(
            &["A", "LONG", "LAST"],
            &[
                vec!["wide cell".into(), "x".into(), "free".into()],
                vec!["y".into(), "z".into(), "".into()],
            ],
        );
        assert_eq!(
            page.into_text().0,
            "A          LONG  LAST\nwide cell  x     free\ny          z     \n"
        );
    }

    #[test]
    fn verbatim_text_is_both_forms() {
        let v = Verbatim("-----BEGIN PUBLIC KEY-----\n".into());
        assert_eq!(testing::text(&v).0, v.0);
        assert_eq!(testing::json(&v).0, v.0);
    }
}
