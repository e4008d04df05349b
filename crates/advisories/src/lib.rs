//! Known advisories, offline: each `Cargo.lock` the console ships or builds with is checked
//! against a local copy of the RustSec advisory database, and every advisory that matches a
//! locked crate fails the check unless the policy file accepts it with a reason.
//!
//! What fails: vulnerabilities, and the informational advisories (unmaintained, unsound,
//! notices), the same set `cargo deny check advisories` fails on by default. Yanked crates
//! need the registry's index and are not checked (the check is offline).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rustsec::advisory::{Id, Informational};
use rustsec::report::{Report, Settings};
use rustsec::{Database, Lockfile};
use serde::Deserialize;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read the policy {path}: {source}")]
    PolicyRead {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the policy {path} is not valid: {source}")]
    PolicyParse {
        path: PathBuf,
        source: toml::de::Error,
    },
    #[error("the policy accepts {id} without a reason: say why it does not apply")]
    NoReason { id: String },
    #[error("the policy names {id}, which is not an advisory ID (RUSTSEC-YYYY-NNNN)")]
    BadId { id: String },
    #[error("cannot open the advisory database at {path}: {source}")]
    Database {
        path: PathBuf,
        source: rustsec::Error,
    },
    #[error("cannot read the lock file {path}: {source}")]
    Lockfile {
        path: PathBuf,
        source: rustsec::cargo_lock::Error,
    },
}

/// The advisories a project has accepted, each with the reason it does not apply.
#[derive(Debug, Default)]
pub struct Policy {
    accepted: Vec<Accepted>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Accepted {
    pub id: String,
    pub reason: String,
}

#[derive(Deserialize)]
struct PolicyFile {
    advisories: PolicySection,
}

#[derive(Deserialize)]
struct PolicySection {
    #[serde(default)]
    ignore: Vec<Accepted>,
}

impl Policy {
    /// Reads `[advisories] ignore = [{ id, reason }, …]`; every entry must give a reason.
    pub fn load(path: &Path) -> Result<Policy, Error> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::PolicyRead {
            path: path.to_owned(),
            source,
        })?;
        Policy::parse(&text).map_err(|e| match e {
            Error::PolicyParse { source, .. } => Error::PolicyParse {
                path: path.to_owned(),
                source,
            },
            other => other,
        })
    }

    pub fn parse(text: &str) -> Result<Policy, Error> {
        let file: PolicyFile = toml::from_str(text).map_err(|source| Error::PolicyParse {
            path: PathBuf::new(),
            source,
        })?;
        for a in &file.advisories.ignore {
            if a.id.parse::<Id>().is_err() || !a.id.starts_with("RUSTSEC-") {
                return Err(Error::BadId { id: a.id.clone() });
            }
            if a.reason.trim().is_empty() {
                return Err(Error::NoReason { id: a.id.clone() });
            }
        }
        Ok(Policy {
            accepted: file.advisories.ignore,
        })
    }

    pub fn accepted(&self) -> &[Accepted] {
        &self.accepted
    }

    fn ids(&self) -> Vec<Id> {
        // Checked in `parse`.
        self.accepted
            .iter()
            .filter_map(|a| a.id.parse().ok())
            .collect()
    }
}

/// One advisory that matches a crate in a lock file and that the policy does not accept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub id: String,
    /// `vulnerability`, `unmaintained`, `unsound` or `notice`.
    pub kind: String,
    pub package: String,
    pub version: String,
    pub title: String,
    /// What the database says fixes it, e.g. `>= 0.9.7`; empty when nothing does.
    pub patched: Vec<String>,
}

/// What one lock file's check found.
#[derive(Debug, Default)]
pub struct Outcome {
    pub findings: Vec<Finding>,
    /// Accepted advisories that matched this lock file (and were therefore waived).
    pub waived: BTreeSet<String>,
}

/// Every advisory in `db` that names a crate `lockfile` locks, less those `policy` accepts.
pub fn check(db: &Database, lockfile: &Lockfile, policy: &Policy) -> Outcome {
    let settings = Settings {
        ignore: policy.ids(),
        informational_warnings: vec![
            Informational::Unmaintained,
            Informational::Unsound,
            Informational::Notice,
        ],
        ..Settings::default()
    };
    let report = Report::generate(db, lockfile, &settings);
    let mut findings: Vec<Finding> = report
        .vulnerabilities
        .list
        .iter()
        .map(|v| Finding {
            id: v.advisory.id.to_string(),
            kind: "vulnerability".into(),
            package: v.package.name.to_string(),
            version: v.package.version.to_string(),
            title: v.advisory.title.clone(),
            patched: v.versions.patched().iter().map(|r| r.to_string()).collect(),
        })
        .collect();
    for (kind, warnings) in &report.warnings {
        for w in warnings {
            let Some(advisory) = &w.advisory else {
                continue;
            };
            findings.push(Finding {
                id: advisory.id.to_string(),
                kind: kind.as_str().to_string(),
                package: w.package.name.to_string(),
                version: w.package.version.to_string(),
                title: advisory.title.clone(),
                patched: w
                    .versions
                    .as_ref()
                    .map(|v| v.patched().iter().map(|r| r.to_string()).collect())
                    .unwrap_or_default(),
            });
        }
    }
    findings.sort_by(|a, b| (&a.id, &a.package, &a.version).cmp(&(&b.id, &b.package, &b.version)));
    findings.dedup();

    // Which accepted advisories this lock file actually meets: the same query with nothing
    // ignored, so that an acceptance nothing needs any more can be reported as stale.
    let unfiltered = Report::generate(
        db,
        lockfile,
        &Settings {
            ignore: Vec::new(),
            ..settings
        },
    );
    let met: BTreeSet<String> = unfiltered
        .vulnerabilities
        .list
        .iter()
        .map(|v| v.advisory.id.to_string())
        .chain(
            unfiltered
                .warnings
                .values()
                .flatten()
                .filter_map(|w| w.advisory.as_ref().map(|a| a.id.to_string())),
        )
        .collect();
    let waived = policy
        .accepted
        .iter()
        .map(|a| a.id.clone())
        .filter(|id| met.contains(id))
        .collect();
    Outcome { findings, waived }
}

pub fn open_database(path: &Path) -> Result<Database, Error> {
    Database::open(path).map_err(|source| Error::Database {
        path: path.to_owned(),
        source,
    })
}

pub fn load_lockfile(path: &Path) -> Result<Lockfile, Error> {
    Lockfile::load(path).map_err(|source| Error::Lockfile {
        path: path.to_owned(),
        source,
    })
}
