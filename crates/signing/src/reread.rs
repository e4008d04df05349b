//! Reading a file again after it was hashed, for the formats whose hash cannot be derived
//! from the batch's SHA-256/512 (OpenPGP hashes a trailer after the file, minisign uses
//! BLAKE2b-512). The bytes are handed on block by block and must be the ones hashed before:
//! same identity (device, inode, size, modification time) and the same SHA-256.

use std::fs::File;
use std::io::Read;

use sha2::{Digest, Sha256};

use crate::input::{Identity, InputFile};
use crate::{Result, SignError};

const BLOCK: usize = 1 << 20;

/// Stream `input` into `each`, then check it is the file whose SHA-256 (hex) is
/// `expected_sha256`. A changed file is [`SignError::Changed`].
pub fn stream_same(
    input: &InputFile,
    expected_sha256: &str,
    each: &mut dyn FnMut(&[u8]),
) -> Result<()> {
    let path = input.path.as_path();
    let unreadable = |e: std::io::Error| SignError::Input {
        path: path.display().to_string(),
        reason: hsm::text!(
            "errors.inputs.unreadable",
            "cannot be read: {{error}}",
            error = e
        ),
    };
    let changed = || SignError::Changed(path.display().to_string());
    let mut f = File::open(path).map_err(unreadable)?;
    if Identity::of(&f.metadata().map_err(unreadable)?) != input.identity {
        return Err(changed());
    }
    let mut sha = Sha256::new();
    let mut buf = vec![0u8; BLOCK];
    let mut total = 0u64;
    loop {
        let n = match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(unreadable(e)),
        };
        total += n as u64;
        sha.update(&buf[..n]);
        each(&buf[..n]);
    }
    let after = Identity::of(&std::fs::metadata(path).map_err(unreadable)?);
    if after != input.identity
        || total != input.size()
        || hex::encode(sha.finalize()) != expected_sha256
    {
        return Err(changed());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_changed_since_it_was_hashed_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.bin");
        std::fs::write(&p, b"release").unwrap();
        let input = crate::input::check(&p).unwrap();
        let sha = hex::encode(Sha256::digest(b"release"));
        let mut seen = Vec::new();
        stream_same(&input, &sha, &mut |b| seen.extend_from_slice(b)).unwrap();
        assert_eq!(seen, b"release");
        // Same size and identity, other bytes than were hashed: the digest tells.
        let other = hex::encode(Sha256::digest(b"RELEASE"));
        assert!(matches!(
            stream_same(&input, &other, &mut |_| {}),
            Err(SignError::Changed(_))
        ));
        std::fs::write(&p, b"release 2").unwrap();
        assert!(matches!(
            stream_same(&input, &sha, &mut |_| {}),
            Err(SignError::Changed(_))
        ));
    }
}
