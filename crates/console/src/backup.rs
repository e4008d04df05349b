//! Key backup by wrapping (`C_WrapKey` / `C_UnwrapKey`) and key check values. A wrap file
//! records the key's attributes, the mechanism and the wrapping key's fingerprint, so the
//! unwrap restores the attributes and refuses a file made for another key. Extractable keys
//! only; HSS keys never (a copy would reuse one-time keys); Luna partitions back up with the
//! Backup HSM (cloning is not done here).

use std::path::Path;

use audit::Event;
use hsm::keys as hk;
use hsm::roles::Action;
use p11::sys::*;
use p11::{Mechanism, Session, Template};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::{ApiError, ApiResult};
use crate::views::ConsoleEvent;
use crate::Console;

pub const WRAP_FORMAT: &str = "hsm-console-wrapped-key/1";

/// The usage flags a wrap file records and an unwrap restores.
const FLAGS: [(u64, &str); 8] = [
    (CKA_ENCRYPT, "encrypt"),
    (CKA_DECRYPT, "decrypt"),
    (CKA_SIGN, "sign"),
    (CKA_VERIFY, "verify"),
    (CKA_WRAP, "wrap"),
    (CKA_UNWRAP, "unwrap"),
    (CKA_DERIVE, "derive"),
    (CKA_EXTRACTABLE, "extractable"),
];

/// A wrapped key on disk (JSON).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct WrapFile {
    pub format: String,
    /// `CKM_AES_KEY_WRAP_KWP`, `CKM_AES_KEY_WRAP_PAD` or `CKM_RSA_PKCS_OAEP(SHA-256)` /
    /// `(SHA-1)`.
    pub mechanism: String,
    /// The wrapping key: `SHA256:…` of an RSA public key, `KCV:…` of an AES key.
    pub wrapping_key_fingerprint: String,
    pub wrapping_key_label: String,
    pub class: String,
    #[ts(type = "number")]
    pub key_type: u64,
    pub algorithm: String,
    pub label: String,
    pub id_hex: String,
    pub flags: Vec<(String, bool)>,
    /// The key's check value when it is an AES key.
    pub kcv: Option<String>,
    /// The wrapped key, base64.
    pub wrapped: String,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct Unwrapped {
    pub summary: hk::ObjectSummary,
    pub kcv: Option<String>,
}

fn bad(m: impl Into<String>) -> hsm::HsmError {
    hsm::HsmError::InvalidInput(m.into())
}

/// KCV: the first 3 bytes of the key's AES-ECB encryption of a zero block, hex.
fn kcv_of(s: &Session, h: u64) -> hsm::Result<String> {
    let kt = s.get_attribute(h, CKA_KEY_TYPE)?.as_ulong();
    if kt != Some(CKK_AES) {
        return Err(bad(
            "key check values are computed for AES keys (the first 3 bytes of the encryption of a zero block)",
        ));
    }
    let c = s.encrypt(&Mechanism::new(CKM_AES_ECB), h, &[0u8; 16])?;
    Ok(hex::encode_upper(&c[..3]))
}

/// The wrapping key's mechanism, the handle that wraps, and its fingerprint. RSA-OAEP uses
/// SHA-256, or SHA-1 where the file says so or the token is SoftHSM2 (whose C_WrapKey takes
/// OAEP with SHA-1 only; still sound for key transport).
fn wrapping(
    s: &Session,
    with: u64,
    key_class: &str,
    oaep_sha1: bool,
) -> hsm::Result<(Mechanism, &'static str, u64, String)> {
    let sm = hk::summary(s, with)?;
    match (sm.class.as_str(), sm.key_type.as_deref()) {
        ("SECRET_KEY", Some("AES")) => {
            let mechs = s.module().mechanisms(s.slot()).unwrap_or_default();
            let (m, name) = if mechs.contains(&CKM_AES_KEY_WRAP_KWP) {
                (CKM_AES_KEY_WRAP_KWP, "CKM_AES_KEY_WRAP_KWP")
            } else {
                (CKM_AES_KEY_WRAP_PAD, "CKM_AES_KEY_WRAP_PAD")
            };
            Ok((
                Mechanism::new(m),
                name,
                with,
                format!("KCV:{}", kcv_of(s, with)?),
            ))
        }
        ("PUBLIC_KEY" | "PRIVATE_KEY", Some("RSA")) => {
            if key_class != "SECRET_KEY" {
                return Err(bad(
                    "RSA-OAEP wraps secret keys only; wrap a private key under an AES key",
                ));
            }
            let public = if sm.class == "PUBLIC_KEY" {
                with
            } else {
                hk::public_for_private(s, with)?
            };
            let pk = hk::read_public_key(s, public)?;
            let private = if sm.class == "PRIVATE_KEY" {
                with
            } else {
                public
            };
            let (m, name) = if oaep_sha1 {
                (
                    Mechanism::rsa_oaep(CKM_SHA_1, CKG_MGF1_SHA1),
                    "CKM_RSA_PKCS_OAEP(SHA-1)",
                )
            } else {
                (
                    Mechanism::rsa_oaep(CKM_SHA256, CKG_MGF1_SHA256),
                    "CKM_RSA_PKCS_OAEP(SHA-256)",
                )
            };
            Ok((m, name, private, pk.fingerprint()))
        }
        _ => Err(bad(format!(
            "'{}' cannot wrap: use an AES key or an RSA key pair (or an imported RSA public key)",
            sm.label
        ))),
    }
}

impl Console {
    /// The key check value of an AES key.
    pub async fn key_check_value(&self, partition: &str, handle: u64) -> ApiResult<String> {
        let p = self.partition_ref(partition).await?;
        Ok(p.pool
            .run_service_idempotent_async("keys.kcv", move |s| kcv_of(s, handle))
            .await?)
    }

    /// Wrap `key` under `with` (`C_WrapKey`) and write the wrap file to `out` (never over a
    /// file). Audited before the key leaves the token.
    pub async fn wrap_key(
        &self,
        partition: &str,
        key: u64,
        with: u64,
        out: &Path,
    ) -> ApiResult<WrapFile> {
        let p = self.partition_ref(partition).await?;
        self.require(&p, Action::WrapKeys)?;
        let luna = p.module.module.family() == p11::Family::Luna;
        let ks = p
            .pool
            .run_service_idempotent_async("keys.wrap.check", move |s| Ok(hk::summary(s, key)?))
            .await?;
        if ks.algorithm.starts_with("HSS") || ks.algorithm.starts_with("LMS") {
            return Err(ApiError::invalid(format!(
                "'{}' is an HSS key: it is never wrapped, because a copy would sign with the same one-time keys again and break its security.",
                ks.label
            )));
        }
        if ks.extractable != Some(true) {
            let e = ApiError::invalid(format!(
                "'{}' is not extractable (CKA_EXTRACTABLE is false): the token does not let it leave, wrapped or not.",
                ks.label
            ));
            return Err(if luna {
                e.details("Luna partitions back up with the Backup HSM (partition backup), which this console does not do.")
            } else {
                e
            });
        }
        self.audit_first(
            Event::new("key.wrap.request", "key")
                .resource(&ks.label)
                .algorithm(&ks.algorithm)
                .meta("partition", &p.id)
                .meta("id", &ks.id_hex)
                .meta("wrapping_key", with)
                .meta("out", out.display().to_string()),
        )
        .await?;
        let class = ks.class.clone();
        let ks2 = ks.clone();
        let r = p
            .pool
            .run_service_async("keys.wrap", move |s| {
                let sha1 = s.module().family() == p11::Family::SoftHsm;
                let (mech, name, h, fp) = wrapping(s, with, &class, sha1)?;
                let wrapped = s.wrap_key(&mech, h, key)?;
                let v = s.get_attributes_with(key, &FLAGS.map(|f| f.0), false)?;
                let flags = FLAGS
                    .iter()
                    .zip(v.iter())
                    .filter_map(|((_, n), x)| x.as_bool().map(|b| (n.to_string(), b)))
                    .collect();
                let kt = s.get_attribute(key, CKA_KEY_TYPE)?.as_ulong().unwrap_or(0);
                Ok(WrapFile {
                    format: WRAP_FORMAT.into(),
                    mechanism: name.into(),
                    wrapping_key_fingerprint: fp,
                    wrapping_key_label: hk::summary(s, with)?.label,
                    class: class.clone(),
                    key_type: kt,
                    algorithm: ks2.algorithm.clone(),
                    label: ks2.label.clone(),
                    id_hex: ks2.id_hex.clone(),
                    flags,
                    kcv: kcv_of(s, key).ok(),
                    wrapped: crate::keys::base64_encode(&wrapped),
                })
            })
            .await
            .map_err(ApiError::from)
            .and_then(|f| {
                let json = serde_json::to_vec_pretty(&f).expect("serializes");
                outfile::write_new(out, &json)?;
                Ok(f)
            });
        let ev = Event::new("key.wrap", "key")
            .resource(&ks.label)
            .meta("partition", &p.id)
            .meta("id", &ks.id_hex);
        let ev = match &r {
            Ok(f) => ev
                .meta("mechanism", &f.mechanism)
                .meta("wrapping_key_fingerprint", &f.wrapping_key_fingerprint),
            Err(_) => ev,
        };
        self.record_outcome(ev, &r).await;
        r
    }

    /// Unwrap a wrap file with `with` (`C_UnwrapKey`), restoring its attributes; a file made
    /// for another key is refused before the token is asked. Audited.
    pub async fn unwrap_key(
        &self,
        partition: &str,
        file: &Path,
        with: u64,
        label: Option<String>,
    ) -> ApiResult<Unwrapped> {
        let p = self.partition_ref(partition).await?;
        self.require(&p, Action::UnwrapKeys)?;
        let name = file.display().to_string();
        let text = std::fs::read(file)
            .map_err(|e| ApiError::invalid(format!("{name}: cannot be read: {e}")))?;
        let f: WrapFile = serde_json::from_slice(&text)
            .map_err(|e| ApiError::invalid(format!("{name}: is not a wrap file: {e}")))?;
        if f.format != WRAP_FORMAT {
            return Err(ApiError::invalid(format!(
                "{name}: format '{}' is not {WRAP_FORMAT}",
                f.format
            )));
        }
        let wrapped = crate::keys::base64_decode(&f.wrapped)
            .map_err(|e| ApiError::invalid(format!("{name}: {}", e.message)))?;
        let label = label.unwrap_or_else(|| f.label.clone());
        crate::keys::validate_label(&label)?;
        let (f2, n2) = (f.clone(), name.clone());
        let check = p
            .pool
            .run_service_idempotent_async("keys.unwrap.check", move |s| {
                let sha1 = f2.mechanism.ends_with("(SHA-1)");
                let (_, mech, h, fp) = wrapping(s, with, &f2.class, sha1)?;
                if fp != f2.wrapping_key_fingerprint {
                    return Err(bad(format!(
                        "{n2}: was wrapped under another key ({}, '{}'); this one is {fp}",
                        f2.wrapping_key_fingerprint, f2.wrapping_key_label
                    )));
                }
                if mech != f2.mechanism {
                    return Err(bad(format!(
                        "{n2}: was wrapped with {}; this key unwraps with {mech}",
                        f2.mechanism
                    )));
                }
                Ok(h)
            })
            .await?;
        self.audit_first(
            Event::new("key.unwrap.request", "key")
                .resource(&label)
                .algorithm(&f.algorithm)
                .meta("partition", &p.id)
                .meta("file", &name)
                .meta("id", &f.id_hex)
                .meta("wrapping_key_fingerprint", &f.wrapping_key_fingerprint),
        )
        .await?;
        let (f3, l3) = (f.clone(), label.clone());
        let r = p
            .pool
            .run_service_async("keys.unwrap", move |s| {
                let sha1 = f3.mechanism.ends_with("(SHA-1)");
                let (mech, _, _, _) = wrapping(s, with, &f3.class, sha1)?;
                let class = match f3.class.as_str() {
                    "SECRET_KEY" => CKO_SECRET_KEY,
                    "PRIVATE_KEY" => CKO_PRIVATE_KEY,
                    other => return Err(bad(format!("a {other} is not unwrapped"))),
                };
                let mut t = Template::new()
                    .ulong(CKA_CLASS, class)
                    .ulong(CKA_KEY_TYPE, f3.key_type)
                    .bool(CKA_TOKEN, true)
                    .bool(CKA_PRIVATE, true)
                    .bool(CKA_SENSITIVE, true)
                    .text(CKA_LABEL, &l3)
                    .bytes(CKA_ID, &hex::decode(&f3.id_hex).unwrap_or_default());
                for (n, v) in &f3.flags {
                    if let Some((a, _)) = FLAGS.iter().find(|(_, m)| m == n) {
                        t = t.bool(*a, *v);
                    }
                }
                let h = s.unwrap_key(&mech, check, &wrapped, &mut t)?;
                Ok(Unwrapped {
                    summary: hk::summary(s, h)?,
                    kcv: kcv_of(s, h).ok(),
                })
            })
            .await
            .map_err(ApiError::from);
        let r = match r {
            Ok(u) if f.kcv.is_some() && u.kcv != f.kcv => Err(ApiError::invalid(format!(
                "{name}: the unwrapped key's check value {} differs from the file's {}",
                u.kcv.unwrap_or_default(),
                f.kcv.clone().unwrap_or_default()
            ))),
            other => other,
        };
        self.record_outcome(
            Event::new("key.unwrap", "key")
                .resource(&label)
                .meta("partition", &p.id)
                .meta("file", &name),
            &r,
        )
        .await;
        self.emit(ConsoleEvent::PartitionChanged {
            partition_id: p.id.clone(),
        });
        r
    }
}
