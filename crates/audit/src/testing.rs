//! Software stand-ins for the HSM pieces, for the audit crate's own tests and benchmarks
//! (feature `test-support`; only dev-dependencies enable it). The real ones live in `hsm`.

use std::sync::Mutex;

use hmac::{Hmac, KeyInit, Mac};
use p256::ecdsa::signature::Signer;
use p256::pkcs8::EncodePublicKey;
use sha2::Sha256;
use zeroize::Zeroizing;

use crate::{CheckpointSigner, KeyWrapper};

/// Wraps with an HMAC-derived keystream and a tag (a test double for AES key wrap).
pub struct SoftWrapper {
    kek: [u8; 32],
    id: Vec<u8>,
    pub fail: Mutex<bool>,
}

impl SoftWrapper {
    pub fn new(kek: [u8; 32], id: &[u8]) -> Self {
        SoftWrapper {
            kek,
            id: id.to_vec(),
            fail: Mutex::new(false),
        }
    }

    fn stream(&self, nonce: &[u8]) -> [u8; 32] {
        let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.kek).unwrap();
        m.update(b"stream");
        m.update(nonce);
        m.finalize().into_bytes().into()
    }

    fn tag(&self, c: &[u8]) -> [u8; 32] {
        let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.kek).unwrap();
        m.update(b"tag");
        m.update(c);
        m.finalize().into_bytes().into()
    }
}

impl KeyWrapper for SoftWrapper {
    fn holder(&self) -> String {
        "software test wrapper".into()
    }
    fn kek_id(&self) -> Vec<u8> {
        self.id.clone()
    }
    fn mechanism(&self) -> String {
        "TEST-SOFT-WRAP".into()
    }
    fn wrap(&self, key: &[u8]) -> Result<Vec<u8>, String> {
        if *self.fail.lock().unwrap() {
            return Err("wrapping key unavailable".into());
        }
        let mut nonce = [0u8; 16];
        getrandom::fill(&mut nonce).unwrap();
        let s = self.stream(&nonce);
        let mut out = nonce.to_vec();
        out.extend(key.iter().zip(s.iter().cycle()).map(|(a, b)| a ^ b));
        let t = self.tag(&out);
        out.extend_from_slice(&t);
        Ok(out)
    }
    fn unwrap(&self, wrapped: &[u8]) -> Result<Zeroizing<Vec<u8>>, String> {
        if *self.fail.lock().unwrap() || wrapped.len() < 48 {
            return Err("cannot unwrap".into());
        }
        let (body, tag) = wrapped.split_at(wrapped.len() - 32);
        if self.tag(body) != tag {
            return Err("wrapped key corrupted or wrapped by another key".into());
        }
        let (nonce, c) = body.split_at(16);
        let s = self.stream(nonce);
        Ok(Zeroizing::new(
            c.iter().zip(s.iter().cycle()).map(|(a, b)| a ^ b).collect(),
        ))
    }
}

/// ECDSA P-256 checkpoint signer in software.
pub struct SoftSigner {
    key: p256::ecdsa::SigningKey,
}

impl SoftSigner {
    pub fn new(seed: [u8; 32]) -> Self {
        SoftSigner {
            key: p256::ecdsa::SigningKey::from_slice(&seed).expect("valid scalar"),
        }
    }
}

impl CheckpointSigner for SoftSigner {
    fn algorithm(&self) -> String {
        "ECDSA-P256".into()
    }
    fn public_key_spki(&self) -> Vec<u8> {
        self.key
            .verifying_key()
            .to_public_key_der()
            .unwrap()
            .as_bytes()
            .to_vec()
    }
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, String> {
        let sig: p256::ecdsa::Signature = self.key.sign(message);
        Ok(sig.to_der().as_bytes().to_vec())
    }
}

/// A record like the ones signing writes (`file.sign` of `release-SEQ.tar.gz`), chained
/// after `prev` with `key`: the rows the throughput benchmarks fill their trails with.
pub fn sample_record(
    log_id: &str,
    seq: i64,
    epoch: i64,
    key: &crate::encode::ChainKey,
    prev: &[u8; 32],
) -> crate::Record {
    let mut r = crate::Record {
        log_id: log_id.into(),
        seq,
        epoch,
        event: crate::Prepared {
            timestamp: "2026-11-30T15:00:00.000Z".into(),
            session_id: "sess_bench".into(),
            actor_id: Some("officer@console".into()),
            actor_ip: "127.0.0.1".into(),
            action: "file.sign".into(),
            resource_type: "artifact".into(),
            resource_id: Some(format!("release-{seq}.tar.gz")),
            algorithm: Some("ML-DSA-65".into()),
            status: "success".into(),
            error_code: None,
            metadata: format!(
                "{{\"size\":{},\"sha256\":\"{:064x}\",\"format\":\"cms\"}}",
                seq * 1000,
                seq
            ),
        },
        hmac_chain: String::new(),
        created_at: "2026-11-30T15:00:00.001Z".into(),
    };
    r.hmac_chain = hex::encode(key.link(&crate::encode::encode(&r), prev));
    r
}

/// The baseline of the verification benchmarks: chained HMAC-SHA256 over already encoded
/// records in memory, in records per second.
pub fn raw_hmac_per_s(key: &crate::encode::ChainKey, encoded: &[Vec<u8>]) -> f64 {
    let t = std::time::Instant::now();
    let mut prev = crate::encode::GENESIS;
    for e in encoded {
        prev = key.link(e, &prev);
    }
    std::hint::black_box(prev);
    encoded.len() as f64 / t.elapsed().as_secs_f64()
}

/// Append [`sample_record`]s chained after the trail's head, in transactions of 10,000,
/// until it holds `n` records; returns the encoded records appended (what a raw HMAC
/// baseline runs over). For benchmarks. Another writer may append meanwhile (a console's
/// scheduled verification records itself): a batch whose position it took is built again
/// after the new head, and that writer's records count towards `n`.
pub async fn fill_trail(
    store: &crate::store::Store,
    log_id: &str,
    epoch: i64,
    key: &crate::encode::ChainKey,
    n: i64,
) -> Vec<Vec<u8>> {
    use crate::encode::{self, GENESIS};
    let mut encoded = Vec::with_capacity(n.max(0) as usize);
    loop {
        let done = store.head(log_id).await.unwrap().map_or(0, |h| h.0);
        if done >= n {
            break;
        }
        let batch = 10_000.min(n - done);
        let (id, k) = (log_id.to_string(), key.clone());
        let recs = store
            .append_with(
                log_id,
                std::time::Duration::from_secs(30),
                false,
                move |head, _| {
                    let (mut seq, mut prev) = match head {
                        Some((s, h)) => (s, encode::hex32(&h).expect("the head's chain value")),
                        None => (0, GENESIS),
                    };
                    let mut out = Vec::with_capacity(batch as usize);
                    for _ in 0..batch {
                        seq += 1;
                        let r = sample_record(&id, seq, epoch, &k, &prev);
                        prev = encode::hex32(&r.hmac_chain).expect("a chain value just made");
                        out.push(r);
                    }
                    Ok(out)
                },
            )
            .await
            .unwrap();
        // `None`: another writer took the position; build the batch again after it.
        if let Some(recs) = recs {
            encoded.extend(recs.iter().map(encode::encode));
        }
    }
    encoded
}

/// What a database that has held its trail for a while has had done to it: analyzed, and on
/// PostgreSQL vacuumed (autovacuum's work; without it the server sets hint bits on every
/// fresh tuple during the first read, and autovacuum may start beside a verification).
pub async fn maintain(store: &crate::store::Store) {
    use crate::store::Store;
    match store {
        Store::Sqlite(p, _) => {
            sqlx::query("ANALYZE").execute(p).await.unwrap();
        }
        Store::Postgres(p) => {
            for table in ["audit_log", "audit_block"] {
                sqlx::query(&format!("VACUUM ANALYZE {table}"))
                    .execute(p)
                    .await
                    .unwrap();
            }
        }
    }
}

/// [`crate::store::Store::query_all`] in pages of `page` records, so that a small trail
/// crosses page ends.
pub async fn query_all_in_pages(
    store: &crate::store::Store,
    log_id: &str,
    q: &crate::store::Query,
    page: i64,
) -> Vec<crate::Record> {
    store
        .query_all_in_pages(log_id, q, page, Some)
        .await
        .unwrap()
}

/// [`crate::store::Store::newest`] in pages of `page` records.
pub async fn newest_in_pages(
    store: &crate::store::Store,
    log_id: &str,
    n: u64,
    page: i64,
) -> Vec<crate::Record> {
    store.newest_in_pages(log_id, n, page).await.unwrap()
}

/// Undo the sealing of a trail, as anyone with write access to the store could: every
/// sealed record back into its row, the blocks gone. Tests do this to edit sealed records
/// with plain SQL, then seal again with [`crate::store::Store::seal`]: whatever the SQL
/// did is then inside the blocks, where the verifier must still name it.
pub async fn unseal(store: &crate::store::Store, log_id: &str) {
    use crate::store::Store;
    let sealed = store.sealed_to(log_id).await.unwrap();
    let mut records = Vec::new();
    let mut after = 0;
    while after < sealed {
        let page = store.trail_page(log_id, after, 10_000).await.unwrap();
        let Some(last) = page.last() else { break };
        after = last.seq;
        records.extend(page.into_iter().filter(|r| r.seq <= sealed));
    }
    let dialect = store.dialect();
    let stubs = dialect.translate("DELETE FROM audit_log WHERE log_id = ? AND seq <= ?");
    let blocks = dialect.translate("DELETE FROM audit_block WHERE log_id = ?");
    match store {
        Store::Sqlite(p, _) => {
            sqlx::query(&stubs)
                .bind(log_id)
                .bind(sealed)
                .execute(p)
                .await
                .unwrap();
            sqlx::query(&blocks).bind(log_id).execute(p).await.unwrap();
        }
        Store::Postgres(p) => {
            sqlx::query(&stubs)
                .bind(log_id)
                .bind(sealed)
                .execute(p)
                .await
                .unwrap();
            sqlx::query(&blocks).bind(log_id).execute(p).await.unwrap();
        }
    }
    store.insert_rows(&records).await.unwrap();
}
