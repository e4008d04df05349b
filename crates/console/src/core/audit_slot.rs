//! Where the audit trail's HSM keys live, and opening them at login.
//!
//! On a partition the officer adds, the keys (the AES key that wraps the trail's MAC keys,
//! the checkpoint signing key, the rollback anchor) live on that partition. On the
//! built-in partition they live in the built-in module's own audit slot
//! ([`builtin::AUDIT_TOKEN_LABEL`]), which the console logs in to itself once the officer
//! logged in to the built-in partition: the partition then holds only the officer's
//! objects, and tools that cannot enumerate an ML-DSA key (Debian 12's libp11) work on it.
//!
//! **Upgrade.** A data folder from before the audit slot has the keys on the built-in
//! partition. At the first login the console moves them, each step recorded first:
//! the MAC keys are wrapped again under the audit slot's wrapping key
//! (`audit.key_move`); checkpoint signing is handed to the audit slot's key, the move
//! recorded and checkpointed under the old key (`audit.checkpoint_key_move`, so the old
//! checkpoints still verify with only the new key pinned); then the old objects are
//! destroyed (`audit.old_keys_destroy`). A move cut short by a crash resumes at the next
//! login from what the token and the store show.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use audit::{Event, KeyStatus};
use hsm::vault::{self, SigningKey, Wrapper};
use hsm::{Pool, PoolConfig};
use p11::sys::{CKO_PRIVATE_KEY, CKO_PUBLIC_KEY, CKO_SECRET_KEY};
use p11::{SlotId, UserType};

use crate::core::audit_hsm::{self, HsmAnchor, HsmCheckpointSigner, HsmKeyWrapper};
use crate::core::error::ApiResult;
use crate::core::partitions::{blocking, LoadedModule, Partition};
use crate::core::views::AuditKeyView;
use crate::core::{builtin, Core};

/// The built-in module's audit slot: a small pool the console logs in to itself.
pub struct AuditSlot {
    pub pool: Pool,
    /// How the trail names it as its keys' holder.
    pub holder: String,
}

/// The trail's keys for one partition: where they are, and where they were before.
struct Place {
    pool: Pool,
    holder: String,
    /// The partition itself, when the keys belong in the audit slot and may still be here.
    legacy: Option<(Pool, String)>,
}

/// What is found on the token(s) before the trail is opened.
struct Found {
    wrapper: Wrapper,
    signer: SigningKey,
    old_wrapper: Option<Wrapper>,
    old_signer: Option<SigningKey>,
}

impl Core {
    /// Remember the built-in module's audit slot (called once the module is loaded).
    pub(crate) async fn open_audit_slot(
        &self,
        lm: &Arc<LoadedModule>,
        slot: SlotId,
    ) -> ApiResult<()> {
        let m = lm.module.clone();
        let serial = blocking(move || m.token_info(slot))
            .await??
            .serial_number
            .trim()
            .to_string();
        let pool = Pool::new(
            lm.module.clone(),
            slot,
            PoolConfig {
                size: 2,
                ..PoolConfig::default()
            },
        );
        *self.audit_slot.write() = Some(Arc::new(AuditSlot {
            pool,
            holder: format!("{} (serial {serial})", builtin::AUDIT_TOKEN_LABEL),
        }));
        Ok(())
    }

    /// The audit slot, when `p` is the built-in partition and its module has one.
    fn audit_slot_for(&self, p: &Partition) -> Option<Arc<AuditSlot>> {
        p.module
            .builtin
            .then(|| self.audit_slot.read().clone())
            .flatten()
    }

    /// The name the trail gives the holder of its keys when `p` is logged in.
    pub(crate) fn trail_holder_for(&self, p: &Partition) -> String {
        self.audit_slot_for(p)
            .map(|s| s.holder.clone())
            .unwrap_or_else(|| p.holder_name())
    }

    /// Are the trail's keys on `p` itself (destroyed with its token), rather than in the
    /// built-in module's audit slot?
    pub(crate) async fn trail_keys_on(&self, p: &Partition) -> bool {
        (p.holds_audit_key() && self.audit_slot_for(p).is_none())
            || matches!(
                self.audit.key_status().await,
                Ok(KeyStatus::Locked { holder }) if holder == p.holder_name()
            )
    }

    /// The pool and holder name the trail's keys use while `p` holds them.
    pub(crate) fn trail_pool_for(&self, p: &Partition) -> (Pool, String) {
        let place = self.place(p);
        (place.pool, place.holder)
    }

    /// Log the console out of the audit slot when the officer leaves the built-in partition.
    pub(crate) async fn close_audit_slot(&self, p: &Partition) {
        if let Some(slot) = self.audit_slot_for(p) {
            let pool = slot.pool.clone();
            let _ = blocking(move || pool.logout()).await;
        }
    }

    fn place(&self, p: &Partition) -> Place {
        match self.audit_slot_for(p) {
            Some(slot) => Place {
                pool: slot.pool.clone(),
                holder: slot.holder.clone(),
                legacy: Some((p.pool.clone(), p.holder_name())),
            },
            None => Place {
                pool: p.pool.clone(),
                holder: p.holder_name(),
                legacy: None,
            },
        }
    }

    /// Open (or create) the audit trail's keys for this partition — in the audit slot for
    /// the built-in partition, moving them there from the partition the first time.
    pub(crate) async fn attach_audit(&self, p: &Arc<Partition>) -> ApiResult<AuditKeyView> {
        let status = self.audit.key_status().await?;
        let log_id = self.audit.log_id().to_string();
        let kek = audit_hsm::kek_id(&log_id);
        let place = self.place(p);
        if place.legacy.is_some() {
            let pool = place.pool.clone();
            blocking(move || {
                if pool.is_logged_in() {
                    return Ok(());
                }
                pool.login(UserType::User, p11::pin(builtin::USER_PIN))
            })
            .await??;
        }
        match &status {
            KeyStatus::Unlocked { .. } => return Ok(status.into()),
            KeyStatus::NoKeyYet => {}
            KeyStatus::Locked { .. } => {
                if self.audit.kek_id().await?.as_deref() != Some(kek.as_slice()) {
                    return Ok(status.into());
                }
                let pools: Vec<Pool> = std::iter::once(place.pool.clone())
                    .chain(place.legacy.iter().map(|(pool, _)| pool.clone()))
                    .collect();
                let kek = kek.clone();
                let held = blocking(move || -> ApiResult<bool> {
                    for pool in &pools {
                        if Wrapper::exists(pool, &kek)? {
                            return Ok(true);
                        }
                    }
                    Ok(false)
                })
                .await??;
                if !held {
                    return Ok(status.into());
                }
            }
        }
        let found = self.find_trail_keys(&place, &log_id).await?;
        self.open_trail(p, &place, found, &log_id).await?;
        p.holds_audit.store(true, Ordering::Release);
        Ok(self.audit.key_status().await?.into())
    }

    /// The trail's keys where they belong (created there when missing), and the old ones
    /// still on the partition, if any.
    async fn find_trail_keys(&self, place: &Place, log_id: &str) -> ApiResult<Found> {
        let (pool, legacy) = (
            place.pool.clone(),
            place.legacy.as_ref().map(|(pool, _)| pool.clone()),
        );
        let log_id = log_id.to_string();
        blocking(move || -> ApiResult<Found> {
            let (kek, sid) = (audit_hsm::kek_id(&log_id), audit_hsm::signer_id(&log_id));
            let wrapper_label = format!("hsm-console audit key {log_id}");
            let wrapper = Wrapper::ensure(&pool, &kek, &wrapper_label)?;
            let signer = SigningKey::ensure(
                &pool,
                &sid,
                &format!("hsm-console audit checkpoints {log_id}"),
            )?;
            let (mut old_wrapper, mut old_signer) = (None, None);
            if let Some(old) = &legacy {
                if Wrapper::exists(old, &kek)? {
                    old_wrapper = Some(Wrapper::ensure(old, &kek, &wrapper_label)?);
                }
                old_signer = SigningKey::find(old, &sid)?;
            }
            Ok(Found {
                wrapper,
                signer,
                old_wrapper,
                old_signer,
            })
        })
        .await?
    }

    /// Unlock the trail with the keys found, finishing a move from the partition first
    /// when one is due, and remember the checkpoint key and the anchor.
    async fn open_trail(
        &self,
        p: &Partition,
        place: &Place,
        found: Found,
        log_id: &str,
    ) -> ApiResult<()> {
        let wrapper = Arc::new(HsmKeyWrapper {
            pool: place.pool.clone(),
            wrapper: found.wrapper,
            holder: place.holder.clone(),
        });
        let signer = Arc::new(HsmCheckpointSigner {
            pool: place.pool.clone(),
            key: found.signer.clone(),
        });
        let old_wrapper =
            found
                .old_wrapper
                .zip(place.legacy.as_ref())
                .map(|(w, (pool, holder))| {
                    Arc::new(HsmKeyWrapper {
                        pool: pool.clone(),
                        wrapper: w,
                        holder: holder.clone(),
                    })
                });
        let old_signer = found
            .old_signer
            .zip(place.legacy.as_ref())
            .map(|(k, (pool, _))| {
                Arc::new(HsmCheckpointSigner {
                    pool: pool.clone(),
                    key: k,
                })
            });
        // The MAC keys are still wrapped on the partition when the store says so.
        let rows = self.audit.store().keys(log_id).await?;
        let rewrap = old_wrapper
            .clone()
            .filter(|_| rows.last().is_some_and(|r| r.holder != place.holder));
        // The old key signs once more (the move) unless the new one signed already.
        let last_key = self
            .audit
            .checkpoints()
            .await?
            .last()
            .map(|c| c.public_key.clone());
        let hand_over = old_signer.clone().filter(|old| {
            let old_key = hex::encode(old.key.public_key.spki_der());
            last_key.as_ref().is_none_or(|k| *k == old_key)
        });
        let unlock_wrapper: Arc<dyn audit::KeyWrapper> = match &rewrap {
            Some(old) => old.clone(),
            None => wrapper.clone(),
        };
        let unlock_signer: Arc<dyn audit::CheckpointSigner> = match &hand_over {
            Some(old) => old.clone(),
            None => signer.clone(),
        };
        self.audit.unlock(unlock_wrapper, unlock_signer).await?;
        if let Some(old) = rewrap {
            self.audit.rewrap(old, wrapper.clone()).await?;
        }
        if hand_over.is_some() {
            self.audit.move_checkpoint_key(signer.clone()).await?;
        }
        *self.audit_signer_spki.write() = Some(found.signer.public_key.spki_der());
        self.audit
            .add_anchor(Arc::new(HsmAnchor::new(place.pool.clone(), log_id)));
        if let Some((old_pool, _)) = &place.legacy {
            if old_wrapper.is_some() || old_signer.is_some() {
                self.destroy_moved_keys(p, old_pool, log_id).await?;
            }
        }
        Ok(())
    }

    /// The trail's old objects on the partition, once their work moved to the audit slot:
    /// recorded first, destroyed only when the record is in the trail.
    async fn destroy_moved_keys(&self, p: &Partition, pool: &Pool, log_id: &str) -> ApiResult<()> {
        self.audit
            .append(
                Event::new("audit.old_keys_destroy", "partition")
                    .resource(&p.id)
                    .meta("token", &p.label)
                    .meta("kek_id", hex::encode(audit_hsm::kek_id(log_id)))
                    .meta("signer_id", hex::encode(audit_hsm::signer_id(log_id))),
            )
            .await?;
        let (pool, log_id) = (pool.clone(), log_id.to_string());
        blocking(move || -> ApiResult<()> {
            vault::destroy_by_id(&pool, &[CKO_SECRET_KEY], &audit_hsm::kek_id(&log_id))?;
            vault::destroy_by_id(
                &pool,
                &[CKO_PRIVATE_KEY, CKO_PUBLIC_KEY],
                &audit_hsm::signer_id(&log_id),
            )?;
            HsmAnchor::new(pool.clone(), &log_id)
                .object
                .destroy(&pool)?;
            Ok(())
        })
        .await??;
        Ok(())
    }
}
