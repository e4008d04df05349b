//! Streaming digests of a file: SHA-256 always (the audit trail, SHA256SUMS and the re-check
//! name a file by it), and SHA-384, SHA-512 and SHAKE128/256 on request (a key's digest, the
//! bundle's and SSHSIG's SHA-512), computed in parallel from one read of the file (1 MiB
//! blocks, never the whole file in memory), with progress, cancel, and detection of a file
//! that changed while it was read.
//!
//! Only what is asked for is computed: SHA-512 has no instructions of its own on x86, and
//! hashed always it took more CPU than SHA-256 and the read together, and set the pace of
//! every large file's hashing.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};

use serde::Serialize;
use sha2::{Digest, Sha256, Sha384, Sha512};

use crate::alg::DigestAlg;
use crate::input::{Identity, InputFile};
use crate::{Result, SignError};

const BLOCK: usize = 1 << 20;

/// The digests of one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct Digests {
    pub size: u64,
    pub sha256: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub sha512: Option<String>,
    pub sha384: Option<String>,
    /// SHAKE128 (32 bytes) or SHAKE256 (64 bytes), when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub shake128: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub shake256: Option<String>,
}

impl Digests {
    pub fn get(&self, alg: DigestAlg) -> Option<Vec<u8>> {
        let h = match alg {
            DigestAlg::Sha256 => Some(&self.sha256),
            DigestAlg::Sha384 => self.sha384.as_ref(),
            DigestAlg::Sha512 => self.sha512.as_ref(),
            DigestAlg::Shake128 => self.shake128.as_ref(),
            DigestAlg::Shake256 => self.shake256.as_ref(),
        }?;
        hex::decode(h).ok()
    }

    fn set(&mut self, alg: DigestAlg, value: String) {
        match alg {
            DigestAlg::Sha256 => self.sha256 = value,
            DigestAlg::Sha384 => self.sha384 = Some(value),
            DigestAlg::Sha512 => self.sha512 = Some(value),
            DigestAlg::Shake128 => self.shake128 = Some(value),
            DigestAlg::Shake256 => self.shake256 = Some(value),
        }
    }
}

fn hasher<D: Digest + Send + 'static>(
    rx: mpsc::Receiver<Arc<Vec<u8>>>,
) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut d = D::new();
        for block in rx {
            d.update(&block[..]);
        }
        d.finalize().to_vec()
    })
}

fn xof_hasher<X>(rx: mpsc::Receiver<Arc<Vec<u8>>>, len: usize) -> std::thread::JoinHandle<Vec<u8>>
where
    X: Default + sha3::digest::Update + sha3::digest::ExtendableOutput + Send + 'static,
{
    std::thread::spawn(move || {
        let mut x = X::default();
        for block in rx {
            x.update(&block[..]);
        }
        let mut out = vec![0u8; len];
        sha3::digest::XofReader::read(&mut x.finalize_xof(), &mut out);
        out
    })
}

fn spawn(alg: DigestAlg, rx: mpsc::Receiver<Arc<Vec<u8>>>) -> std::thread::JoinHandle<Vec<u8>> {
    match alg {
        DigestAlg::Sha256 => hasher::<Sha256>(rx),
        DigestAlg::Sha384 => hasher::<Sha384>(rx),
        DigestAlg::Sha512 => hasher::<Sha512>(rx),
        DigestAlg::Shake128 => xof_hasher::<sha3::Shake128>(rx, 32),
        DigestAlg::Shake256 => xof_hasher::<sha3::Shake256>(rx, 64),
    }
}

/// Hash a checked input file: SHA-256 and each of `extra`. `progress(bytes_done)`
/// is called per block; `cancel` stops
/// between blocks. The file must be the same (device, inode, size, modification time) at the
/// end as it was when checked, and must yield exactly its size.
pub fn hash_file(
    input: &InputFile,
    extra: &[DigestAlg],
    progress: &dyn Fn(u64),
    cancel: &AtomicBool,
) -> Result<Digests> {
    let path = input.path.as_path();
    let mut f = File::open(path).map_err(|e| SignError::Input {
        path: path.display().to_string(),
        reason: hsm::text!(
            "signing.input_unopenable",
            "cannot be opened: {{error}}",
            error = e
        ),
    })?;
    let opened = Identity::of(&f.metadata().map_err(|e| io_input(path, e))?);
    if opened != input.identity {
        return Err(SignError::Changed(path.display().to_string()));
    }
    // One hashing thread per digest; the reading thread hands each the same blocks.
    let mut algs = vec![DigestAlg::Sha256];
    for a in extra {
        if !algs.contains(a) {
            algs.push(*a);
        }
    }
    let mut senders = Vec::new();
    let mut handles = Vec::new();
    for a in &algs {
        let (tx, rx) = mpsc::sync_channel(4);
        senders.push(tx);
        handles.push(spawn(*a, rx));
    }
    let mut done: u64 = 0;
    // Blocks every hasher is done with are read into again: a fresh 1 MiB block costs the
    // kernel 256 zeroed pages (a sixth of the CPU in a profile of a 10 GiB file's hashing).
    let mut sent: VecDeque<Arc<Vec<u8>>> = VecDeque::new();
    let result = (|| -> Result<()> {
        loop {
            if cancel.load(Ordering::Relaxed) {
                return Err(SignError::Cancelled);
            }
            let reusable = sent.front().is_some_and(|b| Arc::strong_count(b) == 1);
            let mut buf = match reusable.then(|| sent.pop_front()).flatten() {
                Some(b) => Arc::try_unwrap(b).unwrap_or_else(|_| vec![0u8; BLOCK]),
                None => vec![0u8; BLOCK],
            };
            buf.resize(BLOCK, 0);
            let mut filled = 0;
            while filled < BLOCK {
                match f.read(&mut buf[filled..]) {
                    Ok(0) => break,
                    Ok(n) => filled += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(io_input(path, e)),
                }
            }
            if filled == 0 {
                return Ok(());
            }
            buf.truncate(filled);
            done += filled as u64;
            let block = Arc::new(buf);
            for s in &senders {
                // A hasher only stops early if its thread died, which join() reports.
                let _ = s.send(block.clone());
            }
            sent.push_back(block);
            if sent.len() > 8 {
                sent.pop_front();
            }
            progress(done);
        }
    })();
    drop(senders);
    let digests: Vec<Vec<u8>> = handles
        .into_iter()
        .map(|h| h.join().expect("hashing thread"))
        .collect();
    result?;
    let after = Identity::of(&std::fs::metadata(path).map_err(|e| io_input(path, e))?);
    if after != input.identity || done != input.identity.size {
        return Err(SignError::Changed(path.display().to_string()));
    }
    let mut out = Digests {
        size: done,
        sha256: String::new(),
        sha512: None,
        sha384: None,
        shake128: None,
        shake256: None,
    };
    for (alg, d) in algs.into_iter().zip(digests) {
        out.set(alg, hex::encode(d));
    }
    Ok(out)
}

fn io_input(path: &Path, e: std::io::Error) -> SignError {
    SignError::Input {
        path: path.display().to_string(),
        reason: hsm::text!(
            "errors.inputs.unreadable",
            "cannot be read: {{error}}",
            error = e
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::check;

    #[test]
    fn digests_match_one_shot_hashes() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.bin");
        let data: Vec<u8> = (0..(3 * BLOCK + 1234))
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        std::fs::write(&p, &data).unwrap();
        let inp = check(&p).unwrap();
        let seen = std::sync::Mutex::new(0u64);
        let h = hash_file(
            &inp,
            &[
                DigestAlg::Sha384,
                DigestAlg::Sha512,
                DigestAlg::Shake128,
                DigestAlg::Shake256,
            ],
            &|n| *seen.lock().unwrap() = n,
            &AtomicBool::new(false),
        )
        .unwrap();
        assert_eq!(h.sha256, hex::encode(Sha256::digest(&data)));
        assert_eq!(h.sha512.unwrap(), hex::encode(Sha512::digest(&data)));
        assert_eq!(h.sha384.unwrap(), hex::encode(Sha384::digest(&data)));
        // SHAKE128/256 of this file by Python's hashlib (32 and 64 bytes, RFC 8702's lengths).
        assert_eq!(
            h.shake128.unwrap(),
            "c2bf2a50d3e537d60f84df282d7a0b4f349380a0489a6b705621b2797dadee18"
        );
        assert_eq!(h.shake256.unwrap(), "6ce791e7a0c51e41ec2bb0080ad62112e3e43857d4c6464a4654b4d4c6c63937900369dcec7e6f96740751bb48d569ace1d3f2fd583426cb756d1bbb99af4b3d");
        assert_eq!(*seen.lock().unwrap(), data.len() as u64);
        // Only what is asked for: SHA-256 alone.
        let plain = hash_file(&inp, &[], &|_| {}, &AtomicBool::new(false)).unwrap();
        assert_eq!(plain.sha256, h.sha256);
        assert_eq!(
            (plain.sha384, plain.sha512, plain.shake128, plain.shake256),
            (None, None, None, None)
        );
    }

    #[test]
    fn a_file_that_changes_is_refused_and_cancel_stops() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.bin");
        std::fs::write(&p, vec![1u8; 2 * BLOCK]).unwrap();
        let inp = check(&p).unwrap();
        // Grows after the check.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .unwrap()
            .write_all_at_end(b"more");
        assert!(matches!(
            hash_file(&inp, &[], &|_| {}, &AtomicBool::new(false)),
            Err(SignError::Changed(_))
        ));
        let inp = check(&p).unwrap();
        assert!(matches!(
            hash_file(&inp, &[], &|_| {}, &AtomicBool::new(true)),
            Err(SignError::Cancelled)
        ));
    }

    trait AppendAll {
        fn write_all_at_end(self, b: &[u8]);
    }
    impl AppendAll for File {
        fn write_all_at_end(mut self, b: &[u8]) {
            use std::io::Write;
            self.write_all(b).unwrap();
        }
    }
}
