//! The advisory check against a small database written here: what matches a locked crate
//! fails, a patched version does not, an accepted advisory is waived only with a reason,
//! and informational advisories (unmaintained) fail like vulnerabilities.

use std::path::Path;

use advisories::{check, load_lockfile, open_database, Error, Policy};

/// The registry source line every crate in the workspace's own lock file carries, so the
/// fixtures lock crates from the same registry the real lock files do.
fn registry_source() -> String {
    let lock =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock"))
            .expect("the workspace's Cargo.lock");
    lock.lines()
        .find_map(|l| l.strip_prefix("source = \"registry+"))
        .map(|rest| format!("registry+{}", rest.trim_end_matches('"')))
        .expect("a registry crate in Cargo.lock")
}

fn advisory(db: &Path, id: &str, package: &str, extra: &str, patched: &str, title: &str) {
    let dir = db.join("crates").join(package);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(format!("{id}.md")),
        format!(
            "```toml\n[advisory]\nid = \"{id}\"\npackage = \"{package}\"\ndate = \"2026-01-02\"\n{extra}\n\n[versions]\npatched = [{patched}]\n```\n\n# {title}\n\nWritten by the test.\n"
        ),
    )
    .unwrap();
}

/// A database of three advisories: a vulnerability fixed in 1.2.0, an unmaintained crate
/// and a vulnerability in a crate no fixture locks.
fn database(dir: &Path) -> rustsec::Database {
    let db = dir.join("db");
    advisory(
        &db,
        "RUSTSEC-2026-9001",
        "demo-parser",
        "",
        "\">= 1.2.0\"",
        "Out-of-bounds read in demo-parser",
    );
    advisory(
        &db,
        "RUSTSEC-2026-9002",
        "demo-abandoned",
        "informational = \"unmaintained\"",
        "",
        "demo-abandoned is unmaintained",
    );
    advisory(
        &db,
        "RUSTSEC-2026-9003",
        "demo-elsewhere",
        "",
        "",
        "Not locked by anyone",
    );
    open_database(&db).expect("the fixture database opens")
}

fn lockfile(dir: &Path, name: &str, packages: &[(&str, &str)]) -> rustsec::Lockfile {
    let source = registry_source();
    let mut text = String::from("version = 3\n");
    for (package, version) in packages {
        text.push_str(&format!(
            "\n[[package]]\nname = \"{package}\"\nversion = \"{version}\"\nsource = \"{source}\"\n"
        ));
    }
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    load_lockfile(&path).expect("the fixture lock file loads")
}

fn policy(entries: &[(&str, &str)]) -> Policy {
    let mut text = String::from("[advisories]\nignore = [\n");
    for (id, reason) in entries {
        text.push_str(&format!("  {{ id = \"{id}\", reason = \"{reason}\" }},\n"));
    }
    text.push_str("]\n");
    Policy::parse(&text).expect("a valid policy")
}

#[test]
fn a_locked_vulnerable_version_is_found_and_a_patched_one_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    let vulnerable = lockfile(
        dir.path(),
        "old.lock",
        &[("demo-parser", "1.1.9"), ("demo-clean", "0.3.0")],
    );
    let found = check(&db, &vulnerable, &Policy::default()).findings;
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].id, "RUSTSEC-2026-9001");
    assert_eq!(found[0].kind, "vulnerability");
    assert_eq!(
        (found[0].package.as_str(), found[0].version.as_str()),
        ("demo-parser", "1.1.9")
    );
    assert_eq!(found[0].title, "Out-of-bounds read in demo-parser");
    assert_eq!(found[0].patched, vec![">=1.2.0".to_string()]);

    let patched = lockfile(dir.path(), "new.lock", &[("demo-parser", "1.2.0")]);
    assert!(check(&db, &patched, &Policy::default()).findings.is_empty());
}

#[test]
fn an_unmaintained_crate_fails_like_a_vulnerability() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    let lock = lockfile(dir.path(), "Cargo.lock", &[("demo-abandoned", "0.1.0")]);
    let found = check(&db, &lock, &Policy::default()).findings;
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        (found[0].id.as_str(), found[0].kind.as_str()),
        ("RUSTSEC-2026-9002", "unmaintained")
    );
}

#[test]
fn an_accepted_advisory_is_waived_and_reported_as_needed() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    let lock = lockfile(
        dir.path(),
        "Cargo.lock",
        &[("demo-parser", "1.0.0"), ("demo-abandoned", "0.1.0")],
    );
    let accepted = policy(&[
        ("RUSTSEC-2026-9001", "the parser only reads our own files"),
        ("RUSTSEC-2026-9003", "kept from an older lock file"),
    ]);
    let outcome = check(&db, &lock, &accepted);
    let ids: Vec<&str> = outcome.findings.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(
        ids,
        ["RUSTSEC-2026-9002"],
        "only the unaccepted advisory is left"
    );
    assert!(outcome.waived.contains("RUSTSEC-2026-9001"));
    assert!(
        !outcome.waived.contains("RUSTSEC-2026-9003"),
        "an acceptance no locked crate needs is not counted as used"
    );
}

#[test]
fn a_policy_entry_needs_a_reason_and_a_real_id() {
    let no_reason =
        Policy::parse("[advisories]\nignore = [{ id = \"RUSTSEC-2026-9001\", reason = \" \" }]\n");
    assert!(
        matches!(no_reason, Err(Error::NoReason { ref id }) if id == "RUSTSEC-2026-9001"),
        "{no_reason:?}"
    );
    let bad_id =
        Policy::parse("[advisories]\nignore = [{ id = \"CVE-2026-1\", reason = \"x\" }]\n");
    assert!(matches!(bad_id, Err(Error::BadId { .. })), "{bad_id:?}");
    let missing_reason = Policy::parse("[advisories]\nignore = [{ id = \"RUSTSEC-2026-9001\" }]\n");
    assert!(
        matches!(missing_reason, Err(Error::PolicyParse { .. })),
        "{missing_reason:?}"
    );
}

#[test]
fn the_projects_policy_parses_and_every_entry_has_a_reason() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../advisories.toml");
    let policy = Policy::load(&path).expect("advisories.toml");
    assert!(!policy.accepted().is_empty());
}
