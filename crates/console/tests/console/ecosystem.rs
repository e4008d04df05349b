//! OpenPGP and minisign through the console on real modules, every output accepted by
//! Debian's gpg 2.2, sq 0.27 and minisign 0.11 (another lineage than the console's encoder
//! and its rpgp/minisign-verify checks) and rejected by them once the artifact changes.
//! One test per process (nextest); a temporary GNUPGHOME per test.

use std::path::{Path, PathBuf};
use std::process::Command;

use console::sign::{KitRequest, OnError, OutputKind, SignFormat, SignReport, SignRequest};
use console::ErrorCode;
use hsm::algo::{Curve, KeySpec, MlDsaSet};
use testkit::Backend;

use crate::common;
use common::{builtin, token, Env};

const UID: &str = "Release Signing <release@example.org>";

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

impl Env {
    fn request(
        key: &str,
        files: &[PathBuf],
        formats: &[SignFormat],
        manifest: bool,
    ) -> SignRequest {
        SignRequest {
            key: key.into(),
            also_keys: vec![],
            files: files.iter().map(|p| s(p).to_string()).collect(),
            formats: formats.to_vec(),
            manifest,
            out_dir: None,
            context: None,
            on_error: OnError::Stop,
            confirm_hss: false,
            timestamp: None,
            kit: None,
            chain: vec![],
            context_login: None,
        }
    }

    /// The key's certificate written to `DIR/LABEL.asc`.
    async fn certificate(&self, handle: u64, label: &str) -> (PathBuf, String) {
        let c = self
            .c
            .signing()
            .openpgp_certificate(&self.pid, handle, UID)
            .await
            .unwrap();
        let p = self.dir.path().join(format!("{label}.asc"));
        std::fs::write(&p, &c.armored).unwrap();
        (p, c.fingerprint)
    }
}

fn out(r: &SignReport, i: usize, kind: OutputKind) -> PathBuf {
    PathBuf::from(
        &r.files[i]
            .outputs
            .iter()
            .find(|o| o.format == kind)
            .unwrap_or_else(|| panic!("no {kind} output for file {i}: {:?}", r.files[i]))
            .path,
    )
}

fn shared(r: &SignReport, kind: OutputKind) -> PathBuf {
    PathBuf::from(
        &r.manifest
            .iter()
            .find(|o| o.format == kind)
            .unwrap_or_else(|| panic!("no {kind}: {:?}", r.manifest))
            .path,
    )
}

fn run(cmd: &mut Command) -> (bool, String) {
    let o = cmd.output().unwrap();
    (
        o.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

/// Debian's gpg with a throwaway home holding one certificate.
struct Gpg {
    home: tempfile::TempDir,
}

impl Gpg {
    fn with(cert: &Path) -> Gpg {
        let g = Gpg {
            home: tempfile::tempdir().unwrap(),
        };
        let (ok, msg) = run(g.cmd().arg("--import").arg(cert));
        assert!(ok, "gpg --import: {msg}");
        g
    }

    fn cmd(&self) -> Command {
        let mut c = Command::new("gpg");
        c.arg("--batch")
            .arg("--no-tty")
            .arg("--homedir")
            .arg(self.home.path())
            .arg("--status-fd")
            .arg("1");
        c
    }

    /// Whether gpg finds a good signature by `fingerprint`.
    fn verify(&self, fingerprint: &str, args: &[&Path]) -> (bool, String) {
        let (ok, msg) = run(self.cmd().arg("--verify").args(args));
        (
            ok && msg.contains("[GNUPG:] GOODSIG")
                && msg.contains(&format!("[GNUPG:] VALIDSIG {fingerprint}")),
            msg,
        )
    }
}

impl Drop for Gpg {
    fn drop(&mut self) {
        let _ = Command::new("gpgconf")
            .arg("--homedir")
            .arg(self.home.path())
            .args(["--kill", "all"])
            .output();
    }
}

/// Sequoia's sq 0.27.
fn sq(cert: &Path, sig: &Path, detached_file: Option<&Path>) -> (bool, String) {
    let mut c = Command::new("sq");
    c.arg("verify").arg("--signer-cert").arg(cert);
    if let Some(f) = detached_file {
        c.arg("--detached").arg(sig).arg(f);
    } else {
        c.arg(sig);
    }
    run(&mut c)
}

fn flip_middle_byte(f: &Path) {
    let mut d = std::fs::read(f).unwrap();
    let m = d.len() / 2;
    d[m] ^= 0x01;
    std::fs::write(f, d).unwrap();
}

/// Sign two files as `.asc` and `.gpg` with the manifest, then: gpg and sq accept each
/// signature and `SHA256SUMS.asc` with the exported certificate, the console's verifier
/// too; after one byte of each artifact changes none of them does.
async fn openpgp_round(e: &Env, spec: KeySpec, label: &str) {
    let key = e.key(spec, label).await;
    let files = e.files(label, &[100, 70_000]);
    // Signing first fixes the key's creation time on the token; the certificate exported
    // after carries the same fingerprint as the signatures' issuer.
    let r = e
        .try_sign(Env::request(
            &key.0,
            &files,
            &[SignFormat::Openpgp, SignFormat::OpenpgpBinary],
            true,
        ))
        .await
        .unwrap();
    assert!(r.files.iter().all(|f| f.error.is_none()), "{:?}", r.files);
    assert_eq!(
        r.signatures_made,
        2 * 2 + 1 + 1,
        "{label}: .asc + .gpg per file, SHA256SUMS.sig and .asc"
    );
    let (cert, fpr) = e.certificate(key.1, label).await;
    let again =
        e.c.signing()
            .openpgp_certificate(&e.pid, key.1, UID)
            .await
            .unwrap();
    assert_eq!(again.fingerprint, fpr, "the fingerprint never changes");
    assert!(!again.creation_time_stored);
    let view = e.c.signing().openpgp_key(&e.pid, key.1).await.unwrap();
    assert_eq!(view.fingerprint.as_deref(), Some(fpr.as_str()));

    let gpg = Gpg::with(&cert);
    let sums = shared(&r, OutputKind::ManifestCleartext);
    for (i, f) in files.iter().enumerate() {
        let (asc, bin) = (
            out(&r, i, OutputKind::Openpgp),
            out(&r, i, OutputKind::OpenpgpBinary),
        );
        assert!(std::fs::read_to_string(&asc)
            .unwrap()
            .starts_with("-----BEGIN PGP SIGNATURE-----\n"));
        assert_eq!(asc.extension().unwrap(), "asc");
        assert_eq!(bin.extension().unwrap(), "gpg");
        for sig in [&asc, &bin] {
            let (ok, msg) = gpg.verify(&fpr, &[sig, f]);
            assert!(ok, "{label}: gpg --verify {}: {msg}", sig.display());
            let (ok, msg) = sq(&cert, sig, Some(f));
            assert!(ok, "{label}: sq verify {}: {msg}", sig.display());
            let v =
                e.c.signing()
                    .verify_signature(s(f), s(sig), Some(s(&cert)), None)
                    .await
                    .unwrap();
            assert!(v.valid, "{label}: console: {}", v.detail);
            assert_eq!(v.key_fingerprint.as_deref(), Some(fpr.as_str()));
            assert_eq!(v.signer.as_deref(), Some(UID));
            assert!(v.signing_time.is_some());
        }
    }
    let (ok, msg) = gpg.verify(&fpr, &[&sums]);
    assert!(ok, "{label}: gpg --verify SHA256SUMS.asc: {msg}");
    let (ok, msg) = sq(&cert, &sums, None);
    assert!(
        ok && msg.contains("artifact-0.bin"),
        "{label}: sq verify SHA256SUMS.asc: {msg}"
    );
    let plain = shared(&r, OutputKind::Manifest);
    let v =
        e.c.signing()
            .verify_signature(s(&plain), s(&sums), Some(s(&cert)), None)
            .await
            .unwrap();
    assert!(v.valid && v.entries.len() == 2, "{label}: {}", v.detail);

    for (i, f) in files.iter().enumerate() {
        flip_middle_byte(f);
        for sig in [
            out(&r, i, OutputKind::Openpgp),
            out(&r, i, OutputKind::OpenpgpBinary),
        ] {
            let (ok, msg) = gpg.verify(&fpr, &[&sig, f]);
            assert!(
                !ok && msg.contains("BADSIG"),
                "{label}: gpg accepted a changed file: {msg}"
            );
            assert!(
                !sq(&cert, &sig, Some(f)).0,
                "{label}: sq accepted a changed file"
            );
            let v =
                e.c.signing()
                    .verify_signature(s(f), s(&sig), Some(s(&cert)), None)
                    .await
                    .unwrap();
            assert!(!v.valid, "{label}: the console accepted a changed file");
        }
    }
    // The files listed in the cleartext manifest no longer match it.
    let v =
        e.c.signing()
            .verify_signature(s(&sums), s(&sums), Some(s(&cert)), None)
            .await
            .unwrap();
    assert!(!v.valid && v.entries.iter().all(|x| !x.ok), "{v:?}");
    // A changed line of the cleartext itself is rejected by all three.
    let text = std::fs::read_to_string(&sums).unwrap();
    let forged = sums.with_file_name("FORGED.asc");
    std::fs::write(
        &forged,
        text.replacen("artifact-0.bin", "artifact-9.bin", 1),
    )
    .unwrap();
    assert!(!gpg.verify(&fpr, &[&forged]).0);
    assert!(!sq(&cert, &forged, None).0);
    let v =
        e.c.signing()
            .verify_signature(s(&forged), s(&forged), Some(s(&cert)), None)
            .await
            .unwrap();
    assert!(!v.valid);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn softhsm_openpgp_ed25519_ecdsa_rsa_verify_in_gpg_and_sq() {
    let e = token(Backend::SoftHsm).await;
    for (spec, label) in [
        (
            KeySpec::Ec {
                curve: Curve::Ed25519,
            },
            "pgp_ed25519",
        ),
        (KeySpec::Ec { curve: Curve::P256 }, "pgp_p256"),
        (KeySpec::Ec { curve: Curve::P384 }, "pgp_p384"),
        (KeySpec::Rsa { bits: 2048 }, "pgp_rsa"),
    ] {
        openpgp_round(&e, spec, label).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lunasim_openpgp_ed25519_and_p256_verify_in_gpg_and_sq() {
    let e = builtin().await;
    openpgp_round(
        &e,
        KeySpec::Ec {
            curve: Curve::Ed25519,
        },
        "luna_pgp_ed25519",
    )
    .await;
    openpgp_round(&e, KeySpec::Ec { curve: Curve::P256 }, "luna_pgp_p256").await;
}

fn minisign(args: &[&str]) -> (bool, String) {
    run(Command::new("minisign").args(args))
}

/// minisign signatures and `minisign.pub` for an Ed25519 key: accepted by Debian's
/// minisign, rejected after the file or the trusted comment changes.
async fn minisign_round(e: &Env, label: &str) {
    let key = e
        .key(
            KeySpec::Ec {
                curve: Curve::Ed25519,
            },
            label,
        )
        .await;
    let files = e.files(label, &[1, 4096, 300_000]);
    let r = e
        .try_sign(Env::request(&key.0, &files, &[SignFormat::Minisign], false))
        .await
        .unwrap();
    assert!(r.files.iter().all(|f| f.error.is_none()), "{:?}", r.files);
    assert_eq!(
        r.signatures_made,
        3 * 2,
        "the signature and the global signature per file"
    );
    let pubkey =
        e.c.signing()
            .minisign_public_key(&e.pid, key.1)
            .await
            .unwrap();
    let pubf = e.dir.path().join(format!("{label}.minisign.pub"));
    std::fs::write(&pubf, &pubkey.text).unwrap();
    for (i, f) in files.iter().enumerate() {
        let sig = out(&r, i, OutputKind::Minisign);
        assert_eq!(sig, PathBuf::from(format!("{}.minisig", f.display())));
        let text = std::fs::read_to_string(&sig).unwrap();
        let trusted = text.lines().nth(2).unwrap();
        assert!(
            trusted.starts_with("trusted comment: timestamp:")
                && trusted.ends_with(&format!("\tfile:artifact-{i}.bin\thashed")),
            "{trusted}"
        );
        let (ok, msg) = minisign(&["-V", "-m", s(f), "-p", s(&pubf)]);
        assert!(ok, "minisign -V {i}: {msg}");
        assert!(msg.contains(&format!("file:artifact-{i}.bin")), "{msg}");
        let v =
            e.c.signing()
                .verify_signature(s(f), s(&sig), Some(s(&pubf)), None)
                .await
                .unwrap();
        assert!(v.valid, "console: {}", v.detail);
        // A changed trusted comment: the global signature no longer holds.
        let forged = sig.with_extension("forged");
        std::fs::write(&forged, text.replace("\tfile:", "\tfile:x")).unwrap();
        let (ok, msg) = minisign(&["-V", "-m", s(f), "-x", s(&forged), "-p", s(&pubf)]);
        assert!(!ok, "minisign accepted a changed trusted comment: {msg}");
        let v =
            e.c.signing()
                .verify_signature(s(f), s(&forged), Some(s(&pubf)), None)
                .await
                .unwrap();
        assert!(!v.valid);
        flip_middle_byte(f);
        let (ok, msg) = minisign(&["-V", "-m", s(f), "-p", s(&pubf)]);
        assert!(!ok, "minisign accepted a changed file: {msg}");
        let v =
            e.c.signing()
                .verify_signature(s(f), s(&sig), Some(s(&pubf)), None)
                .await
                .unwrap();
        assert!(!v.valid);
    }
    // The key ID is the key's: asking again gives the same file.
    assert_eq!(
        e.c.signing()
            .minisign_public_key(&e.pid, key.1)
            .await
            .unwrap()
            .text,
        pubkey.text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn minisign_on_lunasim_and_softhsm_verifies_in_minisign() {
    minisign_round(&builtin().await, "mini_luna").await;
    minisign_round(&token(Backend::SoftHsm).await, "mini_softhsm").await;
}

fn objects_of(list: &[hsm::keys::ObjectSummary], class: &str) -> usize {
    list.iter().filter(|o| o.class == class).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_refused_clearly_and_nothing_is_half_written() {
    let e = builtin().await;
    let ed = e
        .key(
            KeySpec::Ec {
                curve: Curve::Ed25519,
            },
            "bad_ed25519",
        )
        .await;
    let p256 = e.key(KeySpec::Ec { curve: Curve::P256 }, "bad_p256").await;
    let mldsa = e
        .key(KeySpec::MlDsa { set: MlDsaSet::P65 }, "bad_mldsa")
        .await;
    let files = e.files("bad", &[10]);
    let before = e.c.list_keys(&e.pid).await.unwrap();

    // A user ID with a newline: refused before the HSM or the token is touched.
    for uid in ["Release Signing\n<release@example.org>", "Release\r", ""] {
        let err =
            e.c.signing()
                .openpgp_certificate(&e.pid, ed.1, uid)
                .await
                .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidInput, "{uid:?}");
        let path = e.dir.path().join("never.asc");
        let err =
            e.c.signing()
                .save_openpgp_certificate(&e.pid, ed.1, uid, &path)
                .await
                .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidInput);
        assert!(!path.exists());
    }
    let err =
        e.c.signing()
            .openpgp_certificate(&e.pid, ed.1, "a\nb")
            .await
            .unwrap_err();
    assert!(err.message.contains("newline"), "{err:?}");

    // minisign with a P-256 key, OpenPGP with an ML-DSA key: refused before signing.
    let err = e
        .try_sign(Env::request(
            &p256.0,
            &files,
            &[SignFormat::Raw, SignFormat::Minisign],
            false,
        ))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::Unsupported);
    assert!(err.message.contains("Ed25519 keys only"), "{err:?}");
    let err =
        e.c.signing()
            .minisign_public_key(&e.pid, p256.1)
            .await
            .unwrap_err();
    assert!(err.message.contains("Ed25519 keys only"), "{err:?}");
    let err = e
        .try_sign(Env::request(&mldsa.0, &files, &[SignFormat::Openpgp], true))
        .await
        .unwrap_err();
    assert!(err.message.contains("no OpenPGP form"), "{err:?}");
    let err =
        e.c.signing()
            .openpgp_certificate(&e.pid, mldsa.1, UID)
            .await
            .unwrap_err();
    assert!(err.message.contains("no OpenPGP form"), "{err:?}");
    let written: Vec<_> = std::fs::read_dir(files[0].parent().unwrap())
        .unwrap()
        .map(|d| d.unwrap().file_name())
        .collect();
    assert_eq!(written.len(), 1, "only the artifact: {written:?}");
    let after = e.c.list_keys(&e.pid).await.unwrap();
    assert_eq!(
        objects_of(&after, "DATA"),
        objects_of(&before, "DATA"),
        "no creation time stored"
    );

    // An existing SHA256SUMS.asc: the batch's manifest is refused whole, none of its
    // three files is written.
    let dir = files[0].parent().unwrap();
    std::fs::write(dir.join("SHA256SUMS.asc"), "older").unwrap();
    let r = e
        .try_sign(Env::request(&ed.0, &files, &[SignFormat::Openpgp], true))
        .await
        .unwrap();
    assert!(r.manifest_error.is_some());
    assert!(!dir.join("SHA256SUMS").exists() && !dir.join("SHA256SUMS.sig").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join("SHA256SUMS.asc")).unwrap(),
        "older"
    );
    // The signing fixed the creation time once: one data object for the key.
    let after = e.c.list_keys(&e.pid).await.unwrap();
    assert_eq!(objects_of(&after, "DATA"), objects_of(&before, "DATA") + 1);
}

/// A text with what a cleartext signature must carry faithfully: lines starting with `-`
/// (dash-escaped), an armor-like line, `From `, a tab inside a line, an empty line.
const NOTES: &str =
    "# Changes in 2.0\n\n- first release\n-----BEGIN PGP SIGNATURE-----\nFrom the start:\ta tab\n";

/// Any text file cleartext-signed (`FILE.clearsigned`): gpg and sq accept it with the
/// exported certificate and hand on the file's text, the console's verifier accepts it
/// against the file; a changed line is refused by all three; the verifier kit's gpg check
/// passes. A binary file is refused by name before anything is signed.
async fn cleartext_round(e: &Env, spec: KeySpec, label: &str) {
    let key = e.key(spec, label).await;
    let dir = e.dir.path().join(label);
    std::fs::create_dir_all(&dir).unwrap();
    let notes = dir.join("NOTES.md");
    std::fs::write(&notes, NOTES).unwrap();
    let kit = dir.join("kit");
    let mut req = Env::request(
        &key.0,
        std::slice::from_ref(&notes),
        &[SignFormat::OpenpgpCleartext],
        false,
    );
    req.kit = Some(KitRequest {
        dir: s(&kit).into(),
        user_id: Some(UID.into()),
        ..Default::default()
    });
    let r = e.try_sign(req).await.unwrap();
    assert!(r.files[0].error.is_none() && r.kit_error.is_none(), "{r:?}");
    assert_eq!(r.signatures_made, 1, "{label}: one signature");
    let sig = out(&r, 0, OutputKind::OpenpgpCleartext);
    assert_eq!(sig, dir.join("NOTES.md.clearsigned"));
    let (cert, fpr) = e.certificate(key.1, label).await;

    let gpg = Gpg::with(&cert);
    let (ok, msg) = gpg.verify(&fpr, &[&sig]);
    assert!(ok, "{label}: gpg --verify: {msg}");
    let text_out = dir.join("gpg-output.txt");
    let (ok, msg) = run(gpg
        .cmd()
        .arg("--output")
        .arg(&text_out)
        .arg("--decrypt")
        .arg(&sig));
    assert!(ok, "{label}: gpg --decrypt: {msg}");
    assert_eq!(
        std::fs::read_to_string(&text_out).unwrap(),
        NOTES,
        "gpg hands on the file's text"
    );
    let (ok, msg) = sq(&cert, &sig, None);
    assert!(
        ok && msg.contains("- first release\n-----BEGIN PGP SIGNATURE-----\n"),
        "{label}: sq verify: {msg}"
    );
    let v =
        e.c.signing()
            .verify_signature(s(&notes), s(&sig), Some(s(&cert)), None)
            .await
            .unwrap();
    assert!(v.valid, "{label}: console: {}", v.detail);
    assert_eq!(
        v.detail_text.map(|t| t.key).as_deref(),
        Some("verify.details.cleartext_ok")
    );
    let (ok, msg) = run(Command::new("sh").arg(kit.join("verify.sh")).arg(&dir));
    assert!(
        ok && msg.contains("all signatures verify"),
        "{label}: the kit: {msg}"
    );

    let forged = dir.join("FORGED.clearsigned");
    let text = std::fs::read_to_string(&sig).unwrap();
    std::fs::write(&forged, text.replacen("first release", "first relaese", 1)).unwrap();
    assert!(
        !gpg.verify(&fpr, &[&forged]).0,
        "{label}: gpg accepted a changed line"
    );
    assert!(
        !sq(&cert, &forged, None).0,
        "{label}: sq accepted a changed line"
    );
    let v =
        e.c.signing()
            .verify_signature(s(&forged), s(&forged), Some(s(&cert)), None)
            .await
            .unwrap();
    assert!(!v.valid, "{label}: the console accepted a changed line");
    // The message still verifies, but over another text than the file's now.
    std::fs::write(&notes, NOTES.replace("first", "last")).unwrap();
    let v =
        e.c.signing()
            .verify_signature(s(&notes), s(&sig), Some(s(&cert)), None)
            .await
            .unwrap();
    assert!(!v.valid, "{label}: the console matched another file's text");

    let binary = e.files(&format!("{label}-binary"), &[300]);
    let r = e
        .try_sign(Env::request(
            &key.0,
            &binary,
            &[SignFormat::Openpgp, SignFormat::OpenpgpCleartext],
            false,
        ))
        .await
        .unwrap();
    let err = r.files[0].error.as_ref().expect("a binary file is refused");
    assert_eq!(err.code, ErrorCode::InvalidInput);
    assert!(
        err.message.starts_with(s(&binary[0])) && err.message.contains("lines of text"),
        "{}",
        err.message
    );
    assert_ne!(
        err.message_in(console::i18n::Lang::ZhHans),
        err.message,
        "translated"
    );
    assert_eq!(r.signatures_made, 0, "refused before anything was signed");
    let written = std::fs::read_dir(binary[0].parent().unwrap())
        .unwrap()
        .count();
    assert_eq!(written, 1, "only the artifact");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn softhsm_cleartext_text_files_verify_in_gpg_and_sq() {
    let e = token(Backend::SoftHsm).await;
    cleartext_round(&e, KeySpec::Ec { curve: Curve::P384 }, "clear_p384").await;
    cleartext_round(&e, KeySpec::Rsa { bits: 2048 }, "clear_rsa").await;
}
