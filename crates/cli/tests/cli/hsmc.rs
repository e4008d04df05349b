//! `hsmc` run as a process against lunasim (built-in), SoftHSM2 and Kryoptic: outputs
//! parsed, keys checked by outside tools, the audit trail verified and tampered with.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};
use testkit::{Backend, TestToken};

struct Hsmc {
    data: tempfile::TempDir,
    env: Vec<(String, String)>,
    module: String,
}

impl Hsmc {
    fn builtin() -> Hsmc {
        Hsmc {
            data: tempfile::tempdir().unwrap(),
            env: Vec::new(),
            module: "builtin".into(),
        }
    }

    fn token(t: &TestToken) -> Hsmc {
        Hsmc {
            data: tempfile::tempdir().unwrap(),
            env: t.env().to_vec(),
            module: t.module_path.display().to_string(),
        }
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(testkit::hsmc_binary());
        c.args(args)
            .env_remove("LUNASIM_CONF")
            .env_remove("HSMC_PIN")
            .env("HSMC_DATA_DIR", self.data.path())
            .env("HSMC_MODULE", &self.module)
            .env("USER", "ci-officer")
            .stdin(Stdio::null());
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c
    }

    fn run(&self, pin: Option<&str>, args: &[&str]) -> Output {
        let mut c = self.cmd(args);
        if let Some(p) = pin {
            c.env("HSMC_PIN", p);
        }
        c.output().unwrap()
    }

    /// Run, expect success, parse the JSON document.
    fn json(&self, pin: Option<&str>, args: &[&str]) -> Value {
        let mut a = vec!["--json"];
        a.extend_from_slice(args);
        let o = self.run(pin, &a);
        assert!(
            o.status.success(),
            "hsmc {args:?} failed: {}\n{}",
            String::from_utf8_lossy(&o.stderr),
            String::from_utf8_lossy(&o.stdout)
        );
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
            panic!(
                "hsmc {args:?}: not one JSON document ({e}): {}",
                String::from_utf8_lossy(&o.stdout)
            )
        })
    }

    /// `keys gen -a ALG -l LABEL --token` with `pin`, which must succeed: the new key.
    fn gen_token_key(&self, pin: Option<&str>, alg: &str, label: &str) -> Value {
        self.json(pin, &["keys", "gen", "-a", alg, "-l", label, "--token"])
    }

    fn audit_db(&self) -> PathBuf {
        self.data.path().join("audit.db")
    }
}

/// apt repositories: `docs/src/apt.md`'s commands run, and apt itself checking the result.
#[path = "hsmc/apt.rs"]
mod apt;

/// git's OpenPGP signing through `hsmc-gpg`, with `docs/src/git-openpgp.md`'s configuration.
#[path = "hsmc/git_gpg.rs"]
mod git_gpg;

/// `hsmc pqc` on tokens seeded with every algorithm, judged against the standards.
#[path = "hsmc/pqc_seeded.rs"]
mod pqc_seeded;

/// Keys that want the PIN for each signature: `keys gen --always-authenticate`, `sign
/// --context-login`.
#[path = "hsmc/context_login.rs"]
mod context_login;

/// The audit trail's keys in the built-in module's own slot, and the move of old folders.
#[path = "hsmc/audit_slot.rs"]
mod audit_slot;

/// The book's and the README's shell examples, run, their shown output compared.
#[path = "hsmc/docs_run.rs"]
mod docs_run;

/// ML-DSA of 100 MB and 1 GiB through Luna's external μ; its absence below firmware 7.9.0.
#[path = "hsmc/extmu.rs"]
mod extmu;

/// A path as a command-line argument.
fn p(x: &Path) -> String {
    x.to_str().unwrap().to_string()
}

/// What a process wrote to stdout, as text.
fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// What a process wrote to stderr, as text.
fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// The path of file `i`'s output in `fmt` in the JSON report `r` of `hsmc sign`.
fn sign_output(r: &Value, i: usize, fmt: &str) -> PathBuf {
    PathBuf::from(
        r["files"][i]["outputs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["format"] == fmt)
            .unwrap_or_else(|| panic!("{fmt} of file {i} in {r}"))["path"]
            .as_str()
            .unwrap(),
    )
}

/// The public key `hsmc sign` wrote beside its batch (in the report `r`'s manifest).
fn written_public_key(r: &Value) -> PathBuf {
    PathBuf::from(
        r["manifest"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["format"] == "public_key")
            .and_then(|o| o["path"].as_str())
            .unwrap_or_else(|| panic!("the public key is written: {r}")),
    )
}

/// pyca/cryptography reads the SPKI and reports its type (an outside parser).
fn python_key_type(path: &Path) -> String {
    let script = "import sys\nfrom cryptography.hazmat.primitives import serialization as s\nd=open(sys.argv[1],'rb').read()\nk=s.load_pem_public_key(d) if d.startswith(b'-----') else s.load_der_public_key(d)\nfrom cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa\nprint('ec:'+k.curve.name if isinstance(k, ec.EllipticCurvePublicKey) else 'ed25519' if isinstance(k, ed25519.Ed25519PublicKey) else 'rsa:%d' % k.key_size if isinstance(k, rsa.RSAPublicKey) else type(k).__name__)";
    let o = Command::new(testkit::python())
        .arg("-c")
        .arg(script)
        .arg(path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

#[test]
fn builtin_partition_inventory_key_lifecycle_and_audit() {
    let h = Hsmc::builtin();
    let pin = Some(console::builtin::USER_PIN);
    the_builtin_module_is_a_luna_with_ml_dsa_and_hss(&h);
    an_ml_dsa_key_is_made_shown_exported_and_removed(&h, pin);

    // The trail verifies, and names the record an outsider changed.
    let v = h.json(pin, &["audit", "verify"]);
    assert_eq!(v["verdict"]["verdict"], "intact");
    let tail = h.json(None, &["audit", "tail", "-n", "50"]);
    let actions: Vec<&str> = tail
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["action"].as_str().unwrap())
        .collect();
    for a in ["key.generate", "key.export_public", "key.destroy"] {
        assert!(actions.contains(&a), "{a} in {actions:?}");
    }
    let victim = tail
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["action"] == "key.generate")
        .unwrap()["seq"]
        .as_i64()
        .unwrap();
    let (auditor, export) = the_export_verifies_on_an_auditors_machine(&h, pin);
    damage_to_an_export_is_named_by_record_and_kind(&auditor, &export);
    checkpoints_are_signed_by_the_hsm_key_an_auditor_can_read(&h, pin);

    testkit::pg::sqlite3(
        &h.audit_db(),
        &format!("UPDATE audit_log SET resource_id = 'someone_else' WHERE seq = {victim};"),
    );
    let o = h.run(pin, &["--json", "audit", "verify"]);
    assert_eq!(code(&o), 3, "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["verdict"]["first_bad_seq"].as_i64(), Some(victim));
    assert_eq!(v["verdict"]["finding"]["kind"], "modified");
    let o = h.run(pin, &["audit", "verify"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains(&format!("BROKEN at record {victim}")));
}

/// info, slots and mechanisms: a Luna module with its vendor functions, the built-in
/// token, ML-DSA and HSS.
fn the_builtin_module_is_a_luna_with_ml_dsa_and_hss(h: &Hsmc) {
    let info = h.json(None, &["info"]);
    assert_eq!(info["module"]["family"], "luna");
    assert!(info["module"]["vendor_functions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f == "CA_GetHSMStats"));
    let slots = h.json(None, &["slots"]);
    assert_eq!(slots[0]["token"]["label"], console::builtin::TOKEN_LABEL);
    let mechs = h.json(None, &["mechanisms"]);
    let names: Vec<&str> = mechs
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["name"].as_str())
        .collect();
    assert!(
        names.contains(&"CKM_ML_DSA") && names.contains(&"CKM_HSS"),
        "{names:?}"
    );
}

/// An ML-DSA-65 key generated, listed, shown with its parameter set, exported as the SPKI
/// OpenSSL reads; refused without --yes (usage), then deleted with its public half.
fn an_ml_dsa_key_is_made_shown_exported_and_removed(h: &Hsmc, pin: Option<&str>) {
    let g = h.json(
        pin,
        &[
            "keys",
            "gen",
            "--algorithm",
            "ml-dsa-65",
            "--label",
            "ci_ml_dsa_65",
            "--token",
        ],
    );
    assert_eq!(g["algorithm"], "ML-DSA-65");
    let ls = h.json(pin, &["keys", "ls"]);
    assert!(ls
        .as_array()
        .unwrap()
        .iter()
        .any(|k| k["label"] == "ci_ml_dsa_65" && k["class"] == "PRIVATE_KEY"));
    let show = h.json(pin, &["keys", "show", "label:ci_ml_dsa_65"]);
    assert!(show["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["attribute"] == "CKA_PARAMETER_SET" && a["value"] == "ML-DSA-65"));

    let pem = h.data.path().join("k.pem");
    let e = h.json(
        pin,
        &[
            "keys",
            "export-pub",
            "label:ci_ml_dsa_65",
            "--format",
            "pem",
            "--out",
            pem.to_str().unwrap(),
        ],
    );
    assert_eq!(e["fingerprint"], g["public_key"]["fingerprint"]);
    let asn1 = Command::new("openssl")
        .args(["asn1parse", "-in"])
        .arg(&pem)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&asn1.stdout).contains("2.16.840.1.101.3.4.3.18"),
        "ML-DSA-65 OID in the SPKI"
    );

    // Refused without --yes (usage), then deleted.
    assert_eq!(code(&h.run(pin, &["keys", "rm", "label:ci_ml_dsa_65"])), 2);
    let rm = h.json(pin, &["keys", "rm", "label:ci_ml_dsa_65", "--yes"]);
    assert_eq!(
        rm["destroyed"].as_array().unwrap().len(),
        2,
        "private key and its public half"
    );
    let o = h.run(pin, &["--json", "keys", "show", "label:ci_ml_dsa_65"]);
    assert_eq!(code(&o), 1);
    let err: Value = serde_json::from_slice(&o.stderr).unwrap();
    assert_eq!(err["error"]["code"], "KEY_NOT_FOUND");
}

/// The trail exported (not with a wrong PIN) verifies here and on an auditor's machine (no
/// HSM, no PIN): the auditor's hsmc and the export.
fn the_export_verifies_on_an_auditors_machine(h: &Hsmc, pin: Option<&str>) -> (Hsmc, PathBuf) {
    let export = h.data.path().join("trail.jsonl");
    // A wrong PIN is reported, not quietly dropped for an export without the pinned key.
    let o = h.run(
        Some("not-the-pin"),
        &[
            "--json",
            "audit",
            "export",
            "--out",
            export.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&o), 1, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("PIN_INCORRECT"));
    assert!(!export.exists(), "nothing exported");
    h.json(pin, &["audit", "export", "--out", export.to_str().unwrap()]);
    let ve = h.json(
        pin,
        &["audit", "verify", "--export", export.to_str().unwrap()],
    );
    assert_eq!(ve["verdict"]["verdict"], "intact");
    // The auditor's machine: another data folder, no HSM, no PIN.
    let auditor = Hsmc::builtin();
    let ve = auditor.json(
        None,
        &["audit", "verify", "--export", export.to_str().unwrap()],
    );
    assert_eq!(ve["verdict"]["verdict"], "intact", "{ve}");
    (auditor, export)
}

/// A record edited in the export, and one taken out of it: named by number and kind.
fn damage_to_an_export_is_named_by_record_and_kind(auditor: &Hsmc, export: &Path) {
    let lines: Vec<String> = std::fs::read_to_string(export)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    let records: Vec<(usize, i64)> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| {
            let v: Value = serde_json::from_str(l).ok()?;
            (v["type"] == "record").then(|| (i, v["seq"].as_i64().unwrap()))
        })
        .collect();
    assert!(records.len() > 4, "{} records", records.len());
    let (line, seq) = records[records.len() / 2];
    // Without the trail's key an edit is named as the span of records its checkpoint
    // vouches for (nothing else seals a record offline); a removal by its number.
    for (damage, kind) in [("edited", "modified_between"), ("removed", "missing")] {
        let mut copy = lines.clone();
        if damage == "edited" {
            let mut v: Value = serde_json::from_str(&copy[line]).unwrap();
            v["resource_id"] = Value::from("someone_else");
            copy[line] = v.to_string();
        } else {
            // As someone who removes a record would, the end line's count made to agree.
            copy.remove(line);
            let last = copy.len() - 1;
            let mut end: Value = serde_json::from_str(&copy[last]).unwrap();
            assert_eq!(end["type"], "end", "{end}");
            end["records"] = Value::from(end["records"].as_i64().unwrap() - 1);
            copy[last] = end.to_string();
        }
        let bad = auditor.data.path().join(format!("{damage}.jsonl"));
        std::fs::write(&bad, copy.join("\n") + "\n").unwrap();
        let o = auditor.run(
            None,
            &[
                "--json",
                "audit",
                "verify",
                "--export",
                bad.to_str().unwrap(),
            ],
        );
        assert_eq!(
            code(&o),
            3,
            "{damage}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["verdict"]["finding"]["kind"], kind, "{damage}: {v}");
        if damage == "edited" {
            let f = &v["verdict"]["finding"];
            let (from, to) = (
                f["from_seq"].as_i64().unwrap(),
                f["to_seq"].as_i64().unwrap(),
            );
            assert!(from <= seq && seq <= to, "{seq} in {from}–{to}: {v}");
            assert_eq!(v["verdict"]["first_bad_seq"].as_i64(), Some(from), "{v}");
        } else {
            let first = v["verdict"]["first_bad_seq"].as_i64();
            assert_eq!(first, Some(seq), "{damage}: {v}");
        }
    }
}

/// Checkpoints (each process writes one at exit), all made by the HSM's key, and the
/// key itself as PEM for an auditor.
fn checkpoints_are_signed_by_the_hsm_key_an_auditor_can_read(h: &Hsmc, pin: Option<&str>) {
    let cps = h.json(pin, &["audit", "checkpoints"]);
    let cps = cps.as_array().unwrap();
    assert!(!cps.is_empty());
    for cp in cps {
        assert_eq!(cp["signature_valid"], true, "{cp}");
        assert_eq!(cp["key_is_hsm_key"], true, "{cp}");
        assert_eq!(cp["algorithm"], "ML-DSA-65", "{cp}");
    }
    let pem = h.data.path().join("checkpoint-key.pem");
    let o = h.run(
        pin,
        &["audit", "public-key", "--out", pem.to_str().unwrap()],
    );
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let parsed = Command::new("openssl")
        .args(["asn1parse", "-in", pem.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&parsed.stdout).contains("2.16.840.1.101.3.4.3.18"),
        "an ML-DSA-65 SubjectPublicKeyInfo: {}",
        String::from_utf8_lossy(&parsed.stdout)
    );
}

#[test]
fn pins_come_from_env_file_or_descriptor_never_retried() {
    let h = Hsmc::builtin();
    // No PIN and no terminal: a usage error that says where PINs come from.
    let o = h.run(None, &["keys", "gen", "-a", "aes-256", "-l", "x"]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("HSMC_PIN"));
    // Wrong PIN: exit 1, the PKCS#11 code named, one login attempt recorded.
    let o = h.run(
        Some("wrong-pin"),
        &["--json", "keys", "gen", "-a", "aes-256", "-l", "x"],
    );
    assert_eq!(code(&o), 1);
    let err: Value = serde_json::from_slice(&o.stderr).unwrap();
    assert_eq!(err["error"]["code"], "PIN_INCORRECT");
    assert_eq!(err["error"]["pkcs11"]["name"], "CKR_PIN_INCORRECT");
    // From a file.
    let f = h.data.path().join("pin");
    std::fs::write(&f, format!("{}\n", console::builtin::USER_PIN)).unwrap();
    let o = h.run(
        None,
        &[
            "keys",
            "gen",
            "-a",
            "aes-256",
            "-l",
            "from_file",
            "--pin-file",
            f.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // From a descriptor (a pipe the shell opens as fd 3).
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "exec 3< <(printf '%s\\n' '{}'); \"$0\" keys gen -a aes-128 -l from_fd --pin-fd 3",
            console::builtin::USER_PIN
        ))
        .arg(testkit::hsmc_binary())
        .env_remove("LUNASIM_CONF")
        .env("HSMC_DATA_DIR", h.data.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let tail = h.json(None, &["audit", "tail", "-n", "100"]);
    let logins: Vec<&str> = tail
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["action"] == "login")
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        logins.iter().filter(|s| **s == "failure").count(),
        1,
        "a wrong PIN is tried once: {logins:?}"
    );
}

#[test]
fn softhsm_keys_through_hsmc_with_its_own_trail() {
    let t = TestToken::new(Backend::SoftHsm);
    let h = Hsmc::token(&t);
    let pin = Some(testkit::USER_PIN);
    let db = h.data.path().join("pipeline-audit.db");
    let db = db.to_str().unwrap();
    let g = h.json(
        pin,
        &[
            "--audit-db",
            db,
            "keys",
            "gen",
            "-a",
            "ec-p256",
            "-l",
            "ci_p256",
            "--token",
        ],
    );
    assert_eq!(g["algorithm"], "EC P-256");
    let der = h.data.path().join("p256.der");
    h.json(
        pin,
        &[
            "--audit-db",
            db,
            "keys",
            "export-pub",
            "label:ci_p256",
            "--format",
            "der",
            "--out",
            der.to_str().unwrap(),
        ],
    );
    assert_eq!(python_key_type(&der), "ec:secp256r1");
    let slots = h.json(None, &["--audit-db", db, "slots"]);
    assert!(slots
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["token"]["label"] == testkit::TOKEN_LABEL));
    let st = h.json(None, &["--audit-db", db, "audit", "status"]);
    assert_eq!(
        st["key"]["state"], "locked",
        "the trail's key lives on this SoftHSM token: {st}"
    );
    assert!(st["key"]["holder"]
        .as_str()
        .unwrap()
        .contains(testkit::TOKEN_LABEL));
    let v = h.json(pin, &["--audit-db", db, "audit", "verify"]);
    assert_eq!(v["verdict"]["verdict"], "intact");
}

#[test]
fn kryoptic_pqc_keys_through_hsmc() {
    let t = TestToken::new(Backend::Kryoptic);
    let h = Hsmc::token(&t);
    let pin = Some(testkit::USER_PIN);
    for (alg, want) in [
        ("ml-dsa-44", "ML-DSA-44"),
        ("ml-kem-768", "ML-KEM-768"),
        ("ed25519", "EdDSA Ed25519"),
        ("rsa-2048", "RSA-2048"),
    ] {
        let g = h.gen_token_key(pin, alg, &format!("ci_{alg}"));
        assert!(
            g["algorithm"]
                .as_str()
                .unwrap()
                .contains(want.split(' ').next_back().unwrap()),
            "{alg}: {g}"
        );
    }
    let pem = h.data.path().join("ed.pem");
    h.json(
        pin,
        &[
            "keys",
            "export-pub",
            "label:ci_ed25519",
            "--out",
            pem.to_str().unwrap(),
        ],
    );
    assert_eq!(python_key_type(&pem), "ed25519");
    let pem = h.data.path().join("rsa.pem");
    h.json(
        pin,
        &[
            "keys",
            "export-pub",
            "label:ci_rsa-2048",
            "--out",
            pem.to_str().unwrap(),
        ],
    );
    assert_eq!(python_key_type(&pem), "rsa:2048");
}

#[test]
fn bad_modules_and_usage_have_their_exit_codes() {
    let mut h = Hsmc::builtin();
    h.module = testkit::repo_root()
        .join("Cargo.toml")
        .display()
        .to_string();
    let o = h.run(None, &["--json", "slots"]);
    assert_eq!(code(&o), 4, "{}", String::from_utf8_lossy(&o.stderr));
    let err: Value = serde_json::from_slice(&o.stderr).unwrap();
    assert_eq!(err["error"]["code"], "MODULE_LOAD_FAILED");
    assert!(err["error"]["suggestion"].is_string());
    let o = h.run(None, &["keys", "frobnicate"]);
    assert_eq!(code(&o), 2);
    let h = Hsmc::builtin();
    let o = h.run(Some("x"), &["keys", "gen", "-a", "rsa-1000", "-l", "x"]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("Unknown algorithm"));
}

#[test]
fn completions_and_man_page_come_from_the_definition() {
    let h = Hsmc::builtin();
    let o = h.run(None, &["completions", "bash"]);
    assert!(o.status.success());
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("export-pub") && s.contains("--pin-file"));
    let o = h.run(None, &["man"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains(".TH hsmc"));
}

fn verify_release(args: &[&Path]) -> bool {
    let o = Command::new(testkit::python())
        .arg(testkit::repo_root().join("tests/interop/verify_release.py"))
        .args(args)
        .output()
        .unwrap();
    assert_ne!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.status.success()
}

#[test]
fn sign_and_verify_release_artifacts_as_a_pipeline_would() {
    let h = Hsmc::builtin();
    let pin = Some(console::builtin::USER_PIN);
    h.gen_token_key(pin, "ml-dsa-65", "pipeline_ml_dsa_65");
    let dir = h.data.path().join("release");
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b) = (dir.join("app-1.0.tar.gz"), dir.join("app-1.0.sbom.json"));
    std::fs::write(&a, vec![7u8; 200_000]).unwrap();
    std::fs::write(&b, b"{\"sbom\": true}").unwrap();
    let r = h.json(
        pin,
        &[
            "sign",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--key",
            "label:pipeline_ml_dsa_65",
            "--format",
            "cms,raw,bundle",
            "--manifest",
        ],
    );
    let files = r["files"].as_array().unwrap();
    assert!(files.iter().all(|f| f["error"].is_null()), "{r}");
    let out = |i: usize, fmt: &str| sign_output(&r, i, fmt);
    let pubkey = written_public_key(&r);
    for (i, f) in [&a, &b].into_iter().enumerate() {
        assert!(verify_release(&[Path::new("cms"), f, &out(i, "cms")]));
        assert!(verify_release(&[
            Path::new("raw"),
            f,
            &out(i, "raw"),
            &pubkey
        ]));
        assert!(verify_release(&[Path::new("bundle"), f, &out(i, "bundle")]));
        let v = h.json(
            None,
            &[
                "verify",
                f.to_str().unwrap(),
                "--sig",
                out(i, "cms").to_str().unwrap(),
            ],
        );
        assert_eq!(v["valid"], true, "{v}");
    }
    the_signed_manifest_verifies_outside_and_in_hsmc(&h, &dir, &pubkey);
    // Signing again never overwrites: exit 1, the old signature kept.
    let before = std::fs::read(out(0, "cms")).unwrap();
    let o = h.run(
        pin,
        &[
            "sign",
            a.to_str().unwrap(),
            "--key",
            "label:pipeline_ml_dsa_65",
        ],
    );
    assert_eq!(code(&o), 1);
    assert!(String::from_utf8_lossy(&o.stdout).contains("already exists"));
    assert_eq!(std::fs::read(out(0, "cms")).unwrap(), before);
    // A tampered artifact: verification fails with exit code 3, outside verifiers agree.
    std::fs::write(&a, vec![8u8; 200_000]).unwrap();
    let o = h.run(
        None,
        &[
            "--json",
            "verify",
            a.to_str().unwrap(),
            "--sig",
            out(0, "cms").to_str().unwrap(),
        ],
    );
    assert_eq!(code(&o), 3);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["valid"], false);
    assert!(!verify_release(&[Path::new("cms"), &a, &out(0, "cms")]));
    let o = h.run(
        None,
        &[
            "verify",
            a.to_str().unwrap(),
            "--sig",
            out(0, "raw").to_str().unwrap(),
            "--pub",
            pubkey.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&o), 3);
    assert!(String::from_utf8_lossy(&o.stdout).contains("INVALID"));
    every_signature_and_verification_is_in_the_trail(&h);
}

/// SHA256SUMS and its signature in `dir` verify with the outside verifier and with
/// `hsmc verify`, by the public key at `pubkey`.
fn the_signed_manifest_verifies_outside_and_in_hsmc(h: &Hsmc, dir: &Path, pubkey: &Path) {
    assert!(verify_release(&[
        Path::new("manifest"),
        &dir.join("SHA256SUMS"),
        &dir.join("SHA256SUMS.sig"),
        pubkey
    ]));
    let v = h.json(
        None,
        &[
            "verify",
            dir.join("SHA256SUMS").to_str().unwrap(),
            "--sig",
            dir.join("SHA256SUMS.sig").to_str().unwrap(),
            "--pub",
            pubkey.to_str().unwrap(),
        ],
    );
    assert_eq!(v["valid"], true);
}

/// Every signature and verification is in the trail: two signed, one refused.
fn every_signature_and_verification_is_in_the_trail(h: &Hsmc) {
    let tail = h.json(None, &["audit", "tail", "-n", "100"]);
    let actions: Vec<&str> = tail
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions.iter().filter(|a| **a == "sign").count(),
        3,
        "two signed, one refused: {actions:?}"
    );
    assert!(actions.contains(&"verify") && actions.contains(&"sign.manifest"));
}

#[test]
fn hss_signing_must_be_confirmed_and_certificates_come_from_the_hsm() {
    let t = TestToken::new(Backend::SoftHsm);
    let h = Hsmc::token(&t);
    let pin = Some(testkit::USER_PIN);
    h.json(
        pin,
        &["keys", "gen", "-a", "ec-p256", "-l", "cert_key", "--token"],
    );
    let cert = h.data.path().join("cert.pem");
    h.json(
        pin,
        &[
            "keys",
            "cert",
            "label:cert_key",
            "--self-signed",
            "--subject",
            "CN=Pipeline signing,O=Example",
            "--out",
            cert.to_str().unwrap(),
        ],
    );
    let o = Command::new("openssl")
        .args(["verify", "-CAfile"])
        .arg(&cert)
        .arg("-check_ss_sig")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csr = h.data.path().join("req.pem");
    h.json(
        pin,
        &[
            "keys",
            "cert",
            "label:cert_key",
            "--csr",
            "--subject",
            "CN=Pipeline signing",
            "--out",
            csr.to_str().unwrap(),
        ],
    );
    let o = Command::new("openssl")
        .args(["req", "-noout", "-verify", "-in"])
        .arg(&csr)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // CMS with the certificate that is now on the token; OpenSSL verifies it against it.
    let f = h.data.path().join("fw.bin");
    std::fs::write(&f, b"firmware").unwrap();
    h.json(
        pin,
        &[
            "sign",
            f.to_str().unwrap(),
            "--key",
            "label:cert_key",
            "--format",
            "cms",
        ],
    );
    let o = Command::new("openssl")
        .args(["cms", "-verify", "-binary", "-inform", "DER", "-in"])
        .arg(format!("{}.p7s", f.display()))
        .arg("-content")
        .arg(&f)
        .arg("-CAfile")
        .arg(&cert)
        .args(["-purpose", "any", "-out", "/dev/null"])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "openssl cms -verify against the issued certificate: {}",
        String::from_utf8_lossy(&o.stderr)
    );

    // HSS on lunasim: refused without --yes-hss.
    let h = Hsmc::builtin();
    let pin = Some(console::builtin::USER_PIN);
    h.json(
        pin,
        &[
            "keys",
            "gen",
            "-a",
            "hss",
            "-l",
            "hss_key",
            "--token",
            "--hss-lms",
            "LMS_SHA256_M32_H5",
            "--hss-lmots",
            "LMOTS_SHA256_N32_W4",
        ],
    );
    let g = h.data.path().join("g.bin");
    std::fs::write(&g, b"gateway firmware").unwrap();
    let o = h.run(
        pin,
        &["sign", g.to_str().unwrap(), "--key", "label:hss_key"],
    );
    assert_eq!(code(&o), 2, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("confirm"));
    let r = h.json(
        pin,
        &[
            "sign",
            g.to_str().unwrap(),
            "--key",
            "label:hss_key",
            "--yes-hss",
            "--format",
            "raw",
        ],
    );
    assert_eq!(r["hss_remaining_after"], 31);
    let pubkey = h.data.path().join("hss_key.pub.pem");
    assert!(verify_release(&[
        Path::new("raw"),
        &g,
        &PathBuf::from(format!("{}.sig", g.display())),
        &pubkey
    ]));
    // hsmc hss: what is left and what the trail says.
    let hss = h.json(pin, &["hss"]);
    let k = hss
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["label"] == "hss_key")
        .unwrap();
    assert_eq!(
        (k["remaining"].as_u64(), k["capacity"].as_str()),
        (Some(31), Some("32")),
        "{k}"
    );
    assert!(k["mismatch"].is_null());
    assert!(k["projected_exhaustion"].is_string());
    let o = h.run(pin, &["hss"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("hss_key"));
}

#[test]
fn stats_one_shot_and_watch() {
    let h = Hsmc::builtin();
    let s = h.json(None, &["stats"]);
    assert!(s["luna"]["firmware"] == "7.9.1", "{s}");
    assert!(s["luna"]["not_offered"].as_array().unwrap().is_empty());
    // --watch prints one JSON document per sample until stopped.
    let mut child = h
        .cmd(&["--json", "stats", "--watch", "1"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
    for _ in 0..2 {
        let line = lines.next().unwrap().unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        assert!(v["token"]["label"].is_string());
    }
    child.kill().unwrap();
    let _ = child.wait();
    let t = TestToken::new(Backend::SoftHsm);
    let h = Hsmc::token(&t);
    let s = h.json(None, &["stats"]);
    assert!(s["luna"].is_null(), "SoftHSM2 has no CA_*: {s}");
}

#[test]
fn probes_from_the_command_line() {
    let h = Hsmc::builtin();
    let pin = Some(console::builtin::USER_PIN);
    let list = h.json(None, &["probe", "--list"]);
    assert!(list
        .as_array()
        .unwrap()
        .iter()
        .any(|x| x["name"] == "ml-dsa-65-sign" && x["offered"] == true));
    let (out, csv, svg) = (
        h.data.path().join("probe.json"),
        h.data.path().join("probe.csv"),
        h.data.path().join("probe.svg"),
    );
    let r = h.json(
        pin,
        &[
            "probe",
            "--op",
            "ecdsa-p256-sign",
            "--sweep",
            "1,2",
            "--duration",
            "0.5",
            "--out",
            out.to_str().unwrap(),
            "--csv",
            csv.to_str().unwrap(),
            "--svg",
            svg.to_str().unwrap(),
            "--capacity-target",
            "500",
        ],
    );
    assert_eq!(r["report"]["sweep"].as_array().unwrap().len(), 2);
    assert!(r["report"]["verdict"].is_string());
    assert!(r["capacity"]["hsms"].as_u64().unwrap() >= 1);
    let saved: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(saved["id"], r["report"]["id"]);
    assert_eq!(std::fs::read_to_string(&csv).unwrap().lines().count(), 3);
    assert!(std::fs::read_to_string(&svg)
        .unwrap()
        .contains("concurrency sweep"));
    let o = h.run(pin, &["probe", "--op", "no-such-probe"]);
    assert_eq!(code(&o), 2);
    let t = TestToken::new(Backend::SoftHsm);
    let h = Hsmc::token(&t);
    let r = h.json(
        Some(testkit::USER_PIN),
        &["probe", "--op", "random32", "--iterations", "200"],
    );
    assert_eq!(r["report"]["runs"][0]["calls"], 200);
    assert_eq!(r["report"]["runs"][0]["latency"]["count"], 200);
    let o = h.run(
        Some(testkit::USER_PIN),
        &["--json", "probe", "--op", "ml-dsa-65-sign"],
    );
    assert_eq!(code(&o), 1, "SoftHSM2 has no ML-DSA");
    assert!(String::from_utf8_lossy(&o.stderr).contains("does not offer"));
}

#[test]
fn pins_are_in_no_output_log_or_file() {
    const WRONG: &str = "wrong-pin-97531";
    let t = TestToken::new(Backend::SoftHsm);
    let h = Hsmc::token(&t);
    let mut seen: Vec<(String, Vec<u8>)> = Vec::new();
    let mut run = |pin: &str, args: &[&str]| {
        let mut c = h.cmd(args);
        c.env("HSMC_PIN", pin).env("HSMC_LOG", "trace");
        let o = c.output().unwrap();
        seen.push((format!("stdout of {args:?}"), o.stdout));
        seen.push((format!("stderr of {args:?}"), o.stderr));
        o.status.code()
    };
    assert_eq!(run(WRONG, &["keys", "ls"]), Some(1));
    assert_eq!(run(WRONG, &["--json", "keys", "ls"]), Some(1));
    let user = testkit::USER_PIN;
    assert_eq!(
        run(
            user,
            &["keys", "gen", "-a", "ec-p256", "-l", "pin_probe", "--token"]
        ),
        Some(0)
    );
    assert_eq!(run(user, &["--json", "keys", "ls"]), Some(0));
    assert_eq!(run(user, &["audit", "verify"]), Some(0));
    let out = h.data.path().join("trail.jsonl");
    assert_eq!(
        run(user, &["audit", "export", "--out", out.to_str().unwrap()]),
        Some(0)
    );
    let files = testkit::files_under(h.data.path());
    assert!(files.iter().any(|f| f.ends_with("audit.db")), "{files:?}");
    for f in files {
        seen.push((f.display().to_string(), std::fs::read(&f).unwrap()));
    }
    assert!(
        seen.iter()
            .any(|(w, b)| w.starts_with("stderr") && String::from_utf8_lossy(b).contains(" DEBUG ")),
        "HSMC_LOG=trace reached the log"
    );
    for (what, bytes) in &seen {
        for pin in [user, WRONG] {
            for form in [pin.as_bytes().to_vec(), hex_of(pin).into_bytes()] {
                assert!(
                    !bytes.windows(form.len()).any(|w| w == form.as_slice()),
                    "a PIN ({pin}) is in {what}"
                );
            }
        }
    }
}

fn hex_of(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

/// `kill -9` of hsmc in the middle of a signing batch, at three different moments: every
/// signature file under its final name is complete and verifies, the audit trail verifies
/// and covers every file that got a signature (write-ahead), and the next run clears the
/// dead writer's temporary files.
#[test]
fn kill_9_during_signing_loses_nothing_and_writes_no_half_file() {
    let t = TestToken::new(Backend::SoftHsm);
    let h = Hsmc::token(&t);
    let pin = testkit::USER_PIN;
    h.json(
        Some(pin),
        &["keys", "gen", "-a", "ec-p256", "-l", "kill_key", "--token"],
    );
    for (round, delay_ms) in [0u64, 40, 150].into_iter().enumerate() {
        let dir = h.data.path().join(format!("batch{round}"));
        std::fs::create_dir_all(&dir).unwrap();
        let files: Vec<PathBuf> = (0..80)
            .map(|i| {
                let f = dir.join(format!("artifact-{i:03}.bin"));
                std::fs::write(&f, vec![(i * 7 + round) as u8; 4096 + i * 97]).unwrap();
                f
            })
            .collect();
        let mut args = vec!["sign".to_string()];
        args.extend(files.iter().map(|f| f.display().to_string()));
        args.extend(["--key", "label:kill_key", "--format", "cms,raw,bundle"].map(String::from));
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        kill_9_after_the_first_signature(&h, pin, &argv, &dir, delay_ms);

        let outputs: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| !files.contains(p))
            .collect();
        let signed: Vec<&PathBuf> = files
            .iter()
            .filter(|f| {
                dir.join(format!("{}.p7s", f.file_name().unwrap().to_string_lossy()))
                    .exists()
            })
            .collect();
        assert!(
            !signed.is_empty() && signed.len() < files.len(),
            "round {round}: killed mid-batch ({} of {} signed)",
            signed.len(),
            files.len()
        );
        every_output_under_its_final_name_verifies(&h, pin, round, &dir, &outputs);
        the_trail_verifies_and_covers_every_signed_file(&h, pin, round, &signed);
        running_the_batch_again_finishes_it(&h, pin, round, &dir, &argv, &files, &signed);
    }
}

/// hsmc `argv` started with `pin`, killed with SIGKILL `delay_ms` after its first
/// signature appeared in `dir`.
fn kill_9_after_the_first_signature(h: &Hsmc, pin: &str, argv: &[&str], dir: &Path, delay_ms: u64) {
    let mut child = h.cmd(argv).env("HSMC_PIN", pin).spawn().unwrap();
    // Wait for the first signature, then kill at this round's moment.
    let t0 = std::time::Instant::now();
    while !dir.join("artifact-000.bin.p7s").exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "hsmc ended before signing"
        );
        assert!(t0.elapsed().as_secs() < 60, "no signature after 60 s");
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    std::thread::sleep(std::time::Duration::from_millis(delay_ms));
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert!(!status.success());
}

/// Every signature file under its final name in `dir` (`outputs`) is complete and
/// verifies; a temporary file is hidden.
fn every_output_under_its_final_name_verifies(
    h: &Hsmc,
    pin: &str,
    round: usize,
    dir: &Path,
    outputs: &[PathBuf],
) {
    let pub_pem = h.data.path().join(format!("kill_key{round}.pub.pem"));
    h.json(
        Some(pin),
        &[
            "keys",
            "export-pub",
            "label:kill_key",
            "--format",
            "pem",
            "--out",
            pub_pem.to_str().unwrap(),
        ],
    );
    for o in outputs {
        let name = o.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".partial") {
            assert!(name.starts_with('.'), "a temporary file is hidden: {name}");
            continue;
        }
        let (artifact, kind) = if let Some(a) = name.strip_suffix(".p7s") {
            (a, "cms")
        } else if let Some(a) = name.strip_suffix(".sig.json") {
            (a, "bundle")
        } else if let Some(a) = name.strip_suffix(".sig") {
            (a, "raw")
        } else {
            panic!("round {round}: unexpected file {name}");
        };
        let a = dir.join(artifact);
        let ok = if kind == "raw" {
            verify_release(&[Path::new(kind), &a, o, &pub_pem])
        } else {
            verify_release(&[Path::new(kind), &a, o])
        };
        assert!(
            ok,
            "round {round}: {name} is not a complete, valid signature"
        );
    }
}

/// The trail verifies and its write-ahead record covers every file that was signed.
fn the_trail_verifies_and_covers_every_signed_file(
    h: &Hsmc,
    pin: &str,
    round: usize,
    signed: &[&PathBuf],
) {
    let v = h.json(Some(pin), &["audit", "verify"]);
    assert_eq!(v["verdict"]["verdict"], "intact", "round {round}: {v}");
    let tail = h.json(None, &["audit", "tail", "-n", "1000"]);
    let request = tail
        .as_array()
        .unwrap()
        .iter()
        .rfind(|r| r["action"] == "sign.batch")
        .map(|r| r["metadata"].to_string())
        .expect("the write-ahead record");
    for f in signed {
        assert!(
            request.contains(&*f.file_name().unwrap().to_string_lossy()),
            "round {round}: {} signed but not in the write-ahead record",
            f.display()
        );
    }
}

/// Running the batch again finishes it: a file with a signature already there is
/// refused by name (nothing is overwritten), the rest are signed, and no temporary
/// file is left.
fn running_the_batch_again_finishes_it(
    h: &Hsmc,
    pin: &str,
    round: usize,
    dir: &Path,
    argv: &[&str],
    files: &[PathBuf],
    signed: &[&PathBuf],
) {
    let mut again = vec!["--json"];
    again.extend_from_slice(argv);
    again.push("--continue-on-error");
    let o = h.run(Some(pin), &again);
    let report: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    for (f, r) in files.iter().zip(report["files"].as_array().unwrap()) {
        let name = f.file_name().unwrap().to_string_lossy();
        if r["error"].is_null() {
            for suffix in ["p7s", "sig", "sig.json"] {
                assert!(
                    dir.join(format!("{name}.{suffix}")).exists(),
                    "round {round}: {name}.{suffix}"
                );
            }
        } else {
            assert!(
                r["error"]["message"]
                    .as_str()
                    .unwrap_or("")
                    .contains("already exists"),
                "round {round}: {name}: {}",
                r["error"]
            );
            assert!(
                signed.contains(&f),
                "round {round}: {name} refused but was never signed"
            );
        }
    }
    let left: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".partial"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// The built-in partition turned off in the settings: one error, from every command that
/// opens the console (an offline `verify` too), as text or as one JSON document on stderr;
/// `--module` is read once, spaces and all.
#[test]
fn an_unavailable_builtin_partition_is_one_error_in_text_and_json() {
    let h = Hsmc::builtin();
    let settings = h.data.path().join("no-builtin.json");
    std::fs::write(&settings, r#"{"builtin_enabled": false}"#).unwrap();
    let settings = settings.to_str().unwrap();
    let o = h.run(None, &["--json", "--config", settings, "slots"]);
    assert_eq!(code(&o), 4, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stdout.is_empty());
    let err: Value = serde_json::from_slice(&o.stderr).unwrap();
    assert_eq!(err["error"]["code"], "HSM_UNAVAILABLE");
    assert_eq!(
        err["error"]["message"],
        "The built-in partition is not available."
    );
    assert_eq!(
        err["error"]["suggestion"],
        "Build it (make run) or choose a module with --module."
    );
    let o = h.run(
        None,
        &[
            "--config",
            settings,
            "verify",
            "a.bin",
            "--sig",
            "a.bin.p7s",
        ],
    );
    assert_eq!(code(&o), 4);
    assert!(o.stdout.is_empty());
    let text = String::from_utf8_lossy(&o.stderr);
    assert!(
        text.starts_with("error [HSM_UNAVAILABLE]: The built-in partition is not available.\n"),
        "{text}"
    );
    assert!(
        text.ends_with("  what to do: Build it (make run) or choose a module with --module.\n"),
        "{text}"
    );
    let slots = h.json(None, &["--module", " builtin ", "slots"]);
    assert_eq!(slots[0]["token"]["label"], console::builtin::TOKEN_LABEL);
}

/// Views whose text and JSON differ in more than layout: each form checked on its own.
#[test]
fn one_view_as_text_and_as_json() {
    let h = Hsmc::builtin();
    let pin = Some(console::builtin::USER_PIN);
    info_is_aligned_text_and_sorted_json(&h);
    a_session_keys_note_is_for_people_only(&h, pin);
    a_der_public_key_is_its_bytes_or_base64_and_refused_on_a_terminal(&h, pin);
    a_request_written_to_a_file_is_one_line_or_one_document(&h, pin);
    the_checkpoint_key_is_a_pem_said_on_stderr_in_text_only(&h, pin);
    // A statistics sample is one line in either form.
    let o = h.run(None, &["stats"]);
    assert_eq!(stdout(&o).lines().count(), 1);
    assert!(stdout(&o).contains("  sessions "), "{}", stdout(&o));
    let o = h.run(None, &["--json", "stats"]);
    assert_eq!(stdout(&o).lines().count(), 1);
    let _: Value = serde_json::from_str(stdout(&o).trim_end()).unwrap();
    a_long_key_generation_warns_first_on_stderr_in_either_form(&h);
}

/// info: aligned lines; the JSON document composed of two views has its keys sorted.
fn info_is_aligned_text_and_sorted_json(h: &Hsmc) {
    let o = h.run(None, &["info"]);
    assert!(
        stdout(&o).contains("\nfamily        luna\n"),
        "{}",
        stdout(&o)
    );
    assert!(stdout(&o)
        .ends_with("note          software emulator (lunasim) - not for production keys\n"));
    let o = h.run(None, &["--json", "info"]);
    assert!(
        stdout(&o).starts_with("{\n  \"app\": {\n"),
        "{}",
        stdout(&o)
    );
}

/// A session key: the note that it ends with hsmc is for people only.
fn a_session_keys_note_is_for_people_only(h: &Hsmc, pin: Option<&str>) {
    let o = h.run(pin, &["keys", "gen", "-a", "aes-128", "-l", "session_text"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o)
        .ends_with("note: a session object, gone when hsmc exits; add --persistent to keep it\n"));
    let o = h.run(
        pin,
        &[
            "--json",
            "keys",
            "gen",
            "-a",
            "aes-128",
            "-l",
            "session_json",
        ],
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["label"], "session_json");
    assert!(!stdout(&o).contains("note:"));
}

/// A DER public key is a JSON document with its bytes in base64, and as text its bytes
/// themselves when stdout is a pipe or a file (as `openssl … -outform DER` and `gpg
/// --output -` do); on a terminal it is refused, a usage error, rather than garbling it.
/// `--persistent` is `keys gen --token`'s new name.
fn a_der_public_key_is_its_bytes_or_base64_and_refused_on_a_terminal(h: &Hsmc, pin: Option<&str>) {
    h.json(
        pin,
        &[
            "keys",
            "gen",
            "-a",
            "ec-p256",
            "-l",
            "forms_ec",
            "--persistent",
        ],
    );
    let der = ["keys", "export-pub", "label:forms_ec", "--format", "der"];
    let v = h.json(pin, &der);
    assert_eq!(v["format"], "der");
    assert!(v["base64"].is_string() && v["text"].is_null(), "{v}");
    let o = h.run(pin, &der);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        o.stdout,
        console::keys::base64_decode(v["base64"].as_str().unwrap()).unwrap(),
        "the same bytes as the JSON form"
    );
    let der_file = h.data.path().join("forms_ec.der");
    std::fs::write(&der_file, &o.stdout).unwrap();
    assert_eq!(python_key_type(&der_file), "ec:secp256r1");
    let mut line = format!("{}", testkit::hsmc_binary().display());
    for a in der {
        line.push(' ');
        line.push_str(a);
    }
    // On a terminal (`script` gives the command a pseudo-terminal).
    let o = {
        let mut c = Command::new("script");
        c.args(["-qefc", &line, "/dev/null"])
            .env_remove("LUNASIM_CONF")
            .env("HSMC_PIN", console::builtin::USER_PIN)
            .env("HSMC_DATA_DIR", h.data.path())
            .env("HSMC_MODULE", &h.module)
            .stdin(Stdio::null());
        c.output().unwrap()
    };
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    assert!(
        stdout(&o).contains("DER and raw keys are binary; give --out FILE or redirect"),
        "{}",
        stdout(&o)
    );
}

/// A request written to a file: one line of text, or exactly this document.
fn a_request_written_to_a_file_is_one_line_or_one_document(h: &Hsmc, pin: Option<&str>) {
    let csr = h.data.path().join("forms.csr");
    let csr_arg = csr.to_str().unwrap();
    let cert = [
        "keys",
        "cert",
        "label:forms_ec",
        "--csr",
        "--subject",
        "CN=forms",
        "--out",
        csr_arg,
    ];
    let o = h.run(pin, &cert);
    assert_eq!(stdout(&o), format!("wrote {csr_arg}\n"));
    std::fs::remove_file(&csr).unwrap();
    let mut json_cert = vec!["--json"];
    json_cert.extend_from_slice(&cert);
    let o = h.run(pin, &json_cert);
    assert_eq!(
        stdout(&o),
        format!(
            "{{\n  \"kind\": \"csr\",\n  \"path\": {}\n}}\n",
            serde_json::to_string(csr_arg).unwrap()
        )
    );
    assert!(std::fs::read_to_string(&csr)
        .unwrap()
        .starts_with("-----BEGIN CERTIFICATE REQUEST-----"));
}

/// The checkpoint key is a PEM in either form; written to a file, it is said on stderr
/// in text and not at all in JSON.
fn the_checkpoint_key_is_a_pem_said_on_stderr_in_text_only(h: &Hsmc, pin: Option<&str>) {
    let o = h.run(pin, &["--json", "audit", "public-key"]);
    assert!(stdout(&o).starts_with("-----BEGIN PUBLIC KEY-----\n"));
    let pem = h.data.path().join("cp.pem");
    let pem_arg = pem.to_str().unwrap();
    let o = h.run(pin, &["audit", "public-key", "--out", pem_arg]);
    assert_eq!(
        (stdout(&o), stderr(&o)),
        (String::new(), format!("wrote {pem_arg}\n"))
    );
    let o = h.run(pin, &["--json", "audit", "public-key", "--out", pem_arg]);
    assert_eq!(code(&o), 0);
    assert_eq!((stdout(&o), stderr(&o)), (String::new(), String::new()));
}

/// A warning before a long key generation comes first on stderr, in either form; with
/// --json the error after it is still one JSON line.
fn a_long_key_generation_warns_first_on_stderr_in_either_form(h: &Hsmc) {
    let big = [
        "--json",
        "keys",
        "gen",
        "-a",
        "hss",
        "-l",
        "big",
        "--hss-lms",
        "LMS_SHA256_M32_H15",
        "--hss-lmots",
        "LMOTS_SHA256_N32_W8",
    ];
    let o = h.run(None, &big);
    assert_eq!(code(&o), 2);
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert!(
        lines[0].starts_with("note: Key generation of an H15 tree"),
        "{err}"
    );
    let e: Value = serde_json::from_str(lines.last().unwrap()).unwrap();
    assert_eq!(e["error"]["code"], "INVALID_INPUT");
    let o = h.run(None, &big[1..]);
    assert!(stderr(&o).starts_with("note: Key generation of an H15 tree"));
    assert!(stderr(&o).contains("error [INVALID_INPUT]: This command needs a PIN."));
}

/// OpenPGP and minisign as a release pipeline writes them: the certificate and
/// `minisign.pub` exported, artifacts signed, each checked by Debian's gpg and minisign and
/// by `hsmc verify`; a changed artifact fails all three; bad input is refused by name.
#[test]
fn openpgp_and_minisign_release_signing_from_the_command_line() {
    let h = Hsmc::builtin();
    let pin = Some(console::builtin::USER_PIN);
    for (alg, label) in [("ed25519", "rel_ed25519"), ("ec-p256", "rel_p256")] {
        h.json(pin, &["keys", "gen", "-a", alg, "-l", label, "--token"]);
    }
    let dir = h.data.path().join("pgp");
    std::fs::create_dir_all(&dir).unwrap();
    let art = dir.join("app-2.0.tar.gz");
    std::fs::write(&art, vec![3u8; 50_000]).unwrap();
    let (cert, mpub) = (dir.join("key.asc"), dir.join("minisign.pub"));
    let uid = "Release Signing <release@example.org>";
    let fpr = openpgp_certificate_and_minisign_key_exported(&h, pin, uid, &cert, &mpub);
    let r = h.json(
        pin,
        &[
            "sign",
            &p(&art),
            "--key",
            "label:rel_ed25519",
            "--format",
            "openpgp,minisign",
            "--manifest",
        ],
    );
    assert!(r["files"][0]["error"].is_null(), "{r}");
    let (asc, minisig, sums) = (
        dir.join("app-2.0.tar.gz.asc"),
        dir.join("app-2.0.tar.gz.minisig"),
        dir.join("SHA256SUMS.asc"),
    );
    assert!(asc.exists() && minisig.exists() && sums.exists(), "{r}");

    let home = tempfile::tempdir().unwrap();
    let gpg = |args: &[&str]| {
        Command::new("gpg")
            .args(["--batch", "--no-tty", "--status-fd", "1", "--homedir"])
            .arg(home.path())
            .args(args)
            .output()
            .unwrap()
    };
    assert!(gpg(&["--import", &p(&cert)]).status.success());
    let good = |o: &Output| {
        o.status.success()
            && String::from_utf8_lossy(&o.stdout).contains(&format!("[GNUPG:] VALIDSIG {fpr}"))
    };
    assert!(good(&gpg(&["--verify", &p(&asc), &p(&art)])));
    assert!(good(&gpg(&["--verify", &p(&sums)])));
    let minisign = || {
        Command::new("minisign")
            .args(["-V", "-m", &p(&art), "-p", &p(&mpub)])
            .output()
            .unwrap()
    };
    assert!(minisign().status.success());
    for (sig, key) in [(&asc, &cert), (&minisig, &mpub)] {
        let v = h.json(
            None,
            &["verify", &p(&art), "--sig", &p(sig), "--pub", &p(key)],
        );
        assert_eq!(v["valid"], true, "{v}");
    }
    // The binary form for the ECDSA key, beside the armored one of the other key.
    let r = h.json(
        pin,
        &[
            "sign",
            &p(&art),
            "--key",
            "label:rel_p256",
            "--format",
            "openpgp",
            "--openpgp-binary",
        ],
    );
    assert_eq!(
        r["files"][0]["outputs"][0]["path"],
        format!("{}.gpg", art.display()).as_str(),
        "{r}"
    );

    let mut bytes = std::fs::read(&art).unwrap();
    bytes[25_000] ^= 1;
    std::fs::write(&art, bytes).unwrap();
    assert!(!good(&gpg(&["--verify", &p(&asc), &p(&art)])));
    assert!(!minisign().status.success());
    for (sig, key) in [(&asc, &cert), (&minisig, &mpub)] {
        let o = h.run(
            None,
            &["verify", &p(&art), "--sig", &p(sig), "--pub", &p(key)],
        );
        assert_eq!(code(&o), 3, "a changed artifact");
    }
    bad_input_is_refused_by_name_with_nothing_written(&h, pin, &dir);
    let _ = Command::new("gpgconf")
        .arg("--homedir")
        .arg(home.path())
        .args(["--kill", "all"])
        .output();
}

/// The OpenPGP certificate of `rel_ed25519` for `uid` (to `cert`), its fingerprint the same
/// when made again, and its `minisign.pub` (to `mpub`): the fingerprint.
fn openpgp_certificate_and_minisign_key_exported(
    h: &Hsmc,
    pin: Option<&str>,
    uid: &str,
    cert: &Path,
    mpub: &Path,
) -> String {
    let c = h.json(
        pin,
        &[
            "keys",
            "openpgp",
            "label:rel_ed25519",
            "--uid",
            uid,
            "--out",
            &p(cert),
        ],
    );
    let fpr = c["fingerprint"].as_str().unwrap().to_string();
    assert_eq!(c["creation_time_stored"], true, "{c}");
    let again = h.json(pin, &["keys", "openpgp", "label:rel_ed25519", "--uid", uid]);
    assert_eq!(
        again["fingerprint"],
        fpr.as_str(),
        "the fingerprint never changes"
    );
    h.json(
        pin,
        &[
            "keys",
            "minisign-pub",
            "label:rel_ed25519",
            "--out",
            &p(mpub),
        ],
    );
    fpr
}

/// Bad input: a user ID with a newline (usage, nothing written); minisign with a P-256
/// key (refused before anything is signed); --openpgp-binary without openpgp (usage).
fn bad_input_is_refused_by_name_with_nothing_written(h: &Hsmc, pin: Option<&str>, dir: &Path) {
    let never = dir.join("never.asc");
    let o = h.run(
        pin,
        &[
            "keys",
            "openpgp",
            "label:rel_p256",
            "--uid",
            "Release\nSigning",
            "--out",
            &p(&never),
        ],
    );
    assert_eq!(code(&o), 2, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("newline"));
    assert!(!never.exists());
    let other = dir.join("other.bin");
    std::fs::write(&other, b"x").unwrap();
    let o = h.run(
        pin,
        &[
            "sign",
            &p(&other),
            "--key",
            "label:rel_p256",
            "--format",
            "raw,minisign",
        ],
    );
    assert_eq!(code(&o), 1);
    assert!(String::from_utf8_lossy(&o.stderr).contains("Ed25519 keys only"));
    assert!(!dir.join("other.bin.sig").exists() && !dir.join("other.bin.minisig").exists());
    let o = h.run(
        pin,
        &[
            "sign",
            &p(&other),
            "--key",
            "label:rel_p256",
            "--openpgp-binary",
        ],
    );
    assert_eq!(code(&o), 2, "--openpgp-binary without openpgp");
}

/// Tried as a new user would on SoftHSM2: four keys generated, one deleted, the trail
/// intact; then the last record is deleted from the SQLite file. `hsmc audit verify` names a
/// truncated tail — the record missing and the checkpoint that vouches for it — because
/// the console writes nothing onto a trail a checkpoint proves was cut (its next record
/// would otherwise take the removed one's number and hide the removal); a change to the
/// token is refused meanwhile, saying why.
#[test]
fn a_deleted_last_record_is_a_truncated_tail_and_nothing_is_written_over_it() {
    let t = TestToken::new(Backend::SoftHsm);
    let h = Hsmc::token(&t);
    let pin = Some(testkit::USER_PIN);
    for i in 0..4 {
        let label = format!("trunc_{i}");
        h.json(
            pin,
            &["keys", "gen", "-a", "ec-p256", "-l", &label, "--token"],
        );
    }
    h.json(pin, &["keys", "rm", "label:trunc_0", "--yes"]);
    let v = h.json(pin, &["audit", "verify"]);
    assert_eq!(v["verdict"]["verdict"], "intact", "{v}");
    let db = h.audit_db();
    let max = |db: &Path| -> i64 {
        testkit::pg::sqlite3(db, "SELECT max(seq) FROM audit_log")
            .trim()
            .parse()
            .unwrap()
    };
    let last = max(&db);
    let vouched: i64 = testkit::pg::sqlite3(&db, "SELECT max(seq) FROM audit_checkpoint")
        .trim()
        .parse()
        .unwrap();
    assert_eq!(
        vouched, last,
        "the clean exit's checkpoint covers the last record"
    );
    testkit::pg::sqlite3(
        &db,
        "DELETE FROM audit_log WHERE seq = (SELECT max(seq) FROM audit_log)",
    );

    let o = h.run(pin, &["--json", "audit", "verify"]);
    assert_eq!(code(&o), 3, "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["verdict"]["finding"]["kind"], "truncated_tail", "{v}");
    assert_eq!(v["verdict"]["finding"]["last_seq"].as_i64(), Some(last - 1));
    assert_eq!(
        v["verdict"]["finding"]["checkpoint_seq"].as_i64(),
        Some(last)
    );
    assert_eq!(v["verdict"]["first_bad_seq"].as_i64(), Some(last));
    let o = h.run(pin, &["audit", "verify"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(&format!(
            "BROKEN at record {last}: The trail ends at record {}, but a signed checkpoint vouches for records up to {last}",
            last - 1
        )),
        "{text}"
    );
    assert_eq!(max(&db), last - 1, "nothing was written over the gap");

    let o = h.run(
        pin,
        &["--json", "keys", "gen", "-a", "aes-256", "-l", "after_cut"],
    );
    assert_eq!(
        code(&o),
        3,
        "AUDIT_BROKEN: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    let err: Value = serde_json::from_slice(&o.stderr).unwrap();
    assert_eq!(err["error"]["code"], "AUDIT_BROKEN", "{err}");
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("truncated"),
        "{err}"
    );
    assert_eq!(max(&db), last - 1, "still nothing written");
    let keys = h.json(pin, &["keys", "ls"]);
    assert!(
        !keys.to_string().contains("after_cut"),
        "the key was not generated: {keys}"
    );
}

#[test]
fn status_is_the_overview_and_exits_1_when_something_needs_attention() {
    let h = Hsmc::builtin();
    let pin = Some(console::builtin::USER_PIN);
    // Logged in, the trail verified, nothing wrong.
    assert_eq!(code(&h.run(pin, &["audit", "verify"])), 0);
    let o = h.run(pin, &["status"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let text = stdout(&o);
    assert!(text.starts_with("Partitions\n"), "{text}");
    assert!(text.contains(&format!("{} (serial ", console::builtin::TOKEN_LABEL)));
    assert!(text.contains("user logged in"), "{text}");
    assert!(text.ends_with("Nothing needs attention.\n"), "{text}");

    // A wrong PIN: the error in the terminal's language (the code stays English), and a
    // failed operation on the list from then on, so status exits 1.
    let o = h.run(Some("0000"), &["--lang", "zh-Hant", "keys", "ls"]);
    assert_eq!(code(&o), 1);
    assert!(
        stderr(&o).starts_with("error [PIN_INCORRECT]: PIN 不正確。"),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("請檢查 PIN 後再試一次"),
        "{}",
        stderr(&o)
    );
    let o = h
        .cmd(&["keys", "ls"])
        .env("HSMC_PIN", "0000")
        .env("LANG", "zh_CN.UTF-8")
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .output()
        .unwrap();
    assert!(
        stderr(&o).starts_with("error [PIN_INCORRECT]: PIN 不正确。"),
        "{}",
        stderr(&o)
    );
    // Failed logins wait for the trail's key (spooled); the next login chains them.
    let o = h.run(pin, &["status"]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert!(
        stdout(&o).contains("login failed (PIN_INCORRECT)."),
        "{}",
        stdout(&o)
    );
    let out = stdout(&o);
    assert!(
        out.contains("items need attention.") || out.contains("1 item needs attention."),
        "{out}"
    );
    let o = h.run(None, &["--lang", "zh-Hant", "status"]);
    assert_eq!(code(&o), 1);
    assert!(stdout(&o).starts_with("分割區\n"), "{}", stdout(&o));
    assert!(stdout(&o).contains("項需要注意"), "{}", stdout(&o));

    // JSON: the overview as the app receives it, the same exit code.
    let o = h.run(None, &["--json", "status"]);
    assert_eq!(code(&o), 1);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["partitions"][0]["label"], console::builtin::TOKEN_LABEL);
    assert!(v["attention"].as_u64().unwrap() >= 2, "{v}");
    let failure = &v["failures"]["items"][0];
    assert_eq!(failure["message"]["key"], "overview.items.failed_operation");
    assert_eq!(failure["link"]["view"], "audit");
    assert_eq!(failure["severity"], "warning");
}

/// `hsmc sign --tsa URL --tsa-ca FILE` against a real TSA on 127.0.0.1 (`openssl ts
/// -reply`): the CMS carries a token `openssl ts -verify` accepts; `hsmc verify` shows the
/// time and the TSA in text and JSON; a TSA that refuses fails the file with exit 1 and
/// its URL; a URL that is not HTTP(S) is a usage error (exit 2) before anything is signed.
#[test]
fn sign_with_a_timestamp_authority_and_verify_shows_it() {
    let tsa = testkit::tsa::TestTsa::start("ec");
    let h = Hsmc::builtin();
    let pin = Some(console::builtin::USER_PIN);
    h.json(
        pin,
        &["keys", "gen", "-a", "ec-p256", "-l", "tsa_p256", "--token"],
    );
    let dir = h.data.path().join("tsa");
    std::fs::create_dir_all(&dir).unwrap();
    let art = dir.join("app-3.0.tar.gz");
    std::fs::write(&art, vec![5u8; 10_000]).unwrap();
    let ca = p(&tsa.ca());
    let r = h.json(
        pin,
        &[
            "sign",
            &p(&art),
            "--key",
            "label:tsa_p256",
            "--format",
            "cms",
            "--tsa",
            &tsa.url("ok"),
            "--tsa-ca",
            &ca,
            "--tsa-timeout",
            "15",
        ],
    );
    let p7s = PathBuf::from(r["files"][0]["outputs"][0]["path"].as_str().unwrap());
    let parsed = signing::cms::parse(&std::fs::read(&p7s).unwrap()).unwrap();
    let (ok, msg) = testkit::tsa::openssl_ts_verify(
        &parsed.timestamp_token.unwrap(),
        &parsed.signature,
        &tsa.ca(),
    );
    assert!(ok, "openssl ts -verify: {msg}");
    let v = h.json(None, &["verify", &p(&art), "--sig", &p(&p7s)]);
    assert_eq!(v["valid"], true, "{v}");
    assert_eq!(
        v["timestamp"]["tsa_subject"], "O=Timestamps,CN=Test TSA",
        "{v}"
    );
    let o = h.run(None, &["verify", &p(&art), "--sig", &p(&p7s)]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("  timestamp   20")
            && text.contains("  TSA         O=Timestamps,CN=Test TSA"),
        "{text}"
    );

    let other = dir.join("app-3.1.tar.gz");
    std::fs::write(&other, vec![6u8; 10_000]).unwrap();
    let o = h.run(
        pin,
        &[
            "sign",
            &p(&other),
            "--key",
            "label:tsa_p256",
            "--tsa",
            &tsa.url("reject"),
        ],
    );
    assert_eq!(code(&o), 1);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("NOT SIGNED") && out.contains(&tsa.url("reject")) && out.contains("rejection"),
        "{out}"
    );
    assert!(!dir.join("app-3.1.tar.gz.p7s").exists());
    // --tsa-optional: the signature is kept, without a time-stamp, and the output says so.
    let o = h.run(
        pin,
        &[
            "sign",
            &p(&other),
            "--key",
            "label:tsa_p256",
            "--tsa",
            &tsa.url("reject"),
            "--tsa-optional",
        ],
    );
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("note: Signed without a time-stamp: the TSA") && out.contains("rejection"),
        "{out}"
    );
    let kept = dir.join("app-3.1.tar.gz.p7s");
    let parsed = signing::cms::parse(&std::fs::read(&kept).unwrap()).unwrap();
    assert!(parsed.timestamp_token.is_none());
    let v = h.json(None, &["verify", &p(&other), "--sig", &p(&kept)]);
    assert_eq!(v["valid"], true, "{v}");
    let o = h.run(
        pin,
        &[
            "sign",
            &p(&other),
            "--key",
            "label:tsa_p256",
            "--tsa",
            "ftp://tsa.example/",
        ],
    );
    assert_eq!(code(&o), 2, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("http:// or https://"));
}

/// A verifier kit as a release's users get it: every format signed with a P-256 and an
/// Ed25519 key (one file name with a space and a quote), the kit's own `verify.sh` run —
/// openssl, gpg, minisign, ssh-keygen, sha256sum and `hsmc verify` each check their
/// signatures — then one artifact changed, and the script fails naming it. A kit is refused before anything
/// is signed when its folder exists or OpenPGP signatures have no user ID.
#[test]
fn a_verifier_kit_checks_every_signature_with_the_standard_tools() {
    let h = Hsmc::builtin();
    let pin = Some(console::builtin::USER_PIN);
    let uid = "Release Signing <release@example.org>";
    for (alg, label, formats) in [
        ("ec-p256", "kit_p256", "cms,raw,bundle,openpgp,sshsig"),
        (
            "ed25519",
            "kit_ed25519",
            "cms,raw,bundle,openpgp,minisign,sshsig",
        ),
    ] {
        h.json(pin, &["keys", "gen", "-a", alg, "-l", label, "--token"]);
        let rel = h.data.path().join(format!("release-{label}"));
        std::fs::create_dir_all(&rel).unwrap();
        let arts = [
            rel.join("app-1.0.tar.gz"),
            rel.join("notes for 1.0's users.txt"),
        ];
        std::fs::write(&arts[0], vec![7u8; 70_000]).unwrap();
        std::fs::write(&arts[1], b"what changed\n").unwrap();
        let kit = rel.join("kit");
        let key = format!("label:{label}");
        let (a0, a1, k) = (p(&arts[0]), p(&arts[1]), p(&kit));
        let r = h.json(
            pin,
            &[
                "sign",
                &a0,
                &a1,
                "--key",
                &key,
                "--format",
                formats,
                "--manifest",
                "--kit",
                &k,
                "--uid",
                uid,
            ],
        );
        let checks = r["kit"]["checks"].as_array().expect("a kit in the report");
        let tools: std::collections::BTreeSet<&str> =
            checks.iter().map(|c| c["tool"].as_str().unwrap()).collect();
        let mut expected = vec!["gpg", "hsmc", "openssl", "sha256sum", "ssh-keygen"];
        if alg == "ed25519" {
            expected.insert(2, "minisign");
        }
        assert_eq!(tools.into_iter().collect::<Vec<_>>(), expected, "{r}");
        // Two files × formats (OpenPGP once each), the manifest, its raw signature and
        // its cleartext-signed form.
        let per_file = formats.split(',').count();
        assert_eq!(checks.len(), 2 * per_file + 3, "{r}");
        for f in [
            "VERIFY.md",
            "verify.sh",
            "keys/public.pem",
            "keys/openpgp.asc",
            "keys/allowed_signers",
        ] {
            assert!(kit.join(f).is_file(), "{f} in the kit");
        }
        assert_eq!(kit.join("keys/minisign.pub").is_file(), alg == "ed25519");
        let md = std::fs::read_to_string(kit.join("VERIFY.md")).unwrap();
        for c in checks {
            assert!(
                md.contains(c["command"].as_str().unwrap()),
                "{c} in VERIFY.md"
            );
        }

        let verify_sh = || {
            Command::new(kit.join("verify.sh"))
                .env("HSMC", testkit::hsmc_binary())
                .env("HSMC_DATA_DIR", h.data.path())
                .env_remove("GNUPGHOME")
                .output()
                .unwrap()
        };
        let o = verify_sh();
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        assert!(
            o.status.success(),
            "verify.sh: {out}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        // Every check ran (and the certificate import).
        assert_eq!(
            out.lines().filter(|l| l.starts_with("ok ")).count(),
            checks.len() + 1,
            "{out}"
        );

        let mut bytes = std::fs::read(&arts[1]).unwrap();
        bytes[0] ^= 1;
        std::fs::write(&arts[1], bytes).unwrap();
        let o = verify_sh();
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        assert_eq!(o.status.code(), Some(1), "{out}");
        assert!(out.contains("FAIL  notes for 1.0's users.txt"), "{out}");
    }

    // Refused before anything is signed.
    let rel = h.data.path().join("release-refused");
    std::fs::create_dir_all(rel.join("kit")).unwrap();
    let art = rel.join("a.bin");
    std::fs::write(&art, b"a").unwrap();
    let (a, k) = (p(&art), p(&rel.join("kit")));
    let o = h.run(pin, &["sign", &a, "--key", "label:kit_p256", "--kit", &k]);
    assert_eq!(code(&o), 2, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("already exists"));
    let k2 = p(&rel.join("kit2"));
    let o = h.run(
        pin,
        &[
            "sign",
            &a,
            "--key",
            "label:kit_p256",
            "--format",
            "openpgp",
            "--kit",
            &k2,
        ],
    );
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("needs a user ID"));
    assert!(!rel.join("a.bin.p7s").exists() && !rel.join("a.bin.asc").exists());
    assert!(!rel.join("kit2").exists());
}

/// CMS signatures carry `signingCertificateV2` (RFC 5035), which binds the certificate CMS
/// leaves unsigned: Debian's OpenSSL reads the attribute and accepts the signature, and
/// the asn1crypto/pyca verifier checks the hash against the certificate. With one byte of
/// the embedded certificate changed (in its signature value, so it still parses and its key
/// is the same) that verifier and `hsmc verify` refuse it. (OpenSSL 3.0 checks the attribute
/// only while it validates the certificate path, which this self-signed certificate fails
/// anyway; `-noverify` skips both.)
#[test]
fn cms_binds_its_certificate_with_signing_certificate_v2() {
    let h = Hsmc::builtin();
    let pin = Some(console::builtin::USER_PIN);
    h.json(
        pin,
        &["keys", "gen", "-a", "ec-p256", "-l", "ess_p256", "--token"],
    );
    let art = h.data.path().join("app.bin");
    std::fs::write(&art, vec![5u8; 10_000]).unwrap();
    let r = h.json(
        pin,
        &[
            "sign",
            &p(&art),
            "--key",
            "label:ess_p256",
            "--format",
            "cms",
        ],
    );
    assert!(r["files"][0]["error"].is_null(), "{r}");
    let p7s = h.data.path().join("app.bin.p7s");
    let o = Command::new("openssl")
        .args(["cms", "-cmsout", "-print", "-inform", "DER", "-in"])
        .arg(&p7s)
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&o.stdout);
    assert!(
        printed.contains("id-smime-aa-signingCertificateV2"),
        "{printed}"
    );
    let o = Command::new("openssl")
        .args([
            "cms",
            "-verify",
            "-binary",
            "-inform",
            "DER",
            "-noverify",
            "-out",
            "/dev/null",
            "-in",
        ])
        .arg(&p7s)
        .arg("-content")
        .arg(&art)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(verify_release(&[Path::new("cms"), &art, &p7s]));
    assert_eq!(
        h.json(None, &["verify", &p(&art), "--sig", &p(&p7s)])["valid"],
        true
    );

    let bytes = std::fs::read(&p7s).unwrap();
    let cert = signing::cms::certificate(&signing::cms::parse(&bytes).unwrap())
        .map(|c| der::Encode::to_der(&c).unwrap())
        .unwrap();
    let at = bytes
        .windows(cert.len())
        .position(|w| w == cert.as_slice())
        .unwrap();
    let mut tampered = bytes.clone();
    tampered[at + cert.len() - 1] ^= 0x01;
    let bad = h.data.path().join("tampered.p7s");
    std::fs::write(&bad, &tampered).unwrap();
    assert!(!verify_release(&[Path::new("cms"), &art, &bad]));
    let o = h.run(None, &["--json", "verify", &p(&art), "--sig", &p(&bad)]);
    assert_ne!(
        code(&o),
        0,
        "hsmc verify accepted it: {}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn sign_with_a_chain_file_that_openssl_verifies_to_the_root() {
    let h = Hsmc::builtin();
    let pin = Some(console::builtin::USER_PIN);
    let dir = h.data.path().to_path_buf();
    root_and_intermediate_ca(&dir);
    let bundle = hsm_key_certified_by_the_intermediate(&h, pin, &dir);

    let art = dir.join("app.bin");
    std::fs::write(&art, vec![6u8; 5_000]).unwrap();
    let r = h.json(
        pin,
        &[
            "sign",
            &p(&art),
            "--key",
            "label:chain_p256",
            "--chain",
            &p(&bundle),
        ],
    );
    assert!(r["files"][0]["error"].is_null(), "{r}");
    assert_eq!(r["key"]["certificate_subject"], "CN=Chain release", "{r}");
    let cms_verify = |art: &Path| {
        let p7s = format!("{}.p7s", art.display());
        Command::new("openssl")
            .current_dir(&dir)
            .args(["cms", "-verify", "-binary", "-inform", "DER", "-in", &p7s])
            .args([
                "-content",
                &p(art),
                "-CAfile",
                "root.pem",
                "-purpose",
                "any",
            ])
            .args(["-out", "/dev/null"])
            .output()
            .unwrap()
    };
    let o = cms_verify(&art);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // Without the chain file the console issues its self-signed certificate: OpenSSL
    // finds no path to the root.
    let alone = dir.join("alone.bin");
    std::fs::write(&alone, vec![7u8; 5_000]).unwrap();
    let r = h.json(pin, &["sign", &p(&alone), "--key", "label:chain_p256"]);
    assert!(r["files"][0]["error"].is_null(), "{r}");
    assert_ne!(r["key"]["certificate_subject"], "CN=Chain release", "{r}");
    assert!(
        !cms_verify(&alone).status.success(),
        "verified without the chain"
    );

    // A file that is not a certificate: refused by name, nothing written; invalid input
    // exits 2 (usage), as every request refused before signing does.
    let notes = dir.join("notes.txt");
    std::fs::write(&notes, "not a certificate").unwrap();
    let other = dir.join("other.bin");
    std::fs::write(&other, b"other").unwrap();
    let o = h.run(
        pin,
        &[
            "sign",
            &p(&other),
            "--key",
            "label:chain_p256",
            "--chain",
            &p(&notes),
        ],
    );
    assert_eq!(code(&o), 2, "{}", String::from_utf8_lossy(&o.stderr));
    let said =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert!(said.contains("notes.txt"), "{said}");
    assert!(!dir.join("other.bin.p7s").exists());
}

/// `openssl ARGS` in `dir`, which must succeed.
fn openssl_in(dir: &Path, args: &[&str]) {
    let o = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A root CA and an intermediate it signed (EC P-256 keys, made by OpenSSL) in `dir`, with
/// the extension files for a CA and a code-signing leaf.
fn root_and_intermediate_ca(dir: &Path) {
    let openssl = |args: &[&str]| openssl_in(dir, args);
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
    ];
    let mut a = vec!["req", "-x509"];
    a.extend(ec);
    a.extend([
        "-keyout",
        "root.key",
        "-out",
        "root.pem",
        "-subj",
        "/CN=Chain Root",
        "-days",
        "30",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign",
    ]);
    openssl(&a);
    let mut a = vec!["req"];
    a.extend(ec);
    a.extend([
        "-keyout",
        "int.key",
        "-out",
        "int.csr",
        "-subj",
        "/CN=Chain Intermediate",
    ]);
    openssl(&a);
    std::fs::write(
        dir.join("ca.ext"),
        "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign\n",
    )
    .unwrap();
    std::fs::write(dir.join("leaf.ext"), "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=codeSigning\n").unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "int.csr",
        "-CA",
        "root.pem",
        "-CAkey",
        "root.key",
        "-set_serial",
        "2",
        "-days",
        "30",
        "-extfile",
        "ca.ext",
        "-out",
        "int.pem",
    ]);
}

/// The HSM key `chain_p256`, its CSR signed by the intermediate; one PEM with the issued
/// certificate and the intermediate, nothing imported: its path.
fn hsm_key_certified_by_the_intermediate(h: &Hsmc, pin: Option<&str>, dir: &Path) -> PathBuf {
    let openssl = |args: &[&str]| openssl_in(dir, args);
    h.gen_token_key(pin, "ec-p256", "chain_p256");
    let csr = dir.join("leaf.csr");
    h.json(
        pin,
        &[
            "keys",
            "cert",
            "label:chain_p256",
            "--csr",
            "--subject",
            "CN=Chain release",
            "--out",
            &p(&csr),
        ],
    );
    openssl(&[
        "x509",
        "-req",
        "-in",
        "leaf.csr",
        "-CA",
        "int.pem",
        "-CAkey",
        "int.key",
        "-set_serial",
        "9",
        "-days",
        "30",
        "-extfile",
        "leaf.ext",
        "-out",
        "leaf.pem",
    ]);
    // One PEM with the issued certificate and the intermediate, nothing imported.
    let bundle = dir.join("chain.pem");
    let mut all = std::fs::read(dir.join("int.pem")).unwrap();
    all.extend(std::fs::read(dir.join("leaf.pem")).unwrap());
    std::fs::write(&bundle, all).unwrap();
    bundle
}

/// `hsmc sign` of a batch whose files change after they were hashed (lunasim holds each
/// `C_Sign` back 2 s, and the test changes the files once the batch's request is in the
/// trail): each changed file is refused by name with what changed — truncated, replaced by
/// rename — no output is left beside it, the exit code says the batch failed, and the
/// trail verifies with the refusals in it.
#[test]
fn files_changed_after_hashing_are_never_signed_over_their_old_bytes() {
    let (t, control) = testkit::setup::LunasimControl::token();
    let dir = &control.dir;
    let h = Hsmc::token(&t);
    let pin = Some(testkit::USER_PIN);
    h.gen_token_key(pin, "ec-p256", "changing");
    let files: Vec<PathBuf> = (0..2)
        .map(|i| {
            let f = dir.path().join(format!("release-{i}.tar"));
            std::fs::write(&f, vec![b'a' + i as u8; 4096]).unwrap();
            f
        })
        .collect();
    control.send(r#"{"op":"slow","function":"C_Sign","ms":2000}"#);
    let mut c = h.cmd(&[
        "--json",
        "sign",
        files[0].to_str().unwrap(),
        files[1].to_str().unwrap(),
        "--key",
        "label:changing",
        "--format",
        "raw,bundle",
        "--continue-on-error",
    ]);
    c.env("HSMC_PIN", testkit::USER_PIN)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    // The batch's request is recorded after every file was hashed and before the first
    // is signed.
    let db = h.audit_db();
    let requested = || {
        testkit::pg::sqlite3_poll(
            &db,
            "SELECT COUNT(*) FROM audit_log WHERE action = 'sign.batch'",
        )
        .as_deref()
            == Some("1")
    };
    let t0 = std::time::Instant::now();
    while !requested() {
        assert!(t0.elapsed().as_secs() < 60, "no sign.batch after 60 s");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Truncated while (or just before) the HSM signs it; replaced by rename before its turn.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&files[0])
        .unwrap()
        .set_len(1000)
        .unwrap();
    let tmp = dir.path().join("release-1.tar.new");
    std::fs::write(&tmp, b"another build").unwrap();
    std::fs::rename(&tmp, &files[1]).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let report: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    for (i, what) in [
        (0, "size went from 4096 to 1000 bytes"),
        (1, "another file was put in its place"),
    ] {
        let err = &report["files"][i]["error"];
        assert_eq!(err["code"], "FILE_CHANGED", "{report}");
        let msg = err["message"].as_str().unwrap();
        assert!(
            msg.contains(&format!("release-{i}.tar")) && msg.contains(what),
            "{msg}"
        );
        for suffix in ["sig", "sig.json"] {
            let out = PathBuf::from(format!("{}.{suffix}", files[i].display()));
            assert!(!out.exists(), "{} was left", out.display());
        }
    }
    let v = h.json(pin, &["audit", "verify"]);
    assert_eq!(v["verdict"]["verdict"], "intact", "{v}");
    let tail = h.json(None, &["audit", "tail", "-n", "50"]);
    let refusals = tail
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["action"] == "sign" && r["status"] == "failure")
        .filter(|r| r.to_string().contains("FILE_CHANGED"))
        .count();
    assert_eq!(refusals, 2, "{tail}");
}

/// `hsmc timestamp` adds a token to a CMS made by another tool (`openssl cms -sign`),
/// without logging in or a built-in partition: `openssl ts -verify` accepts it over the signature value and
/// `openssl cms -verify` still accepts the CMS; a second run is refused (exit 2, invalid
/// input, as a signature that exists already is at signing time) and leaves the file as it
/// is; without --tsa nor a TSA in the settings it is refused before anything.
#[test]
fn timestamp_adds_a_token_to_a_signature_made_earlier() {
    let tsa = testkit::tsa::TestTsa::start("ec");
    let h = Hsmc::builtin();
    let d = tsa.dir.path();
    let art = d.join("app.bin");
    std::fs::write(&art, b"made elsewhere").unwrap();
    let p7s = d.join("app.bin.p7s");
    let o = Command::new("openssl")
        .current_dir(d)
        .args([
            "cms", "-sign", "-binary", "-outform", "DER", "-signer", "ca.pem",
        ])
        .args(["-inkey", "ca.key", "-in", &p(&art), "-out", &p(&p7s)])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let args = ["timestamp", &p(&p7s), "--tsa", &tsa.url("ok"), "--tsa-ca"];
    let ca = p(&tsa.ca());
    let r = h.json(None, &[&args[..], &[ca.as_str()]].concat());
    assert_eq!(r["format"], "cms", "{r}");
    assert_eq!(r["timestamps"].as_array().unwrap().len(), 1, "{r}");
    let parsed = signing::cms::parse(&std::fs::read(&p7s).unwrap()).unwrap();
    let (ok, msg) = testkit::tsa::openssl_ts_verify(
        &parsed.timestamp_token.expect("a token"),
        &parsed.signature,
        &tsa.ca(),
    );
    assert!(ok, "openssl ts -verify: {msg}");
    let o = Command::new("openssl")
        .args(["cms", "-verify", "-binary", "-inform", "DER", "-noverify"])
        .args(["-in", &p(&p7s), "-content", &p(&art), "-out", "/dev/null"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let kept = std::fs::read(&p7s).unwrap();
    let o = h.run(None, &[&args[..], &[ca.as_str()]].concat());
    assert_eq!(code(&o), 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("already carries a time-stamp token"), "{err}");
    assert_eq!(std::fs::read(&p7s).unwrap(), kept);

    let o = h.run(None, &["timestamp", &p(&p7s)]);
    assert_ne!(code(&o), 0);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("needs --tsa"), "{err}");
}

/// `hsmc status` on a new partition exits 1 because its trail was never verified, and says
/// so (in each language) with the command that clears it; once verified it exits 0.
#[test]
fn a_new_partitions_first_red_status_says_why() {
    let h = Hsmc::builtin();
    let pin = Some(console::builtin::USER_PIN);
    h.json(
        pin,
        &["keys", "gen", "-a", "ed25519", "-l", "first_red", "--token"],
    );
    let o = h.run(pin, &["status"]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert!(
        stdout(&o).contains("Exit status 1: this audit trail has never been verified")
            && stdout(&o).contains("`hsmc audit verify`"),
        "{}",
        stdout(&o)
    );
    let o = h.run(pin, &["--lang", "zh-Hans", "status"]);
    assert!(stdout(&o).contains("退出状态为 1"), "{}", stdout(&o));
    h.json(pin, &["audit", "verify"]);
    let o = h.run(pin, &["status"]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert!(!stdout(&o).contains("Exit status 1"), "{}", stdout(&o));
}

/// Every `hsmc …` command a message in the catalogs names exists: `hsmc WORD --help`
/// succeeds, and so does `hsmc WORD SUB --help` when WORD has subcommands and the message
/// names one (a hint once named `hsmc keys limit`, which never existed). All three catalogs
/// (the code's English templates are en.json's, the catalogs test holds them to it); a
/// failure names the catalog, the key and the message.
#[test]
fn every_command_a_message_names_exists() {
    fn strings(v: &Value, key: String, out: &mut Vec<(String, String)>) {
        match v {
            Value::String(s) => out.push((key, s.clone())),
            Value::Object(m) => m.iter().for_each(|(k, v)| {
                let key = if key.is_empty() {
                    k.clone()
                } else {
                    format!("{key}.{k}")
                };
                strings(v, key, out)
            }),
            _ => {}
        }
    }
    let word = |r: &str| -> String {
        r.split(|c: char| !(c.is_ascii_lowercase() || c == '-'))
            .next()
            .unwrap_or("")
            .to_string()
    };
    let help = |args: &[&str]| {
        Command::new(testkit::hsmc_binary())
            .args(args)
            .arg("--help")
            .output()
            .unwrap()
    };
    let mut checked = 0;
    for lang in ["en", "zh-Hant", "zh-Hans"] {
        let path = testkit::repo_root().join(format!("locales/{lang}.json"));
        let catalog: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut all = Vec::new();
        strings(&catalog, String::new(), &mut all);
        for (key, message) in all {
            let mut rest = message.as_str();
            while let Some(i) = rest.find("hsmc ") {
                rest = &rest[i + 5..];
                let first = word(rest);
                if first.is_empty() {
                    continue;
                }
                // The second word counts only when it follows the first after one space.
                let second = rest[first.len()..].strip_prefix(' ').map(word);
                let o = help(&[&first]);
                assert!(
                    o.status.success(),
                    "{lang}.json {key}: hsmc {first} does not exist: {message}"
                );
                checked += 1;
                let has_subcommands = stdout(&o).contains("\nCommands:");
                if let (true, Some(sub)) = (has_subcommands, second.filter(|w| !w.is_empty())) {
                    let o = help(&[&first, &sub]);
                    assert!(
                        o.status.success(),
                        "{lang}.json {key}: hsmc {first} {sub} does not exist: {message}"
                    );
                }
            }
        }
    }
    assert!(checked >= 15, "the catalogs name hsmc commands: {checked}");
}

/// Each subcommand's summary in `hsmc --help` and in every group's help (`keys`, `pin`,
/// `token`, `ha`, …, found from the top level) is one short line; the details are in the
/// subcommand's own help.
#[test]
fn subcommand_summaries_are_one_short_line() {
    let help = |args: &[&str]| {
        let o = Command::new(testkit::hsmc_binary())
            .args(args)
            .arg("--help")
            .output()
            .unwrap();
        assert!(o.status.success(), "hsmc {args:?} --help");
        stdout(&o)
    };
    let commands = |help: &str| -> Vec<String> {
        help.split("\nCommands:\n")
            .nth(1)
            .map(|c| {
                c.split("\n\n")
                    .next()
                    .unwrap()
                    .lines()
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default()
    };
    let top = commands(&help(&[]));
    let mut groups: Vec<Vec<String>> = vec![Vec::new()];
    for line in &top {
        let name = line.split_whitespace().next().unwrap().to_string();
        if name != "help" && !commands(&help(&[&name])).is_empty() {
            groups.push(vec![name]);
        }
    }
    assert!(groups.len() >= 8, "groups found: {groups:?}");
    for g in groups {
        let args: Vec<&str> = g.iter().map(String::as_str).collect();
        for line in commands(&help(&args)) {
            assert!(
                line.chars().count() <= 100,
                "hsmc {g:?} --help: a summary longer than a line: {line}"
            );
        }
    }
}

/// `--json` run expected to fail: its exit code and error document.
fn failure(h: &Hsmc, pin: Option<&str>, args: &[&str]) -> (i32, Value) {
    let mut a = vec!["--json"];
    a.extend_from_slice(args);
    let o = h.run(pin, &a);
    let err = serde_json::from_slice(&o.stderr)
        .unwrap_or_else(|_| panic!("hsmc {args:?}: no error document: {}", text(&o)));
    (code(&o), err)
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Backups under the officers' control from the command line, on lunasim: `keys gen
/// --extractable` makes a key that leaves only under a trusted wrapping key; the user cannot
/// mark one trusted, the SO (`--so keys set … --set trusted=true`) can; `keys wrap` refuses
/// an untrusted key, and a key without CKA_WRAP_WITH_TRUSTED until --confirm-untrusted.
#[test]
fn backups_stay_under_the_officers_control_from_the_command_line() {
    let t = TestToken::new(Backend::LunaSim);
    let h = Hsmc::token(&t);
    let (user, so) = (Some(testkit::USER_PIN), Some(testkit::SO_PIN));
    extractable_aes_carries_wrap_with_trusted_and_hss_never_leaves(&h, user);
    rsa_transport_key_imported_as_its_own_object(&h, user);
    let out = h.data.path().join("bk_aes.wrapped.json");
    let out_s = out.to_str().unwrap();
    let wrap = [
        "keys",
        "wrap",
        "label:bk_aes",
        "--with",
        "label:bk_transport",
        "-o",
        out_s,
    ];
    let (c, err) = failure(&h, user, &wrap);
    assert_ne!(c, 0);
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not trusted"),
        "{err}"
    );
    assert!(!out.exists());

    let trust = ["keys", "set", "label:bk_transport", "--set", "trusted=true"];
    let (_, err) = failure(&h, user, &trust);
    assert_eq!(err["error"]["code"], "NOT_AUTHORIZED", "{err}");
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("security officer"),
        "{err}"
    );
    let mut as_so = vec!["--so"];
    as_so.extend_from_slice(&trust);
    let r = h.json(so, &as_so);
    assert_eq!(r["summary"]["trusted"], true, "{r}");

    let w = h.json(user, &wrap);
    assert!(out.exists(), "{w}");
    a_key_without_wrap_with_trusted_is_wrapped_once_confirmed(&t, &h, user);
}

/// `keys gen --extractable`: an AES key with CKA_WRAP_WITH_TRUSTED; an HSS key refused.
fn extractable_aes_carries_wrap_with_trusted_and_hss_never_leaves(h: &Hsmc, user: Option<&str>) {
    let g = h.json(
        user,
        &[
            "keys",
            "gen",
            "-a",
            "aes-256",
            "-l",
            "bk_aes",
            "--persistent",
            "--extractable",
        ],
    );
    assert_eq!(g["extractable"], true);
    assert_eq!(g["wrap_with_trusted"], true);
    let (c, err) = failure(
        h,
        user,
        &[
            "keys",
            "gen",
            "-a",
            "hss",
            "--hss-lms",
            "LMS_SHA256_M32_H5",
            "--hss-lmots",
            "LMOTS_SHA256_N32_W8",
            "-l",
            "bk_hss",
            "--persistent",
            "--extractable",
        ],
    );
    assert_ne!(c, 0);
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("never extractable"),
        "{err}"
    );
}

/// The transport key: an RSA public key imported as its own object (`bk_transport`).
fn rsa_transport_key_imported_as_its_own_object(h: &Hsmc, user: Option<&str>) {
    h.json(
        user,
        &[
            "keys",
            "gen",
            "-a",
            "rsa-2048",
            "-l",
            "bk_rsa",
            "--persistent",
        ],
    );
    let pem = h.data.path().join("transport.pub.pem");
    h.json(
        user,
        &[
            "keys",
            "export-pub",
            "label:bk_rsa",
            "--out",
            pem.to_str().unwrap(),
        ],
    );
    h.json(
        user,
        &[
            "objects",
            "import",
            pem.to_str().unwrap(),
            "--label",
            "bk_transport",
        ],
    );
}

/// A key made by another tool, without CKA_WRAP_WITH_TRUSTED: only once confirmed.
fn a_key_without_wrap_with_trusted_is_wrapped_once_confirmed(
    t: &TestToken,
    h: &Hsmc,
    user: Option<&str>,
) {
    let s = t.user_session();
    s.generate_key(
        &p11::Mechanism::new(p11::sys::CKM_AES_KEY_GEN),
        &mut p11::Template::new()
            .ulong(p11::sys::CKA_CLASS, p11::sys::CKO_SECRET_KEY)
            .ulong(p11::sys::CKA_VALUE_LEN, 32)
            .bool(p11::sys::CKA_TOKEN, true)
            .bool(p11::sys::CKA_SENSITIVE, true)
            .bool(p11::sys::CKA_EXTRACTABLE, true)
            .text(p11::sys::CKA_LABEL, "loose")
            .bytes(p11::sys::CKA_ID, b"loose"),
    )
    .unwrap();
    drop(s);
    let loose = h.data.path().join("loose.json");
    let mut wrap_loose = vec![
        "keys",
        "wrap",
        "label:loose",
        "--with",
        "label:bk_transport",
        "-o",
        loose.to_str().unwrap(),
    ];
    let (_, err) = failure(h, user, &wrap_loose);
    assert!(
        err["error"]["suggestion"]
            .as_str()
            .unwrap()
            .contains("--confirm-untrusted"),
        "{err}"
    );
    wrap_loose.push("--confirm-untrusted");
    h.json(user, &wrap_loose);
    assert!(loose.exists());
}

/// `hsmc pqc` on a Kryoptic token holding every family it offers: each key's class,
/// category and dates under both shipped policies (the expected values written from the
/// standards in `hsmc-pqc`'s table), the same keys `pkcs11-tool` lists, exit 1 under a
/// policy that makes one past due, and a bad policy file refused with its line.
#[test]
fn pqc_readiness_from_the_command_line() {
    let t = TestToken::new(Backend::Kryoptic);
    let h = Hsmc::token(&t);
    let pin = Some(testkit::USER_PIN);
    for (alg, label) in [
        ("rsa-2048", "pqc_rsa"),
        ("p-256", "pqc_ec"),
        ("ml-dsa-44", "pqc_mldsa44"),
        ("ml-dsa-87", "pqc_mldsa87"),
        ("ml-kem-768", "pqc_mlkem768"),
        ("aes-128", "pqc_aes128"),
    ] {
        h.json(pin, &["keys", "gen", "-a", alg, "-l", label, "--token"]);
    }
    let used = a_key_is_used_and_another_dated(&h, pin);
    let nist = h.json(pin, &["pqc"]);
    the_trail_says_which_keys_are_used(&nist, &used);
    the_capacity_costs_the_trail_at_the_successors_probe(&h, pin, &nist);
    nist_ir_8547_classes_and_dates_every_key(&nist);
    let keys_listed = the_table_holds_every_key_pkcs11_tool_lists(&t, &nist);
    cnsa_2_dates_what_is_outside_its_suite(&h, pin);
    certificates_are_judged_by_their_key_and_signature(&h, pin);
    an_organisations_policy_makes_rsa_2048_past_due(&h, pin);
    the_cbom_is_valid_cyclonedx_and_never_written_over(&h, pin, keys_listed);
    a_policy_file_with_a_bad_date_is_refused_naming_the_line(&h, pin);
}

/// `pqc_ec` signs a release file (recorded in the trail); `pqc_rsa` gets a start and an
/// end date. The file signed.
fn a_key_is_used_and_another_dated(h: &Hsmc, pin: Option<&str>) -> PathBuf {
    let file = h.data.path().join("release-1.0.tar.gz");
    std::fs::write(&file, b"release").unwrap();
    let r = h.json(
        pin,
        &[
            "sign",
            &p(&file),
            "--key",
            "label:pqc_ec",
            "--format",
            "raw",
        ],
    );
    assert!(r["files"][0]["error"].is_null(), "{r}");
    for (flag, date) in [("--start-date", "2026-01-01"), ("--end-date", "2030-12-31")] {
        h.json(pin, &["keys", "set", "label:pqc_rsa", flag, date]);
    }
    file
}

/// Evidence of use from the trail: the key that signed says when and what, and ranks first
/// (the policy judges every key here alike); an unused key says it was never seen. The
/// dates set on a key are in its row.
fn the_trail_says_which_keys_are_used(v: &Value, signed: &Path) {
    let ec = pqc_row(v, "pqc_ec", "PRIVATE_KEY");
    assert_eq!(ec["evidence"]["seen"], true, "{ec}");
    assert_eq!(ec["evidence"]["uses_30_days"], 1, "{ec}");
    assert_eq!(ec["evidence"]["uses_90_days"], 1, "{ec}");
    assert_eq!(
        ec["evidence"]["recent_artifacts"][0],
        signed.file_name().unwrap().to_str().unwrap(),
        "{ec}"
    );
    assert!(ec["evidence"]["last_use"].as_str().is_some(), "{ec}");
    let first = &v["partitions"][0]["objects"][0];
    assert_eq!(first["label"], "pqc_ec", "the used key ranks first: {v}");
    let rsa = pqc_row(v, "pqc_rsa", "PRIVATE_KEY");
    assert_eq!(rsa["evidence"]["seen"], false, "{rsa}");
    assert_eq!(rsa["evidence"]["uses_90_days"], 0, "{rsa}");
    assert_eq!(
        (rsa["start_date"].as_str(), rsa["end_date"].as_str()),
        (Some("2026-01-01"), Some("2030-12-31")),
        "{rsa}"
    );
}

/// The one signature of `pqc_ec` (P-256 → ML-DSA-65) is the partition's volume; until
/// ML-DSA-65 signing is probed there it asks for that probe, and after one it is costed at
/// the probe's best throughput: 1/60 per second at the peak minute, one HSM.
fn the_capacity_costs_the_trail_at_the_successors_probe(h: &Hsmc, pin: Option<&str>, v: &Value) {
    let c = &v["partitions"][0]["capacity"];
    assert_eq!(
        (&c["signatures"], &c["peak_per_minute"], &c["peak_per_day"]),
        (&json!(1), &json!(1), &json!(1)),
        "{c}"
    );
    assert_eq!(c["keys"].as_array().unwrap().len(), 1, "{c}");
    assert_eq!(
        (&c["keys"][0]["label"], &c["keys"][0]["costed_as"]),
        (&json!("pqc_ec"), &json!("ml-dsa-65-sign")),
        "{c}"
    );
    assert_eq!(c["verdict"], "needs_probe", "{c}");
    assert_eq!(c["operations"][0]["ceiling"], Value::Null, "{c}");
    let suggested = &v["partitions"][0]["suggested_probes"];
    assert_eq!(suggested[0]["op_name"], "ml-dsa-65-sign", "{suggested}");
    let probe = h.json(
        pin,
        &[
            "probe",
            "--op",
            "ml-dsa-65-sign",
            "--sweep",
            "1,2",
            "--duration",
            "0.3",
        ],
    );
    let best = probe["report"]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["throughput_per_s"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!(best > 0.0, "{probe}");
    let after = h.json(pin, &["pqc"]);
    let c = &after["partitions"][0]["capacity"];
    let op = &c["operations"][0];
    assert_eq!(op["ceiling"]["probe_id"], probe["report"]["id"], "{c}");
    assert_eq!(op["ceiling"]["per_s"].as_f64(), Some(best), "{c}");
    assert_eq!(
        (&c["verdict"], &c["hsms"]),
        (&json!("keeps_up"), &json!(1)),
        "{c}"
    );
    let share = c["peak_share"].as_f64().unwrap();
    assert!((share - 1.0 / 60.0 / best).abs() < 1e-9, "{c}");
    assert!(
        (c["headroom"].as_f64().unwrap() - 0.8 / share).abs() < 1e-6,
        "{c}"
    );
    assert_eq!(
        after["partitions"][0]["suggested_probes"],
        json!([]),
        "{after}"
    );
    let text = h.run(pin, &["pqc"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("Capacity over 90 days: 1 signature(s); peak 1 per minute")
            && text.contains("Keeps up: the peak minute takes"),
        "{text}"
    );
}

/// The row of the object `label` of `class` in a `pqc --json` report `v`.
fn pqc_row(v: &Value, label: &str, class: &str) -> Value {
    v["partitions"][0]["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["label"] == label && o["object_class"] == class)
        .cloned()
        .unwrap_or_else(|| panic!("{label} {class} in {v}"))
}

fn nist_ir_8547_classes_and_dates_every_key(nist: &Value) {
    assert_eq!(nist["policy"], "NIST IR 8547", "{nist}");
    for (label, class, quantum, category, disallowed) in [
        (
            "pqc_rsa",
            "PRIVATE_KEY",
            "quantum-vulnerable",
            0,
            Some("2035-12-31"),
        ),
        (
            "pqc_ec",
            "PUBLIC_KEY",
            "quantum-vulnerable",
            0,
            Some("2035-12-31"),
        ),
        ("pqc_mldsa44", "PRIVATE_KEY", "post-quantum", 2, None),
        ("pqc_mldsa87", "PRIVATE_KEY", "post-quantum", 5, None),
        ("pqc_mlkem768", "PRIVATE_KEY", "post-quantum", 3, None),
        ("pqc_aes128", "SECRET_KEY", "not-quantum-relevant", 1, None),
    ] {
        let o = pqc_row(nist, label, class);
        assert_eq!(o["algorithm"]["class"], quantum, "{o}");
        assert_eq!(o["algorithm"]["nist_category"], category, "{o}");
        assert_eq!(o["disallowed_after"].as_str(), disallowed, "{o}");
    }
    // RSA-2048 is 112-bit: deprecated after 2030 too, with a successor to sign with.
    let rsa = pqc_row(nist, "pqc_rsa", "PRIVATE_KEY");
    assert_eq!(rsa["algorithm"]["name"], "RSA-2048");
    assert_eq!(rsa["deprecated_after"], "2030-12-31");
    assert!(rsa["successor"]["preset"] == "ml-dsa-65", "{rsa}");
}

/// Every key pkcs11-tool lists is in the table, and no other key: how many it lists.
fn the_table_holds_every_key_pkcs11_tool_lists(t: &TestToken, nist: &Value) -> usize {
    let keys_listed = keys_pkcs11_tool_lists(t);
    let rows = nist["partitions"][0]["objects"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["object_class"] != "CERTIFICATE")
        .count();
    assert_eq!(
        rows, keys_listed,
        "the table holds every key pkcs11-tool lists"
    );
    keys_listed
}

/// The private, public and secret keys `pkcs11-tool --list-objects` lists on the token.
fn keys_pkcs11_tool_lists(t: &TestToken) -> usize {
    let listed = testkit::tools::text(&testkit::tools::pkcs11_tool(
        &t.module_path,
        t.env(),
        &[
            "--token-label",
            testkit::TOKEN_LABEL,
            "--login",
            "--pin",
            testkit::USER_PIN,
            "--list-objects",
        ],
    ));
    [
        "Private Key Object",
        "Public Key Object",
        "Secret Key Object",
    ]
    .iter()
    .map(|k| listed.matches(k).count())
    .sum::<usize>()
}

/// CNSA 2.0: only ML-DSA-87, ML-KEM-1024, AES-256 and LMS are in the suite.
fn cnsa_2_dates_what_is_outside_its_suite(h: &Hsmc, pin: Option<&str>) {
    let cnsa = h.json(pin, &["pqc", "--policy", "cnsa2"]);
    assert_eq!(
        pqc_row(&cnsa, "pqc_mldsa87", "PRIVATE_KEY")["disallowed_after"],
        Value::Null
    );
    assert_eq!(
        pqc_row(&cnsa, "pqc_mldsa44", "PRIVATE_KEY")["disallowed_after"],
        "2030-12-31"
    );
    assert_eq!(
        pqc_row(&cnsa, "pqc_mlkem768", "PRIVATE_KEY")["disallowed_after"],
        "2033-12-31"
    );
    assert_eq!(
        pqc_row(&cnsa, "pqc_aes128", "SECRET_KEY")["successor"]["preset"],
        "aes-256"
    );
}

/// Certificates, judged by their key and their signature: an RSA-2048 self-signed
/// certificate as its key; an ML-DSA-87 one in the CNSA 2.0 suite.
fn certificates_are_judged_by_their_key_and_signature(h: &Hsmc, pin: Option<&str>) {
    for key in ["label:pqc_rsa", "label:pqc_mldsa87"] {
        h.json(
            pin,
            &[
                "keys",
                "cert",
                key,
                "--self-signed",
                "--subject",
                "CN=pqc test",
            ],
        );
    }
    let cnsa = h.json(pin, &["pqc", "--policy", "cnsa2"]);
    let certs: Vec<Value> = cnsa["partitions"][0]["objects"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["object_class"] == "CERTIFICATE")
        .cloned()
        .collect();
    assert_eq!(certs.len(), 2, "{cnsa}");
    let cert = |key: &str| {
        certs
            .iter()
            .find(|c| c["algorithm"]["name"].as_str().unwrap().starts_with(key))
            .unwrap_or_else(|| panic!("a certificate of {key}: {certs:?}"))
    };
    let rsa_cert = cert("RSA-2048");
    assert_eq!(rsa_cert["algorithm"]["name"], "RSA-2048 signed with RSA");
    assert_eq!(rsa_cert["algorithm"]["class"], "quantum-vulnerable");
    assert_eq!(rsa_cert["disallowed_after"], "2030-12-31", "{rsa_cert}");
    let pq_cert = cert("ML-DSA-87");
    assert_eq!(
        pq_cert["algorithm"]["name"],
        "ML-DSA-87 signed with ML-DSA-87"
    );
    assert_eq!(pq_cert["algorithm"]["nist_category"], 5);
    assert_eq!(pq_cert["disallowed_after"], Value::Null, "{pq_cert}");
}

/// An organisation's policy, from the data folder: RSA-2048 past due — exit 1.
fn an_organisations_policy_makes_rsa_2048_past_due(h: &Hsmc, pin: Option<&str>) {
    let policies = h.data.path().join("policies");
    std::fs::create_dir_all(&policies).unwrap();
    std::fs::write(
        policies.join("corp.toml"),
        "name = \"Corp\"\nsource = \"standard 12\"\n\n[[rule]]\nalgorithms = [\"RSA-2048\"]\nverdict = \"retired\"\ndisallowed_after = 2020-12-31\n\n[[rule]]\nverdict = \"fine\"\n",
    )
    .unwrap();
    let o = h.run(pin, &["--json", "pqc", "--policy", "corp"]);
    assert_eq!(code(&o), 1, "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        pqc_row(&v, "pqc_rsa", "PRIVATE_KEY")["status"],
        "past-due",
        "{v}"
    );
    assert_eq!(
        v["counts"]["past_due"], 3,
        "the pair and its certificate (by its RSA-2048 key): {v}"
    );
}

/// What CycloneDX's own validator says of the CBOM `doc` ("valid", or its errors).
fn cyclonedx_verdict(doc: &str) -> String {
    let o = Command::new(testkit::python())
            .arg("-c")
            .arg("import sys\nfrom cyclonedx.validation.json import JsonStrictValidator\nfrom cyclonedx.schema import SchemaVersion\ne = JsonStrictValidator(SchemaVersion.V1_6).validate_str(sys.stdin.read())\nprint(e if e else 'valid')")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin.take().unwrap().write_all(doc.as_bytes())?;
                c.wait_with_output()
            })
            .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// The CBOM: valid CycloneDX 1.6 by CycloneDX's own validator, one component per key
/// pkcs11-tool lists (`keys_listed`), the same bytes twice but for its serial number and
/// time, never written over a file.
fn the_cbom_is_valid_cyclonedx_and_never_written_over(
    h: &Hsmc,
    pin: Option<&str>,
    keys_listed: usize,
) {
    let cbom = h.data.path().join("token.cbom.json");
    let o = h.run(pin, &["pqc", "--cbom", cbom.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let text1 = std::fs::read_to_string(&cbom).unwrap();
    assert_eq!(cyclonedx_verdict(&text1), "valid");
    // The validator is not blind: an asset type the schema does not know is refused.
    let broken = text1.replacen(
        "\"assetType\": \"algorithm\"",
        "\"assetType\": \"gadget\"",
        1,
    );
    assert_ne!(cyclonedx_verdict(&broken), "valid");
    let doc: Value = serde_json::from_str(&text1).unwrap();
    let token = doc["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "device")
        .unwrap();
    let held = token["components"].as_array().unwrap();
    let of = |asset: &str| {
        held.iter()
            .filter(|c| c["cryptoProperties"]["assetType"] == asset)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        of("related-crypto-material").len(),
        keys_listed,
        "one component per key"
    );
    // The dates set on pqc_rsa (CKA_START_DATE, CKA_END_DATE) are its activation and
    // expiration.
    let dated = of("related-crypto-material")
        .into_iter()
        .filter(|c| c["name"] == "pqc_rsa")
        .map(|c| &c["cryptoProperties"]["relatedCryptoMaterialProperties"])
        .find(|p| p["activationDate"].is_string())
        .unwrap_or_else(|| panic!("pqc_rsa with its dates: {token}"))
        .clone();
    assert_eq!(dated["activationDate"], "2026-01-01T00:00:00Z");
    assert_eq!(dated["expirationDate"], "2030-12-31T00:00:00Z");
    let cert_components = of("certificate");
    assert_eq!(cert_components.len(), 2, "one per certificate: {token}");
    let refs: Vec<&str> = doc["components"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["bom-ref"].as_str())
        .chain(held.iter().filter_map(|c| c["bom-ref"].as_str()))
        .collect();
    for c in cert_components {
        let p = &c["cryptoProperties"]["certificateProperties"];
        assert_eq!(p["subjectName"], "CN=pqc test", "{c}");
        for r in ["signatureAlgorithmRef", "subjectPublicKeyRef"] {
            let r = p[r].as_str().unwrap_or_else(|| panic!("{r} in {c}"));
            assert!(refs.contains(&r), "{r} names a component of the BOM");
        }
    }
    let again = h.data.path().join("again.cbom.json");
    h.run(pin, &["pqc", "--cbom", again.to_str().unwrap()]);
    let strip = |t: &str| {
        let mut v: Value = serde_json::from_str(t).unwrap();
        v["serialNumber"] = Value::Null;
        v["metadata"]["timestamp"] = Value::Null;
        v
    };
    assert_eq!(
        strip(&text1),
        strip(&std::fs::read_to_string(&again).unwrap())
    );
    let o = h.run(pin, &["pqc", "--cbom", cbom.to_str().unwrap()]);
    assert_ne!(code(&o), 0);
    assert_eq!(
        std::fs::read_to_string(&cbom).unwrap(),
        text1,
        "never written over"
    );
}

/// A policy file with a date in another form: refused, naming the line; nothing asked.
fn a_policy_file_with_a_bad_date_is_refused_naming_the_line(h: &Hsmc, pin: Option<&str>) {
    let bad = h.data.path().join("bad.toml");
    std::fs::write(
        &bad,
        "name = \"Bad\"\n[[rule]]\nverdict = \"v\"\ndisallowed_after = \"31.12.2030\"\n",
    )
    .unwrap();
    let o = h.run(pin, &["--json", "pqc", "--policy", bad.to_str().unwrap()]);
    assert_eq!(code(&o), 2);
    let e: Value = serde_json::from_slice(&o.stderr).unwrap();
    assert!(
        e["error"]["message"].as_str().unwrap().contains("line 4"),
        "{e}"
    );
}

/// The book's command reference (`docs/src/reference/`) is what `hsmc reference` writes
/// from the command line's definition, page for page, and the book's summary lists every
/// page: a command, option or help text changed without the book fails here.
/// `UPDATE_DOCS=1` writes the pages again.
#[test]
fn the_books_command_reference_is_the_command_line_definition() {
    let root = testkit::repo_root();
    let book = root.join("docs/src/reference");
    let fresh = tempfile::tempdir().unwrap();
    let o = Hsmc::builtin().run(
        None,
        &["reference", "--out", fresh.path().to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let pages = |dir: &Path| {
        let mut v: Vec<(String, String)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read_to_string(&p).unwrap())
            })
            .collect();
        v.sort();
        v
    };
    let want = pages(fresh.path());
    if std::env::var_os("UPDATE_DOCS").is_some() {
        let _ = std::fs::remove_dir_all(&book);
        std::fs::create_dir_all(&book).unwrap();
        for (name, text) in &want {
            std::fs::write(book.join(name), text).unwrap();
        }
    }
    let have = pages(&book);
    let names = |v: &[(String, String)]| v.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&have), names(&want), "pages: run with UPDATE_DOCS=1");
    for ((name, text), (_, fresh)) in have.iter().zip(&want) {
        assert_eq!(
            text, fresh,
            "docs/src/reference/{name} is stale: run with UPDATE_DOCS=1"
        );
    }
    let summary = std::fs::read_to_string(root.join("docs/src/SUMMARY.md")).unwrap();
    for (name, _) in &want {
        assert!(
            summary.contains(&format!("(reference/{name})")),
            "docs/src/SUMMARY.md does not list reference/{name}"
        );
    }
}

/// Run a program of another lineage (OpenSSH's ssh-keygen, git), optionally with a file on
/// its standard input, in `dir`.
fn outside(program: &str, dir: &Path, args: &[&str], stdin: Option<&Path>) -> Output {
    let mut c = Command::new(program);
    c.args(args).current_dir(dir);
    c.stdin(match stdin {
        Some(p) => Stdio::from(std::fs::File::open(p).unwrap()),
        None => Stdio::null(),
    });
    c.output()
        .unwrap_or_else(|e| panic!("{program} cannot run ({e})"))
}

/// The OpenSSH line of a PEM public key as pyca/cryptography writes it (another encoder
/// than the console's).
fn python_openssh_line(pem: &Path) -> String {
    let script = "import sys\nfrom cryptography.hazmat.primitives import serialization as s\nk=s.load_pem_public_key(open(sys.argv[1],'rb').read())\nprint(k.public_bytes(s.Encoding.OpenSSH, s.PublicFormat.OpenSSH).decode())";
    let o = Command::new(testkit::python())
        .arg("-c")
        .arg(script)
        .arg(pem)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// `keys ssh-pub` and `sign --format sshsig` for Ed25519 and ECDSA P-256 keys on lunasim
/// (built-in) and SoftHSM2: ssh-keygen reads the public key line, which is the HSM's key
/// (pyca/cryptography's encoding of the exported PEM), and `ssh-keygen -Y verify` accepts
/// the `.sshsig` files with the `allowed_signers` line and rejects them once the file
/// changed; other keys are refused by name, with nothing written.
#[test]
fn ssh_public_keys_and_sshsig_files_are_what_ssh_keygen_accepts() {
    let soft = TestToken::new(Backend::SoftHsm);
    for (h, pin) in [
        (Hsmc::builtin(), console::builtin::USER_PIN),
        (Hsmc::token(&soft), testkit::USER_PIN),
    ] {
        let pin = Some(pin);
        for (alg, label) in [
            ("ed25519", "ssh_ed25519"),
            ("ec-p256", "ssh_p256"),
            ("ec-p384", "ssh_p384"),
        ] {
            h.json(pin, &["keys", "gen", "-a", alg, "-l", label, "--token"]);
        }
        let dir = h.data.path().join("ssh");
        std::fs::create_dir_all(&dir).unwrap();
        for (label, kind, ssh_type) in [
            ("ssh_ed25519", "ED25519", "ssh-ed25519"),
            ("ssh_p256", "ECDSA", "ecdsa-sha2-nistp256"),
        ] {
            let pub_file = ssh_pub_line_is_the_hsm_key(&h, pin, &dir, label, kind, ssh_type);
            let signers = allowed_signers_file(&h, pin, &dir, label, ssh_type);
            sshsig_verifies_with_ssh_keygen_and_hsmc(&h, pin, &dir, label, &pub_file, &signers);
        }
        p384_keys_are_refused_by_name_with_nothing_written(&h, pin, &dir);
    }
}

/// `keys ssh-pub` of the key `label`: an `ssh_type` line ssh-keygen lists as `kind` with
/// the same fingerprint, and the HSM's public key as pyca/cryptography encodes it. The
/// line written to a file, which is returned.
fn ssh_pub_line_is_the_hsm_key(
    h: &Hsmc,
    pin: Option<&str>,
    dir: &Path,
    label: &str,
    kind: &str,
    ssh_type: &str,
) -> PathBuf {
    let k = h.json(pin, &["keys", "ssh-pub", &format!("label:{label}")]);
    let line = k["line"].as_str().unwrap();
    assert!(line.starts_with(&format!("{ssh_type} AAAA")), "{k}");
    assert!(line.ends_with(&format!(" {label}")), "{k}");
    let pub_file = dir.join(format!("{label}.pub"));
    let o = h.run(
        pin,
        &[
            "keys",
            "ssh-pub",
            &format!("label:{label}"),
            "--out",
            &p(&pub_file),
        ],
    );
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let l = outside("ssh-keygen", dir, &["-l", "-f", &p(&pub_file)], None);
    let listed = String::from_utf8_lossy(&l.stdout);
    assert!(l.status.success(), "{}", testkit::tools::text(&l));
    assert!(
        listed.contains(k["fingerprint"].as_str().unwrap())
            && listed.trim_end().ends_with(&format!("({kind})")),
        "{listed} vs {k}"
    );
    // The line is the HSM's public key, as another encoder writes it.
    let pem = dir.join(format!("{label}.pem"));
    h.json(
        pin,
        &[
            "keys",
            "export-pub",
            &format!("label:{label}"),
            "--out",
            &p(&pem),
        ],
    );
    let theirs = python_openssh_line(&pem);
    assert_eq!(
        line.split_whitespace().take(2).collect::<Vec<_>>(),
        theirs.split_whitespace().take(2).collect::<Vec<_>>()
    );
    pub_file
}

/// The key's `allowed_signers` line for release@example.org, namespace "file", written
/// to a file, which is returned.
fn allowed_signers_file(
    h: &Hsmc,
    pin: Option<&str>,
    dir: &Path,
    label: &str,
    ssh_type: &str,
) -> PathBuf {
    let signers = dir.join(format!("{label}.allowed_signers"));
    let a = h.json(
        pin,
        &[
            "keys",
            "ssh-pub",
            &format!("label:{label}"),
            "--allowed-signers",
            "release@example.org",
            "--namespaces",
            "file",
        ],
    );
    let entry = a["allowed_signers"].as_str().unwrap();
    assert!(
        entry.starts_with(&format!(
            "release@example.org namespaces=\"file\" {ssh_type} AAAA"
        )),
        "{a}"
    );
    std::fs::write(&signers, format!("{entry}\n")).unwrap();
    signers
}

/// An artifact signed as `.sshsig` by the key `label`: `ssh-keygen -Y verify` accepts it
/// in the "file" namespace only, `hsmc verify` with the key's line or the allowed_signers
/// line; neither once the artifact changed.
fn sshsig_verifies_with_ssh_keygen_and_hsmc(
    h: &Hsmc,
    pin: Option<&str>,
    dir: &Path,
    label: &str,
    pub_file: &Path,
    signers: &Path,
) {
    let art = dir.join(format!("{label}-app.tar.gz"));
    std::fs::write(&art, vec![7u8; 70_000]).unwrap();
    let r = h.json(
        pin,
        &[
            "sign",
            &p(&art),
            "--key",
            &format!("label:{label}"),
            "--format",
            "sshsig",
        ],
    );
    let sig = dir.join(format!("{label}-app.tar.gz.sshsig"));
    assert_eq!(r["files"][0]["outputs"][0]["format"], "sshsig", "{r}");
    assert_eq!(r["files"][0]["outputs"][0]["path"], p(&sig).as_str(), "{r}");
    assert!(std::fs::read_to_string(&sig)
        .unwrap()
        .starts_with("-----BEGIN SSH SIGNATURE-----\n"));
    let verify = |namespace: &str| {
        outside(
            "ssh-keygen",
            dir,
            &[
                "-Y",
                "verify",
                "-f",
                &p(signers),
                "-I",
                "release@example.org",
                "-n",
                namespace,
                "-s",
                &p(&sig),
            ],
            Some(&art),
        )
    };
    let v = verify("file");
    assert!(v.status.success(), "{}", testkit::tools::text(&v));
    assert!(
        String::from_utf8_lossy(&v.stdout).contains("Good \"file\" signature"),
        "{}",
        testkit::tools::text(&v)
    );
    assert!(!verify("git").status.success(), "another namespace");
    // hsmc verify reads it too, with the key's line or its allowed_signers line.
    let hsmc_verify = |key: &Path| {
        h.run(
            None,
            &[
                "--json",
                "verify",
                &p(&art),
                "--sig",
                &p(&sig),
                "--pub",
                &p(key),
            ],
        )
    };
    for key in [&pub_file, &signers] {
        let o = hsmc_verify(key);
        assert_eq!(code(&o), 0, "{}", testkit::tools::text(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(
            (v["valid"].clone(), v["format"].clone()),
            (true.into(), "sshsig".into()),
            "{v}"
        );
    }
    let mut bytes = std::fs::read(&art).unwrap();
    bytes[35_000] ^= 1;
    std::fs::write(&art, bytes).unwrap();
    assert!(!verify("file").status.success(), "a changed file");
    assert_eq!(code(&hsmc_verify(pub_file)), 3, "a changed file");
}

/// A P-384 key: refused by name, nothing signed or written.
fn p384_keys_are_refused_by_name_with_nothing_written(h: &Hsmc, pin: Option<&str>, dir: &Path) {
    let o = h.run(pin, &["keys", "ssh-pub", "label:ssh_p384"]);
    assert_eq!(code(&o), 1);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("Ed25519 and ECDSA P-256 keys only"), "{e}");
    let other = dir.join("other.bin");
    std::fs::write(&other, b"x").unwrap();
    let o = h.run(
        pin,
        &[
            "sign",
            &p(&other),
            "--key",
            "label:ssh_p384",
            "--format",
            "raw,sshsig",
        ],
    );
    assert_eq!(code(&o), 1);
    assert!(String::from_utf8_lossy(&o.stderr).contains("Ed25519 and ECDSA P-256 keys only"));
    assert!(!dir.join("other.bin.sig").exists() && !dir.join("other.bin.sshsig").exists());
}

/// git signs through `hsmc git-ssh` (gpg.format ssh, gpg.ssh.program a wrapper script that
/// execs it; user.signingkey the `keys ssh-pub` line), with Ed25519 and ECDSA P-256 keys on
/// SoftHSM2 and lunasim (built-in), the second beside the first: `git commit -S` and `git tag -s` succeed, stock
/// `git verify-commit`/`git verify-tag` with gpg.ssh.allowedSignersFile accept them
/// (verification passed through to ssh-keygen), a tag whose object was rewritten is
/// rejected, and the audit trail records each signature with its namespace, object type,
/// repository and payload hash.
#[test]
fn git_signs_commits_and_tags_through_hsmc_git_ssh() {
    let soft = TestToken::new(Backend::SoftHsm);
    let (on_soft, builtin) = (Hsmc::token(&soft), Hsmc::builtin());
    for (h, pin, alg) in [
        (&on_soft, testkit::USER_PIN, "ed25519"),
        (&on_soft, testkit::USER_PIN, "ec-p256"),
        (&builtin, console::builtin::USER_PIN, "ed25519"),
        (&builtin, console::builtin::USER_PIN, "ec-p256"),
    ] {
        git_signs_with_the_key(h, pin, alg);
    }
}

/// The key of `alg` made on `h`, its allowed_signers file, a repository whose git signs
/// through `hsmc git-ssh` with it: the signed commit and tag verify, a rewritten tag does
/// not, the trail has both signatures, a key not on the partition is refused.
fn git_signs_with_the_key(h: &Hsmc, pin: &str, alg: &str) {
    let label = format!("git_{alg}");
    h.json(
        Some(pin),
        &["keys", "gen", "-a", alg, "-l", &label, "--token"],
    );
    let dir = h.data.path().join(format!("git-{alg}"));
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let line = h.json(Some(pin), &["keys", "ssh-pub", &format!("label:{label}")])["line"]
        .as_str()
        .unwrap()
        .to_string();
    let signers = dir.join("allowed_signers");
    let o = h.run(
        Some(pin),
        &[
            "keys",
            "ssh-pub",
            &format!("label:{label}"),
            "--allowed-signers",
            "dev@example.org",
            "--out",
            &p(&signers),
        ],
    );
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let wrapper = git_ssh_wrapper(h, pin, &dir);
    let git = |args: &[&str]| git_in(&repo, &dir, args);
    ok(git(&["init", "-q", "-b", "main"]));
    for (k, v) in [
        ("user.name", "Dev"),
        ("user.email", "dev@example.org"),
        ("gpg.format", "ssh"),
        ("gpg.ssh.program", &p(&wrapper)),
        ("user.signingkey", &format!("key::{line}")),
        ("gpg.ssh.allowedSignersFile", &p(&signers)),
    ] {
        ok(git(&["config", k, v]));
    }
    std::fs::write(repo.join("README"), "release notes\n").unwrap();
    ok(git(&["add", "README"]));
    ok(git(&["commit", "-q", "-S", "-m", "first, signed"]));
    ok(git(&["tag", "-s", "v1.0", "-m", "release 1.0"]));
    let vc = ok(git(&["verify-commit", "HEAD"]));
    assert!(
        testkit::tools::text(&vc).contains("Good \"git\" signature for dev@example.org"),
        "{}",
        testkit::tools::text(&vc)
    );
    let vt = ok(git(&["verify-tag", "v1.0"]));
    assert!(testkit::tools::text(&vt).contains("Good \"git\" signature"));
    a_rewritten_tag_is_rejected(&repo, &dir, "-----BEGIN SSH SIGNATURE-----");
    each_git_signature_is_in_the_trail(h, &repo, &label, "sshsig");
    a_key_not_on_the_partition_is_refused(h, pin, &dir);
}

/// The wrapper git runs: the test's environment, then hsmc git-ssh.
fn git_ssh_wrapper(h: &Hsmc, pin: &str, dir: &Path) -> PathBuf {
    let mut script = String::from("#!/bin/sh\n");
    let mut env: Vec<(String, String)> = vec![
        ("HSMC_DATA_DIR".into(), p(h.data.path())),
        ("HSMC_MODULE".into(), h.module.clone()),
        ("HSMC_PIN".into(), pin.into()),
        ("USER".into(), "ci-officer".into()),
    ];
    env.extend(h.env.iter().cloned());
    for (k, v) in &env {
        script.push_str(&format!("export {k}='{}'\n", v.replace('\'', r"'\''")));
    }
    script.push_str(&format!(
        "exec '{}' git-ssh \"$@\"\n",
        testkit::hsmc_binary().display()
    ));
    let wrapper = dir.join("hsmc-git-ssh");
    std::fs::write(&wrapper, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    wrapper
}

/// git in `repo`, with `home` as HOME, no system configuration and no PIN of its own.
fn git_in(repo: &Path, home: &Path, args: &[&str]) -> Output {
    let (repo, dir) = (repo, home);
    let mut c = Command::new("git");
    c.args(args)
        .current_dir(repo)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .env_remove("HSMC_PIN")
        .env_remove("GNUPGHOME")
        .stdin(Stdio::null());
    c.output().unwrap()
}

/// `o`, having checked that it succeeded.
fn ok(o: Output) -> Output {
    assert!(o.status.success(), "{}", testkit::tools::text(&o));
    o
}

/// The tag's object rewritten to another commit, the signature (which starts with
/// `armor`) kept: rejected.
fn a_rewritten_tag_is_rejected(repo: &Path, dir: &Path, armor: &str) {
    let git = |args: &[&str]| git_in(repo, dir, args);
    std::fs::write(repo.join("README"), "other notes\n").unwrap();
    ok(git(&["commit", "-q", "-a", "-m", "second, unsigned"]));
    let second = String::from_utf8(ok(git(&["rev-parse", "HEAD"])).stdout).unwrap();
    let first = String::from_utf8(ok(git(&["rev-parse", "HEAD~1"])).stdout).unwrap();
    let tag = String::from_utf8(ok(git(&["cat-file", "tag", "v1.0"])).stdout).unwrap();
    assert!(tag.contains(armor), "{tag}");
    let forged = tag.replacen(first.trim(), second.trim(), 1);
    assert_ne!(forged, tag);
    let forged_file = dir.join("forged-tag");
    std::fs::write(&forged_file, forged).unwrap();
    let mut mktag = Command::new("git");
    mktag
        .args(["mktag"])
        .current_dir(repo)
        .env("HOME", dir)
        .stdin(Stdio::from(std::fs::File::open(&forged_file).unwrap()));
    let forged_id = String::from_utf8(ok(mktag.output().unwrap()).stdout).unwrap();
    let v = git(&["verify-tag", forged_id.trim()]);
    assert!(
        !v.status.success(),
        "a rewritten tag: {}",
        testkit::tools::text(&v)
    );
}

/// Each signature is in the trail in `format`: namespace (SSH), object, repository, payload
/// hash.
fn each_git_signature_is_in_the_trail(h: &Hsmc, repo: &Path, label: &str, format: &str) {
    let tail = h.json(None, &["audit", "tail", "-n", "30"]);
    let signs: Vec<Value> = tail
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["action"] == "sign" && r["status"] == "success")
        .map(|r| serde_json::from_str(r["metadata"].as_str().unwrap()).unwrap())
        .collect();
    let kinds: Vec<&str> = signs
        .iter()
        .filter(|m| {
            (format != "sshsig" || m["namespace"] == "git")
                && m["format"] == format
                && m["repository"] == p(repo).as_str()
        })
        .map(|m| {
            assert_eq!(m["sha512"].as_str().unwrap().len(), 128, "{m}");
            assert_eq!(m["key"]["label"], label, "{m}");
            m["object_type"].as_str().unwrap()
        })
        .collect();
    assert_eq!(kinds, ["commit", "tag"], "{tail}");
}

/// A key that is not on the partition: refused, nothing written.
fn a_key_not_on_the_partition_is_refused(h: &Hsmc, pin: &str, dir: &Path) {
    let stranger = dir.join("stranger.pub");
    std::fs::write(
        &stranger,
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl x\n",
    )
    .unwrap();
    let payload = dir.join("payload");
    std::fs::write(&payload, "tree 0\n").unwrap();
    let o = h.run(
        Some(pin),
        &[
            "git-ssh",
            "-Y",
            "sign",
            "-n",
            "git",
            "-f",
            &p(&stranger),
            &p(&payload),
        ],
    );
    assert_eq!(code(&o), 1);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("No private key on this partition"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!dir.join("payload.sig").exists());
}

/// `hsmc keys succession` from a P-256 key to an ML-DSA-87 key, and `hsmc verify` of the
/// statement: valid pinned to the old key, refused pinned to another, and a file that is no
/// statement needs --sig.
#[test]
fn a_key_succession_statement_from_the_command_line() {
    let h = Hsmc::builtin();
    let pin = Some(console::builtin::USER_PIN);
    for (alg, label) in [("ec-p256", "rel_p256"), ("ml-dsa-87", "rel_mldsa87")] {
        h.json(pin, &["keys", "gen", "-a", alg, "-l", label, "--token"]);
    }
    let dir = h.data.path().join("release");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("succession.json");
    let made = h.json(
        pin,
        &[
            "keys",
            "succession",
            "label:rel_p256",
            "label:rel_mldsa87",
            "--out",
            &p(&out),
            "--from",
            "2027-01-01",
        ],
    );
    assert_eq!(
        made["statement"]["old"]["algorithm"], "ECDSA P-256 SHA-256",
        "{made}"
    );
    assert_eq!(made["statement"]["new"]["algorithm"], "ML-DSA-87", "{made}");
    assert!(made["statement"]["transition_ends"].is_null(), "{made}");
    let old_pem = dir.join("rel_p256.pub.pem");
    for (label, pem) in [
        ("rel_p256", &old_pem),
        ("rel_mldsa87", &dir.join("rel_mldsa87.pub.pem")),
    ] {
        let sig = dir.join(format!("succession.json.{label}.sig"));
        assert!(
            verify_release(&[Path::new("raw"), &out, &sig, pem]),
            "{label}: the outside verifier"
        );
    }
    let v = h.json(None, &["verify", &p(&out), "--pub", &p(&old_pem)]);
    assert_eq!(v["valid"], true, "{v}");
    assert_eq!(v["format"], "succession", "{v}");
    let text = h.run(None, &["verify", &p(&out), "--pub", &p(&old_pem)]);
    assert!(
        stdout(&text).contains("rel_p256") && stdout(&text).contains("rel_mldsa87"),
        "{}",
        stdout(&text)
    );
    // In Chinese the entries name the old and new key in Chinese, "old"/"new" included.
    let zh = h.run(
        None,
        &[
            "--lang",
            "zh-Hant",
            "verify",
            &p(&out),
            "--pub",
            &p(&old_pem),
        ],
    );
    let zh_out = stdout(&zh);
    assert!(
        zh_out.contains("由舊金鑰「rel_p256」") && zh_out.contains("由新金鑰「rel_mldsa87」"),
        "{zh_out}"
    );
    let other = dir.join("rel_mldsa87.pub.pem");
    let o = h.run(None, &["verify", &p(&out), "--pub", &p(&other)]);
    assert_ne!(code(&o), 0, "pinned to another key: {}", stdout(&o));
    let o = h.run(None, &["verify", &p(&old_pem)]);
    assert_ne!(code(&o), 0);
    assert!(stderr(&o).contains("--sig"), "{}", stderr(&o));
    the_kit_carries_the_statement(&h, pin, &dir, &out);
}

/// A release signed by the new key with a verifier kit holding the statement: verify.sh
/// checks the statement too, and fails once the kit's copy is changed.
fn the_kit_carries_the_statement(h: &Hsmc, pin: Option<&str>, dir: &Path, statement: &Path) {
    let artifact = dir.join("app-2.0.tar.gz");
    std::fs::write(&artifact, vec![3u8; 10_000]).unwrap();
    let kit = dir.join("kit");
    let r = h.json(
        pin,
        &[
            "sign",
            &p(&artifact),
            "--key",
            "label:rel_mldsa87",
            "--format",
            "raw",
            "--kit",
            &p(&kit),
            "--succession",
            &p(statement),
        ],
    );
    assert!(r["kit_error"].is_null(), "{r}");
    let checks = r["kit"]["checks"].as_array().unwrap();
    assert!(checks.iter().any(|c| c["format"] == "succession"), "{r}");
    let md = std::fs::read_to_string(kit.join("VERIFY.md")).unwrap();
    assert!(md.contains("--pub OLD-KEY.pem"), "{md}");
    let verify_sh = || {
        Command::new(kit.join("verify.sh"))
            .env("HSMC", testkit::hsmc_binary())
            .env("HSMC_DATA_DIR", h.data.path())
            .output()
            .unwrap()
    };
    let o = verify_sh();
    assert!(
        o.status.success(),
        "verify.sh: {}{}",
        stdout(&o),
        stderr(&o)
    );
    assert_eq!(
        stdout(&o).lines().filter(|l| l.starts_with("ok ")).count(),
        checks.len(),
        "{}",
        stdout(&o)
    );
    let copy = kit.join("succession").join("succession.json");
    let changed = std::fs::read_to_string(&copy)
        .unwrap()
        .replace("2027-01-01", "2026-01-01");
    std::fs::write(&copy, changed).unwrap();
    assert_eq!(
        verify_sh().status.code(),
        Some(1),
        "a changed statement fails"
    );
}

/// `hsmc sign --key A --key B`: one batch dual-signed by Ed25519 and ML-DSA-65 — the text
/// names both keys and the signers of the shared `.p7s`; the JSON lists every key and, per
/// output, which keys signed it; `hsmc verify` accepts the `.p7s` (every signer without
/// `--pub`, the pinned signer with it), each key's raw signature and each key's signature
/// of SHA256SUMS; pyca checks both CMS signers. Two keys whose labels give one file name
/// are refused (exit 2) with nothing written.
#[test]
fn sign_with_two_keys_names_each_output_and_verify_checks_each_signer() {
    let h = Hsmc::builtin();
    let pin = Some(console::builtin::USER_PIN);
    h.json(
        pin,
        &["keys", "gen", "-a", "ed25519", "-l", "rel_ed", "--token"],
    );
    h.json(
        pin,
        &["keys", "gen", "-a", "ml-dsa-65", "-l", "rel_pq", "--token"],
    );
    let dir = h.data.path().join("dual");
    std::fs::create_dir_all(&dir).unwrap();
    let art = dir.join("app-1.0.tar.gz");
    std::fs::write(&art, vec![5u8; 20_000]).unwrap();
    let (a, keys) = (p(&art), ["--key", "label:rel_ed", "--key", "label:rel_pq"]);
    let mut args = vec!["sign", &a];
    args.extend(keys);
    args.extend(["--format", "cms,raw", "--manifest"]);
    let o = h.run(pin, &args);
    let text = stdout(&o);
    assert_eq!(code(&o), 0, "{text}{}", stderr(&o));
    assert!(
        text.contains(&format!("cms     {a}.p7s  (rel_ed + rel_pq)")),
        "{text}"
    );
    assert!(
        text.contains("with rel_ed (Ed25519) and rel_pq (ML-DSA-65)"),
        "{text}"
    );
    for k in ["rel_ed", "rel_pq"] {
        assert!(text.contains(&format!("raw     {a}.{k}.sig\n")), "{text}");
        let pem = p(&dir.join(format!("{k}.pub.pem")));
        let sig = format!("{a}.{k}.sig");
        let v = h.json(None, &["verify", &a, "--sig", &sig, "--pub", &pem]);
        assert_eq!(v["valid"], true, "{v}");
        let v = h.json(
            None,
            &["verify", &a, "--sig", &format!("{a}.p7s"), "--pub", &pem],
        );
        assert_eq!(v["valid"], true, "{v}");
        let sums = p(&dir.join("SHA256SUMS"));
        let msig = p(&dir.join(format!("SHA256SUMS.{k}.sig")));
        let v = h.json(None, &["verify", &sums, "--sig", &msig, "--pub", &pem]);
        assert_eq!(v["valid"], true, "{v}");
    }
    let v = h.json(None, &["verify", &a, "--sig", &format!("{a}.p7s")]);
    assert_eq!(v["valid"], true, "{v}");
    assert_eq!(v["algorithm"], "Ed25519 + ML-DSA-65", "{v}");
    let o = Command::new(testkit::python())
        .arg(testkit::repo_root().join("tests/interop/verify_release.py"))
        .args(["cms", &a, &format!("{a}.p7s")])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).matches("signer ok").count(), 2, "{}", stdout(&o));

    // JSON: every key, and who signed each output.
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(&art, b"second run").unwrap();
    let mut args = vec!["sign", &a];
    args.extend(keys);
    args.extend(["--format", "raw"]);
    let r = h.json(pin, &args);
    let labels: Vec<&str> = r["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["key"]["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["rel_ed", "rel_pq"], "{r}");
    let outputs = r["files"][0]["outputs"].as_array().unwrap();
    assert_eq!(outputs.len(), 2, "{r}");
    assert_eq!(
        outputs[1]["signed_by"],
        serde_json::json!(["rel_pq"]),
        "{r}"
    );

    // rel.pq and rel_pq would both be FILE.rel_pq.sig.
    h.json(
        pin,
        &["keys", "gen", "-a", "ml-dsa-44", "-l", "rel.pq", "--token"],
    );
    let before: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    let o = h.run(
        pin,
        &["sign", &a, "--key", "label:rel_pq", "--key", "label:rel.pq"],
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("the same name"), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), before.len());
}

/// `keys gen` refuses an HSS level whose LMS and LM-OTS types hash to different lengths.
#[test]
fn hss_levels_hash_one_way_from_the_command_line() {
    let h = Hsmc::builtin();
    let pin = Some(console::builtin::USER_PIN);
    let (c, err) = failure(
        &h,
        pin,
        &[
            "keys",
            "gen",
            "-a",
            "hss",
            "-l",
            "fw_m24_bad",
            "--hss-lms",
            "LMS_SHA256_M24_H5",
            "--hss-lmots",
            "LMOTS_SHA256_N32_W8",
        ],
    );
    assert_ne!(c, 0);
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("one tree uses one hash"),
        "{err}"
    );
}

/// RFC 9858's SHA-256/192 types from the command line: `keys gen` takes them, `sign` makes
/// every HSS format with the counter dropping by the signatures made, hsslms (outside
/// lineage) and `hsmc verify` accept them, and `hsmc hss` names the hash.
#[test]
fn hss_sha256_192_from_the_command_line() {
    let h = Hsmc::builtin();
    let pin = Some(console::builtin::USER_PIN);
    let g = h.json(
        pin,
        &[
            "keys",
            "gen",
            "-a",
            "hss",
            "-l",
            "fw_m24",
            "--persistent",
            "--hss-lms",
            "LMS_SHA256_M24_H5",
            "--hss-lmots",
            "LMOTS_SHA256_N24_W8",
        ],
    );
    assert_eq!(g["public_key"]["raw_len"], 52, "{g}");
    let dir = h.data.path().join("fw");
    std::fs::create_dir_all(&dir).unwrap();
    let files = [dir.join("fw-1.bin"), dir.join("fw-2.bin")];
    std::fs::write(&files[0], vec![0x5Au8; 70_000]).unwrap();
    std::fs::write(&files[1], b"bootloader").unwrap();
    let r = h.json(
        pin,
        &[
            "sign",
            files[0].to_str().unwrap(),
            files[1].to_str().unwrap(),
            "--key",
            "label:fw_m24",
            "--yes-hss",
            "--format",
            "cms,raw,bundle",
            "--manifest",
        ],
    );
    let made = r["signatures_made"].as_u64().unwrap();
    assert!(made >= 5, "{r}");
    assert_eq!(r["hss_remaining_after"].as_u64(), Some(32 - made), "{r}");
    let out = |i: usize, fmt: &str| sign_output(&r, i, fmt);
    let pubkey = written_public_key(&r);
    for (i, f) in files.iter().enumerate() {
        assert!(
            verify_release(&[Path::new("cms"), f, &out(i, "cms")]),
            "cms {i}"
        );
        assert!(
            verify_release(&[Path::new("raw"), f, &out(i, "raw"), &pubkey]),
            "raw {i}"
        );
        assert!(
            verify_release(&[Path::new("bundle"), f, &out(i, "bundle")]),
            "bundle {i}"
        );
        for fmt in ["cms", "raw", "bundle"] {
            let v = h.json(
                None,
                &[
                    "verify",
                    f.to_str().unwrap(),
                    "--sig",
                    out(i, fmt).to_str().unwrap(),
                    "--pub",
                    pubkey.to_str().unwrap(),
                ],
            );
            assert_eq!(v["valid"], true, "hsmc verify {fmt} {i}: {v}");
        }
    }
    assert!(verify_release(&[
        Path::new("manifest"),
        &dir.join("SHA256SUMS"),
        &dir.join("SHA256SUMS.sig"),
        &pubkey
    ]));
    // A changed file fails both verifiers.
    std::fs::write(&files[1], b"bootloadeR").unwrap();
    assert!(!verify_release(&[
        Path::new("raw"),
        &files[1],
        &out(1, "raw"),
        &pubkey
    ]));
    let o = h.run(
        None,
        &[
            "verify",
            files[1].to_str().unwrap(),
            "--sig",
            out(1, "raw").to_str().unwrap(),
            "--pub",
            pubkey.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&o), 3);
    let hss = h.json(pin, &["hss"]);
    let k = hss
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["label"] == "fw_m24")
        .unwrap();
    assert_eq!(
        (k["remaining"].as_u64(), k["capacity"].as_str()),
        (Some(32 - made), Some("32")),
        "{k}"
    );
    assert!(
        k["algorithm"].as_str().unwrap().contains("SHA-256/192"),
        "{k}"
    );
}

/// An SLH-DSA key on Kryoptic signs through `hsmc sign` in CMS, raw and bundle with a
/// manifest and a verifier kit: `hsmc verify` accepts each output (and names the parameter
/// set), the outside verifier accepts the raw signature, and the kit's `verify.sh` passes,
/// then fails naming the file once it changed.
#[test]
fn kryoptic_slh_dsa_signs_through_hsmc_and_its_kit() {
    let t = TestToken::new(Backend::Kryoptic);
    let h = Hsmc::token(&t);
    let pin = Some(testkit::USER_PIN);
    h.gen_token_key(pin, "slh-dsa-shake-128f", "rel_slh");
    let rel = h.data.path().join("release-slh");
    std::fs::create_dir_all(&rel).unwrap();
    let art = rel.join("app-1.0.tar.gz");
    std::fs::write(&art, vec![5u8; 70_000]).unwrap();
    let kit = rel.join("kit");
    let r = h.json(
        pin,
        &[
            "sign",
            &p(&art),
            "--key",
            "label:rel_slh",
            "--format",
            "cms,raw,bundle",
            "--manifest",
            "--kit",
            &p(&kit),
        ],
    );
    let checks = r["kit"]["checks"].as_array().expect("a kit in the report");
    let tools: std::collections::BTreeSet<&str> =
        checks.iter().map(|c| c["tool"].as_str().unwrap()).collect();
    assert_eq!(
        tools.into_iter().collect::<Vec<_>>(),
        ["hsmc", "sha256sum"],
        "Debian's tools know no SLH-DSA: {r}"
    );
    let pem = rel.join("rel_slh.pub.pem");
    for sig in [
        "app-1.0.tar.gz.p7s",
        "app-1.0.tar.gz.sig",
        "app-1.0.tar.gz.sig.json",
    ] {
        let (a, s, k) = (p(&art), p(&rel.join(sig)), p(&pem));
        let v = h.json(pin, &["verify", &a, "--sig", &s, "--pub", &k]);
        assert_eq!(v["valid"], true, "{sig}: {v}");
        assert!(
            v["algorithm"]
                .as_str()
                .unwrap_or_default()
                .contains("SLH-DSA-SHAKE-128f"),
            "{sig}: {v}"
        );
    }
    let o = Command::new(testkit::python())
        .arg(testkit::repo_root().join("tests/interop/verify_release.py"))
        .args([
            "raw",
            &p(&art),
            &p(&rel.join("app-1.0.tar.gz.sig")),
            &p(&pem),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let verify_sh = || {
        Command::new(kit.join("verify.sh"))
            .env("HSMC", testkit::hsmc_binary())
            .env("HSMC_DATA_DIR", h.data.path())
            .output()
            .unwrap()
    };
    let o = verify_sh();
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success(),
        "verify.sh: {out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        out.lines().filter(|l| l.starts_with("ok ")).count(),
        checks.len(),
        "{out}"
    );
    let mut bytes = std::fs::read(&art).unwrap();
    bytes[100] ^= 1;
    std::fs::write(&art, bytes).unwrap();
    let o = verify_sh();
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("FAIL  app-1.0.tar.gz"), "{out}");
}
