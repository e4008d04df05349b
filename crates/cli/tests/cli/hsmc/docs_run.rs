//! The book's and the README's ```sh examples, run: each page's blocks in order, in one
//! bash (`-euo pipefail`) per page, in a scratch folder with its own HOME, on the built-in
//! lunasim partition, with our `hsmc` first on PATH. A block followed by a ```text block
//! must print that text (`[..]` stands for any part of a line, a line `...` for any lines).
//! `docs/doctest/_all.sh`, then `docs/doctest/PAGE.sh` when it exists, run first (the set-up a reader already has); a
//! block marked ```sh,no-run needs `<!-- no-run: why -->` on the line before its fence.
//! The convention is written down for writers in `docs/src/tests.md`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// One ```sh block of a page.
#[derive(Debug)]
struct Block {
    /// The fence's line, 1-based.
    line: usize,
    code: String,
    no_run: bool,
    /// `exit=N`: the block (run in a subshell) ends with this status.
    exit: Option<i32>,
    /// The ```text block after it: its line and text.
    expected: Option<(usize, String)>,
}

/// A fenced block's info string, split: the language and its flags.
fn info(fence: &str) -> Option<(&str, Vec<&str>)> {
    let rest = fence.trim_start().strip_prefix("```")?;
    let mut parts = rest.trim().split(',').map(str::trim);
    Some((parts.next().unwrap_or(""), parts.collect()))
}

/// The body of the fenced block opening at `lines[start]`, and the line after its end.
fn body(lines: &[&str], start: usize) -> Result<(String, usize), String> {
    let indent = lines[start].len() - lines[start].trim_start().len();
    let mut text = String::new();
    for (i, l) in lines.iter().enumerate().skip(start + 1) {
        if l.trim_start().starts_with("```") {
            return Ok((text, i + 1));
        }
        text.push_str(l.get(indent..).unwrap_or(l.trim_start()));
        text.push('\n');
    }
    Err(format!("line {}: the block is never closed", start + 1))
}

/// Every ```sh block of a page, each with the ```text block right after it (blank lines
/// between allowed). A flag this runner does not know, or `no-run` without its reason, is
/// an error: a typo must not quietly skip an example.
fn blocks(page: &str) -> Result<Vec<Block>, String> {
    let lines: Vec<&str> = page.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some((lang, flags)) = info(lines[i]) else {
            i += 1;
            continue;
        };
        let (code, next) = body(&lines, i)?;
        if lang != "sh" {
            i = next;
            continue;
        }
        let mut b = Block {
            line: i + 1,
            code,
            no_run: false,
            exit: None,
            expected: None,
        };
        for f in flags {
            match f.split_once('=') {
                None if f == "no-run" => b.no_run = true,
                Some(("exit", n)) => {
                    b.exit = Some(n.parse().map_err(|_| format!("line {}: {f}", i + 1))?)
                }
                _ => {
                    return Err(format!(
                        "line {}: unknown flag `{f}` (no-run, exit=N)",
                        i + 1
                    ))
                }
            }
        }
        let before = i.checked_sub(1).map(|j| lines[j].trim()).unwrap_or("");
        if b.no_run && !(before.starts_with("<!-- no-run:") && before.len() > 20) {
            return Err(format!(
                "line {}: sh,no-run wants `<!-- no-run: why -->` on the line before",
                i + 1
            ));
        }
        let mut j = next;
        while j < lines.len() && lines[j].trim().is_empty() {
            j += 1;
        }
        i = next;
        if j < lines.len() && info(lines[j]).is_some_and(|(l, _)| l == "text") {
            let (text, after) = body(&lines, j)?;
            b.expected = Some((j + 1, text));
            i = after;
        }
        out.push(b);
    }
    Ok(out)
}

/// trycmd's placeholders: `[..]` is any text within a line, a line `...` any lines.
fn matches(expected: &str, actual: &str) -> bool {
    let want: Vec<&str> = expected.lines().collect();
    let got: Vec<&str> = actual.lines().collect();
    fn go(want: &[&str], got: &[&str]) -> bool {
        match want.split_first() {
            None => got.is_empty(),
            Some((&"...", rest)) => (0..=got.len()).any(|k| go(rest, &got[k..])),
            Some((w, rest)) => got
                .split_first()
                .is_some_and(|(g, grest)| line_matches(w, g) && go(rest, grest)),
        }
    }
    go(&want, &got)
}

fn line_matches(want: &str, got: &str) -> bool {
    let parts: Vec<&str> = want.split("[..]").collect();
    if parts.len() == 1 {
        return want.trim_end() == got.trim_end();
    }
    let got = got.trim_end();
    let (first, last) = (parts[0], parts[parts.len() - 1].trim_end());
    if !got.starts_with(first) || got.len() < first.len() + last.len() || !got.ends_with(last) {
        return false;
    }
    let mut rest = &got[first.len()..got.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(k) => rest = &rest[k + p.len()..],
            None => return false,
        }
    }
    true
}

/// The pages: the README and the book's own pages (not the reference clap writes).
fn pages() -> Vec<PathBuf> {
    let root = testkit::repo_root();
    let mut v = vec![root.join("README.md")];
    let mut book: Vec<PathBuf> = std::fs::read_dir(root.join("docs/src"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    book.sort();
    v.extend(book);
    v
}

/// The bash script for a page: the prelude, then each block with its output kept in
/// `out/N`, `out/N.started` written before it runs and `out/N.done` after it succeeded.
fn script(prelude: String, blocks: &[Block]) -> String {
    let mut s = String::from("set -euo pipefail\n");
    s.push_str(&format!(
        "{{\n{prelude}\n}} > \"$DOCTEST_OUT/prelude\" 2>&1\n"
    ));
    s.push_str(": > \"$DOCTEST_OUT/prelude.done\"\n");
    for (n, b) in blocks.iter().enumerate().filter(|(_, b)| !b.no_run) {
        s.push_str(&format!(": > \"$DOCTEST_OUT/{n}.started\"\n"));
        match b.exit {
            None => s.push_str(&format!("{{\n{}\n}} > \"$DOCTEST_OUT/{n}\" 2>&1\n", b.code)),
            Some(_) => s.push_str(&format!(
                "set +e\n( set -e\n{}\n) > \"$DOCTEST_OUT/{n}\" 2>&1\necho $? > \"$DOCTEST_OUT/{n}.exit\"\nset -e\n",
                b.code
            )),
        }
        s.push_str(&format!(": > \"$DOCTEST_OUT/{n}.done\"\n"));
    }
    s
}

/// Run one page's blocks; the failures, each naming the page, the line and the output.
fn run_page(page: &Path, blocks: &[Block]) -> Vec<String> {
    let root = testkit::repo_root();
    let name = page.strip_prefix(&root).unwrap().display().to_string();
    let stem = page.file_stem().unwrap().to_str().unwrap();
    let read_prelude = |f: &str| std::fs::read_to_string(root.join("docs/doctest").join(f));
    let prelude =
        read_prelude("_all.sh").unwrap() + &read_prelude(&format!("{stem}.sh")).unwrap_or_default();
    let scratch = tempfile::tempdir().unwrap();
    let (home, out, work) = (
        scratch.path().join("home"),
        scratch.path().join("out"),
        scratch.path().join("work"),
    );
    for d in [&home, &out, &work] {
        std::fs::create_dir_all(d).unwrap();
    }
    let bin = testkit::hsmc_binary().parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut c = Command::new("bash");
    c.arg("-c")
        .arg(script(prelude, blocks))
        .current_dir(&work)
        .stdin(Stdio::null())
        .env("PATH", path)
        .env("HOME", &home)
        .env("USER", "docs-reader")
        .env("LANG", "C.UTF-8")
        .env("GNUPGHOME", home.join(".gnupg"))
        .env("DOCTEST_OUT", &out)
        .env("REPO", &root);
    for v in [
        "HSMC_PIN",
        "HSMC_MODULE",
        "HSMC_TOKEN",
        "HSMC_ROLE",
        "HSMC_DATA_DIR",
        "HSMC_LANG",
        "LUNASIM_CONF",
        "XDG_DATA_HOME",
        "XDG_CONFIG_HOME",
        "XDG_RUNTIME_DIR",
        "GIT_DIR",
    ] {
        c.env_remove(v);
    }
    let o = c.output().unwrap();
    let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap_or_default();
    let mut failures = Vec::new();
    if !out.join("prelude.done").exists() {
        failures.push(format!(
            "{name}: docs/doctest/_all.sh or {stem}.sh failed:\n{}",
            read("prelude")
        ));
    }
    for (n, b) in blocks.iter().enumerate().filter(|(_, b)| !b.no_run) {
        let (started, text) = (
            out.join(format!("{n}.started")).exists(),
            read(&n.to_string()),
        );
        let exit = read(&format!("{n}.exit")).trim().parse::<i32>().ok();
        if !started {
            break;
        } else if let Some(want) = b.exit {
            if exit != Some(want) {
                failures.push(format!(
                    "{name}:{}: exit {exit:?}, not {want}:\n{text}",
                    b.line
                ));
            }
        } else if !out.join(format!("{n}.done")).exists() {
            failures.push(format!(
                "{name}:{}: the block failed ({}):\n{text}",
                b.line, o.status
            ));
            break;
        }
        if let Some((line, want)) = &b.expected {
            if !matches(want, &text) {
                failures.push(format!(
                    "{name}:{line}: the output is not the one shown\n--- shown\n{want}--- printed\n{text}"
                ));
            }
        }
    }
    if !o.status.success() && failures.is_empty() {
        failures.push(format!(
            "{name}: bash failed: {}",
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    failures
}

/// Every page's examples run, and what they print is what the page shows.
#[test]
fn every_sh_example_in_the_book_and_readme_runs() {
    let only = std::env::var("DOCTEST_ONLY").ok();
    let (mut ran, mut skipped, mut failures) = (0, Vec::new(), Vec::new());
    for page in pages() {
        let name = page.file_name().unwrap().to_str().unwrap().to_string();
        if only.as_ref().is_some_and(|o| !name.contains(o.as_str())) {
            continue;
        }
        let bs = match blocks(&std::fs::read_to_string(&page).unwrap()) {
            Ok(b) => b,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        skipped.extend(
            bs.iter()
                .filter(|b| b.no_run)
                .map(|b| format!("{name}:{}", b.line)),
        );
        let runnable = bs.iter().filter(|b| !b.no_run).count();
        if runnable > 0 {
            ran += runnable;
            failures.extend(run_page(&page, &bs));
        }
    }
    println!(
        "{ran} blocks run, {} not run: {}",
        skipped.len(),
        skipped.join(", ")
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(
        ran > 30 || only.is_some(),
        "{ran} blocks: the runner finds the pages"
    );
}

#[test]
fn the_runner_reads_flags_output_and_placeholders() {
    let page = "x\n```sh\necho hi\n```\n\n```text\nh[..]\n```\n<!-- no-run: a reason, long enough -->\n```sh,no-run\nsudo x\n```\n```sh,exit=1\nfalse\n```\n";
    let b = blocks(page).unwrap();
    assert_eq!(b.len(), 3);
    assert_eq!((b[0].line, b[0].expected.as_ref().unwrap().0), (2, 6));
    assert!(b[1].no_run && b[2].exit == Some(1));
    assert!(
        blocks("```sh,no-run\nx\n```\n").is_err(),
        "no-run without a reason"
    );
    assert!(blocks("```sh,norun\nx\n```\n").is_err(), "an unknown flag");
    assert!(matches("a [..] c\n...\nz\n", "a b c\n1\n2\nz\n"));
    assert!(!matches("a [..] c\nz\n", "a b d\nz\n"));
    assert!(!matches("a\n", "a\nb\n"));
}
