//! ML-DSA of any size on the built-in partition (lunasim, firmware 7.9.1): files beyond what
//! the token takes in parts go through Luna's external μ (`CKM_EXTMU_ML_DSA`), and
//! dilithium-py verifies the raw signature and the bundle over the whole file; the bundle
//! and the trail say so. Below firmware 7.9.0 there is no external μ, and the officer is
//! told why the file is refused.

use std::io::Write;

use super::*;

/// A file of `len` bytes of a repeating pattern, written in blocks (cheap, not sparse).
fn pattern_file(path: &Path, len: u64) {
    let block: Vec<u8> = (0..1u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut left = len;
    let mut n = 0u8;
    while left > 0 {
        let k = left.min(block.len() as u64) as usize;
        let mut b = block[..k].to_vec();
        b[0] = n; // every block differs from the others
        n = n.wrapping_add(1);
        f.write_all(&b).unwrap();
        left -= k as u64;
    }
    f.flush().unwrap();
}

/// Sign `file` with `label` as raw and bundle: the two outputs and the public key.
fn sign_raw_and_bundle(h: &Hsmc, label: &str, file: &Path) -> Value {
    h.json(
        Some(console::builtin::USER_PIN),
        &[
            "sign",
            &p(file),
            "--key",
            &format!("label:{label}"),
            "--format",
            "raw,bundle",
            "--manifest",
        ],
    )
}

fn output(r: &Value, fmt: &str) -> PathBuf {
    sign_output(r, 0, fmt)
}

/// dilithium-py (pure-Python FIPS 204) over the whole file.
fn dilithium_py(args: &[&Path]) -> bool {
    let o = Command::new(testkit::python())
        .arg(testkit::repo_root().join("tests/interop/verify_release.py"))
        .args(args)
        .env("ML_DSA_VERIFIER", "dilithium-py")
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(2), "{}", stderr(&o));
    o.status.success()
}

/// The trail's successful `sign` records for the file named `name`, their metadata.
fn sign_records(h: &Hsmc, name: &str) -> Vec<Value> {
    h.json(None, &["audit", "tail", "-n", "100"])
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["action"] == "sign" && r["status"] == "success")
        .map(|r| serde_json::from_str::<Value>(r["metadata"].as_str().unwrap()).unwrap())
        .filter(|m| m.to_string().contains(name))
        .collect()
}

fn mechanism_names(h: &Hsmc) -> Vec<String> {
    h.json(None, &["mechanisms"])
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["name"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn ml_dsa_of_100_mb_and_1_gib_goes_through_external_mu() {
    let h = Hsmc::builtin();
    let pin = Some(console::builtin::USER_PIN);
    h.gen_token_key(pin, "ml-dsa-65", "big_mldsa");
    assert!(mechanism_names(&h).contains(&"CKM_EXTMU_ML_DSA".to_string()));
    let dir = tempfile::tempdir().unwrap();
    for (name, len) in [
        ("image-100mb.bin", 100_000_000u64),
        ("disk-1gib.img", 1 << 30),
    ] {
        let file = dir.path().join(name);
        pattern_file(&file, len);
        let r = sign_raw_and_bundle(&h, "big_mldsa", &file);
        assert!(r["files"][0]["error"].is_null(), "{r}");
        let (raw, bundle) = (output(&r, "raw"), output(&r, "bundle"));
        let pubkey = written_public_key(&r);
        let b: Value = serde_json::from_slice(&std::fs::read(&bundle).unwrap()).unwrap();
        assert_eq!(b["signing_path"], "external-mu", "{name}");
        assert_eq!(b["file"]["size"], len, "{name}");
        let records = sign_records(&h, name);
        assert!(!records.is_empty(), "{name}: no sign record");
        assert!(
            records.iter().all(|m| m["signing_path"] == "external-mu"),
            "{name}: {records:?}"
        );
        assert!(
            dilithium_py(&[Path::new("raw"), &file, &raw, &pubkey]),
            "{name}, raw"
        );
        assert!(
            dilithium_py(&[Path::new("bundle"), &file, &bundle]),
            "{name}, bundle"
        );
        if len < 1 << 30 {
            // One byte changed: dilithium-py refuses the signature.
            let mut f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
            std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(len / 2)).unwrap();
            f.write_all(&[0xA5]).unwrap();
            drop(f);
            assert!(!dilithium_py(&[Path::new("raw"), &file, &raw, &pubkey]));
        }
        for f in [&file, &raw, &bundle] {
            std::fs::remove_file(f).unwrap();
        }
        std::fs::remove_file(&pubkey).ok();
        let sums = file.with_file_name("SHA256SUMS");
        std::fs::remove_file(&sums).ok();
        std::fs::remove_file(sums.with_extension("sig")).ok();
    }
}

#[test]
fn below_firmware_7_9_large_ml_dsa_is_refused_with_the_reason() {
    let h = Hsmc::builtin();
    let pin = Some(console::builtin::USER_PIN);
    h.gen_token_key(pin, "ml-dsa-65", "old_fw_mldsa");
    // An officer's own setting, kept below the marker when the console rewrites the file.
    let conf = h.data.path().join("builtin/lunasim.toml");
    let text = std::fs::read_to_string(&conf).unwrap();
    assert!(text.contains(console::builtin::KEPT_MARKER), "{text}");
    std::fs::write(
        &conf,
        text.replace(
            console::builtin::KEPT_MARKER,
            &format!("{}\nfirmware = \"7.8.4\"", console::builtin::KEPT_MARKER),
        ),
    )
    .unwrap();
    assert!(!mechanism_names(&h).contains(&"CKM_EXTMU_ML_DSA".to_string()));
    let file = h.data.path().join("image-3mb.bin");
    pattern_file(&file, 3_000_000);
    let o = h.run(
        pin,
        &[
            "--json",
            "sign",
            &p(&file),
            "--key",
            "label:old_fw_mldsa",
            "--format",
            "raw",
        ],
    );
    assert!(!o.status.success(), "{}", stdout(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let message = r["files"][0]["error"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        message.contains("external-μ") && message.contains("CKM_EXTMU_ML_DSA"),
        "{r}"
    );
    assert!(!PathBuf::from(format!("{}.sig", file.display())).exists());
}
