//! Controlling the simulator from tests, without rebuilding: JSON commands through the
//! `LUNASIM_Control` entry point (same process; `intercept::control`) or appended as lines
//! to the control file named in the configuration (any process — e.g. a WebDriver test
//! driving the desktop app), which every exported call polls.
//!
//! Commands (`op`):
//! - `fail`: `{"op":"fail","function":"C_Sign","rv":"CKR_DEVICE_ERROR","count":2}` — the next
//!   `count` calls (default 1; `"count":null` = until cleared) of `function` (`"*"` = any)
//!   return `rv` (a name, Luna's vendor names included, or a number). With `"after":true`
//!   the call runs first and only its answer is replaced: the work was done, the reply lost.
//!   With `"skip":N` the first N matching calls are let through untouched (a fault on the
//!   second signature of a batch, say).
//! - `disconnect`: `{"op":"disconnect","count":5}` — drop every session now and answer the
//!   next `count` calls with Luna's `CKR_UNABLE_TO_CONNECT`, as a lost network HSM does.
//! - `drop_sessions`: close every session, as a token removal does.
//! - `latency`: `{"op":"latency","ms":5,"jitter_ms":1}` per-call delay.
//! - `slow`: `{"op":"slow","function":"C_Sign","ms":2000}` extra delay for one function
//!   (`"skip":N`: from the N+1th call on).
//! - `pqc_queue`: `{"op":"pqc_queue","enabled":true,"service_ms":15}`.
//! - `renumber`: `{"op":"renumber","enabled":true}` — from the next `C_Initialize` on, each
//!   initialization hands out new object handle numbers (as a token may after a restart):
//!   a handle from before names another object, or none. `"enabled":false` stops it.
//! - `clear`: remove faults and slow calls.
//! - `stats`: answer with call counts, utilization counters and busy/up time (JSON).
//! - any other `op`: the layer over the core's ([`crate::layer::Layer::control`]) — the HA
//!   groups' `member_down`, `member_up`, `resync`, `ha_state`.
//! - `hss_progress`: the HSS key generations running in this process, each with its label
//!   and the leaves built of all it builds (`{"keygens":[{"label","done","total",
//!   "elapsed_ms"}]}`) — the console's progress bar while `C_GenerateKeyPair` runs.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use cryptoki_sys::*;
use p11::names::{self, Family, Kind};
use parking_lot::Mutex;
use serde_json::{json, Value};

use crate::config::Config;
use crate::knobs::{knobs, Fault};
use crate::sim;
use crate::stats::stats;

struct FileState {
    path: Option<PathBuf>,
    offset: u64,
    /// When the file was last read; `None` until the first call reads it.
    last_check: Option<Instant>,
}

fn file_state() -> &'static Mutex<FileState> {
    static F: OnceLock<Mutex<FileState>> = OnceLock::new();
    F.get_or_init(|| {
        Mutex::new(FileState {
            path: None,
            offset: 0,
            last_check: None,
        })
    })
}

static HAS_FILE: AtomicBool = AtomicBool::new(false);
static CONFIGURED: AtomicBool = AtomicBool::new(false);

/// Apply the configuration's knobs (first initialization only: later re-initializations
/// by a recovering client must not undo what a test set).
pub fn configure(config: &Config, _conf_path: Option<PathBuf>) {
    if CONFIGURED.swap(true, Ordering::SeqCst) {
        return;
    }
    {
        let mut k = knobs().lock();
        k.latency_ms = config.latency.per_call_ms;
        k.jitter_ms = config.latency.jitter_ms;
        k.pqc_queue = config.pqc_queue.enabled;
        k.service_ms = config.pqc_queue.service_ms;
    }
    if let Some(p) = &config.control_file {
        let mut f = file_state().lock();
        // Commands written before the module started are applied too.
        f.path = Some(p.clone());
        f.offset = 0;
        HAS_FILE.store(true, Ordering::Release);
    }
}

/// Fault check for `C_Initialize` (which runs outside the common wrapper).
pub fn take_fault(name: &'static str) -> Option<CK_RV> {
    knobs().lock().take_fault(name).map(|a| a.rv)
}

/// Apply new lines of the control file (checked at most every 20 ms).
pub fn poll_file() {
    if !HAS_FILE.load(Ordering::Acquire) {
        return;
    }
    let lines = {
        let mut f = file_state().lock();
        // The first call after start always reads it: commands written before the
        // process started apply from that call on, however soon it comes.
        if f.last_check
            .is_some_and(|t| t.elapsed() < Duration::from_millis(20))
        {
            return;
        }
        f.last_check = Some(Instant::now());
        let Some(path) = f.path.clone() else { return };
        let Ok(bytes) = std::fs::read(&path) else {
            return;
        };
        if (bytes.len() as u64) < f.offset {
            f.offset = 0; // replaced or truncated: start over
        }
        let new = &bytes[f.offset as usize..];
        // Only whole lines: a writer may be mid-line.
        let Some(end) = new.iter().rposition(|&b| b == b'\n') else {
            return;
        };
        f.offset += end as u64 + 1;
        String::from_utf8_lossy(&new[..end]).into_owned()
    };
    for line in lines.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Err(e) = execute(line) {
            eprintln!("lunasim: control file: {e}");
        }
    }
}

fn parse_rv(v: &Value) -> Result<CK_RV, String> {
    match v {
        Value::Number(n) => n.as_u64().ok_or_else(|| format!("bad rv {n}")),
        Value::String(s) => names::parse(Kind::ReturnValue, s, Family::Luna)
            .ok_or_else(|| format!("unknown return value {s}")),
        _ => Err("rv must be a name or a number".into()),
    }
}

fn drop_sessions() {
    if let Some(s) = sim::current() {
        if let Ok(slots) = s.inner.slots(false) {
            for slot in slots {
                let _ = s.inner.close_all_sessions(slot);
            }
        }
        s.sessions.lock().clear();
        s.objects.lock().keys.retain(|k| k.token);
        crate::layer::get().sessions_dropped();
    }
}

/// Execute one command; returns the answer (JSON).
pub fn execute(cmd: &str) -> Result<String, String> {
    let v: Value = serde_json::from_str(cmd).map_err(|e| format!("not JSON: {e}"))?;
    let op = v.get("op").and_then(Value::as_str).ok_or("missing op")?;
    let count = |d: u64| match v.get("count") {
        None => Some(d),
        Some(Value::Null) => None,
        Some(n) => Some(n.as_u64().unwrap_or(d).max(1)),
    };
    let ms = |key: &str| v.get(key).and_then(Value::as_f64).unwrap_or(0.0);
    let skip = v.get("skip").and_then(Value::as_u64).unwrap_or(0);
    match op {
        "fail" => {
            let function = v
                .get("function")
                .and_then(Value::as_str)
                .unwrap_or("*")
                .to_string();
            let rv = parse_rv(v.get("rv").ok_or("missing rv")?)?;
            let after = v.get("after").and_then(Value::as_bool).unwrap_or(false);
            knobs().lock().faults.push(Fault {
                function,
                rv,
                remaining: count(1),
                after,
                skip,
            });
        }
        "disconnect" => {
            drop_sessions();
            knobs().lock().faults.push(Fault {
                function: "*".into(),
                rv: names::luna::CKR_UNABLE_TO_CONNECT,
                remaining: count(1),
                after: false,
                skip: 0,
            });
        }
        "drop_sessions" => drop_sessions(),
        "latency" => {
            let mut k = knobs().lock();
            k.latency_ms = ms("ms");
            k.jitter_ms = ms("jitter_ms");
        }
        "slow" => {
            let function = v
                .get("function")
                .and_then(Value::as_str)
                .unwrap_or("*")
                .to_string();
            knobs().lock().slow.push(crate::knobs::Slow {
                function,
                ms: ms("ms"),
                skip,
            });
        }
        "pqc_queue" => {
            let mut k = knobs().lock();
            k.pqc_queue = v.get("enabled").and_then(Value::as_bool).unwrap_or(true);
            if let Some(s) = v.get("service_ms").and_then(Value::as_f64) {
                k.service_ms = s;
            }
        }
        "renumber" => {
            let on = v.get("enabled").and_then(Value::as_bool).unwrap_or(true);
            knobs().lock().renumber = on.then_some(0);
        }
        "clear" => {
            let mut k = knobs().lock();
            k.faults.clear();
            k.slow.clear();
        }
        "stats" => {
            let st = stats();
            let calls = st
                .calls
                .lock()
                .iter()
                .map(|(k, v)| (k.to_string(), json!(v)))
                .collect::<serde_json::Map<_, _>>();
            let util: Vec<u64> = st
                .utilization
                .iter()
                .map(|c| c.load(Ordering::Relaxed))
                .collect();
            return Ok(json!({
                "calls": calls,
                "utilization": util,
                "busy_ms": st.busy().as_millis() as u64,
                "up_ms": st.up().as_millis() as u64,
                "faults_pending": knobs().lock().faults.len(),
            })
            .to_string());
        }
        "hss_progress" => {
            return Ok(json!({ "keygens": crate::hss::progress::snapshot() }).to_string());
        }
        other => {
            return crate::layer::get()
                .control(other, &v)
                .unwrap_or_else(|| Err(format!("unknown op {other}")))
        }
    }
    Ok(json!({"ok": true}).to_string())
}
