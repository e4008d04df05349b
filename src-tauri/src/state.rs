//! What the window's commands share: the console (or why it could not start) and the
//! cancel flags of running jobs.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use parking_lot::Mutex;

use console::text;
use console::{ApiError, ApiResult, Console, ErrorCode};

pub struct AppState {
    pub console: Option<Arc<Console>>,
    pub startup_error: Option<ApiError>,
    jobs: Mutex<HashMap<String, Arc<AtomicBool>>>,
}

impl AppState {
    pub fn new(console: Option<Arc<Console>>, startup_error: Option<ApiError>) -> Self {
        AppState {
            console,
            startup_error,
            jobs: Mutex::new(HashMap::new()),
        }
    }

    pub fn console(&self) -> ApiResult<Arc<Console>> {
        self.console.clone().ok_or_else(|| {
            self.startup_error.clone().unwrap_or_else(|| {
                ApiError::new(
                    ErrorCode::Internal,
                    text!("errors.console_did_not_start", "The console did not start."),
                )
            })
        })
    }

    /// Register a job's cancel flag under the UI's ID.
    pub fn job(&self, id: &str) -> Arc<AtomicBool> {
        let flag = Arc::new(AtomicBool::new(false));
        self.jobs.lock().insert(id.to_string(), flag.clone());
        flag
    }

    pub fn finish_job(&self, id: &str) {
        self.jobs.lock().remove(id);
    }

    pub fn cancel(&self, id: &str) -> bool {
        match self.jobs.lock().get(id) {
            Some(f) => {
                f.store(true, std::sync::atomic::Ordering::SeqCst);
                true
            }
            None => false,
        }
    }
}
