//! PQC readiness of a 10,000-object partition against listing it, in one run on SoftHSM2:
//! `Console::pqc_readiness` (the listing, then every object classified under NIST IR 8547,
//! the trail read for evidence of use, the rows ranked) against `Console::list_keys` (what
//! the Objects view's Refresh does, and the readiness's own first step).
//!
//! `cargo bench -p hsmc-console --bench pqc_classify` (or `scripts/bench.sh pqc`) prints
//! one JSON line; rounds alternate which goes first and medians are compared. Target: the
//! readiness takes ≤ 1.2× the listing. `PQC_BENCH_OBJECTS` changes the count (default
//! 10000): three in four AES-256 keys, one in four P-256 public keys, each object judged.

#[path = "../tests/console/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use p11::sys::*;
use p11::Template;
use testkit::stats::median;
use testkit::Backend;

const ROUNDS: usize = 5;

/// An uncompressed P-256 point (the generator), as `CKA_EC_POINT` wants it: an OCTET STRING.
const P256_G: &str = "04416b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c2964fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5";

fn make_objects(e: &common::Env, n: usize) {
    let s = e.token().user_session();
    let point = hex::decode(P256_G).unwrap();
    let mut ec_point = vec![0x04, point.len() as u8];
    ec_point.extend_from_slice(&point);
    let p256_oid = [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07];
    for i in 0..n {
        let label = format!("bench_{i:05}");
        let id = (i as u32).to_be_bytes();
        let mut t = if i % 4 == 3 {
            Template::new()
                .ulong(CKA_CLASS, CKO_PUBLIC_KEY)
                .ulong(CKA_KEY_TYPE, CKK_EC)
                .bytes(CKA_EC_PARAMS, &p256_oid)
                .bytes(CKA_EC_POINT, &ec_point)
                .bool(CKA_VERIFY, true)
        } else {
            Template::new()
                .ulong(CKA_CLASS, CKO_SECRET_KEY)
                .ulong(CKA_KEY_TYPE, CKK_AES)
                .bool(CKA_SENSITIVE, true)
                .bool(CKA_ENCRYPT, true)
                .bytes(CKA_VALUE, &[(i % 251) as u8; 32])
        }
        .bool(CKA_TOKEN, true)
        .text(CKA_LABEL, &label)
        .bytes(CKA_ID, &id);
        s.create_object(&mut t).expect("create object");
    }
}

fn main() {
    let n = common::bench::count("PQC_BENCH_OBJECTS", 10_000);
    let rt = common::bench::runtime();
    rt.block_on(async {
        let e = common::token(Backend::SoftHsm).await;
        let started = Instant::now();
        make_objects(&e, n);
        eprintln!(
            "pqc_classify: created {n} token objects in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        let pid = [e.pid.clone()];
        let list = || async {
            let t = Instant::now();
            let v = e.c.list_keys(&e.pid).await.unwrap();
            assert!(v.len() >= n, "listed {} of {n}", v.len());
            t.elapsed()
        };
        let classify = || async {
            let t = Instant::now();
            let r = e.c.observe().pqc_readiness(&pid, "nist").await.unwrap();
            let judged = r.partitions[0].objects.len();
            assert!(judged >= n, "judged {judged} of {n}");
            // Every P-256 key is quantum-vulnerable, every AES-256 key is not relevant.
            assert!(
                r.counts.quantum_vulnerable as usize >= n / 4,
                "{:?}",
                r.counts
            );
            t.elapsed()
        };
        // Warm both (the module's object cache, the trail's connection).
        list().await;
        classify().await;
        let (mut listed, mut classified): (Vec<Duration>, Vec<Duration>) = (vec![], vec![]);
        for r in 0..ROUNDS {
            if r % 2 == 0 {
                listed.push(list().await);
                classified.push(classify().await);
            } else {
                classified.push(classify().await);
                listed.push(list().await);
            }
        }
        let (l, c) = (median(listed), median(classified));
        let ratio = c.as_secs_f64() / l.as_secs_f64();
        println!(
            "{}",
            serde_json::json!({
                "bench": "pqc_classify_vs_list",
                "objects": n,
                "module": "SoftHSM2",
                "rounds": ROUNDS,
                "list_ms": l.as_secs_f64() * 1e3,
                "readiness_ms": c.as_secs_f64() * 1e3,
                "ratio": ratio,
                "target": "<= 1.2 (the readiness at most 1.2x the listing)",
                "met": ratio <= 1.2,
            })
        );
    });
}
