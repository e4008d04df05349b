//! CPU time of processes, from `/proc` (Linux), for benchmarks that need to say where a
//! run's time went: in this process, or in a database server beside it on the same cores.

use std::path::Path;
use std::sync::OnceLock;

/// Clock ticks per second of the `/proc/<pid>/stat` times (`getconf CLK_TCK`; 100 when
/// that cannot be asked, as on every Linux build Debian ships).
fn ticks_per_second() -> f64 {
    static TICKS: OnceLock<f64> = OnceLock::new();
    *TICKS.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(100.0)
    })
}

/// The fields of one `/proc/<pid>/stat` line the benchmarks use, in clock ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub ppid: u32,
    /// User plus system time of the process's threads.
    pub own: u64,
    /// User plus system time of its children that have exited and been waited for.
    pub reaped_children: u64,
}

/// Parse a `/proc/<pid>/stat` line. The command name (field 2) is in parentheses and may
/// itself hold spaces and parentheses, so the fields are counted after the last `)`.
pub fn parse_stat(line: &str) -> Option<Stat> {
    let rest = &line[line.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state (3), ppid (4), …, utime (14), stime (15), cutime (16), cstime (17).
    let n = |field: usize| f.get(field - 3)?.parse::<u64>().ok();
    Some(Stat {
        ppid: n(4)? as u32,
        own: n(14)? + n(15)?,
        reaped_children: n(16)? + n(17)?,
    })
}

fn stat_of(pid: u32) -> Option<Stat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// CPU seconds this process has used so far, all threads.
pub fn this_process_seconds() -> f64 {
    let s = stat_of(std::process::id()).expect("/proc/self/stat is readable");
    s.own as f64 / ticks_per_second()
}

/// CPU seconds used so far by the process `pid`, its live children and its children that
/// have exited (a PostgreSQL server: the postmaster, its backends, and those that ended).
pub fn process_tree_seconds(pid: u32) -> Option<f64> {
    let root = stat_of(pid)?;
    let mut ticks = root.own + root.reaped_children;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(child) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if let Some(s) = stat_of(child).filter(|s| s.ppid == pid) {
            ticks += s.own;
        }
    }
    Some(ticks as f64 / ticks_per_second())
}

/// The PID a PostgreSQL data directory's `postmaster.pid` names.
pub fn postmaster_pid(data: &Path) -> Option<u32> {
    std::fs::read_to_string(data.join("postmaster.pid"))
        .ok()?
        .lines()
        .next()?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_after_the_name() {
        // A name with a space and a parenthesis, as `(sd-pam) x` would appear.
        let line = "4242 ((sd-pam) x) S 17 4242 4242 0 -1 4194560 100 0 0 0 \
                    250 30 7 5 20 0 1 0 123 456 78 18446744073709551615";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                ppid: 17,
                own: 280,
                reaped_children: 12
            })
        );
        assert_eq!(parse_stat("4242 (cut short) S 17 4242"), None);
        assert_eq!(parse_stat("no name at all"), None);
    }

    #[test]
    fn this_process_time_grows_with_work() {
        let before = this_process_seconds();
        // Work until the counter moves by a few ticks; bounded so a counter that never
        // moves fails rather than hangs.
        let mut x = 1u64;
        for round in 0.. {
            for i in 0..10_000_000u64 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
            }
            if this_process_seconds() - before >= 0.05 {
                break;
            }
            assert!(round < 2_000, "CPU time did not grow: {x}");
        }
        let own = this_process_seconds();
        let tree = process_tree_seconds(std::process::id()).unwrap();
        assert!(tree >= own, "{tree} < {own}");
    }
}
