//! Certificate chains given at signing time (`hsmc sign --chain FILE`): the files read and
//! parsed, and the path from the signer's certificate through them checked link by link
//! before anything is signed — each certificate's issuer name is the next one's subject
//! AND the next one's key verifies its signature (the software verifiers: RustCrypto,
//! never the token).
//!
//! The files may hold the certificates in any order, as `openssl cms -certfile` takes
//! them: the path is built from the signer's certificate, issuer by issuer, and refused
//! when two different certificates could be the next link (ambiguous) or when a given
//! certificate is left over (it does not chain). A file may also hold the signer's own
//! certificate (recognised by its public key, the signing key's): it is then the one CMS
//! signatures name, instead of the token's. Issuers the token holds already are carried
//! once.

use der::{Decode, Encode};
use x509_cert::Certificate;

use hsm::pubkey::PublicKey;

use crate::alg::SigAlg;
use crate::objects::{parse_import, ImportItem};

/// Why a chain is refused; each names the file and the certificate.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainError {
    /// The file cannot be read, is not a certificate file or holds a private key
    /// (`reason` names the file already).
    #[error("{reason}")]
    Unreadable { file: String, reason: String },
    /// The file holds a private key (refused, whatever else it holds).
    #[error("{file} holds a private key; a chain file holds certificates only")]
    PrivateKey { file: String },
    /// The file holds a public key, not a certificate.
    #[error("{file} holds a public key; a chain file holds certificates")]
    PublicKey { file: String },
    /// There is no signer certificate the chain could start from.
    #[error("the key has no certificate on the token and the chain files hold none for it")]
    NoSignerCertificate,
    /// A certificate of `file` is not on the path from the signer's certificate.
    #[error("{file}: the certificate {subject} does not chain to the signing certificate: the path ends at {last}, which needs its issuer {expected}")]
    DoesNotChain {
        file: String,
        subject: String,
        last: String,
        expected: String,
    },
    /// The name matches but the issuer's key does not verify the certificate's signature.
    #[error("{file}: the certificate {subject} is named as the issuer of {child} but its key does not verify that certificate's signature ({reason})")]
    BadSignature {
        file: String,
        subject: String,
        child: String,
        reason: String,
    },
    /// Two different certificates could be the issuer of `child`.
    #[error("{file}: two certificates could issue {child} ({subject} and another); keep one")]
    Ambiguous {
        file: String,
        subject: String,
        child: String,
    },
}

/// A certificate of a chain file, with the file it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GivenCertificate {
    pub file: String,
    pub der: Vec<u8>,
}

/// The certificates of one chain file (PEM with one or more certificates, DER, PKCS#7).
/// A private key, a public key, or anything not a certificate is refused naming the file.
pub fn read_file(path: &std::path::Path) -> Result<Vec<GivenCertificate>, ChainError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| ChainError::Unreadable {
        file: file.clone(),
        reason: format!("{file}: {e}"),
    })?;
    parse_file(&bytes, &file)
}

/// As [`read_file`], over the file's content.
pub fn parse_file(bytes: &[u8], file: &str) -> Result<Vec<GivenCertificate>, ChainError> {
    let items = parse_import(bytes, file).map_err(|e| {
        let reason = e.to_string();
        if reason.contains("holds a private key") {
            ChainError::PrivateKey {
                file: file.to_string(),
            }
        } else {
            ChainError::Unreadable {
                file: file.to_string(),
                reason,
            }
        }
    })?;
    items
        .into_iter()
        .map(|i| match i {
            ImportItem::Certificate(der) => Ok(GivenCertificate {
                file: file.to_string(),
                der,
            }),
            ImportItem::PublicKey(_) => Err(ChainError::PublicKey {
                file: file.to_string(),
            }),
        })
        .collect()
}

/// The signer's certificate and its issuers, nearest first, as CMS signatures carry them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assembled {
    /// DER of the certificate CMS signatures name.
    pub certificate: Vec<u8>,
    /// Whether it came from a chain file (not the token).
    pub certificate_from_file: bool,
    pub chain: Vec<Vec<u8>>,
}

/// The path from the signer's certificate through the given certificates (any order) and
/// the token's issuers, each link checked; see the module documentation.
pub fn assemble(
    key: &PublicKey,
    token_certificate: Option<&[u8]>,
    token_chain: &[Vec<u8>],
    given: &[GivenCertificate],
) -> Result<Assembled, ChainError> {
    let spki = key.spki().to_der().ok();
    let is_signer = |der: &[u8]| {
        Certificate::from_der(der)
            .ok()
            .and_then(|c| c.tbs_certificate().subject_public_key_info().to_der().ok())
            .is_some_and(|s| Some(s) == spki)
    };
    let mut from_file: Vec<&GivenCertificate> = Vec::new();
    for g in given.iter().filter(|g| is_signer(&g.der)) {
        if !from_file.iter().any(|f| f.der == g.der) {
            from_file.push(g);
        }
    }
    let (leaf, certificate_from_file) = match from_file.as_slice() {
        [] => (
            token_certificate
                .ok_or(ChainError::NoSignerCertificate)?
                .to_vec(),
            false,
        ),
        [one] => (
            one.der.clone(),
            Some(one.der.as_slice()) != token_certificate,
        ),
        [a, ..] => {
            return Err(ChainError::Ambiguous {
                file: a.file.clone(),
                subject: subject_of(&a.der),
                child: "the signing key".into(),
            })
        }
    };
    // Candidates: the files' certificates (the signer's aside), then the token's issuers
    // that are not among them.
    let mut pool: Vec<GivenCertificate> = Vec::new();
    for g in given.iter().filter(|g| g.der != leaf && !is_signer(&g.der)) {
        if !pool.iter().any(|p| p.der == g.der) {
            pool.push(g.clone());
        }
    }
    for t in token_chain {
        if !pool.iter().any(|p| &p.der == t) && *t != leaf {
            pool.push(GivenCertificate {
                file: "the token".into(),
                der: t.clone(),
            });
        }
    }
    let chain = walk(&leaf, &pool)?;
    if let Some(left) = given
        .iter()
        .find(|g| g.der != leaf && !is_signer(&g.der) && !chain.contains(&g.der))
    {
        let last = Certificate::from_der(chain.last().unwrap_or(&leaf)).ok();
        return Err(ChainError::DoesNotChain {
            file: left.file.clone(),
            subject: subject_of(&left.der),
            last: last
                .as_ref()
                .map(|c| c.tbs_certificate().subject().to_string())
                .unwrap_or_default(),
            expected: match &last {
                Some(c) if is_self_issued(c) => "none (it is self-signed)".to_string(),
                Some(c) => c.tbs_certificate().issuer().to_string(),
                None => String::new(),
            },
        });
    }
    Ok(Assembled {
        certificate: leaf,
        certificate_from_file,
        chain,
    })
}

/// From `leaf`, issuer by issuer among `pool`, until a self-issued certificate or no
/// issuer; each link's signature verified. At most 8 issuers.
fn walk(leaf: &[u8], pool: &[GivenCertificate]) -> Result<Vec<Vec<u8>>, ChainError> {
    let parsed: Vec<(&GivenCertificate, Certificate)> = pool
        .iter()
        .filter_map(|g| Certificate::from_der(&g.der).ok().map(|c| (g, c)))
        .collect();
    let mut chain: Vec<Vec<u8>> = Vec::new();
    let Ok(mut current) = Certificate::from_der(leaf) else {
        return Ok(chain);
    };
    while !is_self_issued(&current) && chain.len() < 8 {
        let named: Vec<&(&GivenCertificate, Certificate)> = parsed
            .iter()
            .filter(|(g, c)| {
                c.tbs_certificate().subject() == current.tbs_certificate().issuer()
                    && !chain.contains(&g.der)
            })
            .collect();
        let verifying: Vec<&&(&GivenCertificate, Certificate)> = named
            .iter()
            .filter(|(_, c)| issued_by(&current, c).is_ok())
            .collect();
        let (g, next) = match (named.as_slice(), verifying.as_slice()) {
            ([], _) => break,
            (_, [one]) => (one.0, one.1.clone()),
            ([(g, c), ..], []) => {
                return Err(ChainError::BadSignature {
                    file: g.file.clone(),
                    subject: c.tbs_certificate().subject().to_string(),
                    child: current.tbs_certificate().subject().to_string(),
                    reason: issued_by(&current, c).err().unwrap_or_default(),
                })
            }
            (_, [a, ..]) => {
                return Err(ChainError::Ambiguous {
                    file: a.0.file.clone(),
                    subject: a.1.tbs_certificate().subject().to_string(),
                    child: current.tbs_certificate().subject().to_string(),
                })
            }
        };
        chain.push(g.der.clone());
        current = next;
    }
    Ok(chain)
}

fn is_self_issued(c: &Certificate) -> bool {
    c.tbs_certificate().subject() == c.tbs_certificate().issuer()
}

fn subject_of(der: &[u8]) -> String {
    Certificate::from_der(der)
        .map(|c| c.tbs_certificate().subject().to_string())
        .unwrap_or_else(|_| "(unparsable)".into())
}

/// Whether `issuer`'s key verifies `child`'s signature (by the software verifiers):
/// ML-DSA, Ed25519, HSS, RSA-PSS (SHA-256) as the console signs; ECDSA P-256/P-384 with
/// SHA-256/384/512 and RSA PKCS #1 v1.5 as CAs (OpenSSL's defaults) sign.
pub fn issued_by(child: &Certificate, issuer: &Certificate) -> Result<(), String> {
    let tbs = child
        .tbs_certificate()
        .to_der()
        .map_err(|e| e.to_string())?;
    let sig = child
        .signature()
        .as_bytes()
        .ok_or("the signature is not a whole number of bytes")?;
    let alg = child.signature_algorithm();
    let spki = issuer
        .tbs_certificate()
        .subject_public_key_info()
        .to_der()
        .map_err(|e| e.to_string())?;
    let pk = PublicKey::from_spki_der(&spki)?;
    if let Ok(scheme) = SigAlg::from_identifier(alg, &pk) {
        return scheme
            .verify(&pk, &tbs, &[], sig)
            .map_err(|e| e.to_string());
    }
    let digest = crate::tsp::cert_signature_digest(alg)?;
    crate::tsp::verify_signature(issuer, alg, digest, &tbs, sig)
}
