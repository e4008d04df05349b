//! A soak: a mixed workload through the console's services on the built-in partition while
//! lunasim injects random faults (device errors, disconnects, all sessions dropped, slow
//! calls) and numbers the token's objects anew at every reconnect (`renumber`). Every
//! operation ends, within a bound, either in success or in an error that says what
//! happened; nothing the console reported as done is missing (signatures on disk and
//! valid, keys, imported and unwrapped objects on the token once each, wrap files written,
//! one audit record each); a PIN change's outcome is what the console said it was (the PIN
//! it names logs in); no change reaches another object than the one chosen; the trail
//! verifies at the end.
//!
//! The mix holds every kind of change the officer makes on a partition in use — key
//! generation and deletion, PIN change, a role's PIN set, imports, attribute edits, wrap,
//! unwrap, usage limits, issued certificates, OpenPGP certificates (the first fixes the
//! key's creation time) — and raw, OpenPGP, minisign and time-stamped CMS/bundle
//! signatures. Token initialization is not in it (it would erase the partition the soak
//! runs on; `change_matrix` and `cli admin` fault and kill it). The window's way with
//! handles is kept: the ones it was given (the signer's public half, the wrapping and
//! wrapped keys, …) are held across every reconnect and renumbering, never refreshed.
//!
//! The pool recovers what it can by itself (a session reopened, the module reinitialized,
//! the call retried; a handle followed to its object by the object's OUID): the failures
//! left are faults that outlast its recovery budget, counted by code apart from the
//! recovered calls.
//!
//! Bounded by operations and, when `SOAK_SECONDS` is set, by time: `SOAK_OPS` (default 150),
//! `SOAK_SEED` (default 7). Prints one JSON line with the counts (the book's reliability
//! table) and writes it to `target/soak/soak-<seed>.json`. Long runs: the nextest profile
//! `soak` (`--profile soak`) lets the test run for hours.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use console::attributes::AttributeChanges;
use console::objects::ImportRequest;
use console::settings::TimestampAuthority;
use console::sign::{OutputKind, SignFormat, SignRequest};
use console::views::{GenerateRequest, GeneratedKey, UserKind};
use console::{ApiError, Console, ErrorCode};
use hsm::algo::{Curve, HssParams, KeySpec, LmotsType, LmsType};
use hsm::keys::ObjectSummary;
use hsm::pubkey::PublicKeyFormat;
use testkit::tsa::TestTsa;

use crate::common;

/// xorshift64*: reproducible from the seed, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const FAULTS: &[&str] = &[
    r#"{"op":"fail","function":"C_Sign","rv":"CKR_DEVICE_ERROR","count":1}"#,
    r#"{"op":"fail","function":"C_GenerateKeyPair","rv":"CKR_DEVICE_ERROR","count":1}"#,
    r#"{"op":"fail","function":"*","rv":"CKR_DEVICE_REMOVED","count":2}"#,
    r#"{"op":"disconnect","count":3}"#,
    r#"{"op":"drop_sessions"}"#,
    r#"{"op":"slow","function":"C_Sign","ms":150}"#,
    r#"{"op":"fail","function":"C_FindObjects","rv":"CKR_SESSION_HANDLE_INVALID","count":3}"#,
    r#"{"op":"fail","function":"C_SetAttributeValue","rv":"CKR_DEVICE_ERROR","after":true}"#,
    r#"{"op":"fail","function":"C_WrapKey","rv":"CKR_DEVICE_REMOVED","count":1}"#,
];

/// The kinds of operation, by the number the seed draws (out of [`KINDS`]).
const KINDS: u64 = 25;

fn kind_name(op: u64) -> &'static str {
    match op {
        0..=3 | 22..=23 => "sign raw",
        4 => "sign openpgp+minisign",
        5 => "sign cms+bundle time-stamped",
        6..=7 => "generate (and delete)",
        8..=9 => "list",
        10 => "export public key",
        11 => "key details",
        12 => "import",
        13 => "pin change",
        14..=15 => "attribute edit",
        16 => "wrap",
        17 => "unwrap",
        18 => "usage limit",
        19 => "role pin",
        20 => "certificate",
        24 => "sign hss + manifest",
        _ => "openpgp certificate",
    }
}

#[derive(Default, Debug)]
struct Counts {
    attempted: u64,
    succeeded: u64,
    failed_clearly: u64,
    lost: u64,
    hung: u64,
    wrong_object: u64,
    /// One-time keys the HSS key's counter spent that the trail does not account for (or
    /// the other way round).
    hss_unaccounted: u64,
    relogins: u64,
    faults: u64,
    by_code: BTreeMap<String, u64>,
    by_kind: BTreeMap<&'static str, (u64, u64)>,
}

impl Counts {
    fn failed(&mut self, e: &ApiError) {
        assert!(
            !e.message.trim().is_empty() && e.code != ErrorCode::Internal,
            "an error that does not say what happened: {e:?}"
        );
        self.failed_clearly += 1;
        *self.by_code.entry(e.code.to_string()).or_default() += 1;
    }
}

/// A file the console said it signed: each output and the public key that checks it
/// (`None`: the signature carries its certificate).
struct Signed {
    file: PathBuf,
    outputs: Vec<(OutputKind, PathBuf, Option<PathBuf>)>,
}

/// A value the soak set through a change: what it asked for last, with the outcome.
#[derive(Default)]
struct Asked<T> {
    /// Values asked for since the last one the console said it set (any may have taken
    /// effect when the answer was an error), and that one.
    since_confirmed: Vec<T>,
    confirmed: Option<T>,
}

impl<T: Clone + PartialEq> Asked<T> {
    fn asked(&mut self, v: T, ok: bool) {
        if ok {
            self.confirmed = Some(v);
            self.since_confirmed.clear();
        } else {
            self.since_confirmed.push(v);
        }
    }
    /// Whether the token may hold `v` after what the console said.
    fn allows(&self, v: &T) -> bool {
        self.confirmed.as_ref() == Some(v) || self.since_confirmed.contains(v)
    }
}

/// The soak's state: the console, the handles the window holds, what the console said.
struct Soak<'a> {
    c: &'a Console,
    pid: &'a str,
    files: PathBuf,
    control: Box<dyn Fn(&str) + 'a>,
    pin: String,
    tsa: TimestampAuthority,
    signer: GeneratedKey,
    ed: GeneratedKey,
    /// The stateful key, its public half, and the signatures it had left before the mix.
    hss: GeneratedKey,
    hss_pub: PathBuf,
    hss_left_at_start: u64,
    /// Held as the window holds them: across every reconnect, never refreshed.
    signer_pub: u64,
    wrapper: u64,
    data_key: u64,
    limited: u64,
    cert_key: u64,
    pub_pem: PathBuf,
    openpgp_pub: PathBuf,
    minisign_pub: PathBuf,
    signed: Vec<Signed>,
    /// The signed `SHA256SUMS` of the HSS batches.
    manifests: Vec<Signed>,
    made: Vec<String>,
    destroyed: Vec<String>,
    imported: Vec<String>,
    unwrapped: Vec<String>,
    wrap_files: Vec<PathBuf>,
    pub_label: Asked<String>,
    usage_limit: Asked<u64>,
    pin_changes: u64,
    pin_unknown: u64,
    role_pins: u64,
    certificates: u64,
    openpgp_certificates: u64,
}

const OTHER_PIN: &str = "soak-other-pin-8642";

fn generate(spec: KeySpec, label: &str, extractable: bool) -> GenerateRequest {
    GenerateRequest {
        spec,
        label: label.into(),
        token: true,
        extractable,
        always_authenticate: false,
    }
}

impl<'a> Soak<'a> {
    async fn new(
        c: &'a Console,
        pid: &'a str,
        dir: &Path,
        tsa: &TestTsa,
        control: Box<dyn Fn(&str) + 'a>,
    ) -> Soak<'a> {
        let p256 = || KeySpec::Ec { curve: Curve::P256 };
        let signer = c
            .admin()
            .generate_key(pid, generate(p256(), "soak_signer", false));
        let signer = signer.await.unwrap();
        let ed = KeySpec::Ec {
            curve: Curve::Ed25519,
        };
        let ed = c
            .admin()
            .generate_key(pid, generate(ed, "soak_ed", false))
            .await
            .unwrap();
        let wrapper = c.admin().generate_key(
            pid,
            generate(KeySpec::Aes { bits: 256 }, "soak_wrapper", false),
        );
        let wrapper = wrapper.await.unwrap();
        let data = c
            .admin()
            .generate_key(pid, generate(KeySpec::Aes { bits: 256 }, "soak_data", true));
        let data = data.await.unwrap();
        let limited = c
            .admin()
            .generate_key(pid, generate(p256(), "soak_limited", false));
        let limited = limited.await.unwrap();
        let cert_key = c
            .admin()
            .generate_key(pid, generate(p256(), "soak_cert", false));
        let cert_key = cert_key.await.unwrap();
        let hss = HssParams::new(vec![(LmsType::H10, LmotsType::W4)]).unwrap();
        let hss = c.admin().generate_key(
            pid,
            generate(KeySpec::Hss { params: hss }, "soak_hss", false),
        );
        let hss = hss.await.unwrap();
        // The SO trusts the wrapping key, so the key made for backup may leave under it.
        c.logout(pid).await.unwrap();
        c.login(pid, UserKind::So, p11::pin(console::builtin::SO_PIN))
            .await
            .unwrap();
        let trusted = AttributeChanges {
            flags: vec![console::attributes::FlagChange {
                name: "trusted".into(),
                value: true,
            }],
            ..Default::default()
        };
        c.admin()
            .set_attributes(pid, wrapper.private_handle, trusted)
            .await
            .unwrap();
        c.logout(pid).await.unwrap();
        c.login(pid, UserKind::User, p11::pin(console::builtin::USER_PIN))
            .await
            .unwrap();
        let files = dir.join("artifacts");
        std::fs::create_dir_all(&files).unwrap();
        let write = |name: &str, text: String| {
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        let pk =
            c.admin()
                .export_public_key(pid, signer.public_handle.unwrap(), PublicKeyFormat::Pem);
        let pub_pem = write("soak_signer.pub.pem", pk.await.unwrap().text.unwrap());
        let cert =
            c.signing()
                .openpgp_certificate(pid, ed.private_handle, "Soak <soak@example.org>");
        let openpgp_pub = write("soak_ed.asc", cert.await.unwrap().armored);
        let mini = c
            .signing()
            .minisign_public_key(pid, ed.private_handle)
            .await
            .unwrap();
        let minisign_pub = write("soak_ed.minisign.pub", mini.text);
        let pk = c
            .admin()
            .export_public_key(pid, hss.public_handle.unwrap(), PublicKeyFormat::Pem);
        let hss_pub = write("soak_hss.pub.pem", pk.await.unwrap().text.unwrap());
        let hss_left_at_start = hss_left(c, pid, &hss).await;
        Soak {
            c,
            pid,
            files,
            control,
            pin: console::builtin::USER_PIN.to_string(),
            tsa: TimestampAuthority {
                url: tsa.url("ok"),
                ca_file: Some(tsa.ca().display().to_string()),
                timeout_seconds: 10,
                optional: None,
            },
            signer_pub: signer.public_handle.unwrap(),
            signer,
            ed,
            hss,
            hss_pub,
            hss_left_at_start,
            wrapper: wrapper.private_handle,
            data_key: data.private_handle,
            limited: limited.private_handle,
            cert_key: cert_key.private_handle,
            pub_pem,
            openpgp_pub,
            minisign_pub,
            signed: Vec::new(),
            manifests: Vec::new(),
            made: Vec::new(),
            destroyed: Vec::new(),
            imported: Vec::new(),
            unwrapped: Vec::new(),
            wrap_files: Vec::new(),
            pub_label: Asked {
                confirmed: Some("soak_signer".into()),
                ..Default::default()
            },
            usage_limit: Asked::default(),
            pin_changes: 0,
            pin_unknown: 0,
            role_pins: 0,
            certificates: 0,
            openpgp_certificates: 0,
        }
    }

    async fn run(&mut self, op: u64, i: u64) -> Result<(), ApiError> {
        match op {
            0..=3 | 22..=23 => self.sign(i, "raw", &[SignFormat::Raw], false).await,
            4 => {
                let formats = [SignFormat::Openpgp, SignFormat::Minisign];
                self.sign(i, "ed", &formats, false).await
            }
            5 => {
                let formats = [SignFormat::Cms, SignFormat::Bundle];
                self.sign(i, "stamped", &formats, true).await
            }
            6..=7 => self.generate_and_delete(i).await,
            8..=9 => self.c.list_keys(self.pid).await.map(|_| ()),
            10 => self
                .c
                .admin()
                .export_public_key(self.pid, self.signer_pub, PublicKeyFormat::Pem)
                .await
                .map(|_| ()),
            11 => self
                .c
                .admin()
                .key_details(self.pid, self.signer_pub)
                .await
                .map(|_| ()),
            12 => self.import(i).await,
            13 => self.change_pin().await,
            14..=15 => self.edit(i).await,
            16 => self.wrap(i).await,
            17 => self.unwrap(i).await,
            18 => self.raise_usage_limit(i).await,
            19 => {
                let new = format!("soak-cu-{i:06}");
                let r = self
                    .c
                    .admin()
                    .set_role_pin(self.pid, UserKind::CryptoUser, p11::pin(new));
                r.await?;
                self.role_pins += 1;
                Ok(())
            }
            24 => self.sign_hss(i).await,
            20 => {
                let subject = format!("CN=soak {i}");
                let r =
                    self.c
                        .signing()
                        .issue_certificate(self.pid, self.cert_key, &subject, 30, true);
                r.await?;
                self.certificates += 1;
                Ok(())
            }
            _ => {
                let r = self.c.signing().openpgp_certificate(
                    self.pid,
                    self.ed.private_handle,
                    "Soak <soak@example.org>",
                );
                r.await?;
                self.openpgp_certificates += 1;
                Ok(())
            }
        }
    }

    /// One file signed in `formats` (the Ed25519 key for OpenPGP and minisign, the
    /// P-256 signer otherwise), time-stamped when asked.
    async fn sign(
        &mut self,
        i: u64,
        what: &str,
        formats: &[SignFormat],
        stamped: bool,
    ) -> Result<(), ApiError> {
        let f = self.files.join(format!("release-{i:05}-{what}.bin"));
        std::fs::write(&f, format!("artifact {i} {}", rng_bytes(i))).unwrap();
        let ed = formats.contains(&SignFormat::Minisign);
        let key = if ed { &self.ed } else { &self.signer };
        let mut req: SignRequest = common::sign_request(&key.id_hex, &f, formats[0]);
        req.formats = formats.to_vec();
        if stamped {
            req.timestamp = Some(self.tsa.clone());
        }
        let r = self.c.signing().sign_files(
            self.pid,
            req,
            Arc::new(|_| {}),
            Arc::new(AtomicBool::new(false)),
        );
        let r = r.await?;
        if let Some(e) = &r.files[0].error {
            return Err(e.clone());
        }
        let outputs = r.files[0]
            .outputs
            .iter()
            .filter(|o| !matches!(o.format, OutputKind::PublicKey))
            .map(|o| {
                let pub_key = match o.format {
                    OutputKind::Raw => Some(self.pub_pem.clone()),
                    OutputKind::Openpgp => Some(self.openpgp_pub.clone()),
                    OutputKind::Minisign => Some(self.minisign_pub.clone()),
                    _ => None,
                };
                (o.format, PathBuf::from(&o.path), pub_key)
            })
            .collect();
        self.signed.push(Signed { file: f, outputs });
        Ok(())
    }

    /// One file signed with the HSS key, with its batch's `SHA256SUMS` (each a change that
    /// spends one-time keys).
    async fn sign_hss(&mut self, i: u64) -> Result<(), ApiError> {
        let dir = self.files.join(format!("hss-{i:05}"));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("firmware.bin");
        std::fs::write(&f, format!("firmware {i} {}", rng_bytes(i))).unwrap();
        let mut req = common::sign_request(&self.hss.id_hex, &f, SignFormat::Raw);
        (req.manifest, req.confirm_hss) = (true, true);
        let r = self.c.signing().sign_files(
            self.pid,
            req,
            Arc::new(|_| {}),
            Arc::new(AtomicBool::new(false)),
        );
        let r = r.await?;
        if let Some(e) = &r.files[0].error {
            return Err(e.clone());
        }
        let signed = |outputs: &[console::sign::OutputView], kind: OutputKind| {
            let o = outputs.iter().find(|o| o.format == kind);
            PathBuf::from(&o.expect("the output the console reported").path)
        };
        let sig = signed(&r.files[0].outputs, OutputKind::Raw);
        let pub_key = Some(self.hss_pub.clone());
        self.signed.push(Signed {
            file: f,
            outputs: vec![(OutputKind::Raw, sig, pub_key.clone())],
        });
        if let Some(e) = r.manifest_error {
            return Err(e);
        }
        let sums = signed(&r.manifest, OutputKind::ManifestSignature);
        self.manifests.push(Signed {
            file: signed(&r.manifest, OutputKind::Manifest),
            outputs: vec![(OutputKind::ManifestSignature, sums, pub_key)],
        });
        Ok(())
    }

    async fn generate_and_delete(&mut self, i: u64) -> Result<(), ApiError> {
        let label = format!("soak_key_{i:05}");
        let g = self.c.admin().generate_key(
            self.pid,
            generate(KeySpec::Ec { curve: Curve::P256 }, &label, false),
        );
        let g = g.await?;
        self.made.push(label.clone());
        if i % 2 == 0 {
            let hs = [g.private_handle, g.public_handle.unwrap()];
            self.c.admin().destroy_keys(self.pid, &hs, &label).await?;
            self.destroyed.push(label);
        }
        Ok(())
    }

    async fn import(&mut self, i: u64) -> Result<(), ApiError> {
        let label = format!("soak_data_{i:05}");
        let f = self.files.join(format!("{label}.txt"));
        std::fs::write(&f, format!("notes {i} {}", rng_bytes(i))).unwrap();
        let req = ImportRequest {
            path: f,
            label: Some(label.clone()),
            id_hex: None,
            data: true,
            application: Some("soak".into()),
        };
        self.c.admin().import_objects(self.pid, req).await?;
        self.imported.push(label);
        Ok(())
    }

    /// A PIN change, back and forth: the PIN the console says is valid afterwards is the
    /// one the next login uses — a wrong word here fails the soak.
    async fn change_pin(&mut self) -> Result<(), ApiError> {
        let new = if self.pin == OTHER_PIN {
            console::builtin::USER_PIN
        } else {
            OTHER_PIN
        };
        let r = self.c.admin().change_pin(
            self.pid,
            p11::pin(self.pin.clone()),
            p11::pin(new.to_string()),
        );
        let e = match r.await {
            Ok(_) => {
                self.pin = new.to_string();
                self.pin_changes += 1;
                return Ok(());
            }
            Err(e) => e,
        };
        let said = self
            .c
            .trail()
            .audit_records(audit::store::Query {
                action: Some("pin.change".into()),
                limit: 5,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_iter()
            .find(|r| r.event.action == "pin.change")
            .and_then(|r| {
                serde_json::from_str::<serde_json::Value>(&r.event.metadata)
                    .ok()?
                    .get("pin_now")?
                    .as_str()
                    .map(String::from)
            });
        match said.as_deref() {
            Some("new") => self.pin = new.to_string(),
            Some("unknown") => {
                // The console's advice: the new PIN first, then the old.
                self.pin_unknown += 1;
                (self.control)(r#"{"op":"clear"}"#);
                if self.login(new).await.is_ok() {
                    self.pin = new.to_string();
                } else {
                    let pin = self.pin.clone();
                    self.login(&pin).await.unwrap();
                }
            }
            _ => {}
        }
        Err(e)
    }

    async fn login(&self, pin: &str) -> Result<(), ApiError> {
        let r = self
            .c
            .login(self.pid, UserKind::User, p11::pin(pin.to_string()));
        r.await.map(|_| ())
    }

    /// A new label for the signer's public half, through the handle held since the start:
    /// across reconnects that renumbered the objects it must reach that key, no other.
    async fn edit(&mut self, i: u64) -> Result<(), ApiError> {
        let label = format!("soak_signer_pub_{i:05}");
        let changes = AttributeChanges {
            label: Some(label.clone()),
            ..Default::default()
        };
        let r = self
            .c
            .admin()
            .set_attributes(self.pid, self.signer_pub, changes)
            .await;
        self.pub_label.asked(label, r.is_ok());
        r.map(|_| ())
    }

    async fn wrap(&mut self, i: u64) -> Result<(), ApiError> {
        let out = self.files.join(format!("soak_data-{i:05}.wrapped.json"));
        let r = self
            .c
            .admin()
            .wrap_key(self.pid, self.data_key, self.wrapper, &out, None, false);
        r.await?;
        self.wrap_files.push(out);
        Ok(())
    }

    async fn unwrap(&mut self, i: u64) -> Result<(), ApiError> {
        let Some(file) = self.wrap_files.last().cloned() else {
            return self.wrap(i).await;
        };
        let label = format!("soak_unwrapped_{i:05}");
        let r = self
            .c
            .admin()
            .unwrap_key(self.pid, &file, self.wrapper, Some(label.clone()));
        r.await?;
        self.unwrapped.push(label);
        Ok(())
    }

    async fn raise_usage_limit(&mut self, i: u64) -> Result<(), ApiError> {
        let limit = 1_000_000 + i;
        let r = self
            .c
            .observe()
            .set_usage_limit(self.pid, self.limited, limit)
            .await;
        self.usage_limit.asked(limit, r.is_ok());
        r.map(|_| ())
    }

    /// Everything the console said it did, checked against the token and the files.
    async fn check(&self, n: &mut Counts) -> (u64, u64) {
        let objects = self.c.admin().list_objects(self.pid, None).await.unwrap();
        let keys = self.c.list_keys(self.pid).await.unwrap();
        let mut duplicated = 0u64;
        let once =
            |what: &str, labels: &[String], list: &[String], n: &mut Counts, dup: &mut u64| {
                for l in labels {
                    match list.iter().filter(|x| *x == l).count() {
                        0 => {
                            eprintln!(
                                "lost: the {what} {l} was reported made and is not on the token"
                            );
                            n.lost += 1;
                        }
                        1 => {}
                        k => {
                            eprintln!("duplicated: the {what} {l} is on the token {k} times");
                            *dup += 1;
                        }
                    }
                }
            };
        let object_labels: Vec<String> = objects.iter().map(|o| o.label.clone()).collect();
        once(
            "data object",
            &self.imported,
            &object_labels,
            n,
            &mut duplicated,
        );
        let secret_labels: Vec<String> = keys
            .iter()
            .filter(|k| k.class == "SECRET_KEY")
            .map(|k| k.label.clone())
            .collect();
        once(
            "unwrapped key",
            &self.unwrapped,
            &secret_labels,
            n,
            &mut duplicated,
        );
        let key_labels: Vec<String> = keys.iter().map(|k| k.label.clone()).collect();
        for l in self.made.iter().filter(|l| !self.destroyed.contains(l)) {
            if !key_labels.contains(l) {
                eprintln!("lost: the key {l} was reported made and is not on the token");
                n.lost += 1;
            }
        }
        for l in &self.destroyed {
            assert!(
                !key_labels.contains(l),
                "{l} was reported destroyed but is on the token"
            );
        }
        for f in &self.wrap_files {
            let ok = std::fs::read(f)
                .ok()
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                .is_some_and(|v| v["label"] == "soak_data");
            if !ok {
                eprintln!(
                    "lost: the wrap file {} is missing or not the data key's",
                    f.display()
                );
                n.lost += 1;
            }
        }
        self.check_signatures(n).await;
        self.check_hss_counter(n).await;
        self.check_changes_reached_their_objects(&keys, n);
        (duplicated, self.signed.len() as u64)
    }

    /// What the HSS key's counter spent is what the trail's signing records say.
    async fn check_hss_counter(&self, n: &mut Counts) {
        let spent = self.hss_left_at_start - hss_left(self.c, self.pid, &self.hss).await;
        let recorded: u64 = common::all_records(self.c)
            .await
            .iter()
            .filter(|r| matches!(r.event.action.as_str(), "sign" | "sign.manifest"))
            .filter(|r| r.event.metadata.contains(&self.hss.id_hex))
            .map(|r| {
                let meta: serde_json::Value = serde_json::from_str(&r.event.metadata).unwrap();
                meta["signatures"].as_u64().unwrap_or(0)
            })
            .sum();
        if spent != recorded {
            eprintln!(
                "unaccounted: the HSS key spent {spent} one-time keys, the trail says {recorded}"
            );
            n.hss_unaccounted += spent.abs_diff(recorded);
        }
    }

    async fn check_signatures(&self, n: &mut Counts) {
        for s in self.signed.iter().chain(&self.manifests) {
            for (kind, sig, pub_key) in &s.outputs {
                let (file, sig_path) = (s.file.display().to_string(), sig.display().to_string());
                let pub_path = pub_key.as_ref().map(|p| p.display().to_string());
                let v = self
                    .c
                    .signing()
                    .verify_signature(&file, &sig_path, pub_path.as_deref(), None)
                    .await;
                if !matches!(v, Ok(ref v) if v.valid) {
                    eprintln!(
                        "lost: the {kind:?} signature {} does not verify: {v:?}",
                        sig.display()
                    );
                    n.lost += 1;
                }
            }
        }
    }

    /// The edits and limits reached the objects chosen, and no other object carries what
    /// was meant for them.
    fn check_changes_reached_their_objects(&self, keys: &[ObjectSummary], n: &mut Counts) {
        let by_id = |id: &str, class: &str| {
            keys.iter()
                .find(|k| k.id_hex == id && k.class == class)
                .unwrap_or_else(|| panic!("the soak's key {id} ({class}) is on the token"))
        };
        let signer_pub = by_id(&self.signer.id_hex, "PUBLIC_KEY");
        if !self.pub_label.allows(&signer_pub.label) {
            eprintln!(
                "wrong: the signer's public key is labelled {}",
                signer_pub.label
            );
            n.wrong_object += 1;
        }
        for k in keys
            .iter()
            .filter(|k| k.label.starts_with("soak_signer_pub_"))
        {
            if k.unique_id != signer_pub.unique_id {
                eprintln!(
                    "wrong object: {} {} carries an edit meant for the signer",
                    k.class, k.label
                );
                n.wrong_object += 1;
            }
        }
        let limited = keys
            .iter()
            .find(|k| k.label == "soak_limited" && k.class == "PRIVATE_KEY")
            .expect("the limited key");
        if let Some(limit) = limited.usage_limit {
            if !self.usage_limit.allows(&limit) && self.usage_limit.confirmed.is_some() {
                eprintln!("wrong: the limited key's limit is {limit}");
                n.wrong_object += 1;
            }
        }
        for k in keys
            .iter()
            .filter(|k| k.usage_limit.is_some_and(|l| l >= 1_000_000))
        {
            if k.unique_id != limited.unique_id {
                eprintln!(
                    "wrong object: {} {} carries a usage limit meant for soak_limited",
                    k.class, k.label
                );
                n.wrong_object += 1;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soak_with_random_faults_loses_nothing() {
    let ops: u64 = std::env::var("SOAK_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150);
    let seed: u64 = std::env::var("SOAK_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7);
    let seconds: Option<u64> = std::env::var("SOAK_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok());
    let ops = if seconds.is_some() && std::env::var("SOAK_OPS").is_err() {
        u64::MAX // the time bound alone
    } else {
        ops
    };
    let started = Instant::now();
    let common::Env { c, pid, dir, .. } = &common::builtin().await;
    let tsa = TestTsa::start("ec");
    let sim = c.partition_ref(pid).await.unwrap();
    let control = |cmd: &str| {
        sim.module.module.sim_control(cmd).unwrap();
    };
    let mut soak = Soak::new(c, pid, dir.path(), &tsa, Box::new(control)).await;
    // Every reconnect from here on numbers the token's objects anew.
    (soak.control)(r#"{"op":"renumber","enabled":true}"#);
    let mut rng = Rng(seed.max(1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut n = Counts::default();
    let limit = Duration::from_secs(90);
    let mut slowest = Duration::ZERO;
    for i in 0..ops {
        if seconds.is_some_and(|s| started.elapsed() >= Duration::from_secs(s)) {
            break;
        }
        if rng.below(4) == 0 {
            (soak.control)(FAULTS[rng.below(FAULTS.len() as u64) as usize]);
            n.faults += 1;
        }
        n.attempted += 1;
        let op = rng.below(KINDS);
        let kind = n.by_kind.entry(kind_name(op)).or_default();
        kind.0 += 1;
        let op_started = Instant::now();
        let outcome = tokio::time::timeout(limit, soak.run(op, i)).await;
        slowest = slowest.max(op_started.elapsed());
        match outcome {
            Err(_) => {
                eprintln!("op {i} ({}): did not end within {limit:?}", kind_name(op));
                n.hung += 1;
            }
            Ok(Ok(())) => {
                n.succeeded += 1;
                n.by_kind.get_mut(kind_name(op)).unwrap().1 += 1;
            }
            Ok(Err(e)) => {
                eprintln!("op {i} ({}): {:?}: {}", kind_name(op), e.code, e.message);
                n.failed(&e);
                if e.code == ErrorCode::NotLoggedIn {
                    (soak.control)(r#"{"op":"clear"}"#);
                    let pin = soak.pin.clone();
                    soak.login(&pin).await.unwrap();
                    n.relogins += 1;
                }
            }
        }
    }
    (soak.control)(r#"{"op":"clear"}"#);
    (soak.control)(r#"{"op":"renumber","enabled":false}"#);
    if c.list_keys(pid).await.is_err() {
        let pin = soak.pin.clone();
        soak.login(&pin).await.unwrap();
    }
    let (duplicated, signed_files) = soak.check(&mut n).await;
    let records = common::all_records(c).await;
    let ok = |action: &str| {
        records
            .iter()
            .filter(|r| r.event.action == action && r.event.status == "success")
            .count() as u64
    };
    let audit_signs = ok("sign");
    // The soak's seven keys made before the mix.
    let audit_keys = ok("key.generate") - 7;
    let records_by_action = by_action(&records);
    let v = c
        .trail()
        .audit_verify(&|_, _| {}, &AtomicBool::new(false))
        .await
        .unwrap();
    let pool = sim.pool.metrics();
    let by_kind: BTreeMap<&str, serde_json::Value> = n
        .by_kind
        .iter()
        .map(|(k, (tried, ok))| (*k, serde_json::json!({"attempted": tried, "succeeded": ok})))
        .collect();
    let report = serde_json::json!({"soak": {
        "seed": seed, "seconds": started.elapsed().as_secs(), "operations": n.attempted,
        "succeeded": n.succeeded, "failed_with_clear_error": n.failed_clearly, "lost": n.lost,
        "hung": n.hung, "acted_on_another_object": n.wrong_object, "hss_unaccounted": n.hss_unaccounted,
        "faults_injected": n.faults, "renumbering_reconnects": true, "relogins": n.relogins,
        "errors": n.by_code, "by_kind": by_kind,
        "recovered_calls": pool.recovered_calls, "module_recoveries": pool.module_recoveries,
        "session_reopens": pool.session_reopens, "max_latency_ms": slowest.as_millis() as u64,
        "signed_files": signed_files, "audit_sign_records": audit_signs,
        "keys_made": soak.made.len(), "audit_key_records": audit_keys,
        "objects_imported": soak.imported.len(), "keys_unwrapped": soak.unwrapped.len(),
        "wrap_files": soak.wrap_files.len(), "objects_duplicated": duplicated,
        "pin_changes": soak.pin_changes, "pin_changes_unknown": soak.pin_unknown,
        "role_pins_set": soak.role_pins, "certificates_issued": soak.certificates,
        "openpgp_certificates": soak.openpgp_certificates,
        "audit_records": records.len(), "audit_records_by_action": records_by_action,
        "trail_intact": v.is_intact(),
    }});
    eprintln!("{report}");
    let out = testkit::repo_root().join("target/soak");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(
        out.join(format!("soak-{seed}.json")),
        serde_json::to_string_pretty(&report).unwrap(),
    )
    .unwrap();
    assert_eq!(n.attempted, n.succeeded + n.failed_clearly + n.hung);
    assert_eq!(n.hung, 0, "an operation did not end within {limit:?}");
    assert_eq!(n.lost, 0, "{n:?}");
    assert_eq!(n.wrong_object, 0, "a change reached another object: {n:?}");
    assert_eq!(
        n.hss_unaccounted, 0,
        "the HSS counter and the trail disagree"
    );
    assert_eq!(duplicated, 0, "an import or unwrap made its object twice");
    assert_eq!(
        audit_signs, signed_files,
        "one audit record per signed file"
    );
    assert_eq!(
        audit_keys,
        soak.made.len() as u64,
        "one audit record per key reported made"
    );
    assert!(v.is_intact(), "{v:?}");
    // The faults happened, and the pool recovered calls the officer never saw fail.
    assert!(
        n.faults > n.attempted / 8 && n.succeeded > n.attempted / 2,
        "{n:?}"
    );
    assert!(pool.recovered_calls > 0, "{pool:?}");
    c.close().await;
}

/// The signatures `key` has left, as the token says.
async fn hss_left(c: &Console, pid: &str, key: &GeneratedKey) -> u64 {
    let keys = c.list_keys(pid).await.unwrap();
    keys.iter()
        .find(|k| k.id_hex == key.id_hex && k.class == "PRIVATE_KEY")
        .and_then(|k| k.hss_keys_remaining)
        .expect("the HSS key and its counter")
}

/// How many records of each action and status.
fn by_action(records: &[console::views::RecordView]) -> BTreeMap<String, u64> {
    let mut by: BTreeMap<String, u64> = BTreeMap::new();
    for r in records {
        *by.entry(format!("{} {}", r.event.action, r.event.status))
            .or_default() += 1;
    }
    by
}

fn rng_bytes(i: u64) -> String {
    format!("{:x}", i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}
