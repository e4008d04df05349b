//! One session pool per (module, slot).
//!
//! - Warm-up opens and logs in `size` sessions; each is owned by one thread at a time.
//! - A health check (`C_GenerateRandom(1)`) runs only when a session has not been seen
//!   working for `health_ttl`.
//! - Recovery by class: `SessionInvalid` → reopen + re-login, then the call is retried once
//!   (the call never reached the token); `Disconnected` → `C_Finalize` + `C_Initialize` on the
//!   same library handle with backoff 100·2ⁿ ms (capped), sessions rebuilt; the caller sees the
//!   error once, marked recovered, unless the call is idempotent (then it is retried);
//!   `RetryOnly`/`Busy` → retried with backoff, no recovery; `Pin` → never retried, never a
//!   disconnect.
//! - A circuit breaker per pool, and a bounded backlog that answers `Busy` at once.
//! - Blocking PKCS#11 calls never run on the async runtime's core threads: [`Pool::run_async`]
//!   hands them to the blocking pool.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use p11::{ErrorClass, Module, Pin, Session, SlotId, UserType};
use parking_lot::{Condvar, Mutex};
use serde::Serialize;

use crate::breaker::{Breaker, BreakerState};
use crate::error::{HsmError, Result};
use crate::metrics::{Metrics, MetricsSnapshot};

#[derive(Debug, Clone)]
pub struct PoolConfig {
    /// Sessions in the pool.
    pub size: usize,
    /// Open read-write sessions.
    pub rw: bool,
    /// Callers allowed to wait for a session; one more gets `Busy` at once.
    pub backlog: usize,
    /// Longest wait for a free session.
    pub checkout_timeout: Duration,
    /// A session seen working within this time is not health-checked at checkout.
    pub health_ttl: Duration,
    /// Retries for `RetryOnly`/`Busy` answers.
    pub max_retries: u32,
    pub backoff_base: Duration,
    pub backoff_cap: Duration,
    /// Reinitialize attempts per recovery.
    pub recovery_attempts: u32,
    /// Consecutive connection failures that open the breaker.
    pub breaker_threshold: u32,
    /// How long the breaker stays open before one probe is admitted.
    pub breaker_open_for: Duration,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            size: 4,
            rw: true,
            backlog: 64,
            checkout_timeout: Duration::from_secs(30),
            health_ttl: Duration::from_secs(30),
            max_retries: 3,
            backoff_base: Duration::from_millis(100),
            backoff_cap: Duration::from_secs(5),
            recovery_attempts: 3,
            breaker_threshold: 5,
            breaker_open_for: Duration::from_secs(30),
        }
    }
}

impl PoolConfig {
    /// 100·2ⁿ ms (with the configured base), capped.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = 1u32.checked_shl(attempt.min(20)).unwrap_or(u32::MAX);
        self.backoff_base
            .saturating_mul(factor)
            .min(self.backoff_cap)
    }
}

struct Pooled {
    session: Session,
    verified_at: Instant,
}

struct Credentials {
    user: UserType,
    pin: Pin,
}

struct Inner {
    module: Arc<Module>,
    /// The slot ID can change when the module is reinitialized (SoftHSM2 renumbers); the
    /// pool follows its token by serial number and label.
    slot: AtomicU64,
    token: Mutex<Option<(String, String)>>,
    config: PoolConfig,
    credentials: Mutex<Option<Credentials>>,
    idle: Mutex<Vec<Pooled>>,
    available: Condvar,
    open: AtomicUsize,
    waiting: AtomicUsize,
    queued: AtomicUsize,
    breaker: Breaker,
    metrics: Metrics,
    recovery: Mutex<()>,
}

/// A session pool for one slot of one module. Cheap to clone (shared).
#[derive(Clone)]
pub struct Pool {
    inner: Arc<Inner>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PoolStatus {
    pub slot: u64,
    pub size: usize,
    pub open: usize,
    pub idle: usize,
    pub in_use: usize,
    pub waiting: usize,
    pub breaker: BreakerState,
    pub breaker_opened: u64,
    pub logged_in: bool,
    pub module_generation: u64,
}

impl Pool {
    /// A pool for `slot`. Opens nothing yet; see [`Pool::warm_up`] and [`Pool::login`].
    pub fn new(module: Arc<Module>, slot: SlotId, config: PoolConfig) -> Pool {
        let breaker = Breaker::new(config.breaker_threshold, config.breaker_open_for);
        Pool {
            inner: Arc::new(Inner {
                module,
                slot: AtomicU64::new(slot),
                token: Mutex::new(None),
                config,
                credentials: Mutex::new(None),
                idle: Mutex::new(Vec::new()),
                available: Condvar::new(),
                open: AtomicUsize::new(0),
                waiting: AtomicUsize::new(0),
                queued: AtomicUsize::new(0),
                breaker,
                metrics: Metrics::default(),
                recovery: Mutex::new(()),
            }),
        }
    }

    pub fn module(&self) -> &Arc<Module> {
        &self.inner.module
    }

    pub fn slot(&self) -> SlotId {
        self.inner.slot.load(Ordering::Acquire)
    }

    /// Find this pool's token again after the slot list changed. Returns whether the slot
    /// moved.
    fn follow_token(&self) -> bool {
        let Some((serial, label)) = self.inner.token.lock().clone() else {
            return false;
        };
        let Ok(slots) = self.inner.module.slots(true) else {
            return false;
        };
        for slot in slots {
            if let Ok(ti) = self.inner.module.token_info(slot) {
                if ti.serial_number == serial && ti.label == label {
                    let old = self.inner.slot.swap(slot, Ordering::AcqRel);
                    if old != slot {
                        tracing::info!(
                            old,
                            new = slot,
                            "token moved to another slot after a reinitialize"
                        );
                    }
                    return old != slot;
                }
            }
        }
        false
    }

    pub fn config(&self) -> &PoolConfig {
        &self.inner.config
    }

    pub fn metrics(&self) -> MetricsSnapshot {
        self.inner.metrics.snapshot()
    }

    pub fn status(&self) -> PoolStatus {
        let idle = self.inner.idle.lock().len();
        let open = self.inner.open.load(Ordering::Acquire);
        PoolStatus {
            slot: self.slot(),
            size: self.inner.config.size,
            open,
            idle,
            in_use: open.saturating_sub(idle),
            waiting: self.inner.waiting.load(Ordering::Acquire),
            breaker: self.inner.breaker.state(),
            breaker_opened: self.inner.breaker.times_opened(),
            logged_in: self.inner.credentials.lock().is_some(),
            module_generation: self.inner.module.generation(),
        }
    }

    pub fn is_logged_in(&self) -> bool {
        self.inner.credentials.lock().is_some()
    }

    pub fn logged_in_as(&self) -> Option<UserType> {
        self.inner.credentials.lock().as_ref().map(|c| c.user)
    }

    /// Open sessions up to the pool size (each logged in when the pool is).
    pub fn warm_up(&self) -> Result<()> {
        let mut opened = Vec::new();
        while self.inner.open.load(Ordering::Acquire) < self.inner.config.size {
            self.inner.open.fetch_add(1, Ordering::AcqRel);
            match self.open_one_recovering() {
                Ok(p) => opened.push(p),
                Err(e) => {
                    self.inner.open.fetch_sub(1, Ordering::AcqRel);
                    for p in opened {
                        self.checkin(p);
                    }
                    return Err(e);
                }
            }
        }
        for p in opened {
            self.checkin(p);
        }
        Ok(())
    }

    /// Log in. A wrong PIN is reported once and never retried; the credentials are kept
    /// (zeroizing) only after a successful login, to log in again after a recovery.
    pub fn login(&self, user: UserType, pin: Pin) -> Result<()> {
        let p = self.checkout(Instant::now())?;
        let r = p.session.login(user, &pin);
        match r {
            Ok(()) => {
                *self.inner.credentials.lock() = Some(Credentials { user, pin });
                self.checkin(p);
                Ok(())
            }
            Err(e) => {
                self.inner.metrics.error(e.class());
                if e.class() == ErrorClass::Disconnected || e.class() == ErrorClass::SessionInvalid
                {
                    self.discard(p);
                } else {
                    self.checkin(p);
                }
                Err(e.into())
            }
        }
    }

    pub fn logout(&self) -> Result<()> {
        let had = self.inner.credentials.lock().take().is_some();
        if !had {
            return Ok(());
        }
        let p = self.checkout(Instant::now())?;
        let r = p.session.logout();
        self.checkin(p);
        r.map_err(Into::into)
    }

    /// Open a session; when the module turns out to be finalized or gone, recover it once
    /// and try again (nothing has run yet, so this is safe for any caller).
    fn open_one_recovering(&self) -> Result<Pooled> {
        let generation = self.inner.module.generation();
        match self.open_one() {
            Err(e) if e.class() == ErrorClass::Disconnected => {
                if e.p11().and_then(|e| e.rv()) == Some(p11::sys::CKR_SLOT_ID_INVALID)
                    && self.follow_token()
                {
                    return self.open_one();
                }
                self.recover_module(generation)?;
                self.follow_token();
                self.open_one()
            }
            r => r,
        }
    }

    fn open_one(&self) -> Result<Pooled> {
        let slot = self.slot();
        let session = self.inner.module.open_session(slot, self.inner.config.rw)?;
        if self.inner.token.lock().is_none() {
            if let Ok(ti) = self.inner.module.token_info(slot) {
                *self.inner.token.lock() = Some((ti.serial_number, ti.label));
            }
        }
        if let Some(c) = self.inner.credentials.lock().as_ref() {
            session.login(c.user, &c.pin)?;
        }
        Ok(Pooled {
            session,
            verified_at: Instant::now(),
        })
    }

    /// Drop a session that is dead or suspect and free its place.
    fn discard(&self, p: Pooled) {
        if p.session.is_stale() {
            p.session.abandon();
        } else {
            drop(p.session); // closes it
        }
        self.inner.open.fetch_sub(1, Ordering::AcqRel);
        self.inner.available.notify_one();
    }

    fn checkin(&self, p: Pooled) {
        if p.session.is_stale() {
            p.session.abandon();
            self.inner.open.fetch_sub(1, Ordering::AcqRel);
            self.inner.available.notify_one();
            return;
        }
        self.inner.idle.lock().push(p);
        self.inner.available.notify_one();
    }

    fn checkout(&self, now: Instant) -> Result<Pooled> {
        let inner = &self.inner;
        let mut idle = inner.idle.lock();
        loop {
            if let Some(p) = idle.pop() {
                drop(idle);
                return self.validate(p, now);
            }
            if inner.open.load(Ordering::Acquire) < inner.config.size {
                inner.open.fetch_add(1, Ordering::AcqRel);
                drop(idle);
                return self.open_one_recovering().inspect_err(|_| {
                    inner.open.fetch_sub(1, Ordering::AcqRel);
                });
            }
            let waiting = inner.waiting.fetch_add(1, Ordering::AcqRel) + 1;
            if waiting > inner.config.backlog {
                inner.waiting.fetch_sub(1, Ordering::AcqRel);
                inner
                    .metrics
                    .busy_rejections
                    .fetch_add(1, Ordering::Relaxed);
                return Err(HsmError::Busy {
                    size: inner.config.size,
                    waiting: waiting - 1,
                });
            }
            let timed_out = inner
                .available
                .wait_for(&mut idle, inner.config.checkout_timeout)
                .timed_out();
            inner.waiting.fetch_sub(1, Ordering::AcqRel);
            if timed_out
                && idle.is_empty()
                && inner.open.load(Ordering::Acquire) >= inner.config.size
            {
                return Err(HsmError::Timeout(inner.config.checkout_timeout));
            }
        }
    }

    /// Make sure a session taken from the idle list is usable.
    fn validate(&self, p: Pooled, now: Instant) -> Result<Pooled> {
        if p.session.is_stale() {
            p.session.abandon();
            return self.open_one_recovering().inspect_err(|_| {
                self.inner.open.fetch_sub(1, Ordering::AcqRel);
            });
        }
        if now.saturating_duration_since(p.verified_at) < self.inner.config.health_ttl {
            return Ok(p);
        }
        self.inner
            .metrics
            .health_checks
            .fetch_add(1, Ordering::Relaxed);
        let mut byte = [0u8; 1];
        match p.session.generate_random(&mut byte) {
            Ok(()) => Ok(Pooled {
                verified_at: now,
                ..p
            }),
            Err(e) => {
                self.inner.metrics.error(e.class());
                let generation = p.session.generation();
                p.session.abandon();
                let reopen = || {
                    self.inner
                        .metrics
                        .session_reopens
                        .fetch_add(1, Ordering::Relaxed);
                    self.open_one().inspect_err(|_| {
                        self.inner.open.fetch_sub(1, Ordering::AcqRel);
                    })
                };
                match e.class() {
                    ErrorClass::Disconnected => {
                        if let Err(re) = self.recover_module(generation) {
                            self.inner.open.fetch_sub(1, Ordering::AcqRel);
                            return Err(re);
                        }
                        reopen()
                    }
                    _ => reopen(),
                }
            }
        }
    }

    /// `C_Finalize` + `C_Initialize`, once, however many workers saw the disconnect.
    fn recover_module(&self, seen_generation: u64) -> Result<()> {
        let inner = &self.inner;
        let _g = inner.recovery.lock();
        if inner.module.generation() != seen_generation && inner.module.is_initialized() {
            return Ok(()); // someone else already recovered it
        }
        let mut last = None;
        for attempt in 0..inner.config.recovery_attempts.max(1) {
            match inner.module.reinitialize() {
                Ok(()) => {
                    inner
                        .metrics
                        .module_recoveries
                        .fetch_add(1, Ordering::Relaxed);
                    let stale: Vec<Pooled> = std::mem::take(&mut *inner.idle.lock());
                    for p in stale {
                        p.session.abandon();
                        inner.open.fetch_sub(1, Ordering::AcqRel);
                    }
                    inner.available.notify_all();
                    drop(_g);
                    self.follow_token();
                    tracing::warn!(module = %inner.module.path().display(), "module reinitialized after a disconnect");
                    return Ok(());
                }
                Err(e) => {
                    last = Some(e);
                    std::thread::sleep(inner.config.backoff(attempt));
                }
            }
        }
        Err(last
            .map(HsmError::from)
            .unwrap_or(HsmError::Unsupported("recovery failed".into())))
    }

    fn not_logged_in_error(&self, e: p11::Error) -> HsmError {
        if e.rv() == Some(p11::sys::CKR_USER_NOT_LOGGED_IN) && !self.is_logged_in() {
            HsmError::NotLoggedIn
        } else {
            e.into()
        }
    }

    /// Run `f` on a pooled session. Not retried after a disconnect (the caller decides).
    /// The same closure may run a whole batch: one session is borrowed for all of it.
    pub fn run<T>(&self, op: &'static str, f: impl FnMut(&Session) -> p11::Result<T>) -> Result<T> {
        self.call(op, false, f)
    }

    /// As [`Pool::run`] for calls that are safe to repeat (reads, random); after a
    /// successful recovery the call is retried once instead of failing.
    pub fn run_idempotent<T>(
        &self,
        op: &'static str,
        f: impl FnMut(&Session) -> p11::Result<T>,
    ) -> Result<T> {
        self.call(op, true, f)
    }

    fn call<T>(
        &self,
        op: &'static str,
        idempotent: bool,
        mut f: impl FnMut(&Session) -> p11::Result<T>,
    ) -> Result<T> {
        let inner = &self.inner;
        if let Err(retry_after) = inner.breaker.admit() {
            inner
                .metrics
                .breaker_rejections
                .fetch_add(1, Ordering::Relaxed);
            return Err(HsmError::CircuitOpen { retry_after });
        }
        let mut attempt = 0u32;
        let mut reopened = false;
        let mut recovered = false;
        loop {
            let start = Instant::now();
            let p = match self.checkout(start) {
                Ok(p) => p,
                Err(e) => {
                    match e.class() {
                        ErrorClass::Disconnected => inner.breaker.on_failure(),
                        _ => inner.breaker.release_probe(),
                    }
                    return Err(e);
                }
            };
            let generation = p.session.generation();
            let r = f(&p.session);
            let end = Instant::now();
            let e = match r {
                Ok(v) => {
                    self.checkin(Pooled {
                        verified_at: end,
                        ..p
                    });
                    inner.metrics.record(op, end - start, true);
                    inner.breaker.on_success();
                    return Ok(v);
                }
                Err(e) => e,
            };
            let class = e.class();
            inner.metrics.error(class);
            inner.metrics.record(op, end - start, false);
            match class {
                ErrorClass::SessionInvalid => {
                    self.discard(p);
                    inner
                        .metrics
                        .session_reopens
                        .fetch_add(1, Ordering::Relaxed);
                    if !reopened {
                        reopened = true;
                        continue;
                    }
                    inner.breaker.on_success();
                    return Err(self.not_logged_in_error(e));
                }
                ErrorClass::Disconnected => {
                    self.discard(p);
                    inner.breaker.on_failure();
                    let ok = self.recover_module(generation).is_ok();
                    if ok && idempotent && !recovered {
                        recovered = true;
                        continue;
                    }
                    return Err(HsmError::Disconnected {
                        error: e,
                        recovered: ok,
                    });
                }
                ErrorClass::RetryOnly | ErrorClass::Busy if attempt < inner.config.max_retries => {
                    self.checkin(p);
                    std::thread::sleep(inner.config.backoff(attempt));
                    attempt += 1;
                }
                _ => {
                    // The token answered: the connection is fine whatever the verdict.
                    self.checkin(p);
                    inner.breaker.on_success();
                    return Err(e.into());
                }
            }
        }
    }

    /// [`Pool::run`] from async code: the call runs on the blocking thread pool, and when
    /// every session is busy and the backlog is full the answer is `Busy` at once.
    pub async fn run_async<T, F>(&self, op: &'static str, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnMut(&Session) -> p11::Result<T> + Send + 'static,
    {
        self.spawn(op, false, f).await
    }

    pub async fn run_idempotent_async<T, F>(&self, op: &'static str, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnMut(&Session) -> p11::Result<T> + Send + 'static,
    {
        self.spawn(op, true, f).await
    }

    async fn spawn<T, F>(&self, op: &'static str, idempotent: bool, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnMut(&Session) -> p11::Result<T> + Send + 'static,
    {
        let inner = &self.inner;
        let limit = inner.config.size + inner.config.backlog;
        let queued = inner.queued.fetch_add(1, Ordering::AcqRel) + 1;
        struct Release<'a>(&'a AtomicUsize);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::AcqRel);
            }
        }
        let _release = Release(&inner.queued);
        if queued > limit {
            inner
                .metrics
                .busy_rejections
                .fetch_add(1, Ordering::Relaxed);
            return Err(HsmError::Busy {
                size: inner.config.size,
                waiting: queued - 1 - inner.config.size.min(queued - 1),
            });
        }
        let pool = self.clone();
        tokio::task::spawn_blocking(move || pool.call(op, idempotent, f))
            .await
            .map_err(|e| HsmError::Unsupported(format!("HSM worker failed: {e}")))?
    }
}
