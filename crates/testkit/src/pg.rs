//! A throwaway PostgreSQL cluster from Debian's packages, for the audit store's tests.
//!
//! `initdb` refuses to run as root, so when the tests run as root (CI) the cluster belongs
//! to the `postgres` system user and its commands run through `runuser`. The cluster listens
//! on 127.0.0.1 at a free port, with trust authentication, and is stopped (immediate mode)
//! when dropped.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct PgCluster {
    dir: tempfile::TempDir,
    data: PathBuf,
    bin: PathBuf,
    pub port: u16,
    as_postgres: bool,
}

fn bin_dir() -> PathBuf {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path().join("bin")))
                .filter(|p| p.join("initdb").is_file())
                .collect()
        })
        .unwrap_or_default();
    versions.sort();
    versions.pop().expect(
        "PostgreSQL server binaries are missing: install Debian's postgresql package (make setup)",
    )
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

impl PgCluster {
    pub fn start() -> PgCluster {
        let bin = bin_dir();
        let dir = tempfile::Builder::new()
            .prefix("hsmc-pg-")
            .tempdir()
            .expect("temp dir");
        let data = dir.path().join("data");
        let as_postgres = is_root();
        if as_postgres {
            let ok = Command::new("chown")
                .arg("-R")
                .arg("postgres:postgres")
                .arg(dir.path())
                .status()
                .expect("chown");
            assert!(ok.success(), "chown to postgres failed");
        }
        let c = PgCluster {
            dir,
            data,
            bin,
            port: free_port(),
            as_postgres,
        };
        let data = c.data.clone();
        c.run_checked(
            "initdb",
            &[
                "-D",
                path(&data),
                "-A",
                "trust",
                "-U",
                "hsmc",
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C",
            ],
        );
        let log = c.dir.path().join("server.log");
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c max_connections=50",
            c.port,
            c.dir.path().display()
        );
        let out = c.run(
            "pg_ctl",
            &[
                "-D",
                path(&data),
                "-l",
                path(&log),
                "-o",
                &opts,
                "-w",
                "-t",
                "60",
                "start",
            ],
        );
        if !out.status.success() {
            let log = std::fs::read_to_string(&log).unwrap_or_default();
            panic!(
                "pg_ctl start failed: {}\n{log}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        c
    }

    fn command(&self, tool: &str) -> Command {
        let exe = self.bin.join(tool);
        if self.as_postgres {
            let mut cmd = Command::new("runuser");
            cmd.args(["-u", "postgres", "--"]).arg(exe);
            cmd
        } else {
            Command::new(exe)
        }
    }

    fn run(&self, tool: &str, args: &[&str]) -> Output {
        self.command(tool)
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .unwrap_or_else(|e| panic!("{tool}: {e}"))
    }

    fn run_checked(&self, tool: &str, args: &[&str]) -> Output {
        let out = self.run(tool, args);
        assert!(
            out.status.success(),
            "{tool} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Create a database and return its URL.
    pub fn create_db(&self, name: &str) -> String {
        let port = self.port.to_string();
        self.run_checked(
            "createdb",
            &["-h", "127.0.0.1", "-p", &port, "-U", "hsmc", name],
        );
        self.url(name)
    }

    /// CPU seconds the server has used so far: the postmaster and its processes
    /// (backends, live or exited). For benchmarks that share the machine with it.
    pub fn server_cpu_seconds(&self) -> f64 {
        crate::cpu::postmaster_pid(&self.data)
            .and_then(crate::cpu::process_tree_seconds)
            .expect("the cluster's postmaster is running")
    }

    pub fn url(&self, db: &str) -> String {
        format!("postgres://hsmc@127.0.0.1:{}/{db}", self.port)
    }

    /// Run SQL with `psql` — from outside the console, as a tamperer would.
    pub fn psql(&self, db: &str, sql: &str) -> String {
        let port = self.port.to_string();
        let out = self.run_checked(
            "psql",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "hsmc",
                "-d",
                db,
                "-v",
                "ON_ERROR_STOP=1",
                "-tA",
                "-c",
                sql,
            ],
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        let data = self.data.clone();
        let _ = self.run(
            "pg_ctl",
            &["-D", path(&data), "-m", "immediate", "-w", "stop"],
        );
    }
}

fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// Run SQL on a SQLite file with the `sqlite3` tool — from outside the console.
pub fn sqlite3(db: &Path, sql: &str) -> String {
    let out = Command::new("sqlite3").arg(db).arg(sql).output().expect(
        "the sqlite3 command-line tool is missing: install Debian's sqlite3 package (make setup)",
    );
    assert!(
        out.status.success(),
        "sqlite3 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
