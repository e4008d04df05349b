//! A key that wants the PIN for each signature (`CKA_ALWAYS_AUTHENTICATE`) on lunasim:
//! `hsmc keys gen --always-authenticate` makes it, `hsmc sign` refuses it without
//! `--context-login` (and `each` without a terminal) before anything is signed, and with
//! `--context-login once` signs every file, the consent recorded before the signatures.
//! The signatures are checked by OpenSSL.

use super::*;

fn sig(f: &Path) -> PathBuf {
    PathBuf::from(format!("{}.sig", f.display()))
}

#[test]
fn a_key_that_wants_the_pin_per_signature_signs_with_consent() {
    let h = Hsmc::builtin();
    let pin = Some(console::builtin::USER_PIN);
    let gen = [
        "keys",
        "gen",
        "-a",
        "ec-p256",
        "-l",
        "qualified",
        "--persistent",
        "--always-authenticate",
    ];
    h.json(pin, &gen);
    let ls = h.json(pin, &["keys", "ls"]);
    let key = ls
        .as_array()
        .or_else(|| ls["objects"].as_array())
        .unwrap()
        .iter()
        .find(|o| o["label"] == "qualified" && o["class"] == "PRIVATE_KEY")
        .cloned()
        .unwrap_or_else(|| panic!("the key is listed: {ls}"));
    assert_eq!(key["always_authenticate"], true, "{key}");

    let dir = h.data.path().join("release");
    std::fs::create_dir_all(&dir).unwrap();
    let files = [dir.join("a.tar"), dir.join("b.tar")];
    for (i, f) in files.iter().enumerate() {
        std::fs::write(f, vec![i as u8 + 1; 10_000]).unwrap();
    }
    let mut args = vec!["sign", "--key", "label:qualified", "--format", "raw"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));

    // No --context-login: refused, naming the key; nothing signed.
    let o = h.run(pin, &args);
    assert_eq!(o.status.code(), Some(2), "refused as invalid input");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("'qualified'") && err.contains("CKA_ALWAYS_AUTHENTICATE"),
        "{err}"
    );
    // `each` asks at a terminal; there is none here.
    let mut each = args.clone();
    each.extend(["--context-login", "each"]);
    let o = h.run(pin, &each);
    assert_eq!(o.status.code(), Some(2), "refused as invalid input");
    assert!(String::from_utf8_lossy(&o.stderr).contains("terminal"));
    assert!(files.iter().all(|f| !sig(f).exists()), "nothing signed");

    // `once`: the PIN from HSMC_PIN for both signatures.
    let mut once = args.clone();
    once.extend(["--context-login", "once"]);
    let r = h.json(pin, &once);
    let pk = p(&written_public_key(&r));
    for f in &files {
        let o = Command::new("openssl")
            .args(["dgst", "-sha256", "-verify", &pk, "-signature"])
            .arg(sig(f))
            .arg(f)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }

    let tail = h.json(None, &["audit", "tail", "-n", "100"]);
    let records = tail.as_array().unwrap();
    let consent = records
        .iter()
        .position(|r| r["action"] == "sign.consent")
        .expect("the consent is recorded");
    let meta: Value = serde_json::from_str(records[consent]["metadata"].as_str().unwrap())
        .unwrap_or_else(|_| records[consent]["metadata"].clone());
    assert_eq!(meta["context_login"], "once-per-batch");
    assert_eq!(meta["signatures"], 2);
    let signs: Vec<usize> = (0..records.len())
        .filter(|&i| records[i]["action"] == "sign")
        .collect();
    assert_eq!(signs.len(), 2);
    assert!(signs.iter().all(|&i| i > consent), "{tail}");
}
