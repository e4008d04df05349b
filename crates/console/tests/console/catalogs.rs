//! Every message the backend writes with `text!(KEY, TEMPLATE, …)` is in the UI's catalogs:
//! its English template is the one `en.json` has (so the code and the catalog cannot drift
//! apart), and the key is in every other language's catalog with the same placeholders.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use console::i18n::{lookup, Lang};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// (key, template) of every `text!("key", "template"` in the workspace's sources.
fn messages() -> Vec<(String, String, PathBuf)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for d in ["crates", "src-tauri/src"] {
        sources(&root.join(d), &mut files);
    }
    let mut out = Vec::new();
    for f in files
        .into_iter()
        .filter(|f| !f.ends_with("console/tests/console/catalogs.rs"))
    {
        let src = std::fs::read_to_string(&f).unwrap();
        let mut rest = src.as_str();
        while let Some(i) = rest.find("text!(") {
            rest = &rest[i + 6..];
            let Some((key, after)) = literal(rest) else {
                continue;
            };
            let after = after.trim_start();
            let Some(after) = after.strip_prefix(',') else {
                continue;
            };
            let Some((template, _)) = literal(after) else {
                continue;
            };
            out.push((key, template, f.clone()));
        }
    }
    out
}

/// A string literal at the start of `s` (after whitespace), unescaped, and what follows.
fn literal(s: &str) -> Option<(String, &str)> {
    let s = s.trim_start().strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, &s[i + 1..])),
            '\\' => match chars.next()?.1 {
                'n' => out.push('\n'),
                '\n' => {
                    // A line continuation: skip the next line's indentation.
                    while let Some((_, c)) = chars.clone().next() {
                        if c.is_whitespace() {
                            chars.next();
                        } else {
                            break;
                        }
                    }
                }
                c => out.push(c),
            },
            c => out.push(c),
        }
    }
    None
}

fn placeholders(s: &str) -> BTreeSet<String> {
    s.split("{{")
        .skip(1)
        .filter_map(|p| p.split_once("}}").map(|(n, _)| n.trim().to_string()))
        .collect()
}

#[test]
fn every_backend_message_is_in_every_catalog_as_the_code_writes_it() {
    let msgs = messages();
    assert!(msgs.len() > 50, "found {} messages", msgs.len());
    let mut problems = Vec::new();
    for (key, template, file) in &msgs {
        let Some(en) = lookup(Lang::En, key) else {
            problems.push(format!("{key} ({}) is not in en.json", file.display()));
            continue;
        };
        if en != template {
            problems.push(format!("{key}: en.json has {en:?}, the code {template:?}"));
        }
        for lang in [Lang::ZhHant, Lang::ZhHans] {
            match lookup(lang, key) {
                None => problems.push(format!("{key} is not in {}.json", lang.tag())),
                Some(t) if placeholders(t) != placeholders(template) => problems.push(format!(
                    "{key} in {}.json has placeholders {:?}, the code {:?}",
                    lang.tag(),
                    placeholders(t),
                    placeholders(template)
                )),
                Some(_) => {}
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn one_key_means_one_text() {
    let mut seen = std::collections::BTreeMap::new();
    for (key, template, _) in messages() {
        if let Some(other) = seen.insert(key.clone(), template.clone()) {
            assert_eq!(other, template, "{key} is written with two texts");
        }
    }
}

/// Every error code (as the generated bindings spell them) has its section in the book's
/// troubleshooting page, and the page names no code that does not exist.
#[test]
fn every_error_code_is_in_the_troubleshooting_page() {
    let root = testkit::repo_root();
    let bindings = std::fs::read_to_string(root.join("ui/src/bindings.ts")).unwrap();
    let line = bindings
        .lines()
        .find(|l| l.starts_with("export type ErrorCode = "))
        .expect("the ErrorCode type in the bindings");
    let codes: Vec<&str> = line.split('"').skip(1).step_by(2).collect();
    assert!(codes.len() > 20, "{codes:?}");
    let page = std::fs::read_to_string(root.join("docs/src/troubleshooting.md")).unwrap();
    let sections: Vec<&str> = page.lines().filter_map(|l| l.strip_prefix("## ")).collect();
    for c in &codes {
        assert!(
            sections.contains(c),
            "docs/src/troubleshooting.md has no section for {c}"
        );
    }
    for s in &sections {
        assert!(
            codes.contains(s),
            "docs/src/troubleshooting.md names {s}, which is no error code"
        );
    }
}
