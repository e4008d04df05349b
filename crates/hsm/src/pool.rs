//! One session pool per (module, slot).
//!
//! - Warm-up opens and logs in `size` sessions; each is owned by one thread at a time.
//! - A health check (`C_GenerateRandom(1)`) runs only when a session has not been seen
//!   working for `health_ttl`.
//! - Recovery by class: `SessionInvalid` → reopen + re-login, then the call is retried (the
//!   call never reached the token); `Disconnected` → `C_Finalize` + `C_Initialize` on the
//!   same library handle with backoff 100·2ⁿ ms (capped), sessions rebuilt; the caller sees the
//!   error once, marked recovered, unless the call is idempotent (then it is retried). One
//!   call lives through at most `recovery_budget` recoveries; a call that succeeds after one
//!   counts in `recovered_calls`;
//!   `RetryOnly`/`Busy` → retried with backoff, no recovery; `Pin` → never retried, never a
//!   disconnect.
//! - A circuit breaker per pool, and a bounded backlog that answers `Busy` at once.
//! - Blocking PKCS#11 calls never run on the async runtime's core threads: [`Pool::run_async`]
//!   hands them to the blocking pool.
//!
//! The hot path shares nothing between workers: each session lives in its own place (a
//! `try_lock` takes it, the thread tries the place it used last first, nothing is moved;
//! places are cache-line aligned so two holders never write the same line), each session
//! carries its own latency recorder, the health-check clock is a coarse atomic, and
//! latencies are read from the TSC. Only the common case is inlined into [`Pool::call`]
//! (a free, current, recently seen session; a closed breaker); waiting, opening, health
//! checks and recovery are out of line. See `benches/pool_overhead.rs` for what that buys.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use std::cell::Cell;

use p11::{ErrorClass, Module, Pin, Session, SlotId, UserType};
use parking_lot::{Condvar, Mutex, MutexGuard};
use serde::Serialize;

use crate::breaker::{Breaker, BreakerState};
use crate::error::{HsmError, Result};
use crate::metrics::{clock, coarse_ms, timed, Metrics, MetricsSnapshot, Recorder};

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
    /// Recoveries (a module reinitialized, a session reopened) one call may live through
    /// before its error reaches the caller: a fault that outlasts them is reported.
    pub recovery_budget: u32,
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
            recovery_budget: 3,
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
    /// Coarse milliseconds when the session was last seen working.
    verified_at: u64,
    /// Calls made on this session (decides which are timed).
    calls: u64,
    rec: Recorder,
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
    health_ttl_ms: u64,
    credentials: Mutex<Option<Credentials>>,
    /// One place per session. A held lock is a session in use; the session stays where it
    /// is (no moves) and a thread tries the place it used last first.
    places: Box<[Place]>,
    /// The latency clock, looked up once (not per call).
    clock: &'static quanta::Clock,
    /// Only callers that must wait touch these.
    wait_lock: Mutex<()>,
    available: Condvar,
    waiting: AtomicUsize,
    open: AtomicUsize,
    queued: AtomicUsize,
    breaker: Breaker,
    metrics: Metrics,
    recovery: Mutex<()>,
}

/// One session's place, alone on its cache lines. Neighbouring places would otherwise
/// share a line that both holders write on every call (the lock word, the call count, the
/// health stamp), and two workers would pass it back and forth between their cores.
/// 128 bytes: the adjacent-line prefetcher works on pairs of 64-byte lines.
#[repr(align(128))]
struct Place(Mutex<Option<Pooled>>);

impl std::ops::Deref for Place {
    type Target = Mutex<Option<Pooled>>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

thread_local! {
    /// The place this thread used last (a hint; any place may be taken).
    static HINT: Cell<usize> = const { Cell::new(0) };
}

/// A checked-out session: the lock on its place.
type Held<'a> = MutexGuard<'a, Option<Pooled>>;

/// What one attempt of a call came to.
enum Attempt<'a, T> {
    Done(T),
    /// The closure failed on this held session (with its latency when timed); not yet
    /// recorded.
    Failed(Held<'a>, p11::Error, Option<u64>),
    /// No session could be checked out.
    NoSession(HsmError),
}

#[inline]
fn pooled<'a>(h: &'a mut Held<'_>) -> &'a mut Pooled {
    h.as_mut().expect("a held place has a session")
}

/// A session pool for one slot of one module. Cheap to clone (shared).
#[derive(Clone)]
pub struct Pool {
    inner: Arc<Inner>,
}

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
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
        let size = config.size.max(1);
        Pool {
            inner: Arc::new(Inner {
                module,
                slot: AtomicU64::new(slot),
                token: Mutex::new(None),
                health_ttl_ms: config.health_ttl.as_millis().min(u64::MAX as u128) as u64,
                config: PoolConfig { size, ..config },
                credentials: Mutex::new(None),
                places: (0..size).map(|_| Place(Mutex::new(None))).collect(),
                clock: clock(),
                wait_lock: Mutex::new(()),
                available: Condvar::new(),
                waiting: AtomicUsize::new(0),
                open: AtomicUsize::new(0),
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

    pub fn config(&self) -> &PoolConfig {
        &self.inner.config
    }

    /// The pool's figures. Sessions in use at this instant contribute at their next
    /// snapshot; idle ones are briefly taken out of the queue to be read.
    pub fn metrics(&self) -> MetricsSnapshot {
        let held: Vec<Held<'_>> = self
            .inner
            .places
            .iter()
            .filter_map(|m| m.try_lock())
            .collect();
        let snap = self
            .inner
            .metrics
            .snapshot(held.iter().filter_map(|g| g.as_ref().map(|p| &p.rec)));
        drop(held);
        self.wake_one();
        snap
    }

    fn idle_count(&self) -> usize {
        self.inner
            .places
            .iter()
            .filter(|m| m.try_lock().map(|g| g.is_some()).unwrap_or(false))
            .count()
    }

    pub fn status(&self) -> PoolStatus {
        let idle = self.idle_count();
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

    /// The PIN of the user (`CKU_USER`) logged in, for another program the officer runs to
    /// log in as the same user. `None` when nobody, or another role, is logged in.
    pub fn user_pin(&self) -> Option<Pin> {
        self.inner
            .credentials
            .lock()
            .as_ref()
            .filter(|c| c.user == UserType::User)
            .map(|c| c.pin.clone())
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

    /// Open sessions up to the pool size (each logged in when the pool is).
    pub fn warm_up(&self) -> Result<()> {
        for place in self.inner.places.iter() {
            let Some(mut g) = place.try_lock() else {
                continue;
            };
            if g.is_none() && self.reserve() {
                match self.open_one_recovering() {
                    Ok(p) => *g = Some(p),
                    Err(e) => {
                        drop(g);
                        self.unreserve();
                        return Err(e);
                    }
                }
            }
        }
        Ok(())
    }

    /// Log in. A wrong PIN is reported once and never retried; the credentials are kept
    /// (zeroizing) only after a successful login, to log in again after a recovery.
    pub fn login(&self, user: UserType, pin: Pin) -> Result<()> {
        let mut h = self.checkout(coarse_ms())?;
        match pooled(&mut h).session.login(user, &pin) {
            Ok(()) => {
                *self.inner.credentials.lock() = Some(Credentials { user, pin });
                self.checkin(h);
                Ok(())
            }
            Err(e) => {
                self.inner.metrics.error(e.class());
                if matches!(
                    e.class(),
                    ErrorClass::Disconnected | ErrorClass::SessionInvalid
                ) {
                    self.discard(h);
                } else {
                    self.checkin(h);
                }
                Err(e.into())
            }
        }
    }

    /// `C_SetPIN` on a session of this pool: the PIN of whoever is logged in (the user's
    /// in a public session). Tried once; on success the pool logs in with the new PIN
    /// after a recovery. When the HSM disconnects during the call its outcome is unknown:
    /// the pool forgets the credentials (it logs in with neither PIN by itself).
    pub fn set_pin(&self, old: &Pin, new: Pin) -> Result<()> {
        let mut h = self.checkout(coarse_ms())?;
        let r = pooled(&mut h).session.set_pin(old, &new);
        match &r {
            Ok(()) => {
                if let Some(c) = self.inner.credentials.lock().as_mut() {
                    c.pin = new;
                }
                self.checkin(h);
            }
            Err(e) if e.class() == ErrorClass::Disconnected => {
                // The reply is lost: the PIN may be the old or the new one now. Neither is
                // tried behind the caller's back (a wrong one uses an attempt); the caller
                // settles it and logs in again.
                *self.inner.credentials.lock() = None;
                self.discard(h)
            }
            Err(e) if e.class() == ErrorClass::SessionInvalid => self.discard(h),
            Err(_) => self.checkin(h),
        }
        r.map_err(Into::into)
    }

    /// Log out, forget the credentials and close every session of the pool (before
    /// `C_InitToken`, which needs the slot without sessions). Sessions in use are closed
    /// when they come back. The pool opens new ones on its next call.
    pub fn shut(&self) {
        let _ = self.logout();
        for place in self.inner.places.iter() {
            if let Some(mut g) = place.try_lock() {
                if g.is_some() {
                    self.discard_place(&mut g);
                }
            }
        }
        *self.inner.token.lock() = None;
    }

    fn discard_place(&self, g: &mut Held<'_>) {
        if let Some(p) = g.take() {
            self.inner.metrics.retire(&p.rec);
            if p.session.is_stale() {
                p.session.abandon();
            } else {
                drop(p.session);
            }
            self.inner.open.fetch_sub(1, Ordering::AcqRel);
        }
    }

    pub fn logout(&self) -> Result<()> {
        if self.inner.credentials.lock().take().is_none() {
            return Ok(());
        }
        let mut h = self.checkout(coarse_ms())?;
        let r = pooled(&mut h).session.logout();
        self.checkin(h);
        r.map_err(Into::into)
    }

    /// Claim a place for a new session if the pool is not full.
    fn reserve(&self) -> bool {
        let size = self.inner.config.size;
        self.inner
            .open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < size).then_some(n + 1)
            })
            .is_ok()
    }

    fn unreserve(&self) {
        self.inner.open.fetch_sub(1, Ordering::AcqRel);
        self.wake_one();
    }

    #[inline]
    fn wake_one(&self) {
        if self.inner.waiting.load(Ordering::SeqCst) > 0 {
            self.notify_one_waiter();
        }
    }

    #[cold]
    fn notify_one_waiter(&self) {
        let _g = self.inner.wait_lock.lock();
        self.inner.available.notify_one();
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
        {
            let mut credentials = self.inner.credentials.lock();
            if let Some(c) = credentials.as_ref() {
                if let Err(e) = session.login(c.user, &c.pin) {
                    if e.class() == ErrorClass::Pin {
                        // The token no longer takes the PIN the pool logged in with (changed
                        // elsewhere, or a change whose reply was lost): forgotten, so that no
                        // later session tries it again and uses up the token's attempts.
                        *credentials = None;
                        return Err(HsmError::LoginLost(e));
                    }
                    return Err(e.into());
                }
            }
        }
        Ok(Pooled {
            session,
            verified_at: coarse_ms(),
            calls: 0,
            rec: Recorder::default(),
        })
    }

    /// Drop a session that is dead or suspect and free its place.
    fn discard(&self, mut h: Held<'_>) {
        if let Some(p) = h.take() {
            self.inner.metrics.retire(&p.rec);
            if p.session.is_stale() {
                p.session.abandon();
            } else {
                drop(p.session); // closes it
            }
            drop(h);
            self.unreserve();
        }
    }

    #[inline]
    fn checkin(&self, mut h: Held<'_>) {
        if pooled(&mut h).session.is_stale() {
            self.discard(h);
            return;
        }
        drop(h);
        self.wake_one();
    }

    /// Take a place: the thread's last one if free, else any free one; open a session in
    /// an empty place while the pool has room; else wait within the backlog bound.
    /// (The scan wraps by comparison, not `%`: a division costs more than the rest of a
    /// hit on the hinted place.)
    fn try_take(&self) -> Option<Held<'_>> {
        let places = &self.inner.places;
        let n = places.len();
        let hint = HINT.with(Cell::get);
        let hint = if hint < n { hint } else { 0 };
        let mut empty: Option<Held<'_>> = None;
        let mut idx = hint;
        for _ in 0..n {
            if let Some(g) = places[idx].try_lock() {
                if g.is_some() {
                    if idx != hint {
                        HINT.with(|c| c.set(idx));
                    }
                    return Some(g);
                }
                if empty.is_none() {
                    empty = Some(g);
                }
            }
            idx += 1;
            if idx == n {
                idx = 0;
            }
        }
        empty
    }

    /// Take a session. The common case — the place this thread used last is free and its
    /// session current and seen working within the TTL — is a few instructions inlined
    /// into [`Pool::call`]; everything else is out of line in [`Pool::checkout_any`].
    #[inline]
    fn checkout(&self, now: u64) -> Result<Held<'_>> {
        match self.take_hinted(now) {
            Some(g) => Ok(g),
            None => self.checkout_any(now),
        }
    }

    /// The hinted place when it needs nothing done (else `None`, the place left free).
    #[inline]
    fn take_hinted(&self, now: u64) -> Option<Held<'_>> {
        let g = self.inner.places.get(HINT.with(Cell::get))?.try_lock()?;
        match g.as_ref() {
            Some(p)
                if !p.session.is_stale()
                    && now.saturating_sub(p.verified_at) < self.inner.health_ttl_ms =>
            {
                Some(g)
            }
            _ => {
                // Released at once; a waiter that looked while it was held hears of it.
                drop(g);
                self.wake_one();
                None
            }
        }
    }

    /// Any place: scan, open a session in an empty place, or wait within the backlog bound.
    #[inline(never)]
    fn checkout_any(&self, now: u64) -> Result<Held<'_>> {
        loop {
            if let Some(mut g) = self.try_take() {
                if g.is_some() {
                    self.validate(&mut g, now)?;
                    return Ok(g);
                }
                if let Some(r) = self.fill(g) {
                    return r;
                }
            }
            if let Some(r) = self.wait_for_place(now) {
                return r;
            }
        }
    }

    /// Open a session in a held, empty place if the pool has room (`None`: it is full).
    #[cold]
    fn fill<'a>(&'a self, mut g: Held<'a>) -> Option<Result<Held<'a>>> {
        if !self.reserve() {
            return None;
        }
        Some(match self.open_one_recovering() {
            Ok(p) => {
                *g = Some(p);
                Ok(g)
            }
            Err(e) => {
                drop(g);
                self.unreserve();
                Err(e)
            }
        })
    }

    /// Every session is in use: wait within the backlog bound. `None`: a place may be free
    /// now, try again.
    #[cold]
    fn wait_for_place(&self, now: u64) -> Option<Result<Held<'_>>> {
        let inner = &self.inner;
        let waiting = inner.waiting.fetch_add(1, Ordering::SeqCst) + 1;
        if waiting > inner.config.backlog {
            inner.waiting.fetch_sub(1, Ordering::SeqCst);
            inner
                .metrics
                .busy_rejections
                .fetch_add(1, Ordering::Relaxed);
            return Some(Err(HsmError::Busy {
                size: inner.config.size,
                waiting: waiting - 1,
            }));
        }
        let deadline = Instant::now() + inner.config.checkout_timeout;
        let timed_out = {
            let mut w = inner.wait_lock.lock();
            // Re-check under the wait lock: a release that happened before we started
            // waiting would otherwise be missed (releasers notify under this lock).
            let free = inner
                .places
                .iter()
                .any(|m| m.try_lock().map(|g| g.is_some()).unwrap_or(false))
                || inner.open.load(Ordering::Acquire) < inner.config.size;
            !free && inner.available.wait_until(&mut w, deadline).timed_out()
        };
        inner.waiting.fetch_sub(1, Ordering::SeqCst);
        if !timed_out {
            return None;
        }
        Some(match self.try_take().filter(|g| g.is_some()) {
            Some(mut g) => self.validate(&mut g, now).map(|()| g),
            None => Err(HsmError::Timeout(inner.config.checkout_timeout)),
        })
    }

    /// Make sure the session in a held place is usable (replacing it when it is not). The
    /// common answer — current module generation, seen working within the TTL — is two
    /// loads and a comparison; everything else is in [`Pool::revalidate`].
    #[inline]
    fn validate(&self, h: &mut Held<'_>, now: u64) -> Result<()> {
        let p = pooled(h);
        if !p.session.is_stale() && now.saturating_sub(p.verified_at) < self.inner.health_ttl_ms {
            return Ok(());
        }
        self.revalidate(h, now)
    }

    /// A stale session is replaced; one not seen working within the TTL is health-checked
    /// (and replaced, recovering the module first, when the check fails).
    #[cold]
    fn revalidate(&self, h: &mut Held<'_>, now: u64) -> Result<()> {
        let p = pooled(h);
        if p.session.is_stale() {
            let old = h.take().expect("held");
            self.inner.metrics.retire(&old.rec);
            old.session.abandon();
            return self.reopen_into(h);
        }
        self.inner
            .metrics
            .health_checks
            .fetch_add(1, Ordering::Relaxed);
        let mut byte = [0u8; 1];
        match p.session.generate_random(&mut byte) {
            Ok(()) => {
                p.verified_at = now;
                Ok(())
            }
            Err(e) => {
                self.inner.metrics.error(e.class());
                let old = h.take().expect("held");
                self.inner.metrics.retire(&old.rec);
                let generation = old.session.generation();
                old.session.abandon();
                self.inner
                    .metrics
                    .session_reopens
                    .fetch_add(1, Ordering::Relaxed);
                if e.class() == ErrorClass::Disconnected {
                    if let Err(re) = self.recover_module(generation) {
                        self.unreserve();
                        return Err(re);
                    }
                }
                self.reopen_into(h)
            }
        }
    }

    /// Open a replacement session in a held, emptied place (its reservation is kept).
    fn reopen_into(&self, h: &mut Held<'_>) -> Result<()> {
        match self.open_one_recovering() {
            Ok(p) => {
                **h = Some(p);
                Ok(())
            }
            Err(e) => {
                self.unreserve();
                Err(e)
            }
        }
    }

    /// `C_Finalize` + `C_Initialize`, once, however many workers saw the disconnect.
    fn recover_module(&self, seen_generation: u64) -> Result<()> {
        let inner = &self.inner;
        {
            let _g = inner.recovery.lock();
            if inner.module.generation() != seen_generation && inner.module.is_initialized() {
                return Ok(()); // someone else already recovered it
            }
            let mut last = None;
            let mut done = false;
            for attempt in 0..inner.config.recovery_attempts.max(1) {
                match inner.module.reinitialize() {
                    Ok(()) => {
                        done = true;
                        break;
                    }
                    Err(e) => {
                        last = Some(e);
                        std::thread::sleep(inner.config.backoff(attempt));
                    }
                }
            }
            if !done {
                return Err(last.map(HsmError::from).unwrap_or_else(|| {
                    HsmError::NotSupported(crate::text!("hsm.recovery_failed", "recovery failed"))
                }));
            }
            inner
                .metrics
                .module_recoveries
                .fetch_add(1, Ordering::Relaxed);
            // Idle sessions are dead now; places in use are cleaned up by their holders.
            for place in inner.places.iter() {
                if let Some(mut g) = place.try_lock() {
                    if let Some(p) = g.take() {
                        inner.metrics.retire(&p.rec);
                        p.session.abandon();
                        inner.open.fetch_sub(1, Ordering::AcqRel);
                    }
                }
            }
        }
        {
            let _g = inner.wait_lock.lock();
            inner.available.notify_all();
        }
        self.follow_token();
        tracing::warn!(module = %inner.module.path().display(), "module reinitialized after a disconnect");
        Ok(())
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

    /// [`Pool::run`] for closures built from this crate's services (which return
    /// [`HsmError`]): PKCS#11 errors still drive recovery; the others pass through as they are.
    pub fn run_service<T>(
        &self,
        op: &'static str,
        mut f: impl FnMut(&Session) -> Result<T>,
    ) -> Result<T> {
        self.call(op, false, move |s| split(f(s)))?
    }

    /// [`Pool::run_service`] from async code (blocking thread pool).
    pub async fn run_service_async<T, F>(&self, op: &'static str, mut f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnMut(&Session) -> Result<T> + Send + 'static,
    {
        self.spawn(op, false, move |s| split(f(s))).await?
    }

    /// [`Pool::run_service_async`] for reads that are safe to repeat after a recovery.
    pub async fn run_service_idempotent_async<T, F>(&self, op: &'static str, mut f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnMut(&Session) -> Result<T> + Send + 'static,
    {
        self.spawn(op, true, move |s| split(f(s))).await?
    }

    /// Admit, then one attempt inline; a failed attempt goes to [`Pool::after_failure`]
    /// (out of line), which recovers and retries as the error's class says.
    fn call<T, F>(&self, op: &'static str, idempotent: bool, mut f: F) -> Result<T>
    where
        F: FnMut(&Session) -> p11::Result<T>,
    {
        if let Err(retry_after) = self.inner.breaker.admit() {
            return Err(self.rejected_by_breaker(retry_after));
        }
        match self.attempt(op, &mut f) {
            Attempt::Done(v) => Ok(v),
            failed => self.after_failure(op, idempotent, f, failed),
        }
    }

    #[cold]
    fn rejected_by_breaker(&self, retry_after: Duration) -> HsmError {
        self.inner
            .metrics
            .breaker_rejections
            .fetch_add(1, Ordering::Relaxed);
        HsmError::CircuitOpen { retry_after }
    }

    /// Check out a session, run `f` on it (timed when the sampling policy says so) and
    /// record the outcome. On success the session is checked in and the breaker told.
    #[inline]
    fn attempt<T, F>(&self, op: &'static str, f: &mut F) -> Attempt<'_, T>
    where
        F: FnMut(&Session) -> p11::Result<T>,
    {
        let inner = &self.inner;
        let now = coarse_ms();
        let mut h = match self.checkout(now) {
            Ok(h) => h,
            Err(e) => return Attempt::NoSession(e),
        };
        let p = pooled(&mut h);
        let time_it = timed(p.calls);
        p.calls += 1;
        let clock = inner.clock;
        let start = if time_it { clock.raw() } else { 0 };
        let r = f(&p.session);
        let ns = time_it.then(|| clock.delta_as_nanos(start, clock.raw()));
        match r {
            Ok(v) => {
                p.rec.record(op, ns, true);
                p.verified_at = now;
                self.checkin(h);
                inner.breaker.on_success();
                Attempt::Done(v)
            }
            Err(e) => Attempt::Failed(h, e, ns),
        }
    }

    /// Recovery by class after a failed attempt, retrying (by further attempts) where the
    /// class allows; see the module documentation.
    #[cold]
    #[inline(never)]
    fn after_failure<'a, T, F>(
        &'a self,
        op: &'static str,
        idempotent: bool,
        mut f: F,
        mut outcome: Attempt<'a, T>,
    ) -> Result<T>
    where
        F: FnMut(&Session) -> p11::Result<T>,
    {
        let inner = &self.inner;
        let mut attempt = 0u32;
        let mut recoveries = 0u32;
        let budget = inner.config.recovery_budget;
        loop {
            let (mut h, e, ns) = match outcome {
                Attempt::Done(v) => {
                    if recoveries > 0 {
                        inner
                            .metrics
                            .recovered_calls
                            .fetch_add(1, Ordering::Relaxed);
                    }
                    return Ok(v);
                }
                Attempt::NoSession(e) => {
                    match e.class() {
                        ErrorClass::Disconnected => inner.breaker.on_failure(),
                        _ => inner.breaker.release_probe(),
                    }
                    return Err(e);
                }
                Attempt::Failed(h, e, ns) => (h, e, ns),
            };
            let p = pooled(&mut h);
            p.rec.record(op, ns, false);
            let generation = p.session.generation();
            let class = e.class();
            inner.metrics.error(class);
            match class {
                ErrorClass::SessionInvalid => {
                    self.discard(h);
                    inner
                        .metrics
                        .session_reopens
                        .fetch_add(1, Ordering::Relaxed);
                    if recoveries >= budget {
                        inner.breaker.on_success();
                        return Err(self.not_logged_in_error(e));
                    }
                    recoveries += 1;
                }
                ErrorClass::Disconnected => {
                    self.discard(h);
                    inner.breaker.on_failure();
                    let ok = self.recover_module(generation).is_ok();
                    if !(ok && idempotent && recoveries < budget) {
                        return Err(HsmError::Disconnected {
                            error: e,
                            recovered: ok,
                        });
                    }
                    recoveries += 1;
                }
                ErrorClass::RetryOnly | ErrorClass::Busy if attempt < inner.config.max_retries => {
                    self.checkin(h);
                    std::thread::sleep(inner.config.backoff(attempt));
                    attempt += 1;
                }
                _ => {
                    // The token answered: the connection is fine whatever the verdict.
                    self.checkin(h);
                    inner.breaker.on_success();
                    return Err(e.into());
                }
            }
            outcome = self.attempt(op, &mut f);
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
            .map_err(|e| {
                HsmError::NotSupported(crate::text!(
                    "hsm.worker_failed",
                    "HSM worker failed: {{error}}",
                    error = e
                ))
            })?
    }
}

/// Separate the PKCS#11 errors (which the pool must see to recover) from the service's own.
fn split<T>(r: Result<T>) -> p11::Result<Result<T>> {
    match r {
        Ok(v) => Ok(Ok(v)),
        Err(HsmError::P11(e)) | Err(HsmError::Disconnected { error: e, .. }) => Err(e),
        Err(other) => Ok(Err(other)),
    }
}
