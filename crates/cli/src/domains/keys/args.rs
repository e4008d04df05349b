//! `hsmc keys …` on the command line.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use console::text;
use console::{ApiError, ApiResult, ErrorCode};
use hsm::algo::{HssParams, KeySpec, LmotsType, LmsType};
use hsm::pubkey::PublicKeyFormat;

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// List objects (public ones only unless a PIN is available).
    Ls,
    /// Every attribute of one key.
    Show {
        /// label:NAME, id:HEX, uid:UNIQUE-ID or handle:N
        key: String,
    },
    /// Generate a key.
    Gen(GenArgs),
    /// Delete a key (with --yes).
    ///
    /// A pair's public half is deleted with its private key.
    Rm {
        /// label:NAME, id:HEX or uid:UNIQUE-ID (`keys ls` shows them); not handle:N, which may
        /// name another object in another run
        key: String,
        /// Confirm the deletion.
        #[arg(long)]
        yes: bool,
    },
    /// A self-signed certificate for a key, or a signing request.
    Cert(CertArgs),
    /// Change a key's or object's attributes.
    ///
    /// Label, ID (the pair's other half and its certificates move along), dates, and the
    /// booleans PKCS#11 lets change.
    Set(SetArgs),
    /// Wrap an extractable key into a file (C_WrapKey).
    ///
    /// Wraps a secret or private key under another key on the token, into a file that
    /// records its attributes: under an AES key with AES key wrap with padding (RFC 5649);
    /// under an RSA key with RSA-OAEP (secret keys) or RSA-OAEP of an ephemeral AES key that
    /// wraps the key (private keys, CKM_RSA_AES_KEY_WRAP's layout).
    ///
    /// A key made with `keys gen --extractable` (CKA_WRAP_WITH_TRUSTED) is wrapped only under
    /// a wrapping key the security officer marked trusted (`hsmc --so keys set KEY --set
    /// trusted=true`). Any other extractable key could be wrapped under any wrapping key:
    /// add --confirm-untrusted to wrap it.
    Wrap {
        /// label:NAME, id:HEX or uid:UNIQUE-ID (`keys ls` shows them); not handle:N, which may
        /// name another object in another run
        key: String,
        /// The wrapping key: an AES key, an RSA key pair or an imported RSA public key.
        #[arg(long = "with")]
        with: String,
        #[arg(long, short)]
        out: PathBuf,
        /// RSA-OAEP's hash (default: sha1 on SoftHSM2, which has no other; sha256 elsewhere).
        /// Choose sha1 when the file is for a SoftHSM2 token.
        #[arg(long, value_enum)]
        oaep_hash: Option<OaepHashArg>,
        /// Wrap a key without CKA_WRAP_WITH_TRUSTED (made by another tool, or on a token
        /// without the attribute), which could be wrapped under any wrapping key, not only
        /// trusted ones.
        #[arg(long)]
        confirm_untrusted: bool,
    },
    /// Unwrap a wrap file with the matching key (C_UnwrapKey).
    ///
    /// The key is restored with the attributes the file records.
    Unwrap {
        file: PathBuf,
        /// The unwrapping key: the AES key, or the RSA private key.
        #[arg(long = "with")]
        with: String,
        /// A new label (default: the wrapped key's).
        #[arg(long)]
        label: Option<String>,
    },
    /// The key check value of an AES or generic secret key.
    ///
    /// The first 3 bytes of its CKA_CHECK_VALUE: AES-ECB of a zero block, or the SHA-1 of a
    /// generic secret.
    Kcv {
        /// label:NAME, id:HEX, uid:UNIQUE-ID or handle:N
        key: String,
    },
    /// An OpenPGP certificate for an Ed25519, ECDSA or RSA key.
    ///
    /// ASCII-armored: the user ID you give, self-signed by the HSM. The first one fixes the
    /// key's creation time on the token, so its fingerprint never changes.
    Openpgp {
        /// label:NAME, id:HEX or uid:UNIQUE-ID (`keys ls` shows them); not handle:N, which may
        /// name another object in another run
        key: String,
        /// The user ID, e.g. "Release Signing <release@example.org>" (one line).
        #[arg(long)]
        uid: String,
        /// Write it here (default: stdout).
        #[arg(long, short)]
        out: Option<PathBuf>,
    },
    /// A key succession statement: OLD vouches for NEW, and both sign it.
    ///
    /// Writes the JSON statement (both keys' labels, algorithms, fingerprints and public
    /// keys, --from and --until) to --out and, beside it, each key's raw signature
    /// (`OUT.<label>.sig`) and public key (`<label>.pub.pem`). Users who trust OLD check it
    /// with `hsmc verify OUT --pub OLD.pub.pem`. Nothing is left when either key cannot sign.
    Succession {
        /// The key being replaced: label:NAME, id:HEX or uid:UNIQUE-ID
        old: String,
        /// Its successor: label:NAME, id:HEX or uid:UNIQUE-ID
        new: String,
        /// Where the statement goes (refused when it exists).
        #[arg(long, short)]
        out: PathBuf,
        /// The day from which the new key signs releases (YYYY-MM-DD; default: today).
        #[arg(long, value_name = "DATE")]
        from: Option<String>,
        /// The day the transition ends: until then releases carry both signatures
        /// (YYYY-MM-DD).
        #[arg(long, value_name = "DATE")]
        until: Option<String>,
        /// Confirm signing with an HSS key (each signature uses up a one-time key for good).
        #[arg(long)]
        yes_hss: bool,
    },
    /// The minisign.pub of an Ed25519 key.
    MinisignPub {
        /// label:NAME, id:HEX, uid:UNIQUE-ID or handle:N
        key: String,
        /// Write it here (default: stdout).
        #[arg(long, short)]
        out: Option<PathBuf>,
    },
    /// The OpenSSH key line (or allowed_signers line) of an Ed25519 or ECDSA P-256 key.
    ///
    /// The line (`ssh-ed25519 AAAA… LABEL`) is what git's user.signingkey takes (for
    /// `hsmc git-ssh`); with --allowed-signers, the line for ssh-keygen -Y verify and git's
    /// gpg.ssh.allowedSignersFile (`EMAIL namespaces="git" ssh-ed25519 AAAA…`).
    SshPub {
        /// label:NAME, id:HEX, uid:UNIQUE-ID or handle:N
        key: String,
        /// Print the allowed_signers line of this principal (an e-mail address, usually the
        /// signer's user.email) instead of the public key line.
        #[arg(long, value_name = "EMAIL")]
        allowed_signers: Option<String>,
        /// The namespaces the allowed_signers line allows, comma-separated (git signs in
        /// `git`, `hsmc sign --format sshsig` in `file`).
        #[arg(
            long,
            value_name = "LIST",
            default_value = "git",
            requires = "allowed_signers"
        )]
        namespaces: String,
        /// The comment ending the public key line (default: the key's label).
        #[arg(long)]
        comment: Option<String>,
        /// Write it here (default: stdout).
        #[arg(long, short)]
        out: Option<PathBuf>,
    },
    /// Write a key's public half.
    ExportPub {
        key: String,
        #[arg(long, value_enum, default_value = "pem")]
        format: PubFormat,
        /// Output file (default: stdout; DER and raw only when stdout is not a terminal).
        #[arg(long, short)]
        out: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
pub struct GenArgs {
    /// ml-dsa-44|65|87, ml-kem-512|768|1024, slh-dsa-…, hss, ec-p256, ec-p384, ed25519,
    /// rsa-2048|3072|4096, aes-128|256, generic-secret
    #[arg(long, short)]
    pub algorithm: String,
    #[arg(long, short)]
    pub label: String,
    /// Keep the key on the token (a token object); otherwise it is a session object that
    /// ends with hsmc. Formerly --token, which is still accepted here (before the
    /// subcommand, --token LABEL selects the token).
    #[arg(long, alias = "token")]
    pub persistent: bool,
    /// HSS: LMS type per level, e.g. LMS_SHA256_M32_H5,LMS_SHA256_M32_H5; SHA-256/192 (RFC
    /// 9858): LMS_SHA256_M24_H5 … LMS_SHA256_M24_H25
    #[arg(long, value_delimiter = ',')]
    pub hss_lms: Vec<String>,
    /// HSS: LM-OTS type per level, e.g. LMOTS_SHA256_N32_W8,LMOTS_SHA256_N32_W8; with an M24
    /// level, LMOTS_SHA256_N24_W1 … LMOTS_SHA256_N24_W8 (a level's types hash alike)
    #[arg(long, value_delimiter = ',')]
    pub hss_lmots: Vec<String>,
    /// Extractable for backup only: the secret or private key may leave the token wrapped
    /// (`keys wrap`), never in the clear (it stays sensitive), and — where the token has
    /// CKA_WRAP_WITH_TRUSTED — only under a wrapping key the security officer marked trusted
    /// (`hsmc --so keys set KEY --set trusted=true`). Not for HSS keys, which never leave.
    #[arg(long)]
    pub extractable: bool,
    /// The private key wants the PIN again for each signature (CKA_ALWAYS_AUTHENTICATE, as
    /// qualified-signature keys do): `sign` then needs --context-login. Refused where the
    /// token cannot make such keys.
    #[arg(long)]
    pub always_authenticate: bool,
}

#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("change").required(true).multiple(true))]
pub struct SetArgs {
    /// label:NAME, id:HEX or uid:UNIQUE-ID (`keys ls` shows them); not handle:N, which may
    /// name another object in another run
    pub key: String,
    /// The new label.
    #[arg(long, group = "change")]
    pub label: Option<String>,
    /// The new CKA_ID (hex).
    #[arg(long, group = "change")]
    pub id: Option<String>,
    /// CKA_START_DATE, YYYY-MM-DD ("" clears it).
    #[arg(long, group = "change", value_name = "YYYY-MM-DD")]
    pub start_date: Option<String>,
    /// CKA_END_DATE, YYYY-MM-DD ("" clears it).
    #[arg(long, group = "change", value_name = "YYYY-MM-DD")]
    pub end_date: Option<String>,
    /// A boolean: sign|verify|encrypt|decrypt|wrap|unwrap|derive|sensitive|extractable|
    /// wrap_with_trusted|trusted =true|false (repeatable). Sensitive and wrap_with_trusted can
    /// be set, never unset; extractable unset, never set; trusted (may this key wrap keys
    /// that leave only under trusted keys) only by the security officer (--so), on its own.
    #[arg(long = "set", group = "change", value_name = "ATTR=VALUE")]
    pub set: Vec<String>,
}

#[derive(Debug, Args)]
pub struct CertArgs {
    /// label:NAME, id:HEX or uid:UNIQUE-ID (`keys ls` shows them); not handle:N, which may
    /// name another object in another run
    pub key: String,
    /// Issue a self-signed certificate (kept on the token next to the key unless --no-store).
    #[arg(long, conflicts_with = "csr", required_unless_present = "csr")]
    pub self_signed: bool,
    /// Create a PKCS#10 certificate signing request instead.
    #[arg(long)]
    pub csr: bool,
    /// Distinguished name, e.g. "CN=Release signing,O=Example".
    #[arg(long)]
    pub subject: String,
    /// Validity of a self-signed certificate, days.
    #[arg(long, default_value_t = 1095)]
    pub days: u32,
    /// Do not keep the certificate on the token.
    #[arg(long)]
    pub no_store: bool,
    /// Write the PEM here (default: stdout).
    #[arg(long, short)]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum PubFormat {
    Pem,
    Der,
    Raw,
}

impl From<PubFormat> for PublicKeyFormat {
    fn from(f: PubFormat) -> Self {
        match f {
            PubFormat::Pem => PublicKeyFormat::Pem,
            PubFormat::Der => PublicKeyFormat::Der,
            PubFormat::Raw => PublicKeyFormat::Raw,
        }
    }
}

/// The key `keys gen` asks for, and a warning worth showing before it is generated (a
/// large HSS tree takes long).
pub struct KeyRequest {
    pub spec: KeySpec,
    pub warning: Option<String>,
}

impl GenArgs {
    pub fn key_request(&self) -> ApiResult<KeyRequest> {
        if self.algorithm.eq_ignore_ascii_case("hss") {
            return self.hss_request();
        }
        let spec = KeySpec::parse(&self.algorithm).ok_or_else(|| {
            ApiError::new(ErrorCode::InvalidAlgorithm, text!("errors.unknown_algorithm", "Unknown algorithm '{{algorithm}}'.", algorithm = self.algorithm))
                .suggest(text!("errors.use_ml_dsa_ml_kem", "Use ml-dsa-44|65|87, ml-kem-512|768|1024, slh-dsa-…, hss, ec-p256, ec-p384, ed25519, rsa-2048|3072|4096, aes-128|256 or generic-secret."))
        })?;
        Ok(KeyRequest {
            spec,
            warning: None,
        })
    }

    fn hss_request(&self) -> ApiResult<KeyRequest> {
        if self.hss_lms.is_empty() || self.hss_lms.len() != self.hss_lmots.len() {
            return Err(ApiError::invalid(text!(
                "errors.hss_needs_one_hss_lms",
                "HSS needs one --hss-lms and one --hss-lmots entry per level (comma-separated)."
            )));
        }
        let mut levels = Vec::new();
        for (l, o) in self.hss_lms.iter().zip(&self.hss_lmots) {
            let l = LmsType::parse(l).ok_or_else(|| {
                ApiError::invalid(text!(
                    "errors.unknown_lms_type",
                    "unknown LMS type {{l}}",
                    l = l
                ))
            })?;
            let o = LmotsType::parse(o).ok_or_else(|| {
                ApiError::invalid(text!(
                    "errors.unknown_lm_ots_type",
                    "unknown LM-OTS type {{o}}",
                    o = o
                ))
            })?;
            levels.push((l, o));
        }
        let params = HssParams::new(levels).map_err(ApiError::invalid)?;
        Ok(KeyRequest {
            warning: params.keygen_warning(),
            spec: KeySpec::Hss { params },
        })
    }
}

/// RSA-OAEP's hash for `keys wrap`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum OaepHashArg {
    Sha1,
    Sha256,
}

impl From<OaepHashArg> for console::backup::OaepHash {
    fn from(h: OaepHashArg) -> Self {
        match h {
            OaepHashArg::Sha1 => console::backup::OaepHash::Sha1,
            OaepHashArg::Sha256 => console::backup::OaepHash::Sha256,
        }
    }
}
