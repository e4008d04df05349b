//! Signing release artifacts with an HSM key, and verifying signatures offline.
//!
//! - [`batch`]: a batch as a pipeline of named steps — validate, hash, write-ahead record,
//!   then per file sign → verify → write outputs → record, then the manifest and the public
//!   key. One pool job per file, so a crash loses at most the file in flight.
//! - [`formats`]: what each output format makes of one file's signatures (CMS, raw, JSON
//!   bundle); a new format is one more [`formats::Format`].
//! - [`key`]: the signing key, its public half and its certificate on the token.
//! - [`certificates`]: self-signed certificates and CSRs made with the HSM key.
//! - [`chain`]: certificate chain files given at signing time, checked before signing.
//! - [`manifest`]: the signed `SHA256SUMS` of a batch (and `SHA256SUMS.asc` with OpenPGP).
//! - [`openpgp`], [`minisign`], [`ssh`]: those formats, the key's OpenPGP creation time and
//!   certificate, its `minisign.pub`; apt's `InRelease` and `Release.gpg` are OpenPGP's.
//! - [`timestamp`]: RFC 3161 time-stamps from a TSA over CMS and bundle signatures.
//! - [`restamp`]: a time-stamp added to a CMS or bundle signature made earlier.
//! - [`verify`]: offline verification with the software verifiers.
//! - [`kit`]: a verifier kit for a signed batch — keys, signatures, `VERIFY.md`, `verify.sh`.

pub(crate) use crate::core::error::{hsm_side, sign_error};

mod batch;
mod certificates;
mod chain;
pub mod formats;
mod inputs;
pub(crate) mod key;
mod kit;
mod manifest;
mod minisign;
mod openpgp;
mod openpgp_payload;
mod payload;
mod restamp;
mod ssh;
mod stamping;
mod stateful;
mod succession;
pub mod timestamp;
pub mod uris;
mod verify;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use signing::alg::SigAlg;

use crate::core::error::ApiError;
use crate::core::i18n::Text;

crate::core::domain_service!(
    /// Signing, as a service over the core (`Console::signing`).
    Signing
);

pub use batch::{ContextPinAsk, ContextPins};
pub use certificates::CertificateView;
pub use inputs::input_problem;
pub use kit::{KitCheck, KitRequest, KitView};
pub use minisign::MinisignPublicKey;
pub use openpgp::{check_openpgp_user_id, OpenPgpCertificate, OpenPgpKeyView};
pub use openpgp_payload::{openpgp_key_ref, OpenPgpPayloadSignature, OpenPgpSigner};
pub use restamp::RestampReport;
pub use ssh::{AllowedSigner, SshPublicKey, SshSignature};
pub use succession::{SuccessionMade, SuccessionRequest};

/// The formats an officer can ask for, per file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SignFormat {
    /// Detached CMS `.p7s` with the signer's certificate.
    Cms,
    /// Raw `.sig` and the public key as PEM.
    Raw,
    /// JSON bundle `.sig.json`.
    Bundle,
    /// OpenPGP detached signature, ASCII-armored `.asc` (Ed25519, ECDSA, RSA keys); for a
    /// file named `Release`, `Release.gpg` as apt reads it.
    Openpgp,
    /// OpenPGP detached signature, binary `.gpg`.
    OpenpgpBinary,
    /// OpenPGP cleartext-signed text (`gpg --clearsign`; text files only): `InRelease` for a
    /// file named `Release` (apt), `FILE.clearsigned` for any other.
    OpenpgpCleartext,
    /// minisign `.minisig` (Ed25519 keys).
    Minisign,
    /// SSH signature `.sshsig` (SSHSIG, namespace `file`; Ed25519 and ECDSA P-256 keys).
    Sshsig,
}

hsm::wire_display!(SignFormat);

impl SignFormat {
    /// What the output's name adds to the artifact's.
    pub fn suffix(self) -> &'static str {
        self.format().suffix()
    }

    /// An OpenPGP format (the key's OpenPGP creation time is fixed for it; the kit carries
    /// the OpenPGP certificate).
    pub fn is_openpgp(self) -> bool {
        matches!(
            self,
            SignFormat::Openpgp | SignFormat::OpenpgpBinary | SignFormat::OpenpgpCleartext
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum OnError {
    Stop,
    Continue,
}

/// How a batch logs in for each signature of a key with `CKA_ALWAYS_AUTHENTICATE` (a
/// qualified-signature key, a Luna per-key authorization set-up): the token wants a
/// context-specific login (the PIN again) before every signature the key makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ContextLogin {
    /// The PIN is asked for each signature (`hsmc sign --context-login each`, at a
    /// terminal).
    PerSignature,
    /// The officer gives the PIN once and consents that it is used for every signature of
    /// this batch (`--context-login once`, the Sign view's consent box); the consent is
    /// recorded, with the key and the count, before anything is signed.
    OncePerBatch,
}

impl ContextLogin {
    /// As the trail and `hsmc` write it.
    pub fn as_str(self) -> &'static str {
        match self {
            ContextLogin::PerSignature => "per-signature",
            ContextLogin::OncePerBatch => "once-per-batch",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct SignRequest {
    /// The signing key: `id:HEX` (stable across reconnections), `label:NAME` or `handle:N`.
    pub key: String,
    /// More keys signing the same batch (dual signing, `hsmc sign --key A --key B`, the
    /// Sign view's "Also sign with"): one `.p7s` with a signer per key, and every other
    /// output once per key, named `FILE.<label stem><suffix>`.
    #[serde(default)]
    pub also_keys: Vec<String>,
    pub files: Vec<String>,
    pub formats: Vec<SignFormat>,
    /// Also write a `SHA256SUMS` of the batch and its raw signature.
    pub manifest: bool,
    /// Write outputs here instead of beside each file.
    pub out_dir: Option<String>,
    /// ML-DSA context string (raw and bundle formats; CMS requires none).
    pub context: Option<String>,
    pub on_error: OnError,
    /// Signing with an HSS key uses up one-time signatures: the officer confirms it.
    pub confirm_hss: bool,
    /// Time-stamp CMS and bundle signatures with this authority (`hsmc sign --tsa`);
    /// without it, the one in Settings → Timestamp authority when that is on.
    #[serde(default)]
    #[ts(optional)]
    pub timestamp: Option<crate::core::settings::TimestampAuthority>,
    /// Also write a verifier kit of the batch into a new folder (`hsmc sign --kit`, the
    /// Sign view's option); written only when every file was signed.
    #[serde(default)]
    #[ts(optional)]
    pub kit: Option<KitRequest>,
    /// Certificate chain files for CMS signatures (`hsmc sign --chain FILE`): PEM (one or
    /// more certificates), DER or PKCS#7, in any order; the issuers of the signer's
    /// certificate, and optionally that certificate itself. Checked before signing.
    #[serde(default)]
    pub chain: Vec<String>,
    /// For a key that wants the PIN for each signature (`CKA_ALWAYS_AUTHENTICATE`): how
    /// the batch logs in for them. Without it such a batch is refused before anything is
    /// signed.
    #[serde(default)]
    #[ts(optional)]
    pub context_login: Option<ContextLogin>,
}

/// A key the signing view can offer.
#[derive(Debug, Clone, Serialize, TS)]
pub struct SigningKeyView {
    pub handle: u64,
    pub label: String,
    pub id_hex: String,
    pub algorithm: String,
    pub scheme: SigAlg,
    pub fingerprint: String,
    pub hss_remaining: Option<u64>,
    pub hss_capacity: Option<String>,
    pub has_certificate: bool,
    /// The subject of the certificate CMS signatures carry.
    pub certificate_subject: Option<String>,
    /// Why that certificate should not sign code (expired, no digitalSignature key usage,
    /// no codeSigning EKU), shown before signing.
    pub certificate_warnings: Vec<String>,
    /// The same in a form each language translates.
    pub certificate_warnings_text: Vec<hsm::Text>,
    /// The key wants the PIN for each signature (`CKA_ALWAYS_AUTHENTICATE`): the batch
    /// dialog asks how ([`ContextLogin`]).
    pub always_authenticate: bool,
}

/// What an output file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum OutputKind {
    Cms,
    Raw,
    Bundle,
    /// The batch's `SHA256SUMS`.
    Manifest,
    /// The manifest's raw signature.
    ManifestSignature,
    /// The key's public half (PEM) beside raw signatures.
    PublicKey,
    Openpgp,
    OpenpgpBinary,
    Minisign,
    /// The batch's `SHA256SUMS.asc`, cleartext-signed with OpenPGP.
    ManifestCleartext,
    Sshsig,
    /// A key succession statement with its two signatures (in a verifier kit).
    Succession,
    /// A file cleartext-signed with OpenPGP: `InRelease`, `FILE.clearsigned`.
    OpenpgpCleartext,
}

hsm::wire_display!(OutputKind);

impl From<SignFormat> for OutputKind {
    fn from(f: SignFormat) -> Self {
        match f {
            SignFormat::Cms => OutputKind::Cms,
            SignFormat::Raw => OutputKind::Raw,
            SignFormat::Bundle => OutputKind::Bundle,
            SignFormat::Openpgp => OutputKind::Openpgp,
            SignFormat::OpenpgpBinary => OutputKind::OpenpgpBinary,
            SignFormat::Minisign => OutputKind::Minisign,
            SignFormat::Sshsig => OutputKind::Sshsig,
            SignFormat::OpenpgpCleartext => OutputKind::OpenpgpCleartext,
        }
    }
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct OutputView {
    pub format: OutputKind,
    pub path: String,
    /// Verified in software before it was written.
    pub verified: bool,
    /// The labels of the keys whose signatures it holds (a dual-signed `.p7s` has several;
    /// the `SHA256SUMS` itself none).
    pub signed_by: Vec<String>,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct FileOutcome {
    pub path: String,
    pub name: String,
    pub size: Option<u64>,
    pub sha256: Option<String>,
    pub outputs: Vec<OutputView>,
    pub error: Option<ApiError>,
    /// Signed, but without the time-stamp asked for: why (the TSA was optional and failed).
    pub unstamped: Option<Text>,
    /// With several keys: the label of the key that could not sign the file (what the
    /// others signed for it was removed).
    pub failed_key: Option<String>,
}

/// One key of a batch and what it did.
#[derive(Debug, Clone, Serialize, TS)]
pub struct BatchKey {
    pub key: SigningKeyView,
    /// The formats it made: with several keys, a format only some of them can make
    /// (OpenPGP, minisign, SSHSIG) is made by those.
    pub formats: Vec<SignFormat>,
    /// What its outputs' names add before the format's suffix (`FILE.<stem>.sig`), with
    /// several keys; none for a single key (`FILE.sig`).
    pub name_stem: Option<String>,
    pub signatures_made: u64,
    pub hss_remaining_after: Option<u64>,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct SignReport {
    /// The first key (the request's `key`).
    pub key: SigningKeyView,
    /// Every key of the batch, the first one first (two or more when dual signing).
    pub keys: Vec<BatchKey>,
    pub files: Vec<FileOutcome>,
    pub manifest: Vec<OutputView>,
    pub manifest_error: Option<ApiError>,
    /// The batch stopped at the first failure (as asked).
    pub stopped: bool,
    pub cancelled: bool,
    /// The first key's HSS signatures left (each key's: `keys`).
    pub hss_remaining_after: Option<u64>,
    /// By every key together.
    pub signatures_made: u64,
    /// The verifier kit, when one was asked for and written.
    pub kit: Option<KitView>,
    /// Why the kit asked for was not written (the signatures are).
    pub kit_error: Option<ApiError>,
}

/// Progress of a batch, per file.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "stage", rename_all = "snake_case")]
pub enum SignProgress {
    Hashing { index: usize, done: u64, total: u64 },
    Signing { index: usize },
    Done { index: usize },
    Failed { index: usize, message: String },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::error::ErrorCode;
    use crate::core::i18n::Lang;
    use signing::SignError;

    #[test]
    fn a_signing_refusal_keeps_its_catalog_key_and_code() {
        let e = sign_error(signing::formats::Bundle::parse("{}").unwrap_err());
        assert_eq!(e.code, ErrorCode::Unsupported);
        assert!(
            e.message.starts_with("not a signature bundle: "),
            "{}",
            e.message
        );
        let key = e.i18n.as_ref().and_then(|i| i.message.clone());
        assert_eq!(key.as_deref(), Some("signing.not_a_bundle"));
        assert!(e.message_in(Lang::ZhHant).starts_with("不是簽章 JSON 包："));
        assert!(e.message_in(Lang::ZhHans).starts_with("不是签名 JSON 包："));

        let e = sign_error(SignError::Invalid(hsm::text!(
            "signing.minisign.does_not_verify",
            "the minisign signature does not verify: {{error}}",
            error = "bad"
        )));
        assert_eq!(e.code, ErrorCode::SignatureInvalid);
        assert_eq!(e.message, "the minisign signature does not verify: bad");
        assert_eq!(e.message_in(Lang::ZhHans), "minisign 签名未通过验证：bad");
    }

    #[test]
    fn a_refusal_inside_a_pool_job_keeps_its_key() {
        let file = "chain.pem";
        let e = signing::objects::parse_import(b"", file).unwrap_err();
        let api: ApiError = hsm_side(e).into();
        assert_eq!(api.code, ErrorCode::InvalidInput);
        assert_eq!(api.message, "chain.pem: the file is empty");
        assert_eq!(api.message_in(Lang::ZhHant), "chain.pem：檔案是空的");
    }

    #[test]
    fn a_time_stamp_failure_translates_with_its_reason() {
        let e = sign_error(SignError::Timestamp {
            tsa: "http://tsa.example/".into(),
            reason: signing::tsp::TspError::WrongNonce.msg(),
        });
        assert_eq!(e.code, ErrorCode::TimestampFailed);
        assert_eq!(
            e.message,
            "The time-stamp authority http://tsa.example/: the token does not echo the nonce that was sent. Nothing was written for this file."
        );
        assert_eq!(
            e.message_in(Lang::ZhHant),
            "時間戳記服務 http://tsa.example/：時間戳記權杖沒有回傳所送出的 nonce。此檔案未寫入任何內容。"
        );
        let hint = e.i18n.as_ref().and_then(|i| i.suggestion.clone());
        assert_eq!(hint.as_deref(), Some("hsm.console.timestamp_failed_hint"));

        // Two levels: the certificate's reason inside the TSA's reason inside the sentence.
        let e = sign_error(SignError::Timestamp {
            tsa: "http://tsa.example/".into(),
            reason: signing::tsp::TspError::Certificate(hsm::text!(
                "signing.tsp_certificate_eku_missing",
                "does not have the timeStamping extended key usage (alone)"
            ))
            .msg(),
        });
        assert!(
            e.message.contains(
                "the TSA's certificate does not have the timeStamping extended key usage (alone)."
            ),
            "{}",
            e.message
        );
        assert_eq!(
            e.message_in(Lang::ZhHans),
            "时间戳服务 http://tsa.example/：时间戳服务的证书没有（单独的）timeStamping 扩展密钥用法。此文件未写入任何内容。"
        );
    }

    #[test]
    fn a_failed_self_check_and_a_failed_write_keep_their_reasons_keys() {
        let e = sign_error(SignError::SelfCheck(hsm::text!(
            "signing.external_mu_signature_length",
            "the token's external-μ signature has {{got}} bytes, not {{want}}",
            got = 10,
            want = 2420
        )));
        assert_eq!(e.code, ErrorCode::SignatureInvalid);
        assert_eq!(
            e.message,
            "The HSM's signature did not verify in software (the token's external-μ signature has 10 bytes, not 2420); it was not written."
        );
        assert!(
            e.message_in(Lang::ZhHans)
                .contains("令牌生成的 external-μ 签名有 10 字节"),
            "{}",
            e.message_in(Lang::ZhHans)
        );
        let e = sign_error(SignError::Write {
            path: "/out/a.sig".into(),
            reason: hsm::text!("signing.disk_full", "the disk is full"),
        });
        assert_eq!(e.message, "Cannot write /out/a.sig: the disk is full.");
        assert_eq!(
            e.message_in(Lang::ZhHant),
            "無法寫入 /out/a.sig：磁碟已滿。"
        );
    }
}
