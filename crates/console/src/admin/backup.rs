//! Key backup by wrapping (`C_WrapKey` / `C_UnwrapKey`) and key check values. A wrap file
//! records the key's attributes, the scheme and the wrapping key's fingerprint, so the
//! unwrap restores the attributes and refuses a file made for another key. Extractable keys
//! only. A key with `CKA_WRAP_WITH_TRUSTED` (the console makes its backup keys so where the
//! token has it) is wrapped only under a wrapping key the security officer marked
//! `CKA_TRUSTED`: the console refuses another before anything is sent, and the token would
//! too (`CKR_KEY_NOT_WRAPPABLE`). Any other extractable key could be wrapped under any
//! wrapping key, so the officer confirms that first. HSS keys never (a copy would reuse one-time keys); Luna partitions back up with the
//! Backup HSM (cloning is not done here).
//!
//! Three schemes, named in the file by what they are, so a file made on one token unwraps on
//! another whatever each calls its mechanisms:
//! - under an AES key: AES key wrap with padding (RFC 5649) — PKCS#11 3.0's
//!   `CKM_AES_KEY_WRAP_KWP`, Luna's `CKM_AES_KWP` or SoftHSM2's `CKM_AES_KEY_WRAP_PAD`, the
//!   same algorithm; secret and private keys (a private key travels as PKCS#8);
//! - a secret key under an RSA key: `CKM_RSA_PKCS_OAEP`;
//! - a private key under an RSA key: the layout of `CKM_RSA_AES_KEY_WRAP` (PKCS#11 §2.1.21:
//!   an ephemeral AES-256 key wrapped with RSA-OAEP, then the key wrapped with it by
//!   RFC 5649). None of the tokens the console is tested on offers that mechanism (SoftHSM2
//!   2.6, Kryoptic 1.5, Luna 7.9's table), so the console composes it from the two token
//!   operations: the ephemeral key is a session object that never leaves the token
//!   unwrapped and is destroyed at once.

use std::path::Path;

use audit::Event;
use hsm::keys as hk;
use hsm::pubkey::PublicKey;
use hsm::roles::Action;
use p11::sys::*;
use p11::{Mechanism, Session, Template};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::admin::Admin;
use crate::core::change::{Change, ChangeKind};
use crate::core::error::{ApiError, ApiResult};
use crate::core::i18n::Text;
use crate::core::{partitions::Partition, Core};
use crate::text;
use std::path::PathBuf;
use std::sync::Arc;

pub const WRAP_FORMAT: &str = "hsm-console-wrapped-key/1";

/// The usage flags a wrap file records and an unwrap restores (`wrap_with_trusted` only when
/// true: a token without the attribute is not asked for it).
const FLAGS: [(u64, &str); 9] = [
    (CKA_ENCRYPT, "encrypt"),
    (CKA_DECRYPT, "decrypt"),
    (CKA_SIGN, "sign"),
    (CKA_VERIFY, "verify"),
    (CKA_WRAP, "wrap"),
    (CKA_UNWRAP, "unwrap"),
    (CKA_DERIVE, "derive"),
    (CKA_EXTRACTABLE, "extractable"),
    (CKA_WRAP_WITH_TRUSTED, "wrap_with_trusted"),
];

/// A wrapped key on disk (JSON).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct WrapFile {
    pub format: String,
    /// The scheme: the token's name of its RFC 5649 key wrap (`CKM_AES_KEY_WRAP_KWP`,
    /// `CKM_AES_KWP`, `CKM_AES_KEY_WRAP_PAD`), `CKM_RSA_PKCS_OAEP(SHA-256)` / `(SHA-1)`, or
    /// `CKM_RSA_AES_KEY_WRAP(SHA-256)` / `(SHA-1)`.
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
    /// The key's check value when it is an AES or generic secret key.
    pub kcv: Option<String>,
    /// A private key's public half (SPKI DER, base64), restored beside it on unwrap so the
    /// key pair signs and verifies on the other token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub public_key: Option<String>,
    /// The wrapped key, base64.
    pub wrapped: String,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct Unwrapped {
    pub summary: hk::ObjectSummary,
    pub kcv: Option<String>,
    /// The public half restored beside an unwrapped private key.
    pub public_handle: Option<u64>,
}

/// The hash RSA-OAEP uses. SoftHSM2 wraps and unwraps with SHA-1 only (still sound for key
/// transport: OAEP does not rely on collision resistance), so a file for a SoftHSM2 token
/// needs SHA-1; elsewhere SHA-256 is the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum OaepHash {
    Sha1,
    Sha256,
}
hsm::wire_display!(OaepHash);

impl OaepHash {
    fn label(self) -> &'static str {
        match self {
            OaepHash::Sha1 => "SHA-1",
            OaepHash::Sha256 => "SHA-256",
        }
    }
    fn mechanism(self) -> Mechanism {
        match self {
            OaepHash::Sha1 => Mechanism::rsa_oaep(CKM_SHA_1, CKG_MGF1_SHA1),
            OaepHash::Sha256 => Mechanism::rsa_oaep(CKM_SHA256, CKG_MGF1_SHA256),
        }
    }
}

/// How a key is wrapped, whatever the token calls the mechanism.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scheme {
    /// AES key wrap with padding (RFC 5649).
    Kwp,
    /// RSA-OAEP of a secret key's value.
    Oaep(OaepHash),
    /// RSA-OAEP of an ephemeral AES key, then RFC 5649 under it.
    RsaAes(OaepHash),
}

/// The names under which tokens offer RFC 5649, best first.
const KWP_MECHANISMS: [(u64, &str); 3] = [
    (CKM_AES_KEY_WRAP_KWP, "CKM_AES_KEY_WRAP_KWP"),
    (p11::names::luna::CKM_AES_KWP, "CKM_AES_KWP"),
    (CKM_AES_KEY_WRAP_PAD, "CKM_AES_KEY_WRAP_PAD"),
];

impl Scheme {
    fn parse(name: &str) -> Option<Scheme> {
        if KWP_MECHANISMS.iter().any(|(_, n)| *n == name) {
            return Some(Scheme::Kwp);
        }
        let (base, hash) = name.strip_suffix(')')?.split_once('(')?;
        let hash = match hash {
            "SHA-1" => OaepHash::Sha1,
            "SHA-256" => OaepHash::Sha256,
            _ => return None,
        };
        match base {
            "CKM_RSA_PKCS_OAEP" => Some(Scheme::Oaep(hash)),
            "CKM_RSA_AES_KEY_WRAP" => Some(Scheme::RsaAes(hash)),
            _ => None,
        }
    }

    /// The name written to the file (`kwp`: the token's name of RFC 5649).
    fn name(self, kwp: &str) -> String {
        match self {
            Scheme::Kwp => kwp.to_string(),
            Scheme::Oaep(h) => format!("CKM_RSA_PKCS_OAEP({})", h.label()),
            Scheme::RsaAes(h) => format!("CKM_RSA_AES_KEY_WRAP({})", h.label()),
        }
    }
}

/// What a wrapping key is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wrapper {
    Aes,
    Rsa,
}

fn wrapper_kind(sm: &hk::ObjectSummary) -> ApiResult<Wrapper> {
    match (sm.class.as_str(), sm.key_type.as_deref()) {
        ("SECRET_KEY", Some("AES")) => Ok(Wrapper::Aes),
        ("PUBLIC_KEY" | "PRIVATE_KEY", Some("RSA")) => Ok(Wrapper::Rsa),
        _ => Err(ApiError::invalid(text!(
            "errors.wrap_cannot_wrap",
            "'{{label}}' cannot wrap: use an AES key or an RSA key pair (or an imported RSA public key).",
            label = &sm.label
        ))),
    }
}

/// The token's RFC 5649 mechanism (value, name).
fn kwp_of(s: &Session) -> hsm::Result<(u64, &'static str)> {
    let mechs = s.module().mechanisms(s.slot())?;
    KWP_MECHANISMS
        .into_iter()
        .find(|(m, _)| mechs.contains(m))
        .ok_or_else(|| {
            hsm::HsmError::NotSupported(crate::text!(
                "errors.wrap_no_kwp",
                "the token offers no AES key wrap with padding (RFC 5649)"
            ))
        })
}

/// A key's check value, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kcv {
    Value(String),
    /// Not an AES or generic secret key.
    NotSecret,
    /// The token keeps no check value and the key may not do what computes one.
    NotPermitted,
}

impl Kcv {
    fn value(self) -> Option<String> {
        match self {
            Kcv::Value(v) => Some(v),
            _ => None,
        }
    }
}

/// KCV: the first 3 bytes of the key's check value as PKCS#11 defines `CKA_CHECK_VALUE` — for
/// AES the encryption of a zero block (AES-ECB), for a generic secret the SHA-1 of its value.
/// The token's own `CKA_CHECK_VALUE` when it keeps one; else computed inside the token
/// (`C_Encrypt`, `C_DigestKey`).
fn kcv_of(s: &Session, h: u64) -> hsm::Result<Kcv> {
    let v = s.get_attributes_with(h, &[CKA_KEY_TYPE, CKA_CHECK_VALUE], false)?;
    let kt = v[0].as_ulong();
    if !matches!(kt, Some(CKK_AES) | Some(CKK_GENERIC_SECRET)) {
        return Ok(Kcv::NotSecret);
    }
    if let Some(cv) = v[1].bytes().filter(|b| b.len() >= 3) {
        return Ok(Kcv::Value(hex::encode_upper(&cv[..3])));
    }
    let computed = if kt == Some(CKK_AES) {
        s.encrypt(&Mechanism::new(CKM_AES_ECB), h, &[0u8; 16])
    } else {
        s.digest_key(&Mechanism::new(CKM_SHA_1), h).or_else(|e| {
            // A token without C_DigestKey for this key: a readable value is digested by the
            // token too (nothing is computed on the console's side).
            match s.get_attribute(h, CKA_VALUE)?.bytes() {
                Some(value) => s.digest(&Mechanism::new(CKM_SHA_1), value),
                None => Err(e),
            }
        })
    };
    match computed {
        Ok(c) => Ok(Kcv::Value(hex::encode_upper(&c[..3]))),
        Err(e)
            if matches!(
                e.rv(),
                Some(CKR_KEY_FUNCTION_NOT_PERMITTED) | Some(CKR_KEY_INDIGESTIBLE)
            ) =>
        {
            Ok(Kcv::NotPermitted)
        }
        Err(e) => Err(e.into()),
    }
}

/// The wrapping key's fingerprint: the SHA-256 of an RSA public key, the KCV of an AES key.
fn fingerprint(s: &Session, kind: Wrapper, with: u64) -> hsm::Result<String> {
    match kind {
        Wrapper::Aes => Ok(format!(
            "KCV:{}",
            kcv_of(s, with)?.value().unwrap_or_default()
        )),
        Wrapper::Rsa => Ok(hk::read_public_key(s, public_of(s, with)?)?.fingerprint()),
    }
}

/// An ephemeral AES-256 session key for the RSA-AES scheme.
fn ephemeral_template() -> Template {
    Template::new()
        .ulong(CKA_CLASS, CKO_SECRET_KEY)
        .ulong(CKA_KEY_TYPE, CKK_AES)
        .bool(CKA_TOKEN, false)
        .bool(CKA_PRIVATE, true)
        .bool(CKA_SENSITIVE, true)
        .bool(CKA_EXTRACTABLE, true)
        .bool(CKA_WRAP, true)
        .bool(CKA_UNWRAP, true)
}

fn wrap_with(s: &Session, scheme: Scheme, kwp: u64, with: u64, key: u64) -> hsm::Result<Vec<u8>> {
    match scheme {
        Scheme::Kwp => Ok(s.wrap_key(&Mechanism::new(kwp), with, key)?),
        Scheme::Oaep(h) => Ok(s.wrap_key(&h.mechanism(), public_of(s, with)?, key)?),
        Scheme::RsaAes(h) => {
            let public = public_of(s, with)?;
            let eph = s.generate_key(
                &Mechanism::new(CKM_AES_KEY_GEN),
                &mut ephemeral_template().ulong(CKA_VALUE_LEN, 32),
            )?;
            let r = (|| -> p11::Result<Vec<u8>> {
                let inner = s.wrap_key(&Mechanism::new(kwp), eph, key)?;
                let mut out = s.wrap_key(&h.mechanism(), public, eph)?;
                out.extend(inner);
                Ok(out)
            })();
            let _ = s.destroy_object(eph);
            Ok(r?)
        }
    }
}

fn unwrap_with(
    s: &Session,
    scheme: Scheme,
    kwp: u64,
    with: u64,
    wrapped: &[u8],
    t: &mut Template,
) -> hsm::Result<u64> {
    match scheme {
        Scheme::Kwp => Ok(s.unwrap_key(&Mechanism::new(kwp), with, wrapped, t)?),
        Scheme::Oaep(h) => Ok(s.unwrap_key(&h.mechanism(), with, wrapped, t)?),
        Scheme::RsaAes(h) => {
            let k = s
                .get_attribute(with, CKA_MODULUS)?
                .bytes()
                .map(<[u8]>::len)
                .unwrap_or(0);
            if k == 0 || wrapped.len() <= k {
                return Err(hsm::HsmError::Refused(crate::text!(
                    "errors.wrapped_shorter_than_modulus",
                    "the wrapped key is shorter than the RSA key's modulus"
                )));
            }
            let (outer, inner) = wrapped.split_at(k);
            let eph = s.unwrap_key(&h.mechanism(), with, outer, &mut ephemeral_template())?;
            let r = s.unwrap_key(&Mechanism::new(kwp), eph, inner, t);
            let _ = s.destroy_object(eph);
            Ok(r?)
        }
    }
}

/// The public key object to wrap under: `with` itself, or the public half of a private key.
fn public_of(s: &Session, with: u64) -> hsm::Result<u64> {
    if hk::summary(s, with)?.class == "PUBLIC_KEY" {
        Ok(with)
    } else {
        hk::public_for_private(s, with)
    }
}

fn read_wrap_file(file: &Path) -> ApiResult<ParsedWrap> {
    let name = file.display().to_string();
    let bytes = std::fs::read(file).map_err(|e| {
        ApiError::invalid(text!(
            "errors.wrap_file_unreadable",
            "{{file}}: cannot be read: {{error}}",
            file = &name,
            error = e
        ))
    })?;
    parse_wrap(&bytes).map_err(|why| {
        ApiError::invalid(
            text!(
                "errors.wrap_file_invalid",
                "{{file}}: is not a wrap file: {{error}}",
                file = &name,
                error = &why
            )
            .nest("error", &why),
        )
    })
}

/// A wrap file's content as the unwrap reads it before any token is asked: JSON of
/// [`WRAP_FORMAT`], a scheme the console knows, the key's ID in hexadecimal and the wrapped
/// key in base64. Returns the file and the wrapped key's bytes, or why it is not a wrap
/// file. Pure (the fuzz target `wrap_file` calls it).
pub fn parse_wrap_file(bytes: &[u8]) -> Result<(WrapFile, Vec<u8>), String> {
    parse_wrap(bytes)
        .map(|p| (p.file, p.wrapped))
        .map_err(|t| t.text)
}

/// A wrap file read: the file, its scheme, the key's `CKA_ID` and the wrapped key.
struct ParsedWrap {
    file: WrapFile,
    scheme: Scheme,
    id: Vec<u8>,
    wrapped: Vec<u8>,
}

fn parse_wrap(bytes: &[u8]) -> Result<ParsedWrap, Text> {
    let f: WrapFile = serde_json::from_slice(bytes).map_err(|e| {
        // serde's own English (where the JSON breaks off), framed for the other languages.
        text!("errors.wrap.not_json", "{{error}}", error = e)
    })?;
    if f.format != WRAP_FORMAT {
        return Err(text!(
            "errors.wrap.format",
            "format '{{format}}' is not {{expected}}",
            format = &f.format,
            expected = WRAP_FORMAT
        ));
    }
    let scheme = Scheme::parse(&f.mechanism).ok_or_else(|| {
        text!(
            "errors.wrap.scheme",
            "unknown scheme '{{scheme}}'",
            scheme = &f.mechanism
        )
    })?;
    // The key is found again by its CKA_ID (signing, the recovery after a reconnect): a
    // damaged ID must not restore it with another one, or none.
    let id = hex::decode(&f.id_hex).map_err(|e| {
        text!(
            "errors.wrap.id_not_hex",
            "the key's ID '{{id}}' is not hexadecimal: {{error}}",
            id = &f.id_hex,
            error = e
        )
    })?;
    let wrapped = {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD
            .decode(&f.wrapped)
            .map_err(|e| text!("errors.not_base64", "not base64: {{error}}", error = e))?
    };
    Ok(ParsedWrap {
        file: f,
        scheme,
        id,
        wrapped,
    })
}

impl Admin<'_> {
    /// The key check value of an AES or generic secret key.
    pub async fn key_check_value(self, partition: &str, handle: u64) -> ApiResult<String> {
        let p = self.partition_ref(partition).await?;
        let refs = p.clone();
        let (kcv, label) = p
            .pool
            .run_service_idempotent_async("keys.kcv", move |s| {
                let handle = refs.key_refs.resolve(s, handle)?;
                let kcv = kcv_of(s, handle)?;
                // The label only for the message that names the key.
                let label = match kcv {
                    Kcv::NotPermitted => hk::summary(s, handle)?.label,
                    _ => String::new(),
                };
                Ok((kcv, label))
            })
            .await?;
        match kcv {
            Kcv::Value(v) => Ok(v),
            Kcv::NotSecret => Err(ApiError::invalid(text!(
                "errors.kcv_secret_keys_only",
                "Key check values are computed for AES and generic secret keys."
            ))),
            Kcv::NotPermitted => Err(ApiError::invalid(text!(
                "errors.kcv_not_permitted",
                "'{{label}}' has no check value on the token, and it may not encrypt (or be digested), which is how its KCV is computed.",
                label = label
            ))),
        }
    }

    /// Wrap `key` under `with` (`C_WrapKey`) and write the wrap file to `out` (never over a
    /// file). Audited before the key leaves the token. `oaep` chooses RSA-OAEP's hash
    /// (default: SHA-1 on SoftHSM2, which has no other, SHA-256 elsewhere). A key with
    /// `CKA_WRAP_WITH_TRUSTED` is wrapped only under a trusted key; any other only with
    /// `any_wrapping_key`, the officer's confirmation that it could be wrapped under any
    /// wrapping key.
    pub async fn wrap_key(
        self,
        partition: &str,
        key: u64,
        with: u64,
        out: &Path,
        oaep: Option<OaepHash>,
        any_wrapping_key: bool,
    ) -> ApiResult<WrapFile> {
        self.changes()
            .apply(
                partition,
                WrapKey {
                    key,
                    with,
                    out: out.to_path_buf(),
                    oaep,
                    any_wrapping_key,
                    plan: None,
                },
            )
            .await
    }

    /// Unwrap a wrap file with `with` (`C_UnwrapKey`), restoring its attributes (and a
    /// private key's public half); a file made for another key is refused before the token
    /// is asked, and a key whose check value differs from the file's is destroyed again.
    /// Audited.
    pub async fn unwrap_key(
        self,
        partition: &str,
        file: &Path,
        with: u64,
        label: Option<String>,
    ) -> ApiResult<Unwrapped> {
        self.changes()
            .apply(
                partition,
                UnwrapKey {
                    file: file.to_path_buf(),
                    with,
                    label,
                    plan: None,
                    settled: false,
                },
            )
            .await
    }
}

/// `C_WrapKey` of the key the officer chose under the wrapping key they chose, and the
/// wrap file written.
struct WrapKey {
    key: u64,
    with: u64,
    out: PathBuf,
    oaep: Option<OaepHash>,
    /// The officer confirmed wrapping a key without `CKA_WRAP_WITH_TRUSTED`, which could be
    /// wrapped under any wrapping key.
    any_wrapping_key: bool,
    plan: Option<WrapPlan>,
}

#[derive(Clone)]
struct WrapPlan {
    ks: hk::ObjectSummary,
    ws: hk::ObjectSummary,
    scheme: Scheme,
    kind: Wrapper,
}

impl Change for WrapKey {
    type Output = WrapFile;

    fn kind(&self) -> ChangeKind {
        ChangeKind::KeyWrap
    }

    fn permission(&self) -> Option<Action> {
        Some(Action::WrapKeys)
    }

    async fn resolve(&mut self, _c: &Core, p: &Arc<Partition>) -> ApiResult<Event> {
        let family = p.module.module.family();
        let (key, with, oaep, refs) = (self.key, self.with, self.oaep, p.clone());
        let (ks, ws, trusted) = p
            .pool
            .run_service_idempotent_async("keys.wrap.check", move |s| {
                let (key, with) = (
                    refs.key_refs.resolve(s, key)?,
                    refs.key_refs.resolve(s, with)?,
                );
                let ws = hk::summary(s, with)?;
                // An RSA pair wraps with its public half: that one is marked trusted.
                let trusted = match ws.class.as_str() {
                    "PRIVATE_KEY" => hk::public_for_private(s, with)
                        .ok()
                        .and_then(|h| hk::summary(s, h).ok())
                        .and_then(|public| public.trusted),
                    _ => ws.trusted,
                };
                Ok((hk::summary(s, key)?, ws, trusted))
            })
            .await?;
        if ks.algorithm.starts_with("HSS") || ks.algorithm.starts_with("LMS") {
            return Err(ApiError::invalid(text!(
                "errors.wrap_hss_never",
                "'{{label}}' is an HSS key: it is never wrapped, because a copy would sign with the same one-time keys again and break its security.",
                label = &ks.label
            )));
        }
        if !matches!(ks.class.as_str(), "SECRET_KEY" | "PRIVATE_KEY") {
            return Err(ApiError::invalid(text!(
                "errors.wrap_keys_only",
                "'{{label}}' is a {{class}}: only secret and private keys are wrapped (public keys and certificates are exported as they are).",
                label = &ks.label,
                class = &ks.class
            )));
        }
        if ks.extractable != Some(true) {
            let e = ApiError::invalid(text!(
                "errors.wrap_not_extractable",
                "'{{label}}' is not extractable (CKA_EXTRACTABLE is false): the token does not let it leave, wrapped or not.",
                label = &ks.label
            ));
            return Err(if family == p11::Family::Luna {
                e.suggest(text!(
                    "errors.wrap_luna_backup",
                    "Luna partitions back up with the Backup HSM (partition backup), which this console does not do."
                ))
            } else {
                e
            });
        }
        let trusted_only = ks.wrap_with_trusted == Some(true);
        if trusted_only && trusted != Some(true) {
            return Err(ApiError::new(
                crate::core::error::ErrorCode::NotAuthorized,
                text!(
                    "errors.wrap_needs_trusted",
                    "'{{label}}' may leave the token only under a trusted wrapping key (CKA_WRAP_WITH_TRUSTED), and '{{wrapping}}' is not trusted (CKA_TRUSTED is not set): the token would refuse it (CKR_KEY_NOT_WRAPPABLE), so nothing was sent.",
                    label = &ks.label,
                    wrapping = &ws.label
                ),
            )
            .suggest(text!(
                "errors.wrap_needs_trusted_hint",
                "Choose a wrapping key the security officer marked trusted, or ask the SO to mark this one (Keys → Edit attributes… → trusted, or hsmc --so keys set KEY --set trusted=true)."
            )));
        }
        if !trusted_only && !self.any_wrapping_key {
            return Err(ApiError::invalid(text!(
                "errors.wrap_any_key_unconfirmed",
                "'{{label}}' is extractable without CKA_WRAP_WITH_TRUSTED (the token does not offer it, or the key was made without it): it could be wrapped under any wrapping key, not only those the security officer trusts. Confirm to wrap it anyway.",
                label = &ks.label
            ))
            .suggest(text!(
                "errors.wrap_any_key_unconfirmed_hint",
                "In the wrap dialog, tick the confirmation; with hsmc, add --confirm-untrusted."
            )));
        }
        let kind = wrapper_kind(&ws)?;
        if trusted_only && kind == Wrapper::Rsa && ks.class == "PRIVATE_KEY" {
            // The RSA scheme for private keys wraps them under an ephemeral AES key first,
            // which no security officer marked trusted: the token refuses that wrap.
            return Err(ApiError::invalid(text!(
                "errors.wrap_trusted_private_under_rsa",
                "'{{label}}' may leave the token only under a trusted wrapping key, and a private key travels under an RSA key through an ephemeral AES key (CKM_RSA_AES_KEY_WRAP's layout) that is not trusted, so the token would refuse it. Wrap it under a trusted AES key instead.",
                label = &ks.label
            )));
        }
        let hash = oaep.unwrap_or(if family == p11::Family::SoftHsm {
            OaepHash::Sha1
        } else {
            OaepHash::Sha256
        });
        let scheme = match (kind, ks.class.as_str()) {
            (Wrapper::Aes, _) => Scheme::Kwp,
            (Wrapper::Rsa, "SECRET_KEY") => Scheme::Oaep(hash),
            (Wrapper::Rsa, _) => Scheme::RsaAes(hash),
        };
        let ev = Event::new("key.wrap", "key")
            .resource(&ks.label)
            .algorithm(&ks.algorithm)
            .meta("partition", &p.id)
            .meta("id", &ks.id_hex)
            .meta("wrapping_key", &ws.label)
            .meta("wrapping_key_id", &ws.id_hex)
            .meta("wrapping_key_trusted", trusted == Some(true))
            .meta("wrap_with_trusted", trusted_only)
            .meta("out", self.out.display().to_string());
        let ev = if trusted_only {
            ev
        } else {
            ev.meta("confirmed_any_wrapping_key", true)
        };
        self.plan = Some(WrapPlan {
            ks,
            ws,
            scheme,
            kind,
        });
        Ok(ev)
    }

    async fn act(&mut self, _c: &Core, p: &Arc<Partition>) -> ApiResult<WrapFile> {
        let WrapPlan {
            ks,
            ws,
            scheme,
            kind,
        } = self.plan.clone().expect("resolved");
        let (ks2, wlabel) = (ks.clone(), ws.label.clone());
        let refs = p.clone();
        p.pool
            // C_WrapKey changes nothing on the token: repeated after a reconnection.
            .run_service_idempotent_async("keys.wrap", move |s| {
                let (key, with) = (
                    crate::core::change::locate(s, &refs, &ks)?,
                    crate::core::change::locate(s, &refs, &ws)?,
                );
                let (kwp, kwp_name) = kwp_of(s)?;
                let fp = fingerprint(s, kind, with)?;
                let wrapped = wrap_with(s, scheme, kwp, with, key)?;
                let v = s.get_attributes_with(key, &FLAGS.map(|f| f.0), false)?;
                let flags = FLAGS
                    .iter()
                    .zip(v.iter())
                    .filter_map(|((_, n), x)| x.as_bool().map(|b| (n.to_string(), b)))
                    .collect();
                let kt = s.get_attribute(key, CKA_KEY_TYPE)?.as_ulong().unwrap_or(0);
                let public_key = if ks2.class == "PRIVATE_KEY" {
                    hk::public_for_private(s, key)
                        .and_then(|h| hk::read_public_key(s, h))
                        .ok()
                        .map(|pk| crate::admin::keys::base64_encode(&pk.spki_der()))
                } else {
                    None
                };
                Ok(WrapFile {
                    format: WRAP_FORMAT.into(),
                    mechanism: scheme.name(kwp_name),
                    wrapping_key_fingerprint: fp,
                    wrapping_key_label: wlabel.clone(),
                    class: ks2.class.clone(),
                    key_type: kt,
                    algorithm: ks2.algorithm.clone(),
                    label: ks2.label.clone(),
                    id_hex: ks2.id_hex.clone(),
                    flags,
                    kcv: kcv_of(s, key).ok().and_then(Kcv::value),
                    public_key,
                    wrapped: crate::admin::keys::base64_encode(&wrapped),
                })
            })
            .await
            .map_err(ApiError::from)
            .and_then(|f| {
                let json = serde_json::to_vec_pretty(&f).expect("serializes");
                outfile::write_new(&self.out, &json)?;
                Ok(f)
            })
    }

    fn outcome(&self, ev: Event, r: Result<&WrapFile, &ApiError>) -> Event {
        match r {
            Ok(f) => ev
                .meta("mechanism", &f.mechanism)
                .meta("wrapping_key_fingerprint", &f.wrapping_key_fingerprint),
            Err(_) => ev,
        }
    }
}

/// `C_UnwrapKey` of a wrap file under the key the officer chose.
struct UnwrapKey {
    file: PathBuf,
    with: u64,
    label: Option<String>,
    plan: Option<UnwrapPlan>,
    /// A lost answer was settled by reading the token.
    settled: bool,
}

struct UnwrapPlan {
    f: WrapFile,
    scheme: Scheme,
    id: Vec<u8>,
    wrapped: Vec<u8>,
    class: u64,
    public_key: Option<PublicKey>,
    ws: hk::ObjectSummary,
    label: String,
    name: String,
}

impl Change for UnwrapKey {
    type Output = Unwrapped;

    fn kind(&self) -> ChangeKind {
        ChangeKind::KeyUnwrap
    }

    fn permission(&self) -> Option<Action> {
        Some(Action::UnwrapKeys)
    }

    async fn resolve(&mut self, _c: &Core, p: &Arc<Partition>) -> ApiResult<Event> {
        let file = self.file.clone();
        let name = file.display().to_string();
        let ParsedWrap {
            file: f,
            scheme,
            id,
            wrapped,
        } = read_wrap_file(&file)?;
        let label = self.label.clone().unwrap_or_else(|| f.label.clone());
        crate::admin::keys::validate_label(&label)?;
        let class = match f.class.as_str() {
            "SECRET_KEY" => CKO_SECRET_KEY,
            "PRIVATE_KEY" => CKO_PRIVATE_KEY,
            other => {
                return Err(ApiError::invalid(text!(
                    "errors.wrap_file_class",
                    "{{file}}: holds a {{class}}; only secret and private keys are unwrapped.",
                    file = &name,
                    class = other
                )))
            }
        };
        let public_key = match &f.public_key {
            Some(b64) => Some(
                crate::admin::keys::base64_decode(b64)
                    .ok()
                    .and_then(|der| PublicKey::from_spki_der(&der).ok())
                    .ok_or_else(|| {
                        let why = text!(
                            "errors.wrap.public_key_not_spki",
                            "its public key is not an SPKI"
                        );
                        ApiError::invalid(
                            text!(
                                "errors.wrap_file_invalid",
                                "{{file}}: is not a wrap file: {{error}}",
                                file = &name,
                                error = &why
                            )
                            .nest("error", &why),
                        )
                    })?,
            ),
            None => None,
        };
        let ws = crate::core::change::read_target(p, "keys.unwrap.check", self.with).await?;
        let kind = wrapper_kind(&ws)?;
        if kind == Wrapper::Rsa && ws.class != "PRIVATE_KEY" {
            return Err(ApiError::invalid(text!(
                "errors.unwrap_needs_private",
                "'{{label}}' is an RSA public key: unwrapping takes the private half of the key pair.",
                label = &ws.label
            )));
        }
        let fits = matches!(
            (kind, scheme),
            (Wrapper::Aes, Scheme::Kwp) | (Wrapper::Rsa, Scheme::Oaep(_) | Scheme::RsaAes(_))
        );
        if !fits {
            return Err(ApiError::invalid(text!(
                "errors.unwrap_scheme_mismatch",
                "{{file}}: was wrapped with {{mechanism}}, which '{{label}}' does not unwrap.",
                file = &name,
                mechanism = &f.mechanism,
                label = &ws.label
            )));
        }
        let (ws2, refs) = (ws.clone(), p.clone());
        let fp = p
            .pool
            .run_service_idempotent_async("keys.unwrap.fingerprint", move |s| {
                fingerprint(s, kind, crate::core::change::locate(s, &refs, &ws2)?)
            })
            .await?;
        if fp != f.wrapping_key_fingerprint {
            return Err(ApiError::invalid(text!(
                "errors.unwrap_other_key",
                "{{file}}: was wrapped under another key ({{expected}}, '{{expected_label}}'); this one is {{actual}}.",
                file = &name,
                expected = &f.wrapping_key_fingerprint,
                expected_label = &f.wrapping_key_label,
                actual = &fp
            )));
        }
        let ev = Event::new("key.unwrap", "key")
            .resource(&label)
            .algorithm(&f.algorithm)
            .meta("partition", &p.id)
            .meta("file", &name)
            .meta("id", &f.id_hex)
            .meta("wrapping_key_fingerprint", &f.wrapping_key_fingerprint);
        self.plan = Some(UnwrapPlan {
            f,
            scheme,
            id,
            wrapped,
            class,
            public_key,
            ws,
            label,
            name,
        });
        Ok(ev)
    }

    async fn act(&mut self, _c: &Core, p: &Arc<Partition>) -> ApiResult<Unwrapped> {
        let UnwrapPlan {
            f,
            scheme,
            id,
            wrapped,
            class,
            public_key,
            ws,
            label,
            name,
        } = self.plan.take().expect("resolved");
        let family = p.module.module.family();
        let (f3, l3, id3, refs) = (f.clone(), label.clone(), id.clone(), p.clone());
        let made = Made {
            class,
            id: id.clone(),
            label: label.clone(),
        };
        let before = {
            let made = made.clone();
            p.pool
                .run_service_idempotent_async("keys.unwrap.find", move |s| made.find(s))
                .await?
                .len()
        };
        let unwrap = move |s: &Session| {
            let with = crate::core::change::locate(s, &refs, &ws)?;
            let (kwp, _) = kwp_of(s)?;
            let mut t = Template::new()
                .ulong(CKA_CLASS, class)
                .ulong(CKA_KEY_TYPE, f3.key_type)
                .bool(CKA_TOKEN, true)
                .bool(CKA_PRIVATE, true)
                .bool(CKA_SENSITIVE, true)
                .text(CKA_LABEL, &l3)
                .bytes(CKA_ID, &id3);
            for (n, v) in &f3.flags {
                if let Some((a, _)) = FLAGS.iter().find(|(_, m)| m == n) {
                    if *a == CKA_WRAP_WITH_TRUSTED && !*v {
                        continue;
                    }
                    t = t.bool(*a, *v);
                }
            }
            let h = unwrap_with(s, scheme, kwp, with, &wrapped, &mut t)?;
            complete(s, h, &f3.kcv, public_key.as_ref(), family, &l3, &id3, false)
        };
        let r = match p
            .pool
            .run_service_async("keys.unwrap", unwrap.clone())
            .await
        {
            // The answer is lost: the token is read before anything is made again — a key
            // of the class, ID and label that was not there before is the one unwrapped,
            // and its check and public half are finished on it.
            Err(e) if e.class() == p11::ErrorClass::Disconnected => {
                let (kcv, public_key) = (f.kcv.clone(), public_key_of(&f));
                let (l4, id4) = (label.clone(), id.clone());
                let settled = p
                    .pool
                    .run_service_idempotent_async("keys.unwrap.settle", move |s| {
                        let found = made.find(s)?;
                        match found.last() {
                            Some(h) if found.len() > before => {
                                complete(s, *h, &kcv, public_key.as_ref(), family, &l4, &id4, true)
                                    .map(Some)
                            }
                            _ => Ok(None),
                        }
                    })
                    .await;
                match settled {
                    Ok(Some(done)) => {
                        self.settled = true;
                        Ok(done)
                    }
                    Ok(None) => p.pool.run_service_async("keys.unwrap", unwrap).await,
                    Err(e) => Err(e),
                }
            }
            r => r,
        };
        r
            .map_err(ApiError::from)
            .and_then(|r| {
                r.map_err(|got| {
                    ApiError::invalid(text!(
                        "errors.unwrap_kcv_differs",
                        "{{file}}: the unwrapped key's check value {{actual}} differs from the file's {{expected}}; the key was removed again.",
                        file = &name,
                        actual = got.unwrap_or_default(),
                        expected = f.kcv.clone().unwrap_or_default()
                    ))
                })
            })
    }

    fn outcome(&self, ev: Event, _r: Result<&Unwrapped, &ApiError>) -> Event {
        if self.settled {
            ev.meta("settled_after_reconnect", true)
        } else {
            ev
        }
    }
}

/// The object an unwrap makes, as it is found on the token.
#[derive(Clone)]
struct Made {
    class: u64,
    id: Vec<u8>,
    label: String,
}

impl Made {
    fn find(&self, s: &Session) -> hsm::Result<Vec<u64>> {
        Ok(s.find_objects(
            &mut Template::new()
                .ulong(CKA_CLASS, self.class)
                .bytes(CKA_ID, &self.id)
                .text(CKA_LABEL, &self.label),
        )?)
    }
}

/// The wrap file's public half, as the unwrap restores it.
fn public_key_of(f: &WrapFile) -> Option<PublicKey> {
    let der = crate::admin::keys::base64_decode(f.public_key.as_ref()?).ok()?;
    PublicKey::from_spki_der(&der).ok()
}

/// After the unwrap made `h`: the check value against the file's (a different one removes
/// the key again: `Err(the value)`), and the public half restored beside a private key. When
/// settling a lost answer (`settling`), a public half already there is the one restored.
#[allow(clippy::too_many_arguments)]
fn complete(
    s: &Session,
    h: u64,
    expected_kcv: &Option<String>,
    public_key: Option<&PublicKey>,
    family: p11::Family,
    label: &str,
    id: &[u8],
    settling: bool,
) -> hsm::Result<Result<Unwrapped, Option<String>>> {
    let kcv = kcv_of(s, h).ok().and_then(Kcv::value);
    if expected_kcv.is_some() && kcv != *expected_kcv {
        let _ = s.destroy_object(h);
        return Ok(Err(kcv));
    }
    let public_handle = match public_key {
        Some(pk) => {
            let there = if settling {
                Made {
                    class: CKO_PUBLIC_KEY,
                    id: id.to_vec(),
                    label: label.to_string(),
                }
                .find(s)?
                .last()
                .copied()
            } else {
                None
            };
            match there {
                Some(ph) => Some(ph),
                None => {
                    let mut pt = hsm::objects::public_key_template(pk, family, label, id)?;
                    match s.create_object(&mut pt) {
                        Ok(ph) => Some(ph),
                        Err(e) => {
                            let _ = s.destroy_object(h);
                            return Err(e.into());
                        }
                    }
                }
            }
        }
        None => None,
    };
    Ok(Ok(Unwrapped {
        summary: hk::summary(s, h)?,
        kcv,
        public_handle,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_token_name_of_rfc_5649_is_one_scheme() {
        for (_, n) in KWP_MECHANISMS {
            assert_eq!(Scheme::parse(n), Some(Scheme::Kwp), "{n}");
        }
        for s in [
            Scheme::Oaep(OaepHash::Sha1),
            Scheme::Oaep(OaepHash::Sha256),
            Scheme::RsaAes(OaepHash::Sha1),
            Scheme::RsaAes(OaepHash::Sha256),
        ] {
            assert_eq!(Scheme::parse(&s.name("x")), Some(s));
        }
        assert_eq!(Scheme::parse("CKM_RSA_PKCS_OAEP(MD5)"), None);
        assert_eq!(Scheme::parse("CKM_AES_GCM"), None);
    }

    #[test]
    fn a_wrap_file_reads_back_as_written_and_says_what_is_wrong() {
        let f = WrapFile {
            format: WRAP_FORMAT.into(),
            mechanism: "CKM_RSA_AES_KEY_WRAP(SHA-1)".into(),
            wrapping_key_fingerprint: "SHA256:00".into(),
            wrapping_key_label: "transport".into(),
            class: "PRIVATE_KEY".into(),
            key_type: CKK_EC,
            algorithm: "ECDSA P-256".into(),
            label: "release".into(),
            id_hex: "0a".into(),
            flags: vec![("sign".into(), true)],
            kcv: None,
            public_key: None,
            wrapped: crate::admin::keys::base64_encode(b"wrapped key"),
        };
        let json = serde_json::to_vec_pretty(&f).unwrap();
        let (got, wrapped) = parse_wrap_file(&json).unwrap();
        assert_eq!(wrapped, b"wrapped key");
        assert_eq!(serde_json::to_vec_pretty(&got).unwrap(), json);
        let with = |k: &str, v: &str| {
            let mut j: serde_json::Value = serde_json::from_slice(&json).unwrap();
            j[k] = v.into();
            parse_wrap_file(&serde_json::to_vec(&j).unwrap()).unwrap_err()
        };
        assert_eq!(
            with("format", "x/1"),
            "format 'x/1' is not hsm-console-wrapped-key/1"
        );
        assert_eq!(
            with("mechanism", "CKM_AES_GCM"),
            "unknown scheme 'CKM_AES_GCM'"
        );
        assert!(with("wrapped", "not base64!").contains("not base64"));
        assert!(parse_wrap_file(b"{").is_err());
        // Each reason has a catalog key; its English is the one above (`hsmc` prints it).
        let key = |k: &str, v: &str| {
            let mut j: serde_json::Value = serde_json::from_slice(&json).unwrap();
            j[k] = v.into();
            parse_wrap(&serde_json::to_vec(&j).unwrap())
                .err()
                .unwrap()
                .key
        };
        assert_eq!(key("format", "x/1"), "errors.wrap.format");
        assert_eq!(key("mechanism", "CKM_AES_GCM"), "errors.wrap.scheme");
        assert_eq!(key("id_hex", "0g"), "errors.wrap.id_not_hex");
        assert_eq!(key("wrapped", "not base64!"), "errors.not_base64");
        let e = parse_wrap(b"{").err().unwrap();
        assert_eq!(e.key, "errors.wrap.not_json");
        assert_eq!(
            e.text,
            serde_json::from_slice::<WrapFile>(b"{")
                .unwrap_err()
                .to_string()
        );
    }

    #[test]
    fn a_wrap_file_whose_id_is_not_hex_is_refused_before_the_token() {
        // A damaged `id_hex` was decoded with `unwrap_or_default()`: the key came back with
        // an empty CKA_ID, and no longer found by it.
        let f = WrapFile {
            format: WRAP_FORMAT.into(),
            mechanism: "CKM_AES_KEY_WRAP_KWP".into(),
            wrapping_key_fingerprint: "KCV:000000".into(),
            wrapping_key_label: "transport".into(),
            class: "SECRET_KEY".into(),
            key_type: CKK_AES,
            algorithm: "AES-256".into(),
            label: "data".into(),
            id_hex: "0a1B".into(),
            flags: vec![],
            kcv: None,
            public_key: None,
            wrapped: crate::admin::keys::base64_encode(&[7; 40]),
        };
        let json = |id: &str| {
            let mut f = f.clone();
            f.id_hex = id.into();
            serde_json::to_vec(&f).unwrap()
        };
        let p = parse_wrap(&json("0a1B")).unwrap();
        assert_eq!(p.id, [0x0a, 0x1b]);
        assert_eq!(p.scheme, Scheme::Kwp);
        // A key without an ID has none in the file either.
        assert!(parse_wrap(&json("")).unwrap().id.is_empty());
        for bad in ["0g", "abc", "0a 1b", "0x0a", "é0"] {
            let e = parse_wrap_file(&json(bad)).unwrap_err();
            assert!(
                e.starts_with(&format!("the key's ID '{bad}' is not hexadecimal")),
                "{bad}: {e}"
            );
        }
    }
}
