//! A verifier kit: one folder a release's users can check its signatures with, using the
//! tools they already have. It holds the signer's public key in every format the key has
//! (PEM, the OpenPGP certificate, `minisign.pub`), the certificate CMS carries, the TSA's
//! CA, a copy of every signature of the batch, `VERIFY.md` naming the exact command that
//! checks each one, and `verify.sh` running them all (it stops at the first failure).
//!
//! The kit is assembled in a hidden folder beside the target and renamed into place at the
//! end: a folder under the asked name is complete, and an existing one is never touched.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use audit::Event;
use hsm::algo::Curve;
use serde::{Deserialize, Serialize};
use signing::alg::SigAlg;
use ts_rs::TS;

use super::key::{find_certificate, find_chain, key_material};
use super::{check_openpgp_user_id, OutputKind, SignFormat, SignReport, SigningKeyView};
use crate::core::error::{ApiError, ApiResult, ErrorCode};
use crate::sign::Signing;
use crate::text;
use signing::verify::succession::label_stem;

/// What the officer asks of a kit (`hsmc sign --kit DIR`, the Sign view's option).
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
pub struct KitRequest {
    /// The folder to create; it must not exist yet.
    pub dir: String,
    /// The user ID of the key's OpenPGP certificate: needed when the batch has OpenPGP
    /// signatures, and adds the certificate to the kit of any OpenPGP-capable key.
    #[serde(default)]
    #[ts(optional)]
    pub user_id: Option<String>,
    /// The PEM file of the CA the TSA's certificate chains to, copied into the kit.
    #[serde(default)]
    #[ts(optional)]
    pub tsa_ca: Option<String>,
    /// The ML-DSA context string the batch was signed with (raw and bundle formats).
    #[serde(default)]
    #[ts(optional)]
    pub context: Option<String>,
    /// A key succession statement (`hsmc keys succession`) naming the batch's key, copied
    /// into the kit with its two signatures and checked by `verify.sh`.
    #[serde(default)]
    #[ts(optional)]
    pub succession: Option<String>,
}

impl KitRequest {
    /// What can be refused before anything is signed: a folder that exists, OpenPGP
    /// signatures without a user ID for the certificate, a user ID on two lines, a TSA CA
    /// file that cannot be read.
    pub fn check_before_signing(&self, formats: &[SignFormat]) -> ApiResult<()> {
        let dir = Path::new(&self.dir);
        if dir.exists() {
            return Err(ApiError::invalid(text!(
                "errors.kit_folder_exists",
                "{{dir}} already exists; the kit is written only to a new folder.",
                dir = dir.display()
            ))
            .suggest(text!(
                "errors.kit_choose_new_folder",
                "Choose a folder that does not exist yet."
            )));
        }
        let openpgp = formats.iter().any(|f| f.is_openpgp());
        match &self.user_id {
            Some(uid) => check_openpgp_user_id(uid)?,
            None if openpgp => {
                return Err(ApiError::invalid(text!(
                    "errors.kit_needs_user_id",
                    "The batch has OpenPGP signatures, and the kit's OpenPGP certificate needs a user ID."
                ))
                .suggest(text!(
                    "errors.kit_give_user_id",
                    "Give it as Name <address> (hsmc sign --kit DIR --uid …, or the Sign view's field)."
                )));
            }
            None => {}
        }
        if let Some(f) = &self.tsa_ca {
            std::fs::metadata(f).map_err(|e| {
                ApiError::invalid(text!(
                    "errors.kit_tsa_ca_unreadable",
                    "Cannot read the TSA's CA file {{file}}: {{reason}}.",
                    file = f,
                    reason = e
                ))
            })?;
        }
        Ok(())
    }
}

/// One check of the kit: which signature, with which tool, how.
#[derive(Debug, Clone, Serialize, TS)]
pub struct KitCheck {
    /// The artifact (or `SHA256SUMS`) the signature is over.
    pub subject: String,
    pub format: OutputKind,
    /// The program that checks it (`openssl`, `gpg`, `minisign`, `sha256sum`, `hsmc`).
    pub tool: String,
    /// The command as `VERIFY.md` shows it: run in the kit, the artifacts one folder up.
    pub command: String,
}

/// A written kit.
#[derive(Debug, Clone, Serialize, TS)]
pub struct KitView {
    pub dir: String,
    /// Every file of the kit, relative to it.
    pub files: Vec<String>,
    pub checks: Vec<KitCheck>,
}

/// One argument of a check's command: literal, a file of the kit, or an artifact.
#[derive(Debug, Clone, PartialEq)]
enum Arg {
    Lit(&'static str),
    Text(String),
    Kit(String),
    Artifact(String),
    /// The artifacts' folder itself.
    Artifacts,
}

/// A check before it is rendered for `VERIFY.md` and `verify.sh`.
#[derive(Debug, Clone)]
struct Check {
    subject: String,
    format: OutputKind,
    program: &'static str,
    args: Vec<Arg>,
    /// Run in the artifacts' folder (`sha256sum --check`).
    in_artifacts: bool,
}

/// POSIX shell quoting: bare when it is safe, single-quoted otherwise.
fn quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:@%+,".contains(&b));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

impl Check {
    /// As `VERIFY.md` shows it: run in the kit's folder, the artifacts in its parent.
    fn for_reader(&self) -> String {
        let args: Vec<String> = self
            .args
            .iter()
            .map(|a| match a {
                Arg::Lit(s) => s.to_string(),
                Arg::Text(s) => quote(s),
                Arg::Kit(p) if self.in_artifacts => format!("\"$OLDPWD\"/{}", quote(p)),
                Arg::Kit(p) => quote(p),
                Arg::Artifact(n) if self.in_artifacts => quote(n),
                Arg::Artifact(n) => format!("../{}", quote(n)),
                Arg::Artifacts if self.in_artifacts => ".".into(),
                Arg::Artifacts => "..".into(),
            })
            .collect();
        let cmd = format!("{} {}", self.program, args.join(" "));
        if self.in_artifacts {
            format!("(cd .. && {cmd})")
        } else {
            cmd
        }
    }

    /// As `verify.sh` runs it: `$kit` and `$artifacts` are absolute.
    fn for_script(&self) -> String {
        let args: Vec<String> = self
            .args
            .iter()
            .map(|a| match a {
                Arg::Lit(s) => s.to_string(),
                Arg::Text(s) => quote(s),
                Arg::Kit(p) => format!("\"$kit\"/{}", quote(p)),
                Arg::Artifact(n) => format!("\"$artifacts\"/{}", quote(n)),
                Arg::Artifacts => "\"$artifacts\"".into(),
            })
            .collect();
        let program = match self.program {
            "hsmc" => "\"$hsmc\"",
            p => p,
        };
        let cmd = format!("{program} {}", args.join(" "));
        if self.in_artifacts {
            format!("sh -c 'cd \"$1\" && shift && exec \"$@\"' sh \"$artifacts\" {cmd}")
        } else {
            cmd
        }
    }
}

/// The principal the kit's `keys/allowed_signers` names the key by (`ssh-keygen -I`).
const KIT_SSH_PRINCIPAL: &str = "release-signer";

/// A signer's key as the kit needs it.
struct KitKey {
    label: String,
    /// As the key list shows it.
    algorithm: String,
    alg: SigAlg,
    public_pem: String,
    certificate_pem: Option<String>,
    /// Where its public material is in the kit: `keys` for the only key of a batch,
    /// `keys/<label stem>` for each of several.
    dir: String,
}

impl KitKey {
    /// One of its files in the kit (`public.pem`, `certificate.pem`, …).
    fn file(&self, name: &str) -> Arg {
        Arg::Kit(format!("{}/{name}", self.dir))
    }

    /// What `hsmc verify --context` gets: the batch's context, for ML-DSA keys only.
    fn context<'a>(&self, context: Option<&'a str>) -> Option<&'a str> {
        context.filter(|_| matches!(self.alg, SigAlg::MlDsa { .. } | SigAlg::Hss))
    }
}

/// The check of a raw signature over `content` (an artifact or the kit's `SHA256SUMS`):
/// Debian's OpenSSL for the classical schemes, `hsmc verify` for ML-DSA, SLH-DSA and HSS
/// (OpenSSL 3.0 has none of them).
fn raw_check(
    k: &KitKey,
    subject: &str,
    format: OutputKind,
    sig: Arg,
    content: Arg,
    context: Option<&str>,
) -> Check {
    let alg = k.alg;
    let key = || k.file("public.pem");
    let dgst = |hash: &'static str, extra: &[&'static str]| {
        let mut a = vec![Arg::Lit("dgst"), Arg::Lit(hash)];
        a.extend(extra.iter().map(|s| Arg::Lit(s)));
        a.extend([
            Arg::Lit("-verify"),
            key(),
            Arg::Lit("-signature"),
            sig.clone(),
            content.clone(),
        ]);
        a
    };
    let (program, args) = match alg {
        SigAlg::Ecdsa { curve: Curve::P384 } => ("openssl", dgst("-sha384", &[])),
        SigAlg::Ecdsa { .. } => ("openssl", dgst("-sha256", &[])),
        SigAlg::RsaPss => (
            "openssl",
            dgst(
                "-sha256",
                &[
                    "-sigopt",
                    "rsa_padding_mode:pss",
                    "-sigopt",
                    "rsa_pss_saltlen:32",
                ],
            ),
        ),
        SigAlg::Ed25519 => (
            "openssl",
            vec![
                Arg::Lit("pkeyutl"),
                Arg::Lit("-verify"),
                Arg::Lit("-pubin"),
                Arg::Lit("-inkey"),
                key(),
                Arg::Lit("-rawin"),
                Arg::Lit("-in"),
                content.clone(),
                Arg::Lit("-sigfile"),
                sig.clone(),
            ],
        ),
        SigAlg::MlDsa { .. } | SigAlg::SlhDsa { .. } | SigAlg::Hss => {
            ("hsmc", hsmc_verify(content, sig, key(), k.context(context)))
        }
    };
    Check {
        subject: subject.to_string(),
        format,
        program,
        args,
        in_artifacts: false,
    }
}

/// `hsmc verify CONTENT --sig SIG --pub KEY [--context C]`: for what no standard tool reads.
fn hsmc_verify(content: Arg, sig: Arg, key: Arg, context: Option<&str>) -> Vec<Arg> {
    let mut a = vec![
        Arg::Lit("verify"),
        content,
        Arg::Lit("--sig"),
        sig,
        Arg::Lit("--pub"),
        key,
    ];
    if let Some(c) = context {
        a.extend([Arg::Lit("--context"), Arg::Text(c.to_string())]);
    }
    a
}

/// Every signature of the batch copied into the kit (`signatures/NAME`), and the checks that
/// verify it with the key (or keys) that made it; two signatures of one name are refused (a
/// kit holds each once).
fn signatures(
    report: &SignReport,
    keys: &[KitKey],
    req: &KitRequest,
    files: &mut Vec<(String, Vec<u8>)>,
) -> ApiResult<Vec<Check>> {
    let mut checks = Vec::new();
    let mut names = BTreeSet::new();
    let outputs = report
        .files
        .iter()
        .filter(|f| f.error.is_none())
        .flat_map(|f| f.outputs.iter().map(move |o| (f.name.clone(), o)))
        .chain(
            report
                .manifest
                .iter()
                .map(|o| ("SHA256SUMS".to_string(), o)),
        );
    for (subject, o) in outputs {
        if o.format == OutputKind::PublicKey {
            continue;
        }
        let path = Path::new(&o.path);
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !names.insert(name.clone()) {
            return Err(ApiError::invalid(text!(
                "errors.kit_same_name",
                "Two signatures of the batch are named {{name}}; a kit holds each once.",
                name = name
            ))
            .suggest(text!(
                "errors.kit_sign_different_names",
                "Sign files with different names into one kit."
            )));
        }
        let bytes = std::fs::read(path).map_err(|e| kit_read_error(path, e))?;
        files.push((format!("signatures/{name}"), bytes));
        let signers: Vec<&KitKey> = keys
            .iter()
            .filter(|k| o.signed_by.contains(&k.label))
            .collect();
        let context = req.context.as_deref();
        match signers.as_slice() {
            [_, _, ..] if o.format == OutputKind::Cms => {
                checks.extend(cms_signer_checks(&signers, &subject, &name));
            }
            [] => checks.extend(checks_for(&keys[0], &subject, o.format, &name, context)),
            some => {
                for k in some {
                    checks.extend(checks_for(k, &subject, o.format, &name, context));
                }
            }
        }
    }
    Ok(checks)
}

/// A `.p7s` with a signer per key (dual signing): each signer checked by `hsmc verify`
/// pinned to that key's certificate. (`openssl cms -verify` checks every signer at once, so
/// it needs an OpenSSL that knows every algorithm; Debian 12's 3.0 knows no ML-DSA.)
fn cms_signer_checks(signers: &[&KitKey], subject: &str, sig: &str) -> Vec<Check> {
    signers
        .iter()
        .map(|k| Check {
            subject: subject.to_string(),
            format: OutputKind::Cms,
            program: "hsmc",
            args: hsmc_verify(
                Arg::Artifact(subject.to_string()),
                Arg::Kit(format!("signatures/{sig}")),
                k.file("certificate.pem"),
                None,
            ),
            in_artifacts: false,
        })
        .collect()
}

/// The checks of one signature file `sig` (its name in the kit) over `subject`.
fn checks_for(
    key: &KitKey,
    subject: &str,
    format: OutputKind,
    sig: &str,
    context: Option<&str>,
) -> Vec<Check> {
    let sig_arg = || Arg::Kit(format!("signatures/{sig}"));
    let art = || Arg::Artifact(subject.to_string());
    let check = |program, args| Check {
        subject: subject.to_string(),
        format,
        program,
        args,
        in_artifacts: false,
    };
    match format {
        OutputKind::Cms => match key.alg {
            // Debian 12's OpenSSL 3.0 verifies classical CMS; for Ed25519 it hands EdDSA the
            // SHA-512 digest algorithm and fails, and it knows neither ML-DSA nor HSS.
            SigAlg::Ecdsa { .. } | SigAlg::RsaPss => vec![check(
                "openssl",
                vec![
                    Arg::Lit("cms"),
                    Arg::Lit("-verify"),
                    Arg::Lit("-binary"),
                    Arg::Lit("-inform"),
                    Arg::Lit("DER"),
                    Arg::Lit("-in"),
                    sig_arg(),
                    Arg::Lit("-content"),
                    art(),
                    Arg::Lit("-CAfile"),
                    key.file("certificate.pem"),
                    Arg::Lit("-partial_chain"),
                    Arg::Lit("-purpose"),
                    Arg::Lit("any"),
                    Arg::Lit("-out"),
                    Arg::Lit("/dev/null"),
                ],
            )],
            _ => vec![check(
                "hsmc",
                hsmc_verify(art(), sig_arg(), key.file("certificate.pem"), None),
            )],
        },
        OutputKind::Raw => vec![raw_check(key, subject, format, sig_arg(), art(), context)],
        OutputKind::ManifestSignature => {
            let mut c = raw_check(
                key,
                subject,
                format,
                sig_arg(),
                Arg::Kit("signatures/SHA256SUMS".into()),
                None,
            );
            // `hsmc verify` checks the files a SHA256SUMS lists too: they are the artifacts.
            if c.program == "hsmc" {
                c.args.extend([Arg::Lit("--files"), Arg::Artifacts]);
            }
            vec![c]
        }
        OutputKind::Bundle => vec![check(
            "hsmc",
            hsmc_verify(
                art(),
                sig_arg(),
                key.file("public.pem"),
                key.context(context),
            ),
        )],
        OutputKind::Openpgp | OutputKind::OpenpgpBinary => vec![check(
            "gpg",
            vec![Arg::Lit("--batch"), Arg::Lit("--verify"), sig_arg(), art()],
        )],
        // The message carries the text it signs (SHA256SUMS, apt's InRelease).
        OutputKind::ManifestCleartext | OutputKind::OpenpgpCleartext => vec![check(
            "gpg",
            vec![Arg::Lit("--batch"), Arg::Lit("--verify"), sig_arg()],
        )],
        OutputKind::Minisign => vec![check(
            "minisign",
            vec![
                Arg::Lit("-V"),
                Arg::Lit("-m"),
                art(),
                Arg::Lit("-x"),
                sig_arg(),
                Arg::Lit("-p"),
                key.file("minisign.pub"),
            ],
        )],
        // ssh-keygen reads the artifact on its standard input.
        OutputKind::Sshsig => vec![check(
            "ssh-keygen",
            vec![
                Arg::Lit("-Y"),
                Arg::Lit("verify"),
                Arg::Lit("-f"),
                key.file("allowed_signers"),
                Arg::Lit("-I"),
                Arg::Lit(KIT_SSH_PRINCIPAL),
                Arg::Lit("-n"),
                Arg::Lit("file"),
                Arg::Lit("-s"),
                sig_arg(),
                Arg::Lit("<"),
                art(),
            ],
        )],
        OutputKind::Manifest => vec![Check {
            subject: subject.to_string(),
            format,
            program: "sha256sum",
            args: vec![
                Arg::Lit("--check"),
                Arg::Lit("--strict"),
                Arg::Kit(format!("signatures/{sig}")),
            ],
            in_artifacts: true,
        }],
        // The kit carries the key itself (keys/public.pem); a succession statement is not
        // an output of the batch (its check is `succession_files`').
        OutputKind::PublicKey | OutputKind::Succession => Vec::new(),
    }
}

/// A file the kit should carry (a signature, a succession statement) cannot be read.
fn kit_read_error(path: &Path, e: impl std::fmt::Display) -> ApiError {
    ApiError::new(
        ErrorCode::Io,
        text!(
            "errors.kit_cannot_read",
            "The verifier kit cannot be made: {{path}}, which it should carry, cannot be read: {{reason}}.",
            path = path.display(),
            reason = e
        ),
    )
    .details(text!(
        "errors.kit_nothing_written",
        "Nothing was written under the kit's name."
    ))
}

fn kit_error(what: &str, path: &Path, e: impl std::fmt::Display) -> ApiError {
    ApiError::new(
        ErrorCode::Io,
        text!(
            "errors.kit_cannot_write",
            "Cannot write the verifier kit ({{step}} {{path}}): {{reason}}.",
            step = what,
            path = path.display(),
            reason = e
        ),
    )
    .details(text!(
        "errors.kit_nothing_written",
        "Nothing was written under the kit's name."
    ))
}

/// A key succession statement naming the batch's key `pk`, checked (both signatures) before
/// it is copied with them into `succession/`; the check `verify.sh` runs on it. The kit
/// cannot pin the old key (it would vouch for itself): `VERIFY.md` says to add `--pub` with
/// the old key the reader already trusts.
fn succession_files(
    statement: &Path,
    pks: &[hsm::pubkey::PublicKey],
    files: &mut Vec<(String, Vec<u8>)>,
) -> ApiResult<Check> {
    use signing::verify::succession;
    let not_usable = |why: crate::core::i18n::Text| {
        ApiError::invalid(text!(
            "errors.kit_succession_unusable",
            "The key succession statement {{file}} cannot go into the kit: {{why}}",
            file = statement.display(),
            why = &why
        ))
    };
    let report = succession::verify(statement, None)
        .map_err(super::sign_error)?
        .ok_or_else(|| {
            not_usable(text!(
                "errors.kit_succession_not_a_statement",
                "it is not one."
            ))
        })?;
    if !report.valid {
        return Err(not_usable(text!(
            "errors.kit_succession_invalid",
            "it does not verify ({{detail}}).",
            detail = &report.detail
        )));
    }
    let bytes = std::fs::read(statement).map_err(|e| kit_read_error(statement, e))?;
    let st = succession::Statement::parse(&bytes).expect("checked above");
    if ![&st.old, &st.new]
        .iter()
        .any(|k| pks.iter().any(|pk| k.fingerprint == pk.fingerprint()))
    {
        return Err(not_usable(text!(
            "errors.kit_succession_other_keys",
            "it names neither the key that signed the batch nor its successor."
        )));
    }
    let name = statement
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "succession.json".into());
    files.push((format!("succession/{name}"), bytes));
    for k in [&st.old, &st.new] {
        let sig = succession::signature_path(statement, &k.label);
        let sig_name = sig
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let bytes = std::fs::read(&sig).map_err(|e| kit_read_error(&sig, e))?;
        files.push((format!("succession/{sig_name}"), bytes));
    }
    Ok(Check {
        subject: name.clone(),
        format: OutputKind::Succession,
        program: "hsmc",
        args: vec![Arg::Lit("verify"), Arg::Kit(format!("succession/{name}"))],
        in_artifacts: false,
    })
}

/// `verify.sh`: every check, in order, stopping at the first failure; first the OpenPGP
/// certificates (`openpgp`: their paths in the kit) imported into a keyring of its own.
fn script(checks: &[Check], openpgp: &[String]) -> String {
    let mut s = String::from(
        "#!/bin/sh\n\
         # Checks every signature of this verifier kit with standard tools and stops at the\n\
         # first failure (exit 1). Usage: ./verify.sh [FOLDER WITH THE ARTIFACTS]  (default: ..)\n\
         set -u\n\
         kit=$(cd \"$(dirname \"$0\")\" && pwd)\n\
         artifacts=$(cd \"${1:-$kit/..}\" && pwd) || { echo \"no folder ${1:-$kit/..}\" >&2; exit 2; }\n\
         hsmc=${HSMC:-hsmc}\n\
         work=$(mktemp -d) || exit 2\n\
         trap '[ -n \"${own_gnupg:-}\" ] && gpgconf --kill all >/dev/null 2>&1; rm -rf \"$work\"' EXIT\n\
         check() {\n  what=$1; shift\n  if \"$@\" >\"$work/out\" 2>&1; then echo \"ok    $what\"\n  \
         else echo \"FAIL  $what\"; echo \"      $*\"; sed 's/^/      /' \"$work/out\"; exit 1; fi\n}\n",
    );
    if !openpgp.is_empty() {
        s.push_str(
            "GNUPGHOME=\"$work/gnupg\"; export GNUPGHOME; own_gnupg=1\n\
             mkdir -m 700 \"$GNUPGHOME\"\n",
        );
    }
    for cert in openpgp {
        let _ = writeln!(
            s,
            // A label stem holds letters, digits, - and _ only: safe in double quotes.
            "check \"import {cert}\" gpg --batch --import \"$kit/{cert}\""
        );
    }
    for c in checks {
        let what = format!("{} ({}, {})", c.subject, c.format, c.program);
        let _ = writeln!(s, "check {} {}", quote(&what), c.for_script());
    }
    s.push_str("echo \"all signatures verify\"\n");
    s
}

/// `VERIFY.md`: what is in the kit and, per file and format, the command that checks it.
fn readme(keys: &[KitKey], files: &[String], checks: &[Check], openpgp: &[OpenPgpInKit]) -> String {
    let signed_with = match keys {
        [k] => format!("the HSM key `{}` ({})", k.label, k.algorithm),
        _ => {
            let each: Vec<String> = keys
                .iter()
                .map(|k| format!("`{}` ({})", k.label, k.algorithm))
                .collect();
            format!(
                "the HSM keys {} (each key's public material in `keys/LABEL/`)",
                each.join(" and ")
            )
        }
    };
    let mut s = format!(
        "# Verifying these signatures\n\n\
         Signed with {signed_with}. Run `./verify.sh` to check all of them\n\
         (it stops at the first failure), or the commands below one by one, in this folder\n\
         with the artifacts in the folder above it (`./verify.sh DIR` if they are elsewhere).\n\n\
         ## Files\n\n"
    );
    for f in files {
        let in_keys = f
            .strip_prefix("keys/")
            .map(|rest| rest.rsplit('/').next().unwrap_or(rest));
        let what = match in_keys.unwrap_or(f.as_str()) {
            "public.pem" if in_keys.is_some() => "the public key (SubjectPublicKeyInfo, PEM)",
            "certificate.pem" if in_keys.is_some() => {
                "the signer's certificate and its issuers, as CMS signatures carry them"
            }
            "openpgp.asc" if in_keys.is_some() => "the OpenPGP certificate",
            "minisign.pub" if in_keys.is_some() => "the minisign public key",
            "allowed_signers" if in_keys.is_some() => {
                "the SSH public key as ssh-keygen -Y verify reads it"
            }
            "tsa-ca.pem" if in_keys.is_some() => {
                "the CA of the time-stamp authority (`openssl ts -verify -CAfile`)"
            }
            "VERIFY.md" | "verify.sh" => continue,
            f if f.starts_with("succession/") && f.ends_with(".sig") => {
                "a key's signature over the key succession statement"
            }
            f if f.starts_with("succession/") => {
                "the key succession statement (`hsmc keys succession`)"
            }
            _ => "a signature",
        };
        let _ = writeln!(s, "- `{f}`: {what}");
    }
    match openpgp {
        [one] if keys.len() == 1 => {
            let _ = writeln!(s, "\nOpenPGP fingerprint: `{}`.", one.fingerprint);
        }
        some => {
            for c in some {
                let _ = writeln!(
                    s,
                    "\nOpenPGP fingerprint of `{}`: `{}`.",
                    c.label, c.fingerprint
                );
            }
        }
    }
    s.push_str("\n## Checks\n\n");
    match openpgp {
        [] => {}
        [one] => {
            let _ = writeln!(
                s,
                "OpenPGP checks need the certificate in a keyring first: \
                 `gpg --import {0}` (or, with Sequoia, \
                 `sq verify --signer-cert {0} --detached SIG FILE`).\n",
                one.path
            );
        }
        some => {
            let paths: Vec<&str> = some.iter().map(|c| c.path.as_str()).collect();
            let _ = writeln!(
                s,
                "OpenPGP checks need the certificates in a keyring first: \
                 `gpg --import {}` (or, with Sequoia, \
                 `sq verify --signer-cert CERTIFICATE --detached SIG FILE`).\n",
                paths.join(" ")
            );
        }
    }
    for c in checks {
        let _ = writeln!(
            s,
            "- {} ({}, {}):\n\n  ```sh\n  {}\n  ```\n",
            c.subject,
            c.format,
            c.program,
            c.for_reader()
        );
    }
    if checks.iter().any(|c| c.format == OutputKind::Succession) {
        s.push_str(
            "The key succession statement's check shows that both keys signed it. That it \
             comes from the key you already trust is known only when you name that key: add \
             `--pub OLD-KEY.pem` with the copy of the old key you have (not one from this kit).\n\n",
        );
    }
    if keys.len() > 1 && checks.iter().any(|c| c.format == OutputKind::Cms) {
        s.push_str(
            "A `.p7s` holds one signer per key; each is checked with `hsmc verify --pub` naming \
             that key's certificate. `openssl cms -verify` checks every signer at once, so it \
             needs an OpenSSL that knows every algorithm (Debian 12's OpenSSL 3.0 knows no \
             ML-DSA, and fails on Ed25519 in CMS).\n\n",
        );
    }
    if checks.iter().any(|c| c.program == "hsmc") {
        s.push_str(
            "`hsmc verify` checks what no tool of Debian 12 does (ML-DSA and HSS signatures, \
             Ed25519 in CMS, the JSON bundle); OpenSSL 3.5 and later verify ML-DSA too.\n",
        );
    }
    s
}

/// A key's OpenPGP certificate in the kit.
struct OpenPgpInKit {
    label: String,
    fingerprint: String,
    /// Its path in the kit.
    path: String,
}

/// A signer's certificate and its issuers (DER, nearest first).
type Certificates = (Vec<u8>, Vec<Vec<u8>>);

impl Signing<'_> {
    /// The kit a batch asked for, into its report: written when every file was signed (a
    /// kit of part of a batch would tell its readers less than it seems to), else why not.
    pub(super) async fn attach_kit(
        self,
        partition: &str,
        report: &mut SignReport,
        kit: &KitRequest,
        certificates: Vec<Option<Certificates>>,
    ) {
        let whole = !report.cancelled
            && report.manifest_error.is_none()
            && report.files.iter().all(|f| f.error.is_none());
        if !whole {
            report.kit_error = Some(ApiError::invalid(text!(
                "errors.kit_not_every_file",
                "The verifier kit was not written: not every file was signed."
            )));
            return;
        }
        match self.write_kit(partition, report, kit, certificates).await {
            Ok(v) => report.kit = Some(v),
            Err(e) => report.kit_error = Some(e),
        }
    }

    /// Write a verifier kit for a signed batch (see the module's documentation). The
    /// OpenPGP certificate, when the kit has one, is made by the HSM and recorded as
    /// `openpgp.cert`; the kit itself is recorded as `sign.kit`.
    pub async fn write_verifier_kit(
        self,
        partition: &str,
        report: &SignReport,
        req: &KitRequest,
    ) -> ApiResult<KitView> {
        self.write_kit(partition, report, req, Vec::new()).await
    }

    /// As [`crate::sign::Signing::write_verifier_kit`], with each key's certificate and chain the batch
    /// used (a chain given at signing time) instead of the token's, in the order of
    /// `report.keys`.
    async fn write_kit(
        self,
        partition: &str,
        report: &SignReport,
        req: &KitRequest,
        certificates: Vec<Option<Certificates>>,
    ) -> ApiResult<KitView> {
        let dir = PathBuf::from(&req.dir);
        let kinds: Vec<OutputKind> = report
            .files
            .iter()
            .flat_map(|f| f.outputs.iter())
            .chain(report.manifest.iter())
            .map(|o| o.format)
            .collect();
        let formats: Vec<SignFormat> = kinds
            .iter()
            .filter_map(|k| match k {
                OutputKind::Openpgp | OutputKind::ManifestCleartext => Some(SignFormat::Openpgp),
                OutputKind::OpenpgpBinary => Some(SignFormat::OpenpgpBinary),
                OutputKind::OpenpgpCleartext => Some(SignFormat::OpenpgpCleartext),
                _ => None,
            })
            .collect();
        req.check_before_signing(&formats)?;
        let tsa_ca = match &req.tsa_ca {
            Some(f) => Some(std::fs::read(f).map_err(|e| {
                ApiError::invalid(text!(
                    "errors.kit_tsa_ca_unreadable",
                    "Cannot read the TSA's CA file {{file}}: {{reason}}.",
                    file = f,
                    reason = e
                ))
            })?),
            None => None,
        };

        let p = self.partition_ref(partition).await?;
        let views: Vec<&SigningKeyView> = match report.keys.as_slice() {
            [] => vec![&report.key],
            keys => keys.iter().map(|k| &k.key).collect(),
        };
        // Files of the kit, relative path → content: the public material first.
        let mut files = Vec::new();
        let (mut keys, mut pks, mut openpgp) = (Vec::new(), Vec::new(), Vec::new());
        for (i, view) in views.iter().enumerate() {
            let dir = match views.len() {
                1 => "keys".to_string(),
                _ => format!("keys/{}", label_stem(&view.label)),
            };
            let certs = certificates.get(i).cloned().flatten();
            let made = self
                .kit_key(&p, view, certs, dir, req.user_id.as_deref())
                .await?;
            files.extend(made.files);
            openpgp.extend(made.openpgp);
            pks.push(made.pk);
            keys.push(made.key);
        }
        if let Some(ca) = tsa_ca {
            files.push(("keys/tsa-ca.pem".into(), ca));
        }
        let mut checks = signatures(report, &keys, req, &mut files)?;
        if let Some(statement) = &req.succession {
            checks.push(succession_files(Path::new(statement), &pks, &mut files)?);
        }
        if checks.iter().any(|c| c.format == OutputKind::Cms)
            && keys.iter().any(|k| k.certificate_pem.is_none())
        {
            return Err(ApiError::invalid(text!(
                "errors.kit_no_certificate",
                "The key has no certificate on the token, and the kit's CMS checks need one."
            )));
        }
        let names_listed: Vec<String> = files
            .iter()
            .map(|(n, _)| n.clone())
            .chain(["VERIFY.md".into(), "verify.sh".into()])
            .collect();
        let md = readme(&keys, &names_listed, &checks, &openpgp);
        files.push(("VERIFY.md".into(), md.into_bytes()));
        let certs: Vec<String> = openpgp.iter().map(|c| c.path.clone()).collect();
        files.push(("verify.sh".into(), script(&checks, &certs).into_bytes()));

        publish(&dir, &files)?;
        let mut ev = Event::new("sign.kit", "sign")
            .resource(dir.display().to_string())
            .meta("partition", &p.id)
            .meta("key", &report.key.label)
            .meta("checks", checks.len());
        if keys.len() > 1 {
            ev = ev.meta("keys", keys.iter().map(|k| &k.label).collect::<Vec<_>>());
        }
        self.record(ev).await;
        Ok(KitView {
            dir: dir.display().to_string(),
            files: names_listed,
            checks: checks
                .iter()
                .map(|c| KitCheck {
                    subject: c.subject.clone(),
                    format: c.format,
                    tool: c.program.to_string(),
                    command: c.for_reader(),
                })
                .collect(),
        })
    }
}

/// One key's part of a kit.
struct KitKeyMade {
    key: KitKey,
    pk: hsm::pubkey::PublicKey,
    /// Its public material (path in the kit → content).
    files: Vec<(String, Vec<u8>)>,
    openpgp: Option<OpenPgpInKit>,
}

impl Signing<'_> {
    /// A key of the batch as the kit holds it under `dir`: its public key, its certificate
    /// and chain (`certificates`, else the token's), its OpenPGP certificate (made by the
    /// HSM with `user_id`, when the key has an OpenPGP form), its minisign and SSH keys.
    async fn kit_key(
        self,
        p: &std::sync::Arc<crate::core::partitions::Partition>,
        view: &SigningKeyView,
        certificates: Option<Certificates>,
        dir: String,
        user_id: Option<&str>,
    ) -> ApiResult<KitKeyMade> {
        let handle = view.handle;
        let (pk, cert, chain) = p
            .pool
            .run_service_idempotent_async("kit.key", move |s| {
                let (summary, pk) = key_material(s, handle)?;
                let id = hex::decode(&summary.id_hex).unwrap_or_default();
                if let Some((cert, chain)) = certificates.clone() {
                    return Ok((pk, Some(cert), chain));
                }
                let cert = find_certificate(s, &id)?;
                let chain = match &cert {
                    Some(c) => find_chain(s, c)?,
                    None => Vec::new(),
                };
                Ok((pk, cert, chain))
            })
            .await?;
        let alg = SigAlg::for_key(&pk).map_err(super::sign_error)?;
        let key = KitKey {
            label: view.label.clone(),
            algorithm: view.algorithm.clone(),
            alg,
            public_pem: pk.spki_pem(),
            // The signer's certificate, then its issuers as CMS signatures carry them.
            certificate_pem: cert.map(|der| {
                std::iter::once(&der)
                    .chain(&chain)
                    .map(|c| pem_block("CERTIFICATE", c))
                    .collect()
            }),
            dir,
        };
        let minisign = if matches!(alg, SigAlg::Ed25519) {
            Some(self.minisign_public_key(&p.id, handle).await?.text)
        } else {
            None
        };
        let openpgp = match user_id {
            Some(uid) if signing::openpgp::PgpAlgorithm::for_key(&pk).is_ok() => {
                Some(self.openpgp_certificate(&p.id, handle, uid).await?)
            }
            _ => None,
        };
        let files = key_files(
            &key,
            &pk,
            openpgp.as_ref().map(|c| c.armored.as_str()),
            minisign.as_deref(),
        )?;
        let openpgp = openpgp.map(|c| OpenPgpInKit {
            label: key.label.clone(),
            fingerprint: c.fingerprint,
            path: format!("{}/openpgp.asc", key.dir),
        });
        Ok(KitKeyMade {
            key,
            pk,
            files,
            openpgp,
        })
    }
}

fn pem_block(label: &str, der: &[u8]) -> String {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut s = format!("-----BEGIN {label}-----\n");
    for line in b64.as_bytes().chunks(64) {
        s.push_str(std::str::from_utf8(line).expect("base64 is ASCII"));
        s.push('\n');
    }
    let _ = writeln!(s, "-----END {label}-----");
    s
}

/// Write every file into a hidden folder beside `dir`, then rename it to `dir`: the kit
/// appears whole or not at all.
fn publish(dir: &Path, files: &[(String, Vec<u8>)]) -> ApiResult<()> {
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "kit".into());
    let work = parent.join(format!(".{name}.partial-{}", std::process::id()));
    let result = (|| {
        std::fs::create_dir_all(&work).map_err(|e| kit_error("creating", &work, e))?;
        for (rel, bytes) in files {
            let path = work.join(rel);
            if let Some(d) = path.parent() {
                std::fs::create_dir_all(d).map_err(|e| kit_error("creating", d, e))?;
            }
            std::fs::write(&path, bytes).map_err(|e| kit_error("writing", &path, e))?;
            if rel == "verify.sh" {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                    .map_err(|e| kit_error("writing", &path, e))?;
            }
        }
        std::fs::File::open(&work)
            .and_then(|d| d.sync_all())
            .map_err(|e| kit_error("writing", &work, e))?;
        // rename(2) onto an existing empty folder would replace it: refuse again here.
        if dir.exists() {
            return Err(ApiError::invalid(text!(
                "errors.kit_folder_appeared",
                "{{dir}} appeared while the kit was written; nothing was replaced.",
                dir = dir.display()
            )));
        }
        std::fs::rename(&work, dir).map_err(|e| kit_error("moving into place", dir, e))
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&work);
    }
    result
}

/// A key's public material in the kit (relative path → content): the key as PEM, its
/// certificate and chain, its OpenPGP certificate and minisign key where made, its
/// `allowed_signers` line for SSH keys — under `key.dir`.
fn key_files(
    key: &KitKey,
    pk: &hsm::pubkey::PublicKey,
    openpgp: Option<&str>,
    minisign: Option<&str>,
) -> ApiResult<Vec<(String, Vec<u8>)>> {
    let at = |name: &str| format!("{}/{name}", key.dir);
    let mut files: Vec<(String, Vec<u8>)> =
        vec![(at("public.pem"), key.public_pem.clone().into_bytes())];
    if let Some(c) = &key.certificate_pem {
        files.push((at("certificate.pem"), c.clone().into_bytes()));
    }
    if let Some(c) = openpgp {
        files.push((at("openpgp.asc"), c.as_bytes().to_vec()));
    }
    if let Some(m) = minisign {
        files.push((at("minisign.pub"), m.as_bytes().to_vec()));
    }
    if let Ok(k) = signing::sshsig::SshKey::new(pk) {
        let line = k
            .allowed_signers_line(KIT_SSH_PRINCIPAL, signing::sshsig::FILE_NAMESPACE)
            .map_err(super::sign_error)?;
        files.push((at("allowed_signers"), format!("{line}\n").into_bytes()));
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test_key(alg: SigAlg, dir: &str) -> KitKey {
        KitKey {
            label: dir.rsplit('/').next().unwrap().into(),
            algorithm: alg.name(),
            alg,
            public_pem: String::new(),
            certificate_pem: Some(String::new()),
            dir: dir.into(),
        }
    }

    /// Several keys: each key's checks use its own folder of the kit; a `.p7s` with a
    /// signer per key is checked once per signer, pinned to that signer's certificate; the
    /// ML-DSA context goes to the ML-DSA key only.
    #[test]
    fn each_key_of_several_is_checked_with_its_own_material() {
        let ed = test_key(SigAlg::Ed25519, "keys/rel_ed25519");
        let ml = test_key(
            SigAlg::MlDsa {
                set: hsm::algo::MlDsaSet::P65,
            },
            "keys/rel_mldsa65",
        );
        let c = &checks_for(&ed, "a", OutputKind::Raw, "a.rel_ed25519.sig", Some("ctx"))[0];
        assert_eq!(
            c.for_reader(),
            "openssl pkeyutl -verify -pubin -inkey keys/rel_ed25519/public.pem -rawin -in ../a -sigfile signatures/a.rel_ed25519.sig"
        );
        let c = &checks_for(&ml, "a", OutputKind::Raw, "a.rel_mldsa65.sig", Some("ctx"))[0];
        assert_eq!(
            c.for_reader(),
            "hsmc verify ../a --sig signatures/a.rel_mldsa65.sig --pub keys/rel_mldsa65/public.pem --context ctx"
        );
        let both = cms_signer_checks(&[&ed, &ml], "a", "a.p7s");
        let shown: Vec<String> = both.iter().map(Check::for_reader).collect();
        assert_eq!(
            shown,
            [
                "hsmc verify ../a --sig signatures/a.p7s --pub keys/rel_ed25519/certificate.pem",
                "hsmc verify ../a --sig signatures/a.p7s --pub keys/rel_mldsa65/certificate.pem"
            ]
        );
        let md = readme(&[ed, ml], &[], &both, &[]);
        assert!(
            md.contains(
                "Signed with the HSM keys `rel_ed25519` (Ed25519) and `rel_mldsa65` (ML-DSA-65)"
            ),
            "{md}"
        );
        assert!(md.contains("one signer per key"), "{md}");
        let sh = script(&both, &["keys/rel_ed25519/openpgp.asc".into()]);
        assert!(
            sh.contains("gpg --batch --import \"$kit/keys/rel_ed25519/openpgp.asc\""),
            "{sh}"
        );
    }

    #[test]
    fn quoting_keeps_any_name_one_word() {
        assert_eq!(quote("app-1.0.tar.gz"), "app-1.0.tar.gz");
        assert_eq!(quote("my app's file"), r"'my app'\''s file'");
        assert_eq!(quote("$(rm -rf /)"), "'$(rm -rf /)'");
        assert_eq!(quote(""), "''");
    }

    #[test]
    fn every_output_kind_but_the_public_key_has_a_check() {
        let key = test_key(SigAlg::Ed25519, "keys");
        for k in [
            OutputKind::Cms,
            OutputKind::Raw,
            OutputKind::Bundle,
            OutputKind::Manifest,
            OutputKind::ManifestSignature,
            OutputKind::Openpgp,
            OutputKind::OpenpgpBinary,
            OutputKind::Minisign,
            OutputKind::ManifestCleartext,
            OutputKind::Sshsig,
            OutputKind::OpenpgpCleartext,
        ] {
            assert_eq!(checks_for(&key, "a", k, "a.x", None).len(), 1, "{k}");
        }
        assert!(checks_for(&key, "a", OutputKind::PublicKey, "a.pem", None).is_empty());
    }

    #[test]
    fn the_manifest_is_checked_in_the_artifacts_folder() {
        let key = test_key(SigAlg::Hss, "keys");
        let c = &checks_for(&key, "SHA256SUMS", OutputKind::Manifest, "SHA256SUMS", None)[0];
        assert_eq!(
            c.for_reader(),
            "(cd .. && sha256sum --check --strict \"$OLDPWD\"/signatures/SHA256SUMS)"
        );
        let c = &checks_for(&key, "x y", OutputKind::Raw, "x y.sig", Some("ctx 1"))[0];
        assert_eq!(c.for_reader(), "hsmc verify ../'x y' --sig 'signatures/x y.sig' --pub keys/public.pem --context 'ctx 1'");
        assert!(
            c.for_script()
                .starts_with("\"$hsmc\" verify \"$artifacts\"/'x y'"),
            "{}",
            c.for_script()
        );
    }
}
