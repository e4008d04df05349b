//! A throwaway PostgreSQL cluster from Debian's packages, for the audit store's tests.
//!
//! `initdb` refuses to run as root, so when the tests run as root (CI) the cluster belongs
//! to the `postgres` system user and its commands run through `runuser`. The cluster listens
//! on 127.0.0.1 at a free port, with trust authentication, and is stopped (immediate mode)
//! when dropped.
//!
//! Each cluster is its own server over its own data directory, as before, but the directory
//! is a copy of one `initdb` made once per machine (`template`): `initdb` costs about three
//! seconds of CPU, the copy a few hundredths, and 108 tests start a cluster. The copy is the
//! same bytes `initdb` would write, so what a test sees does not change.

use std::fs::File;
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
        let template = template(&c.bin, as_postgres);
        // `cp -a` keeps the owner (postgres, when running as root) and the 0700 mode the
        // server insists on.
        let copied = Command::new("cp")
            .arg("-a")
            .arg(&template)
            .arg(&c.data)
            .status()
            .expect("cp");
        assert!(copied.success(), "copying the template cluster failed");
        let data = c.data.clone();
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
        command(&self.bin, self.as_postgres, tool)
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

fn command(bin: &Path, as_postgres: bool, tool: &str) -> Command {
    let exe = bin.join(tool);
    if as_postgres {
        let mut cmd = Command::new("runuser");
        cmd.args(["-u", "postgres", "--"]).arg(exe);
        cmd
    } else {
        Command::new(exe)
    }
}

/// The arguments every cluster is initialised with. Part of the template's name, so a change
/// here makes a new template rather than reusing one made with other settings.
const INITDB_ARGS: [&str; 8] = [
    "-A",
    "trust",
    "-U",
    "hsmc",
    "--no-sync",
    "-E",
    "UTF8",
    "--locale=C",
];

/// The data directory of a cluster `initdb` made once for this machine, user and server
/// version, under the system's temporary directory. Made under an exclusive file lock, in a
/// scratch directory renamed into place only when `initdb` succeeded, so a test never copies
/// a half-made template and tests starting together make it once.
fn template(bin: &Path, as_postgres: bool) -> PathBuf {
    let tmp = std::env::temp_dir();
    let key = format!(
        "{}|{}|{}",
        bin.display(),
        INITDB_ARGS.join(" "),
        as_postgres
    );
    let name = format!("hsmc-pg-template-{:016x}", fnv1a(key.as_bytes()));
    let ready = tmp.join(&name).join("data");
    let lock = File::create(tmp.join(format!("{name}.lock"))).expect("the template's lock file");
    lock.lock().expect("locking the template");
    if ready.join("PG_VERSION").is_file() {
        return ready;
    }
    let scratch = tmp.join(format!("{name}.making"));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).expect("the template's scratch directory");
    if as_postgres {
        let ok = Command::new("chown")
            .arg("postgres:postgres")
            .arg(&scratch)
            .status()
            .expect("chown");
        assert!(ok.success(), "chown to postgres failed");
    }
    let data = scratch.join("data");
    let out = command(bin, as_postgres, "initdb")
        .arg("-D")
        .arg(&data)
        .args(INITDB_ARGS)
        .current_dir(&scratch)
        .output()
        .expect("initdb");
    assert!(
        out.status.success(),
        "initdb failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(tmp.join(&name));
    std::fs::rename(&scratch, tmp.join(&name)).expect("moving the template into place");
    ready
}

/// FNV-1a, 64 bits: a stable name for the template's settings (not a security function).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// The `sqlite3` tool's run of `sql` on `db`, with `options` before the file.
fn sqlite3_output(options: &[&str], db: &Path, sql: &str) -> Output {
    Command::new("sqlite3")
        .args(options)
        .arg(db)
        .arg(sql)
        .output()
        .expect(
            "the sqlite3 command-line tool is missing: install Debian's sqlite3 package (make setup)",
        )
}

fn stdout_text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Run SQL on a SQLite file with the `sqlite3` tool — from outside the console.
pub fn sqlite3(db: &Path, sql: &str) -> String {
    let out = sqlite3_output(&[], db, sql);
    assert!(
        out.status.success(),
        "sqlite3 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout_text(&out)
}

/// [`sqlite3`] for a file another process is writing, polled by a test: waits up to 5 s for
/// the writer's lock (as Python's `sqlite3` module does) and gives `None` instead of failing
/// when the file cannot be read yet. A `sqlite3` process costs a few milliseconds; a Python
/// one started every 20 ms was most of a test's CPU.
pub fn sqlite3_poll(db: &Path, sql: &str) -> Option<String> {
    let out = sqlite3_output(&["-cmd", ".timeout 5000"], db, sql);
    out.status.success().then(|| stdout_text(&out))
}
