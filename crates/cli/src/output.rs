//! Text for people, one JSON document for programs.

use std::io::Write;

use console::ApiError;
use serde::Serialize;

/// Errors go to stderr: code, message, details, suggestion (as JSON with `--json`).
pub fn error(e: &ApiError, json: bool) {
    let mut err = std::io::stderr().lock();
    if json {
        let _ = writeln!(
            err,
            "{}",
            serde_json::to_string(&serde_json::json!({ "error": e })).unwrap_or_default()
        );
        return;
    }
    let code = serde_json::to_value(e.code)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    let _ = writeln!(err, "error [{code}]: {}", e.message);
    if let Some(d) = &e.details {
        let _ = writeln!(err, "  {d}");
    }
    if let Some(p) = &e.pkcs11 {
        let _ = writeln!(
            err,
            "  PKCS#11: {} returned {} (0x{:08X})",
            p.function, p.name, p.code
        );
    }
    if let Some(s) = &e.suggestion {
        let _ = writeln!(err, "  what to do: {s}");
    }
}

pub fn json<T: Serialize>(v: &T) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer_pretty(&mut out, v);
    let _ = writeln!(out);
}

/// A plain text table with aligned columns.
pub fn table(headers: &[&str], rows: &[Vec<String>]) {
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
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", line(headers.to_vec()));
    for r in rows {
        let _ = writeln!(out, "{}", line(r.iter().map(String::as_str).collect()));
    }
}

pub fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}
