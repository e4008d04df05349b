//! `hsmc-advisories --db PATH --policy advisories.toml LOCKFILE…`: exits 1 when any lock file
//! locks a crate with an advisory the policy does not accept, 2 when it cannot check.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

#[derive(Parser)]
#[command(about = "Check Cargo.lock files against a local RustSec advisory database, offline")]
struct Args {
    /// The advisory database: a folder holding `crates/<name>/RUSTSEC-….md`.
    #[arg(long)]
    db: PathBuf,
    /// The accepted advisories, each with its reason (`[advisories] ignore = [{ id, reason }]`).
    #[arg(long)]
    policy: PathBuf,
    /// The lock files to check.
    #[arg(required = true)]
    lockfiles: Vec<PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("advisories: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &Args) -> Result<bool, advisories::Error> {
    let policy = advisories::Policy::load(&args.policy)?;
    let db = advisories::open_database(&args.db)?;
    println!(
        "advisories: {} advisories in {}",
        db.iter().count(),
        args.db.display()
    );
    let mut clean = true;
    let mut waived = BTreeSet::new();
    for path in &args.lockfiles {
        let lockfile = advisories::load_lockfile(path)?;
        let outcome = advisories::check(&db, &lockfile, &policy);
        waived.extend(outcome.waived);
        if outcome.findings.is_empty() {
            println!(
                "advisories: {} ok ({} crates)",
                path.display(),
                lockfile.packages.len()
            );
            continue;
        }
        clean = false;
        for f in &outcome.findings {
            let fix = if f.patched.is_empty() {
                "no fixed release".to_string()
            } else {
                format!("fixed in {}", f.patched.join(", "))
            };
            println!(
                "{}: {} {} {} ({}): {}; {fix}",
                path.display(),
                f.id,
                f.kind,
                f.package,
                f.version,
                f.title
            );
        }
        println!(
            "advisories: {} has {} unaccepted advisories: update the crate, or accept the advisory in {} with the reason it does not apply",
            path.display(),
            outcome.findings.len(),
            args.policy.display()
        );
    }
    for a in policy.accepted() {
        if !waived.contains(&a.id) {
            println!(
                "advisories: note: {} is accepted in {} but no lock file needs it any more",
                a.id,
                args.policy.display()
            );
        }
    }
    Ok(clean)
}
