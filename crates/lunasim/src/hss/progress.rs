//! Key generations in progress, for the console's progress bar: each counts the leaves it
//! has built of all it must build. Read through `LUNASIM_Control`
//! (`{"op":"hss_progress"}`), since a PKCS#11 call cannot report progress while it runs.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use serde::Serialize;

pub struct Job {
    pub label: String,
    pub done: AtomicU64,
    pub total: u64,
    started: Instant,
}

static JOBS: Mutex<Vec<Arc<Job>>> = Mutex::new(Vec::new());

/// A generation counted while this lives.
pub struct Running(pub Arc<Job>);

impl Drop for Running {
    fn drop(&mut self) {
        JOBS.lock().retain(|j| !Arc::ptr_eq(j, &self.0));
    }
}

pub fn start(label: &[u8], total: u64) -> Running {
    let job = Arc::new(Job {
        label: String::from_utf8_lossy(label).into_owned(),
        done: AtomicU64::new(0),
        total,
        started: Instant::now(),
    });
    JOBS.lock().push(job.clone());
    Running(job)
}

#[derive(Serialize)]
pub struct Report {
    pub label: String,
    pub done: u64,
    pub total: u64,
    pub elapsed_ms: u64,
}

pub fn snapshot() -> Vec<Report> {
    JOBS.lock()
        .iter()
        .map(|j| Report {
            label: j.label.clone(),
            done: j.done.load(Ordering::Relaxed).min(j.total),
            total: j.total,
            elapsed_ms: j.started.elapsed().as_millis() as u64,
        })
        .collect()
}
