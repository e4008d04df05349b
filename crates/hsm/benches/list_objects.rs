//! Listing 10,000 objects on one SoftHSM2 token: the console's service against
//! `pkcs11-tool --list-objects`, in one run.
//!
//! `cargo bench -p hsmc-hsm --bench list_objects` prints JSON lines. The console side is what an
//! officer's Refresh does: `keys::list_objects` through the session pool (one search, one
//! `C_GetAttributeValue` round per object, summaries decoded). The baseline is what an
//! officer would otherwise run: `pkcs11-tool --login --list-objects` as a process on the same
//! token (its own load, login and listing, output discarded). Rounds alternate which goes
//! first; medians are compared. Target: ratio (pkcs11-tool time / console time) ≥ 1.
//! `LIST_BENCH_OBJECTS` changes the object count (default 10000).

use std::process::{Command, Stdio};
use std::time::Instant;

use hsm::keys;
use hsm::{Pool, PoolConfig};
use p11::sys::*;
use p11::{Template, UserType};
use testkit::stats::median;
use testkit::{Backend, TestToken, USER_PIN};

const ROUNDS: usize = 5;

fn main() {
    let n: usize = std::env::var("LIST_BENCH_OBJECTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    let token = TestToken::new(Backend::SoftHsm);
    let started = Instant::now();
    {
        let s = token.user_session();
        for i in 0..n {
            // Half AES keys, half ECDSA-style public keys would need key generation; AES
            // keys created from values are the cheapest realistic key objects to make.
            let mut t = Template::new()
                .ulong(CKA_CLASS, CKO_SECRET_KEY)
                .ulong(CKA_KEY_TYPE, CKK_AES)
                .bool(CKA_TOKEN, true)
                .bool(CKA_PRIVATE, true)
                .bool(CKA_SENSITIVE, true)
                .bool(CKA_EXTRACTABLE, false)
                .bool(CKA_ENCRYPT, true)
                .bool(CKA_DECRYPT, true)
                .text(CKA_LABEL, &format!("bench_aes_{i:05}"))
                .bytes(CKA_ID, &(i as u32).to_be_bytes())
                .bytes(CKA_VALUE, &[(i % 251) as u8; 32]);
            s.create_object(&mut t).expect("create object");
        }
    }
    eprintln!(
        "list_objects: created {n} token objects in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let pool = Pool::new(
        token.module.clone(),
        token.slot,
        PoolConfig {
            size: 1,
            ..PoolConfig::default()
        },
    );
    pool.login(UserType::User, p11::pin(USER_PIN))
        .expect("login");

    let console_list = || {
        let t = Instant::now();
        let v = pool
            .run_idempotent("bench.list", |s| {
                keys::list_objects(s, &mut Template::new())
            })
            .expect("list");
        assert!(v.len() >= n, "listed {} of {n}", v.len());
        t.elapsed()
    };
    let tool_list = || {
        let t = Instant::now();
        let mut c = Command::new("pkcs11-tool");
        c.arg("--module").arg(&token.module_path).args([
            "--login",
            "--pin",
            USER_PIN,
            "--list-objects",
        ]);
        for (k, v) in token.env() {
            c.env(k, v);
        }
        let out = c
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .output()
            .expect("pkcs11-tool (package opensc)");
        assert!(out.status.success(), "pkcs11-tool failed");
        let listed = String::from_utf8_lossy(&out.stdout)
            .matches("Secret Key Object")
            .count();
        assert!(listed >= n, "pkcs11-tool listed {listed} of {n}");
        t.elapsed()
    };

    // Warm both (page cache, the module's object cache).
    console_list();
    tool_list();
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for r in 0..ROUNDS {
        if r % 2 == 0 {
            ours.push(console_list());
            theirs.push(tool_list());
        } else {
            theirs.push(tool_list());
            ours.push(console_list());
        }
    }
    let (o, t) = (median(ours), median(theirs));
    let ratio = t.as_secs_f64() / o.as_secs_f64();
    println!(
        "{}",
        serde_json::json!({
            "bench": "list_objects",
            "objects": n,
            "module": "SoftHSM2",
            "rounds": ROUNDS,
            "console_ms": o.as_secs_f64() * 1e3,
            "pkcs11_tool_ms": t.as_secs_f64() * 1e3,
            "console_objects_per_s": n as f64 / o.as_secs_f64(),
            "ratio": ratio,
            "target": ">= 1.0 (the console at least as fast as pkcs11-tool)",
            "met": ratio >= 1.0,
        })
    );
}
