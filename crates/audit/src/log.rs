//! The audit trail as the console uses it.
//!
//! Fail closed: [`AuditLog::append`] errors when the key is locked, the store is down or
//! busy past the timeout, and the caller refuses the privileged action. Events that happen
//! before any key can be available (a failed login) go through [`AuditLog::record`], which
//! spools them in the store and chains them, in order, as soon as the key is unlocked.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::Mutex;
use zeroize::Zeroizing;

use crate::anchor::Anchor;
use crate::encode::{self, ChainKey, GENESIS};
use crate::store::{KeyRow, Query, Store};
use crate::verify::{self, Verdict, VerifyInput, CHECKPOINT_KEY_MOVE_ACTION, KEY_MOVE_ACTION};
use crate::{
    now_rfc3339, AuditError, Checkpoint, CheckpointSigner, Event, KeyWrapper, Prepared, Record,
    Result,
};

/// Where the trail lives and how often it is checkpointed.
#[derive(Debug, Clone)]
pub struct AuditConfig {
    /// SQLite file path or `postgres://…` URL.
    pub location: String,
    /// Checkpoint after this many records…
    pub checkpoint_every: u64,
    /// …or after this long, whichever comes first (also when nothing happened).
    pub checkpoint_interval: Duration,
    /// Longest wait for the store's write lock before the append fails.
    pub lock_timeout: Duration,
    /// Records per sealed block (see `block`): once the trail has grown this many records
    /// past its last block, they are sealed into the next.
    pub block_size: i64,
}

/// How many blocks one append seals at most: a trail written before blocks existed is
/// sealed over its next appends rather than in one long pause.
const BLOCKS_PER_APPEND: usize = 16;

impl AuditConfig {
    pub fn new(location: impl Into<String>) -> Self {
        AuditConfig {
            location: location.into(),
            checkpoint_every: 100,
            checkpoint_interval: Duration::from_secs(600),
            lock_timeout: Duration::from_secs(5),
            block_size: 1024,
        }
    }
}

/// Who is acting (the same for every record of a console session).
#[derive(Debug, Clone, Serialize)]
pub struct Context {
    pub session_id: String,
    pub actor_id: Option<String>,
    pub actor_ip: String,
}

impl Context {
    /// The local OS user at this host, a fresh session ID.
    pub fn local() -> Context {
        let user = std::env::var("USER")
            .or_else(|_| std::env::var("LOGNAME"))
            .ok()
            .filter(|u| !u.is_empty())
            .or_else(passwd_name)
            .unwrap_or_else(|| "unknown".into());
        let host = std::fs::read_to_string("/etc/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_else(|_| "localhost".into());
        Context {
            session_id: format!("sess_{}", random_hex(8)),
            actor_id: Some(format!("{user}@{host}")),
            actor_ip: "127.0.0.1".into(),
        }
    }
}

/// The login name of this process's real user, from /etc/passwd (no libc call needed).
fn passwd_name() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let uid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .next()?
        .to_string();
    std::fs::read_to_string("/etc/passwd")
        .ok()?
        .lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .find(|f| f.len() > 2 && f[2] == uid)
        .map(|f| f[0].to_string())
}

pub fn random_hex(n: usize) -> String {
    let mut b = vec![0u8; n];
    getrandom::fill(&mut b).expect("OS random numbers");
    hex::encode(b)
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum KeyStatus {
    /// A new trail: the first unlock creates the key.
    NoKeyYet,
    /// The key exists wrapped; `holder` says which partition can unwrap it.
    Locked {
        holder: String,
    },
    Unlocked {
        epoch: i64,
        holder: String,
    },
}

struct Keys {
    /// epoch → MAC key.
    by_epoch: BTreeMap<i64, ChainKey>,
    current: i64,
    holder: String,
}

struct State {
    keys: Option<Keys>,
    /// The head this console last wrote or read: (seq, chain value).
    head: Option<(i64, [u8; 32])>,
    signer: Option<Arc<dyn CheckpointSigner>>,
    since_checkpoint: u64,
    last_checkpoint: Instant,
}

pub struct AuditLog {
    store: Store,
    log_id: String,
    ctx: Context,
    config: AuditConfig,
    anchors: parking_lot::Mutex<Vec<Arc<dyn Anchor>>>,
    state: Mutex<State>,
    /// The spool may hold events (set when this console spools one, or found at open;
    /// cleared once they are chained). Saves a query per append when it is empty.
    pending_hint: AtomicBool,
}

/// Run an HSM call (a blocking PKCS#11 call behind the traits) off the async threads.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| AuditError::Hsm(format!("HSM task failed: {e}")))
}

impl AuditLog {
    /// Open (creating if needed) the trail at `config.location`.
    pub async fn open(config: AuditConfig, ctx: Context) -> Result<AuditLog> {
        let store = Store::connect(&config.location, config.lock_timeout).await?;
        let log_id = store
            .trail(&format!("log_{}", random_hex(12)), &now_rfc3339())
            .await?;
        let pending = store.pending_count(&log_id).await? > 0;
        Ok(AuditLog {
            pending_hint: AtomicBool::new(pending),
            store,
            log_id,
            ctx,
            config,
            anchors: parking_lot::Mutex::new(Vec::new()),
            state: Mutex::new(State {
                keys: None,
                head: None,
                signer: None,
                since_checkpoint: 0,
                last_checkpoint: Instant::now(),
            }),
        })
    }

    /// Remember checkpoints outside the store too (a file, an HSM data object), to expose a
    /// rollback of the store to an older copy.
    pub fn with_anchor(self, a: Arc<dyn Anchor>) -> Self {
        self.add_anchor(a);
        self
    }

    /// Add an anchor later (e.g. an HSM data object once its partition is logged in).
    pub fn add_anchor(&self, a: Arc<dyn Anchor>) {
        self.anchors.lock().push(a);
    }

    /// `CKA_ID` of the HSM key that wraps this trail's MAC key, once there is one.
    pub async fn kek_id(&self) -> Result<Option<Vec<u8>>> {
        Ok(self
            .store
            .keys(&self.log_id)
            .await?
            .last()
            .and_then(|k| hex::decode(&k.kek_id).ok()))
    }

    pub fn log_id(&self) -> &str {
        &self.log_id
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn context(&self) -> &Context {
        &self.ctx
    }

    pub fn location_kind(&self) -> &'static str {
        self.store.kind()
    }

    pub async fn key_status(&self) -> Result<KeyStatus> {
        if let Some(k) = &self.state.lock().await.keys {
            return Ok(KeyStatus::Unlocked {
                epoch: k.current,
                holder: k.holder.clone(),
            });
        }
        let keys = self.store.keys(&self.log_id).await?;
        Ok(match keys.last() {
            None => KeyStatus::NoKeyYet,
            Some(k) => KeyStatus::Locked {
                holder: k.holder.clone(),
            },
        })
    }

    /// Unwrap every epoch's key with the HSM (creating epoch 0 on a new trail), remember the
    /// checkpoint signer, and chain the spooled events.
    pub async fn unlock(
        &self,
        wrapper: Arc<dyn KeyWrapper>,
        signer: Arc<dyn CheckpointSigner>,
    ) -> Result<()> {
        let mut rows = self.store.keys(&self.log_id).await?;
        if rows.is_empty() {
            let mut key = Zeroizing::new(vec![0u8; 32]);
            getrandom::fill(&mut key).map_err(|e| AuditError::Invalid(e.to_string()))?;
            let w = wrapper.clone();
            let k = key.clone();
            let wrapped = blocking(move || w.wrap(&k))
                .await?
                .map_err(AuditError::Hsm)?;
            let row = KeyRow {
                log_id: self.log_id.clone(),
                epoch: 0,
                wrapped_key: hex::encode(wrapped),
                wrap_mechanism: wrapper.mechanism(),
                kek_id: hex::encode(wrapper.kek_id()),
                holder: wrapper.holder(),
                created_at: now_rfc3339(),
            };
            // Another console may have created the key at the same moment: theirs wins.
            self.store.insert_key(&row).await?;
            rows = self.store.keys(&self.log_id).await?;
        }
        let mut by_epoch = BTreeMap::new();
        for row in &rows {
            if hex::encode(wrapper.kek_id()) != row.kek_id {
                return Err(AuditError::KeyUnavailable(format!(
                    "the trail's key is held by {} (key ID {}); this partition cannot unwrap it",
                    row.holder, row.kek_id
                )));
            }
            let wrapped = hex::decode(&row.wrapped_key).map_err(|_| {
                AuditError::Invalid(format!("wrapped key of epoch {} is not hex", row.epoch))
            })?;
            let w = wrapper.clone();
            let key = blocking(move || w.unwrap(&wrapped)).await?.map_err(|e| {
                AuditError::KeyUnavailable(format!("the HSM refused to unwrap the audit key: {e}"))
            })?;
            by_epoch.insert(row.epoch, ChainKey::new(&key));
        }
        let current = rows.last().map(|r| r.epoch).unwrap_or(0);
        let holder = rows.last().map(|r| r.holder.clone()).unwrap_or_default();
        {
            let mut st = self.state.lock().await;
            st.keys = Some(Keys {
                by_epoch,
                current,
                holder,
            });
            st.signer = Some(signer);
        }
        // Chain whatever waited for the key (also what other consoles spooled).
        if self.store.pending_count(&self.log_id).await? > 0 {
            self.pending_hint.store(true, Ordering::SeqCst);
            match self.append_inner(None).await {
                // On a cut trail the events stay spooled; unlocking still lets the officer
                // verify, which names the cut.
                Ok(_) | Err(AuditError::Truncated { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Forget the key (logout). Privileged actions are refused from here on.
    pub async fn lock(&self) {
        let mut st = self.state.lock().await;
        st.keys = None;
        st.signer = None;
    }

    pub fn prepare(&self, e: &Event) -> Prepared {
        Prepared {
            timestamp: now_rfc3339(),
            session_id: self.ctx.session_id.clone(),
            actor_id: self.ctx.actor_id.clone(),
            actor_ip: self.ctx.actor_ip.clone(),
            action: e.action.clone(),
            resource_type: e.resource_type.clone(),
            resource_id: e.resource_id.clone(),
            algorithm: e.algorithm.clone(),
            status: e.status.as_str().to_string(),
            error_code: e.error_code.clone(),
            metadata: serde_json::to_string(&e.metadata).unwrap_or_else(|_| "{}".into()),
        }
    }

    /// Append and chain one event. Fails closed: no key, no store, no record — and the
    /// caller must then refuse the action it was about to take.
    pub async fn append(&self, e: Event) -> Result<Record> {
        let p = self.prepare(&e);
        let mut recs = self.append_inner(Some(p)).await?;
        recs.pop()
            .ok_or_else(|| AuditError::store_state("the append produced no record"))
    }

    /// Record an event whether or not the key is available: chained now if it is, spooled
    /// in the store (and chained in order at the next unlock) if not. Nothing is dropped.
    pub async fn record(&self, e: Event) -> Result<()> {
        let p = self.prepare(&e);
        if self.state.lock().await.keys.is_some() {
            self.append_inner(Some(p)).await.map(|_| ())
        } else {
            self.pending_hint.store(true, Ordering::SeqCst);
            self.store.push_pending(&self.log_id, &p).await
        }
    }

    async fn append_inner(&self, p: Option<Prepared>) -> Result<Vec<Record>> {
        let mut st = self.state.lock().await;
        let keys = st.keys.as_ref().ok_or_else(|| {
            AuditError::KeyUnavailable(
                "log in to the partition that holds the audit key first".into(),
            )
        })?;
        let epoch = keys.current;
        let key = keys
            .by_epoch
            .get(&epoch)
            .cloned()
            .ok_or_else(|| AuditError::KeyUnavailable(format!("no key for epoch {epoch}")))?;
        let with_pending = self.pending_hint.load(Ordering::SeqCst);
        // Fast path: one INSERT after the cached head; the primary key catches a concurrent
        // writer, and then the locked path below re-reads the head.
        if let (false, Some(prepared), Some((seq, prev))) = (with_pending, p.as_ref(), st.head) {
            let r = self.link(&key, epoch, seq + 1, &prev, prepared.clone(), now_rfc3339());
            if self
                .store
                .insert_optimistic(&r, self.config.lock_timeout)
                .await?
            {
                st.head = encode::hex32(&r.hmac_chain).map(|h| (r.seq, h));
                return self.after_append(st, vec![r]).await;
            }
        }
        // The head is read from the store below; a checkpoint beyond it proves records were
        // cut from the end, and the next one must not take the first missing number.
        let vouched = self.store.vouched_seq(&self.log_id).await?;
        let this = self;
        let started = Instant::now();
        let recs = loop {
            let p = p.clone();
            let key = key.clone();
            let got = self
                .store
                .append_with(
                    &self.log_id,
                    self.config.lock_timeout,
                    with_pending,
                    move |head, pending| {
                        let (mut seq, mut prev) = match head {
                            Some((s, h)) => (
                                s,
                                encode::hex32(&h).ok_or_else(|| {
                                    AuditError::store_state(format!(
                                        "record {s} has a malformed chain value"
                                    ))
                                })?,
                            ),
                            None => (0, GENESIS),
                        };
                        if let Some(checkpoint_seq) = vouched.filter(|v| *v > seq) {
                            return Err(AuditError::Truncated {
                                last_seq: seq,
                                checkpoint_seq,
                            });
                        }
                        let created_at = now_rfc3339();
                        let mut out = Vec::new();
                        for prepared in pending.into_iter().map(|(_, p)| p).chain(p) {
                            seq += 1;
                            let r =
                                this.link(&key, epoch, seq, &prev, prepared, created_at.clone());
                            prev = encode::hex32(&r.hmac_chain).expect("just encoded");
                            out.push(r);
                        }
                        Ok(out)
                    },
                )
                .await?;
            match got {
                Some(recs) => break recs,
                // Another writer took the position: read the head again, within the timeout.
                None if started.elapsed() < self.config.lock_timeout => {
                    tokio::time::sleep(Duration::from_millis(1)).await
                }
                None => {
                    return Err(AuditError::Locked(
                        self.config.lock_timeout.as_millis() as u64
                    ))
                }
            }
        };
        if with_pending {
            self.pending_hint.store(false, Ordering::SeqCst);
        }
        if let Some(last) = recs.last() {
            st.head = encode::hex32(&last.hmac_chain).map(|h| (last.seq, h));
        }
        self.after_append(st, recs).await
    }

    /// The record for `prepared` at `seq`, chained onto `prev`.
    fn link(
        &self,
        key: &ChainKey,
        epoch: i64,
        seq: i64,
        prev: &[u8; 32],
        prepared: Prepared,
        created_at: String,
    ) -> Record {
        let mut r = Record {
            log_id: self.log_id.clone(),
            seq,
            epoch,
            event: prepared,
            hmac_chain: String::new(),
            created_at,
        };
        r.hmac_chain = hex::encode(key.link(&encode::encode(&r), prev));
        r
    }

    async fn after_append(
        &self,
        mut st: tokio::sync::MutexGuard<'_, State>,
        recs: Vec<Record>,
    ) -> Result<Vec<Record>> {
        st.since_checkpoint += recs.len() as u64;
        let due = st.since_checkpoint >= self.config.checkpoint_every;
        drop(st);
        // A block is sealed once a record after it exists: when an append passes a block's
        // end. Sealing only moves stored records; should it fail, the records stay rows
        // (read as such everywhere) and the next block's end seals them too.
        let size = self.config.block_size.max(1);
        if recs.iter().any(|r| r.seq > size && (r.seq - 1) % size == 0) {
            if let Err(e) = self.store.seal(&self.log_id, size, BLOCKS_PER_APPEND).await {
                tracing::warn!("sealing audit records into a block failed: {e}");
            }
        }
        if due {
            // The record is stored; a failed checkpoint is logged and retried next time.
            if let Err(e) = self.checkpoint().await {
                tracing::warn!("audit checkpoint failed: {e}");
            }
        }
        Ok(recs)
    }

    /// Sign a checkpoint over the current heads now (also when nothing happened).
    pub async fn checkpoint(&self) -> Result<Checkpoint> {
        let mut st = self.state.lock().await;
        let signer = st
            .signer
            .clone()
            .ok_or_else(|| AuditError::KeyUnavailable("no checkpoint key: not unlocked".into()))?;
        let epoch = st.keys.as_ref().map(|k| k.current).unwrap_or(0);
        let (seq, head_hmac) = match self.store.head(&self.log_id).await? {
            Some((s, h)) => (s, h),
            None => (0, hex::encode(GENESIS)),
        };
        let existing = self.store.checkpoints(&self.log_id).await?;
        let public_key = hex::encode(signer.public_key_spki());
        let head_digest = self.digest_head(seq, &existing, &public_key).await?;
        let checkpoint_no = existing.last().map(|c| c.checkpoint_no).unwrap_or(0) + 1;
        let mut cp = Checkpoint {
            log_id: self.log_id.clone(),
            checkpoint_no,
            seq,
            head_hmac,
            head_digest: hex::encode(head_digest),
            time: now_rfc3339(),
            epoch,
            algorithm: signer.algorithm(),
            public_key,
            signature: String::new(),
        };
        let msg = verify::checkpoint_message(&cp)?;
        let s = signer.clone();
        let sig = blocking(move || s.sign(&msg))
            .await?
            .map_err(AuditError::Hsm)?;
        cp.signature = hex::encode(sig);
        // A checkpoint that does not verify with public material is never stored.
        verify::check_checkpoint_signature(&cp).map_err(|e| {
            AuditError::Hsm(format!(
                "the HSM's checkpoint signature does not verify: {e}"
            ))
        })?;
        self.store.insert_checkpoint(&cp).await?;
        let anchors = self.anchors.lock().clone();
        for a in anchors {
            let c = cp.clone();
            if let Err(e) = blocking(move || a.save(&c)).await? {
                tracing::warn!("audit anchor not updated: {e}");
            }
        }
        st.since_checkpoint = 0;
        st.last_checkpoint = Instant::now();
        Ok(cp)
    }

    /// For a periodic timer: checkpoint when the interval has passed (even with no new
    /// records). Returns whether one was made.
    pub async fn tick(&self) -> Result<bool> {
        let due = {
            let st = self.state.lock().await;
            st.keys.is_some() && st.last_checkpoint.elapsed() >= self.config.checkpoint_interval
        };
        if due {
            self.checkpoint().await?;
        }
        Ok(due)
    }

    /// Clean shutdown: a final checkpoint when the key is unlocked.
    pub async fn close(&self) -> Result<()> {
        if self.state.lock().await.keys.is_some() {
            self.checkpoint().await?;
        }
        self.store.close().await;
        Ok(())
    }

    /// The public digest chain's value at `seq`: carried on from the newest checkpoint at or
    /// before `seq` that this console's checkpoint key signed (its signature checked, as a
    /// checkpoint row is as editable as any other), else computed from record 1. So a
    /// checkpoint reads only the records since the last one (from record 1 it read the whole
    /// trail every 100 records: 2.0–3.5 s on 1,000,000 sealed records, against 7–10 ms now,
    /// `scripts/bench.sh audit-app`), and never takes its digest over records changed after
    /// an earlier checkpoint vouched for them.
    async fn digest_head(
        &self,
        seq: i64,
        checkpoints: &[Checkpoint],
        public_key: &str,
    ) -> Result<[u8; 32]> {
        let start = checkpoints
            .iter()
            .rev()
            .filter(|c| c.seq <= seq && c.public_key == public_key)
            .filter(|c| verify::check_checkpoint_signature(c).is_ok())
            .find_map(|c| encode::hex32(&c.head_digest).map(|d| (c.seq, d)));
        let (mut after, mut d) = start.unwrap_or((0, GENESIS));
        let mut buf = Vec::with_capacity(512);
        while after < seq {
            let page = self.store.trail_page(&self.log_id, after, 10_000).await?;
            if page.is_empty() {
                break;
            }
            for r in &page {
                if r.seq > seq {
                    break;
                }
                buf.clear();
                encode::encode_into(r, &mut buf);
                d = encode::digest_link(&buf, &d);
                after = r.seq;
            }
        }
        Ok(d)
    }

    /// Start a new key epoch: the rotation is recorded under the old key, later records use
    /// the new one.
    pub async fn rotate_key(&self, wrapper: Arc<dyn KeyWrapper>) -> Result<i64> {
        let (old, holder) = {
            let st = self.state.lock().await;
            let k = st.keys.as_ref().ok_or_else(|| {
                AuditError::KeyUnavailable("unlock the trail before rotating its key".into())
            })?;
            (k.current, k.holder.clone())
        };
        let new_epoch = old + 1;
        self.append(
            Event::new("audit.key_rotate", "audit_key")
                .resource(format!("epoch-{new_epoch}"))
                .meta("from_epoch", old)
                .meta("holder", &holder),
        )
        .await?;
        let mut key = Zeroizing::new(vec![0u8; 32]);
        getrandom::fill(&mut key).map_err(|e| AuditError::Invalid(e.to_string()))?;
        let w = wrapper.clone();
        let k = key.clone();
        let wrapped = blocking(move || w.wrap(&k))
            .await?
            .map_err(AuditError::Hsm)?;
        let row = KeyRow {
            log_id: self.log_id.clone(),
            epoch: new_epoch,
            wrapped_key: hex::encode(wrapped),
            wrap_mechanism: wrapper.mechanism(),
            kek_id: hex::encode(wrapper.kek_id()),
            holder: wrapper.holder(),
            created_at: now_rfc3339(),
        };
        if !self.store.insert_key(&row).await? {
            return Err(AuditError::Invalid(format!(
                "epoch {new_epoch} was created by another console meanwhile; unlock again"
            )));
        }
        let mut st = self.state.lock().await;
        if let Some(keys) = st.keys.as_mut() {
            keys.by_epoch.insert(new_epoch, ChainKey::new(&key));
            keys.current = new_epoch;
        }
        drop(st);
        self.checkpoint().await?;
        Ok(new_epoch)
    }

    /// Move the trail's MAC keys to another wrapping key (another partition): the move is
    /// recorded under the current key first, then every epoch's key is unwrapped by `old`
    /// and wrapped by `new`, all epochs in one transaction. The keys themselves do not
    /// change, so every record keeps its seal. Returns the epochs moved.
    pub async fn rewrap(
        &self,
        old: Arc<dyn KeyWrapper>,
        new: Arc<dyn KeyWrapper>,
    ) -> Result<usize> {
        if self.state.lock().await.keys.is_none() {
            return Err(AuditError::KeyUnavailable(
                "unlock the trail before moving its key".into(),
            ));
        }
        let rows = self.store.keys(&self.log_id).await?;
        self.append(
            Event::new(KEY_MOVE_ACTION, "audit_key")
                .resource(hex::encode(new.kek_id()))
                .meta("from_holder", old.holder())
                .meta("to_holder", new.holder())
                .meta("epochs", rows.len()),
        )
        .await?;
        let mut moved = Vec::with_capacity(rows.len());
        for row in &rows {
            let wrapped = hex::decode(&row.wrapped_key).map_err(|_| {
                AuditError::Invalid(format!("wrapped key of epoch {} is not hex", row.epoch))
            })?;
            let (o, n) = (old.clone(), new.clone());
            let rewrapped = blocking(move || -> std::result::Result<Vec<u8>, String> {
                let key = o.unwrap(&wrapped)?;
                n.wrap(&key)
            })
            .await?
            .map_err(AuditError::Hsm)?;
            moved.push(KeyRow {
                wrapped_key: hex::encode(rewrapped),
                wrap_mechanism: new.mechanism(),
                kek_id: hex::encode(new.kek_id()),
                holder: new.holder(),
                ..row.clone()
            });
        }
        if !self.store.rewrap_keys(&rows, &moved).await? {
            return Err(AuditError::Invalid(
                "another console moved the trail's key meanwhile; log in again".into(),
            ));
        }
        if let Some(k) = self.state.lock().await.keys.as_mut() {
            k.holder = new.holder();
        }
        Ok(moved.len())
    }

    /// Sign checkpoints with another key from here on. The move (both public keys) is
    /// recorded and checkpointed under the old key, then a checkpoint is signed by the new
    /// one: a verifier that trusts the new key reaches the old one through that record
    /// (see [`crate::verify::KeyMove`]), so the checkpoints made before still verify.
    pub async fn move_checkpoint_key(&self, new: Arc<dyn CheckpointSigner>) -> Result<()> {
        let old =
            self.state.lock().await.signer.clone().ok_or_else(|| {
                AuditError::KeyUnavailable("no checkpoint key: not unlocked".into())
            })?;
        self.append(
            Event::new(CHECKPOINT_KEY_MOVE_ACTION, "audit_checkpoint_key")
                .algorithm(new.algorithm())
                .meta("from_public_key", hex::encode(old.public_key_spki()))
                .meta("to_public_key", hex::encode(new.public_key_spki()))
                .meta("from_algorithm", old.algorithm()),
        )
        .await?;
        self.checkpoint().await?;
        self.state.lock().await.signer = Some(new);
        self.checkpoint().await?;
        Ok(())
    }

    /// The checkpoint-key moves recorded in the trail (not verified here: a verification
    /// checks their seals).
    pub async fn key_moves(&self) -> Result<Vec<verify::KeyMove>> {
        verify::recorded_moves(&self.store, &self.log_id, i64::MAX).await
    }

    pub async fn records(&self, q: &Query) -> Result<Vec<Record>> {
        self.store.query(&self.log_id, q).await
    }

    /// The newest `n` records, oldest first ([`Store::newest`]).
    pub async fn newest(&self, n: u64) -> Result<Vec<Record>> {
        self.store.newest(&self.log_id, n).await
    }

    /// What `pick` takes from every record matching `q`, oldest first, past the browse
    /// limit that [`AuditLog::records`] stops at ([`Store::query_all`]).
    pub async fn all_records<T>(
        &self,
        q: &Query,
        pick: impl FnMut(Record) -> Option<T>,
    ) -> Result<Vec<T>> {
        self.store.query_all(&self.log_id, q, pick).await
    }

    pub async fn checkpoints(&self) -> Result<Vec<Checkpoint>> {
        self.store.checkpoints(&self.log_id).await
    }

    /// Verify the whole store. `trusted_public_key` pins the checkpoint key (from the HSM);
    /// without it, the key recorded with the checkpoints is used and the verdict says so.
    pub async fn verify(
        &self,
        trusted_public_key: Option<Vec<u8>>,
        progress: &(dyn Fn(i64, i64) + Send + Sync),
        cancel: &AtomicBool,
    ) -> Result<Verdict> {
        let keys = {
            let st = self.state.lock().await;
            st.keys
                .as_ref()
                .map(|k| k.by_epoch.clone())
                .ok_or_else(|| {
                    AuditError::KeyUnavailable(
                        "log in to the partition that holds the audit key to verify the trail"
                            .into(),
                    )
                })?
        };
        let mut anchors = Vec::new();
        let registered = self.anchors.lock().clone();
        for a in registered {
            match blocking(move || a.load()).await? {
                Ok(Some(cp)) => anchors.push(cp),
                Ok(None) => {}
                Err(e) => tracing::warn!("audit anchor unreadable: {e}"),
            }
        }
        let input = VerifyInput {
            log_id: self.log_id.clone(),
            keys,
            trusted_public_key,
            anchors,
        };
        verify::verify_store(&self.store, input, progress, cancel).await
    }

    /// The unlocked MAC keys by epoch (to verify an export of this trail), `None` while
    /// the trail is locked.
    pub async fn chain_keys(&self) -> Option<BTreeMap<i64, ChainKey>> {
        self.state
            .lock()
            .await
            .keys
            .as_ref()
            .map(|k| k.by_epoch.clone())
    }

    pub fn config(&self) -> &AuditConfig {
        &self.config
    }

    /// Seconds since the last checkpoint (for the status badge).
    pub async fn since_last_checkpoint(&self) -> Duration {
        self.state.lock().await.last_checkpoint.elapsed()
    }
}
