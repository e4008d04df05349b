//! `hsmc pin …`, `hsmc token init`, `--role` and `hsmc objects …` as processes on real tokens, read back by
//! `pkcs11-tool` and GnuTLS's `p11tool`. One test per process (nextest).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use testkit::setup::{aes256_template, LunasimControl};
use testkit::tools::{p11tool, p11tool_logs_in, pkcs11_tool, pkcs11_tool_logs_in, text};
use testkit::{Backend, TestToken, SO_PIN, TOKEN_LABEL, USER_PIN};

struct Hsmc {
    data: tempfile::TempDir,
    env: Vec<(String, String)>,
    module: String,
}

impl Hsmc {
    fn token(t: &TestToken) -> Hsmc {
        Hsmc {
            data: tempfile::tempdir().unwrap(),
            env: t.env().to_vec(),
            module: t.module_path.display().to_string(),
        }
    }

    /// A fresh token of `backend` and hsmc on it.
    fn on(backend: Backend) -> (TestToken, Hsmc) {
        let t = TestToken::new(backend);
        let h = Hsmc::token(&t);
        (t, h)
    }

    /// `keys gen -a ec-p256 -l LABEL --token` as the user, which must succeed.
    fn gen_p256(&self, label: &str) -> Value {
        self.json(
            Some(USER_PIN),
            None,
            &["keys", "gen", "-a", "ec-p256", "-l", label, "--token"],
        )
    }

    /// Run with `HSMC_PIN` (and `HSMC_NEW_PIN`) as given, stdin closed.
    fn run(&self, pin: Option<&str>, new_pin: Option<&str>, args: &[&str]) -> Output {
        let mut c = Command::new(testkit::hsmc_binary());
        c.args(args)
            .env_remove("LUNASIM_CONF")
            .env_remove("HSMC_PIN")
            .env_remove("HSMC_NEW_PIN")
            .env("HSMC_DATA_DIR", self.data.path())
            .env("HSMC_MODULE", &self.module)
            .stdin(Stdio::null());
        for (k, v) in &self.env {
            c.env(k, v);
        }
        if let Some(p) = pin {
            c.env("HSMC_PIN", p);
        }
        if let Some(p) = new_pin {
            c.env("HSMC_NEW_PIN", p);
        }
        c.output().unwrap()
    }

    fn json(&self, pin: Option<&str>, new_pin: Option<&str>, args: &[&str]) -> Value {
        let mut a = vec!["--json"];
        a.extend_from_slice(args);
        let o = self.run(pin, new_pin, &a);
        assert!(o.status.success(), "hsmc {args:?}: {}", text(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    }

    /// Run `--json`, expect failure; the error document.
    fn error(&self, pin: Option<&str>, new_pin: Option<&str>, args: &[&str]) -> (i32, Value) {
        let mut a = vec!["--json"];
        a.extend_from_slice(args);
        let o = self.run(pin, new_pin, &a);
        assert!(
            !o.status.success(),
            "hsmc {args:?} should fail: {}",
            text(&o)
        );
        // The error document is the last line (log warnings may precede it).
        let stderr = String::from_utf8_lossy(&o.stderr);
        let last = stderr
            .lines()
            .rev()
            .find(|l| l.starts_with('{'))
            .unwrap_or_default();
        let e: Value = serde_json::from_str(last)
            .unwrap_or_else(|_| panic!("an error document: {}", text(&o)));
        (o.status.code().unwrap_or(-1), e["error"].clone())
    }
}

#[test]
fn softhsm_pin_change_init_and_token_init_are_seen_by_other_tools() {
    let (t, h) = Hsmc::on(Backend::SoftHsm);
    let (m, env) = (&t.module_path, t.env());
    // A wrong current PIN: one try, said so; nothing changed.
    let (code, e) = h.error(
        Some("wrong-pin-1"),
        Some("officer-new-1"),
        &["pin", "change"],
    );
    assert_eq!(
        (code, e["code"].as_str()),
        (1, Some("PIN_INCORRECT")),
        "{e}"
    );
    // A new PIN the token cannot take: refused before anything is sent.
    let (_, e) = h.error(Some(USER_PIN), Some("abc"), &["pin", "change"]);
    assert_eq!(e["code"], "PIN_INVALID", "{e}");
    assert!(e["message"].as_str().unwrap().contains("at least"), "{e}");
    // No new PIN at all (no terminal to ask on): a usage error.
    let (code, _) = h.error(Some(USER_PIN), None, &["pin", "change"]);
    assert_eq!(code, 2);
    // The change, from a file this time.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("new-pin");
    std::fs::write(&f, "officer-new-1\n").unwrap();
    let v = h.json(
        Some(USER_PIN),
        None,
        &["pin", "change", "--new-pin-file", f.to_str().unwrap()],
    );
    assert_eq!(v["user"], "user");
    assert!(pkcs11_tool_logs_in(m, env, TOKEN_LABEL, "officer-new-1"));
    assert!(!p11tool_logs_in(m, env, TOKEN_LABEL, USER_PIN));
    // The SO sets it again.
    h.json(Some(SO_PIN), Some("set-by-so-22"), &["pin", "init"]);
    assert!(p11tool_logs_in(m, env, TOKEN_LABEL, "set-by-so-22"));
    assert!(!pkcs11_tool_logs_in(m, env, TOKEN_LABEL, "officer-new-1"));
    // Initializing needs --yes, then the SO PIN.
    let (code, _) = h.error(Some(SO_PIN), None, &["token", "init", "--label", "fresh"]);
    assert_eq!(code, 2);
    // The user's logins put the trail's key on this token: a second confirmation.
    let (_, e) = h.error(
        Some(SO_PIN),
        None,
        &["token", "init", "--label", "fresh", "--yes"],
    );
    assert!(
        e["message"].as_str().unwrap().contains("audit trail's key"),
        "{e}"
    );
    let v = h.json(
        Some(SO_PIN),
        None,
        &[
            "token",
            "init",
            "--label",
            "fresh",
            "--yes",
            "--destroy-audit-key",
        ],
    );
    assert_eq!(v["label"], "fresh");
    let listed = text(&p11tool(m, env, &["--list-tokens"]));
    assert!(listed.contains("Label: fresh"), "{listed}");
}

#[test]
fn lunasim_roles_on_the_command_line() {
    let (_t, h) = Hsmc::on(Backend::LunaSim);
    h.gen_p256("co_key");
    h.json(
        Some(USER_PIN),
        Some("crypto-user-2468"),
        &["pin", "init", "--for", "cu"],
    );
    let keys = h.json(
        Some("crypto-user-2468"),
        None,
        &["--role", "cu", "keys", "ls"],
    );
    assert!(
        keys.as_array()
            .unwrap()
            .iter()
            .any(|k| k["label"] == "co_key" && k["class"] == "PRIVATE_KEY"),
        "the Crypto User sees private keys: {keys}"
    );
    let (code, e) = h.error(
        Some("crypto-user-2468"),
        None,
        &[
            "--role", "cu", "keys", "gen", "-a", "ec-p256", "-l", "cu_key", "--token",
        ],
    );
    assert_eq!(
        (code, e["code"].as_str()),
        (1, Some("NOT_AUTHORIZED")),
        "{e}"
    );
    assert!(
        e["message"].as_str().unwrap().contains("Crypto User"),
        "{e}"
    );
    // Its own PIN it may change.
    h.json(
        Some("crypto-user-2468"),
        Some("crypto-user-new-1"),
        &["--role", "cu", "pin", "change"],
    );
    h.json(
        Some("crypto-user-new-1"),
        None,
        &["--role", "cu", "keys", "ls"],
    );
}

#[test]
fn luna_roles_are_refused_on_softhsm() {
    let (_t, h) = Hsmc::on(Backend::SoftHsm);
    let (code, e) = h.error(Some(USER_PIN), None, &["--role", "cu", "keys", "ls"]);
    assert_eq!(code, 2, "{e}");
    assert!(e["message"].as_str().unwrap().contains("Luna"), "{e}");
}

/// `hsmc objects import|ls|export` around a CA that OpenSSL runs: the CSR from
/// `hsmc keys cert --csr`, the issued certificate imported beside its key (pkcs11-tool sees
/// it under the key's ID), listed with its validity, exported byte for byte.
#[test]
fn softhsm_objects_import_ls_export() {
    let (t, h) = Hsmc::on(Backend::SoftHsm);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let id = certificate_from_an_openssl_ca_imported_beside_its_key(&h, d);
    // Text output says whose certificate it is; a private key file is refused by name.
    let o = h.run(
        Some(USER_PIN),
        None,
        &["objects", "import", d.join("ca.pem").to_str().unwrap()],
    );
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("CA certificate"),
        "{}",
        text(&o)
    );
    let (code, e) = h.error(
        Some(USER_PIN),
        None,
        &["objects", "import", d.join("ca.key").to_str().unwrap()],
    );
    assert_eq!(code, 2, "{e}");
    assert!(e["message"].as_str().unwrap().contains("ca.key"), "{e}");
    let listed = pkcs11_tool(
        &t.module_path,
        t.env(),
        &[
            "--token-label",
            TOKEN_LABEL,
            "--list-objects",
            "--type",
            "cert",
        ],
    );
    assert!(text(&listed).contains(&id), "{}", text(&listed));
    listed_with_its_validity_and_exported_byte_for_byte(&h, d);
}

/// `openssl ARGS` in `d`, which must succeed.
fn ossl(d: &Path, args: &[&str]) {
    let o = Command::new("openssl")
        .current_dir(d)
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "openssl {args:?}: {}", text(&o));
}

/// A CA that OpenSSL runs in `d` issues the certificate of the CSR of a new HSM key
/// (`cli_release`); imported, it lands under the key's ID: that ID.
fn certificate_from_an_openssl_ca_imported_beside_its_key(h: &Hsmc, d: &Path) -> String {
    let ossl = |args: &[&str]| ossl(d, args);
    ossl(&[
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-subj",
        "/CN=CLI Test CA",
        "-days",
        "10",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
    ]);
    let key = h.gen_p256("cli_release");
    let id = key["id_hex"].as_str().unwrap().to_string();
    let csr = d.join("leaf.csr");
    let o = h.run(
        Some(USER_PIN),
        None,
        &[
            "keys",
            "cert",
            "label:cli_release",
            "--csr",
            "--subject",
            "CN=CLI release",
            "--out",
            csr.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    ossl(&[
        "x509",
        "-req",
        "-in",
        "leaf.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-set_serial",
        "5",
        "-days",
        "10",
        "-out",
        "leaf.pem",
    ]);
    let leaf = d.join("leaf.pem");
    let v = h.json(
        Some(USER_PIN),
        None,
        &["objects", "import", leaf.to_str().unwrap()],
    );
    assert_eq!(v["objects"][0]["id_hex"], id.as_str(), "{v}");
    assert_eq!(v["objects"][0]["key_label"], "cli_release", "{v}");
    id
}

/// `objects ls` lists both certificates with the key's and their validity; `objects
/// export` writes the imported one byte for byte, never over an existing file.
fn listed_with_its_validity_and_exported_byte_for_byte(h: &Hsmc, d: &Path) {
    let v = h.json(Some(USER_PIN), None, &["objects", "ls", "--class", "cert"]);
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 2, "{v}");
    assert!(rows.iter().all(|r| r["class"] == "CERTIFICATE"), "{v}");
    let mine = rows.iter().find(|r| r["label"] == "cli_release").unwrap();
    assert_eq!(mine["certificate"]["key_label"], "cli_release", "{v}");
    assert!(
        mine["certificate"]["info"]["days_left"].as_i64().unwrap() >= 9,
        "{v}"
    );
    let out = d.join("back.der");
    h.json(
        None,
        None,
        &[
            "objects",
            "export",
            "label:cli_release",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    ossl(
        d,
        &[
            "x509", "-in", "leaf.pem", "-outform", "DER", "-out", "leaf.der",
        ],
    );
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(d.join("leaf.der")).unwrap()
    );
    // Never over an existing file.
    let (code, _) = h.error(
        None,
        None,
        &[
            "objects",
            "export",
            "label:cli_release",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_ne!(code, 0);
}

/// `hsmc keys set`: a new label and ID (the public half moves along), a flag; the one-way
/// flags refused with the reason; pkcs11-tool sees the result.
#[test]
fn softhsm_keys_set_label_id_and_flags() {
    let (t, h) = Hsmc::on(Backend::SoftHsm);
    h.gen_p256("cli_attr");
    let v = h.json(
        Some(USER_PIN),
        None,
        &[
            "keys",
            "set",
            "label:cli_attr",
            "--label",
            "cli_attr_new",
            "--id",
            "beef01",
            "--set",
            "sign=false",
        ],
    );
    assert_eq!(v["summary"]["label"], "cli_attr_new", "{v}");
    assert_eq!(v["summary"]["capabilities"]["sign"], false, "{v}");
    assert_eq!(v["moved"].as_array().unwrap().len(), 1, "{v}");
    let (code, e) = h.error(
        Some(USER_PIN),
        None,
        &["keys", "set", "id:beef01", "--set", "sensitive=false"],
    );
    assert_eq!(code, 2, "{e}");
    assert!(e["message"].as_str().unwrap().contains("never"), "{e}");
    let (code, e) = h.error(
        Some(USER_PIN),
        None,
        &["keys", "set", "id:beef01", "--set", "colour=blue"],
    );
    assert_eq!(code, 2, "{e}");
    let listed = pkcs11_tool(
        &t.module_path,
        t.env(),
        &[
            "--token-label",
            TOKEN_LABEL,
            "--login",
            "--pin",
            USER_PIN,
            "--list-objects",
        ],
    );
    let listed = text(&listed);
    assert!(listed.contains("cli_attr_new"), "{listed}");
    assert_eq!(listed.matches("beef01").count(), 2, "{listed}");
}

/// `hsmc uri KEY`, and the URI it prints accepted where hsmc takes a key (`sign --key`) or a
/// token (`--token 'pkcs11:…'` with `slot-id=` and `?module-path=`); bad URIs explained.
#[test]
fn softhsm_uris_on_the_command_line() {
    let (t, h) = Hsmc::on(Backend::SoftHsm);
    h.gen_p256("cli uri");
    let o = h.run(Some(USER_PIN), None, &["uri", "label:cli uri"]);
    assert!(o.status.success(), "{}", text(&o));
    let uri = String::from_utf8_lossy(&o.stdout).trim().to_string();
    assert!(
        uri.starts_with("pkcs11:token=console-test") && uri.contains("object=cli%20uri"),
        "{uri}"
    );
    let v = h.json(Some(USER_PIN), None, &["uri", &uri, "--commands"]);
    assert_eq!(v["uri"], uri.as_str());
    assert!(
        v["commands"][0]["command"]
            .as_str()
            .unwrap()
            .contains("-engine pkcs11"),
        "{v}"
    );

    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a.bin");
    std::fs::write(&f, b"artifact").unwrap();
    let token_uri = v["token_uri"].as_str().unwrap().to_string();
    let slots = h.json(None, None, &["slots"]);
    let slot = slots
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["token"]["label"] == TOKEN_LABEL)
        .unwrap()["slot_id"]
        .as_u64()
        .unwrap();
    let with_module = format!(
        "{token_uri};slot-id={slot}?module-path={}",
        t.module_path.display()
    );
    let r = h.json(
        Some(USER_PIN),
        None,
        &[
            "--module",
            "/nonexistent.so",
            "--token",
            &with_module,
            "sign",
            f.to_str().unwrap(),
            "--key",
            &uri,
            "--format",
            "raw",
        ],
    );
    assert!(r["files"][0]["error"].is_null(), "{r}");
    // A token URI whose serial does not match, a bad percent-encoding, a URI matching nothing.
    let wrong = token_uri.replace("serial=", "serial=00");
    let (_, e) = h.error(Some(USER_PIN), None, &["--token", &wrong, "uri", &uri]);
    assert!(e["message"].as_str().unwrap().contains("serial="), "{e}");
    let (code, e) = h.error(Some(USER_PIN), None, &["uri", "pkcs11:object=cli%2"]);
    assert_eq!(code, 2, "{e}");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("bad percent-encoding"),
        "{e}"
    );
    // --test runs a line as printed with this session's PIN: p11tool lists the key. A name
    // that fits two lines (the engine's and the provider's) is refused, listing them.
    let o = h.run(Some(USER_PIN), None, &["uri", &uri, "--test", "p11tool"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("Label: cli uri"), "{}", text(&o));
    assert!(!text(&o).contains(USER_PIN), "{}", text(&o));
    let (_, e) = h.error(Some(USER_PIN), None, &["uri", &uri, "--test", "openssl"]);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("osslsigncode, sbsign"),
        "{e}"
    );
    let (_, e) = h.error(Some(USER_PIN), None, &["uri", "pkcs11:object=nobody"]);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("pkcs11:object=nobody"),
        "{e}"
    );
}

/// `hsmc keys kcv|wrap|unwrap` on one token: an AES data key wrapped under an AES key
/// (SoftHSM's CKM_AES_KEY_WRAP_PAD), unwrapped under a new label with the same KCV; a
/// non-extractable key is refused with the reason.
#[test]
fn softhsm_keys_wrap_unwrap_and_kcv() {
    use p11::sys::*;
    let (t, h) = Hsmc::on(Backend::SoftHsm);
    let s = t.user_session();
    for label in ["cli_kek", "cli_data"] {
        s.generate_key(
            &p11::Mechanism::new(CKM_AES_KEY_GEN),
            &mut aes256_template(label, label.as_bytes(), true)
                .bool(CKA_ENCRYPT, true)
                .bool(CKA_DECRYPT, true)
                .bool(CKA_WRAP, true)
                .bool(CKA_UNWRAP, true),
        )
        .unwrap();
    }
    drop(s);
    let kcv = h.json(Some(USER_PIN), None, &["keys", "kcv", "label:cli_data"]);
    let kcv = kcv["kcv"].as_str().unwrap().to_string();
    assert_eq!(kcv.len(), 6);
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("cli_data.wrapped.json");
    let wrap = |confirm: bool| {
        let mut a = vec!["keys", "wrap", "label:cli_data", "--with", "label:cli_kek"];
        if confirm {
            a.push("--confirm-untrusted");
        }
        a.extend(["--out", f.to_str().unwrap()]);
        a
    };
    // Made by another tool without CKA_WRAP_WITH_TRUSTED: wrapped only once confirmed.
    let (code, e) = h.error(Some(USER_PIN), None, &wrap(false));
    assert_eq!(code, 2, "{e}");
    assert!(
        e["suggestion"]
            .as_str()
            .unwrap()
            .contains("--confirm-untrusted"),
        "{e}"
    );
    assert!(!f.exists());
    let w = h.json(Some(USER_PIN), None, &wrap(true));
    assert_eq!(w["mechanism"], "CKM_AES_KEY_WRAP_PAD", "{w}");
    assert_eq!(w["kcv"], kcv.as_str());
    let u = h.json(
        Some(USER_PIN),
        None,
        &[
            "keys",
            "unwrap",
            f.to_str().unwrap(),
            "--with",
            "label:cli_kek",
            "--label",
            "cli_data_copy",
        ],
    );
    assert_eq!(u["summary"]["label"], "cli_data_copy", "{u}");
    assert_eq!(u["kcv"], kcv.as_str(), "{u}");
    h.json(
        Some(USER_PIN),
        None,
        &["keys", "gen", "-a", "aes-256", "-l", "cli_fixed", "--token"],
    );
    let (code, e) = h.error(
        Some(USER_PIN),
        None,
        &[
            "keys",
            "wrap",
            "label:cli_fixed",
            "--with",
            "label:cli_kek",
            "--out",
            dir.path().join("x").to_str().unwrap(),
        ],
    );
    assert_eq!(code, 2, "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("not extractable"),
        "{e}"
    );
}

/// `kill -9` of `hsmc pin change` at the worst moment — the change is in the trail, the
/// token has not answered (lunasim holds `C_SetPIN` back) — leaves a trail that verifies,
/// and `hsmc status` names the change that has no outcome (exit 1) so the officer checks
/// the token; the token, read with `pkcs11-tool`, still takes the old PIN.
#[test]
fn lunasim_kill_9_during_a_pin_change_is_named_by_status() {
    let (t, control) = LunasimControl::token();
    let h = Hsmc::token(&t);
    // A first login puts the trail's key on this token.
    h.json(Some(USER_PIN), None, &["keys", "ls"]);
    let command = |line: &str| control.send(line);
    command(r#"{"op":"slow","function":"C_SetPIN","ms":20000}"#);
    let child = hsmc_spawned(
        &h,
        &strings(&["pin", "change"]),
        USER_PIN,
        Some("officer-new-77"),
    );
    // The request is recorded before C_SetPIN is called: wait for it in the trail.
    let db = h.data.path().join("audit.db");
    killed_once_requested(child, "pin.change", || {
        requests_recorded(&db, "pin.change") == 1
    });
    command(r#"{"op":"clear"}"#);

    let v = h.json(Some(USER_PIN), None, &["audit", "verify"]);
    assert_eq!(v["verdict"]["verdict"], "intact", "{v}");
    let o = h.run(None, None, &["--json", "status"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let items = v["failures"]["items"].as_array().unwrap();
    let named = items
        .iter()
        .find(|i| i["message"]["key"] == "overview.items.unanswered_request")
        .unwrap_or_else(|| panic!("the interrupted change is named: {v}"));
    assert_eq!(named["message"]["args"]["action"], "pin.change", "{named}");
    assert!(pkcs11_tool_logs_in(
        &t.module_path,
        t.env(),
        TOKEN_LABEL,
        USER_PIN
    ));
    // Once the change is made and answered, nothing is left open.
    h.json(Some(USER_PIN), Some("officer-new-77"), &["pin", "change"]);
    let o = h.run(None, None, &["--json", "status"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let still = v["failures"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["message"]["key"] == "overview.items.unanswered_request")
        .count();
    assert_eq!(
        still, 1,
        "the killed one stays named; the answered one is not: {v}"
    );
}

/// `kill -9` of `hsmc` inside the call of every kind of change (lunasim holds the call that
/// makes it back, after the change's request is in the trail): each time the trail
/// verifies and `hsmc status` exits 1 naming that change as one with no outcome, so the
/// officer checks the token. Every kind of `console::change::ChangeKind::ALL` has its
/// command here (the match does not compile without it).
#[test]
fn kill_9_inside_every_kind_of_change_is_named_by_status() {
    use console::change::ChangeKind;
    let (t, control) = LunasimControl::token();
    let h = Hsmc::token(&t);
    let command = |line: &str| control.send(line);
    let user = Some(USER_PIN);
    let files = what_the_changes_act_on(&t, &h, control.dir.path());
    let db = h.data.path().join("audit.db");
    let requests = |action: &str| requests_recorded(&db, action);
    // The SO's changes last: initializing the token takes everything with it.
    let kinds = ChangeKind::ALL
        .into_iter()
        .filter(|k| !matches!(k, ChangeKind::TokenInit))
        .chain([ChangeKind::TokenInit]);
    for kind in kinds {
        let (function, pin, new_pin, args) = the_call_of(kind, &files);
        let before = requests(kind.action());
        let skip = skipped(kind);
        command(&format!(
            r#"{{"op":"slow","function":"{function}","ms":20000,"skip":{skip}}}"#
        ));
        let child = hsmc_spawned(&h, &args, pin, new_pin);
        killed_once_requested(child, &format!("{kind:?}"), || {
            requests(kind.action()) != before
        });
        command(r#"{"op":"clear"}"#);
        // The SO's records wait in the spool until a user opens the trail's key.
        h.json(user, None, &["keys", "ls"]);

        let o = h.run(None, None, &["--json", "status"]);
        assert_eq!(o.status.code(), Some(1), "{kind:?}: {}", text(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let named = v["failures"]["items"].as_array().unwrap().iter().any(|i| {
            i["message"]["key"] == "overview.items.unanswered_request"
                && i["message"]["args"]["action"] == kind.action()
        });
        assert!(named, "{kind:?}: the interrupted change is named: {v}");
        let v = h.json(user, None, &["audit", "verify"]);
        assert_eq!(v["verdict"]["verdict"], "intact", "{kind:?}: {v}");
    }
}

/// The files the changes read or write.
struct ChangeFiles {
    /// A file to import as a data object.
    import: PathBuf,
    /// A file to sign.
    artifact: PathBuf,
    /// A file to sign with a manifest beside it (in a folder of its own).
    manifested: PathBuf,
    /// A key wrapped before anything is held back, to unwrap.
    wrap_file: PathBuf,
    /// Where the held-back wrap writes.
    wrap_out: PathBuf,
}

/// What the changes act on, made before anything is held back: keys to delete, rename,
/// wrap with, limit, certify and make OpenPGP certificates of; an extractable key (made by
/// pkcs11-tool) wrapped once; an HSS key to sign with; files in `dir`.
fn what_the_changes_act_on(t: &TestToken, h: &Hsmc, dir: &Path) -> ChangeFiles {
    let user = Some(USER_PIN);
    h.json(user, None, &["keys", "ls"]);
    for (alg, label) in [
        ("aes-256", "kill_del"),
        ("aes-256", "kill_attr"),
        ("aes-256", "kill_wrapper"),
        ("ec-p256", "kill_usage"),
        ("ec-p256", "kill_cert"),
        ("ec-p256", "kill_pgp"),
        ("ec-p256", "kill_pgp_time"),
    ] {
        h.json(
            user,
            None,
            &["keys", "gen", "-a", alg, "-l", label, "--token"],
        );
    }
    let made = pkcs11_tool(
        &t.module_path,
        t.env(),
        &[
            "--token-label",
            TOKEN_LABEL,
            "--login",
            "--pin",
            USER_PIN,
            "--keygen",
            "--key-type",
            "AES:32",
            "--label",
            "kill_extractable",
            "--id",
            "e1e1",
            "--extractable",
        ],
    );
    assert!(made.status.success(), "{}", text(&made));
    h.json(
        user,
        None,
        &[
            "keys",
            "gen",
            "-a",
            "hss",
            "-l",
            "kill_hss",
            "--token",
            "--hss-lms",
            "LMS_SHA256_M32_H5",
            "--hss-lmots",
            "LMOTS_SHA256_N32_W4",
        ],
    );
    let wrap_file = dir.join("kill.wrapped.json");
    h.json(
        user,
        None,
        &[
            "keys",
            "wrap",
            "label:kill_extractable",
            "--with",
            "label:kill_wrapper",
            "--confirm-untrusted",
            "--out",
            wrap_file.to_str().unwrap(),
        ],
    );
    let import = dir.join("notes.txt");
    std::fs::write(&import, "release notes").unwrap();
    let artifact = dir.join("artifact.bin");
    std::fs::write(&artifact, "artifact").unwrap();
    std::fs::create_dir(dir.join("release")).unwrap();
    let manifested = dir.join("release").join("firmware.bin");
    std::fs::write(&manifested, "firmware").unwrap();
    ChangeFiles {
        import,
        artifact,
        manifested,
        wrap_file,
        wrap_out: dir.join("kill2.wrapped.json"),
    }
}

/// `args` as owned strings.
fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

/// The call of a change of `kind`: the PKCS#11 function lunasim holds back, the PIN (and
/// new PIN) hsmc gets, and its command line.
fn the_call_of(
    kind: console::change::ChangeKind,
    files: &ChangeFiles,
) -> (
    &'static str,
    &'static str,
    Option<&'static str>,
    Vec<String>,
) {
    use console::change::ChangeKind;
    let s = |p: &Path| p.display().to_string();
    let ChangeFiles {
        import,
        artifact,
        manifested,
        wrap_file,
        wrap_out,
    } = files;
    match kind {
        ChangeKind::KeyGenerate => (
            "C_GenerateKeyPair",
            USER_PIN,
            None,
            strings(&["keys", "gen", "-a", "ec-p256", "-l", "kill_gen", "--token"]),
        ),
        ChangeKind::KeyDestroy => (
            "C_DestroyObject",
            USER_PIN,
            None,
            strings(&["keys", "rm", "label:kill_del", "--yes"]),
        ),
        ChangeKind::PinChange => (
            "C_SetPIN",
            USER_PIN,
            Some("never-set-1234"),
            strings(&["pin", "change"]),
        ),
        ChangeKind::PinInit => (
            "C_InitPIN",
            SO_PIN,
            Some("never-set-5678"),
            strings(&["--so", "pin", "init"]),
        ),
        ChangeKind::TokenInit => (
            "C_InitToken",
            SO_PIN,
            None,
            strings(&[
                "--so",
                "token",
                "init",
                "--label",
                "never-made",
                "--yes",
                "--destroy-audit-key",
            ]),
        ),
        ChangeKind::ObjectImport => (
            "C_CreateObject",
            USER_PIN,
            None,
            strings(&[
                "objects",
                "import",
                &s(import),
                "--data",
                "--label",
                "kill_import",
            ]),
        ),
        ChangeKind::AttributeSet => (
            "C_SetAttributeValue",
            USER_PIN,
            None,
            strings(&["keys", "set", "label:kill_attr", "--label", "kill_renamed"]),
        ),
        ChangeKind::KeyWrap => (
            "C_WrapKey",
            USER_PIN,
            None,
            strings(&[
                "keys",
                "wrap",
                "label:kill_extractable",
                "--with",
                "label:kill_wrapper",
                "--confirm-untrusted",
                "--out",
                &s(wrap_out),
            ]),
        ),
        ChangeKind::KeyUnwrap => (
            "C_UnwrapKey",
            USER_PIN,
            None,
            strings(&[
                "keys",
                "unwrap",
                &s(wrap_file),
                "--with",
                "label:kill_wrapper",
                "--label",
                "kill_unwrapped",
            ]),
        ),
        ChangeKind::UsageLimit => (
            "C_SetAttributeValue",
            USER_PIN,
            None,
            strings(&["usage", "set", "label:kill_usage", "--limit", "100"]),
        ),
        ChangeKind::CertificateIssue => (
            "C_CreateObject",
            USER_PIN,
            None,
            strings(&[
                "keys",
                "cert",
                "label:kill_cert",
                "--self-signed",
                "--subject",
                "CN=kill",
            ]),
        ),
        ChangeKind::OpenPgpCertificate => (
            "C_CreateObject",
            USER_PIN,
            None,
            strings(&[
                "keys",
                "openpgp",
                "label:kill_pgp",
                "--uid",
                "Officer <o@example.org>",
            ]),
        ),
        ChangeKind::OpenPgpCreationTime => {
            signing("C_CreateObject", artifact, "kill_pgp_time", &["openpgp"])
        }
        ChangeKind::HssSign => signing("C_Sign", artifact, "kill_hss", &["raw", "--yes-hss"]),
        // The file's signature goes through (see `skipped`); the manifest's is held.
        ChangeKind::HssManifest => signing(
            "C_Sign",
            manifested,
            "kill_hss",
            &["raw", "--manifest", "--yes-hss"],
        ),
    }
}

/// `hsmc sign FILE --key label:KEY --format FORMAT…` held in `function`.
fn signing(
    function: &'static str,
    file: &Path,
    key: &str,
    format_and_flags: &[&str],
) -> (
    &'static str,
    &'static str,
    Option<&'static str>,
    Vec<String>,
) {
    let file = file.display().to_string();
    let key = format!("label:{key}");
    let mut args = strings(&["sign", &file, "--key", &key, "--format"]);
    args.extend(strings(format_and_flags));
    (function, USER_PIN, None, args)
}

/// The calls of the held-back function let through first, made before the change's request
/// is recorded: a batch's manifest is signed after its file; opening the trail unwraps its
/// key into a temporary object (C_UnwrapKey) and destroys that (C_DestroyObject). Holding one
/// of those instead cost the test 20 s each (a later call is held all the same, since `slow`
/// holds every call from the N+1th on).
fn skipped(kind: console::change::ChangeKind) -> u64 {
    use console::change::ChangeKind;
    u64::from(matches!(
        kind,
        ChangeKind::HssManifest | ChangeKind::KeyDestroy | ChangeKind::KeyUnwrap
    ))
}

/// hsmc `args` started with `pin` (and `new_pin`) on `h`'s token, its stderr piped.
fn hsmc_spawned(
    h: &Hsmc,
    args: &[String],
    pin: &str,
    new_pin: Option<&str>,
) -> std::process::Child {
    let mut c = Command::new(testkit::hsmc_binary());
    c.args(args)
        .env_remove("LUNASIM_CONF")
        .env("HSMC_DATA_DIR", h.data.path())
        .env("HSMC_MODULE", &h.module)
        .env("HSMC_PIN", pin)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(n) = new_pin {
        c.env("HSMC_NEW_PIN", n);
    }
    for (k, v) in &h.env {
        c.env(k, v);
    }
    c.spawn().unwrap()
}

/// Wait until `requested` (the change's request is in the trail; `hsmc` must not end
/// before it, nor take over 60 s), then `kill -9` the `child` inside the call held back:
/// it must not finish.
fn killed_once_requested(mut child: std::process::Child, what: &str, requested: impl Fn() -> bool) {
    let t0 = std::time::Instant::now();
    while !requested() {
        if child.try_wait().unwrap().is_some() {
            let o = child.wait_with_output().unwrap();
            panic!(
                "{what}: hsmc ended before its request: {:?} {}",
                o.status,
                text(&o)
            );
        }
        assert!(t0.elapsed().as_secs() < 60, "{what}: no request after 60 s");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    child.kill().unwrap(); // SIGKILL, inside the held-back call
    let status = child.wait().unwrap();
    assert!(!status.success(), "{what}: finished before the kill");
}

/// How many `ACTION.request` records the SQLite trail at `db` holds: chained, or waiting in
/// the spool (the SO cannot open the trail's key). Read with the `sqlite3` tool, which waits
/// for a writer instead of failing (0 while the file cannot be read yet).
fn requests_recorded(db: &Path, action: &str) -> u64 {
    let action = format!("{action}.request");
    testkit::pg::sqlite3_poll(
        db,
        &format!(
            "SELECT (SELECT COUNT(*) FROM audit_log WHERE action = '{action}') + \
             (SELECT COUNT(*) FROM audit_pending WHERE json_extract(event, '$.action') = '{action}')"
        ),
    )
    .and_then(|n| n.parse().ok())
    .unwrap_or(0)
}

/// A change selects its object by what the token says the object is — `uid:` (Kryoptic's
/// `CKA_UNIQUE_ID`, a Luna's `CKA_OUID`), `id:` or `label:` — never by a handle number,
/// which names an object only until the module restarts (every run of hsmc starts it
/// anew). `keys ls` prints the uid; a handle number is refused for a change, explained,
/// and nothing changes.
fn changes_select_by_uid_and_refuse_handle_numbers(backend: Backend, uid_len: Option<usize>) {
    let (_t, h) = Hsmc::on(backend);
    for label in ["cli_uid_a", "cli_uid_b"] {
        h.gen_p256(label);
    }
    let listed = h.json(Some(USER_PIN), None, &["keys", "ls"]);
    let find = |v: &Value, label: &str| {
        v.as_array()
            .unwrap()
            .iter()
            .find(|o| o["label"] == label && o["class"] == "PRIVATE_KEY")
            .cloned()
    };
    let a = find(&listed, "cli_uid_a").unwrap();
    let uid = a["unique_id"]
        .as_str()
        .expect("the token gives a unique ID")
        .to_string();
    if let Some(n) = uid_len {
        assert_eq!(uid.len(), n, "{uid}");
    }
    let table = text(&h.run(Some(USER_PIN), None, &["keys", "ls"]));
    assert!(table.contains(&format!("uid:{uid}")), "{table}");

    let handle = format!("handle:{}", a["handle"]);
    let (code, e) = h.error(
        Some(USER_PIN),
        None,
        &["keys", "set", &handle, "--label", "cli_uid_x"],
    );
    assert_eq!(code, 2, "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("handle number"),
        "{e}"
    );
    assert!(e["suggestion"].as_str().unwrap().contains("uid:"), "{e}");
    let (code, e) = h.error(Some(USER_PIN), None, &["keys", "rm", &handle, "--yes"]);
    assert_eq!(code, 2, "{e}");
    let now = h.json(Some(USER_PIN), None, &["keys", "ls"]);
    assert!(find(&now, "cli_uid_a").is_some() && find(&now, "cli_uid_x").is_none());

    let by_uid = format!("uid:{uid}");
    let v = h.json(
        Some(USER_PIN),
        None,
        &["keys", "set", &by_uid, "--label", "cli_uid_renamed"],
    );
    assert_eq!(v["summary"]["label"], "cli_uid_renamed", "{v}");
    assert_eq!(v["summary"]["unique_id"], uid.as_str(), "{v}");
    h.json(Some(USER_PIN), None, &["keys", "rm", &by_uid, "--yes"]);
    let now = h.json(Some(USER_PIN), None, &["keys", "ls"]);
    assert!(find(&now, "cli_uid_renamed").is_none(), "{now}");
    assert!(find(&now, "cli_uid_b").is_some(), "{now}");
    // A uid no object has selects nothing.
    let (code, e) = h.error(Some(USER_PIN), None, &["keys", "show", &by_uid]);
    assert_eq!(
        (code, e["code"].as_str()),
        (1, Some("KEY_NOT_FOUND")),
        "{e}"
    );
}

#[test]
fn kryoptic_changes_select_by_unique_id_not_by_handle_number() {
    changes_select_by_uid_and_refuse_handle_numbers(Backend::Kryoptic, None);
}

#[test]
fn lunasim_changes_select_by_ouid_not_by_handle_number() {
    // A Luna OUID: 12 bytes, in hexadecimal.
    changes_select_by_uid_and_refuse_handle_numbers(Backend::LunaSim, Some(24));
}
