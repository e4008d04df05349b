//! PKCS#11 URIs (RFC 7512) for a partition and its objects, and ready-to-copy command lines
//! that use a key from other tools: OpenSSL 3 with the pkcs11 engine or provider,
//! osslsigncode, sbsign and p11tool — filled in with the key's URI and the module — each
//! with the tool's own check of what it made. `trial` runs a line against a throwaway file.
//!
//! cosign is not offered: Debian 12 does not package it, so its line could not be run by
//! the tests, and a line nobody ran is not one the console can say works.

mod trial;
pub use trial::{ToolVerdict, TrialStep, EFI_SAMPLE};

use hsm::keys as hk;
use hsm::uri::{self, TokenIdent};
use serde::Serialize;
use ts_rs::TS;

use crate::core::error::ApiResult;
use crate::core::i18n::Text;
use crate::core::partitions::Partition;
use crate::sign::Signing;
use crate::text;

/// One tool's command line for a key. The PIN is read from a file named `PIN-FILE` holding
/// the PIN alone, without a line break (libp11's `pin-source` and osslsigncode 2.5 read the
/// break as part of the PIN), or asked for where the tool only prompts; `FILE`, `CERT.pem`
/// (the key's certificate), `PUBLIC.pem` (its public key) and the like are the user's files.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ToolCommand {
    /// Which tool; also names the line for [`crate::sign::Signing::try_tool_line`].
    pub tool: String,
    /// What it does, and how it gets the PIN.
    pub purpose: Text,
    pub command: String,
    /// The tool's own check of what `command` made (`None` where it makes nothing).
    pub verify: Option<String>,
    /// Why the line may not work on this token, and what does instead.
    pub caveat: Option<Text>,
}

/// Key types Debian 12's libp11 (the OpenSSL pkcs11 engine, which osslsigncode and sbsign
/// load too) does not know: one of them on a token makes it give up listing the token's
/// private keys ("Unable to enumerate private keys"), so no key there can be used.
/// It knows RSA and ECDSA; EdDSA keys stop it too, as the tests show.
fn unknown_to_libp11(algorithm: &str) -> bool {
    !(algorithm.starts_with("ECDSA") || algorithm.starts_with("RSA"))
}

/// The URIs of an object and what uses them.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ObjectUri {
    /// The object (`pkcs11:token=…;object=…;id=…;type=…`).
    pub uri: String,
    /// The token alone.
    pub token_uri: String,
    /// The module (`library-manufacturer`, `library-description`).
    pub module_uri: String,
    pub module_path: String,
    /// Command lines of other tools using the key (private keys; empty for other objects).
    pub commands: Vec<ToolCommand>,
}

/// Quote for a POSIX shell.
fn sh(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The command lines other tools take for a private key's URI. `others` are the algorithms
/// of the token's other private keys (libp11 reads every key of a token to find one).
pub fn tool_commands(
    key_uri: &str,
    token_uri: &str,
    module_path: &str,
    algorithm: &str,
    others: &[String],
) -> Vec<ToolCommand> {
    let (k, t, m) = (sh(key_uri), sh(token_uri), sh(module_path));
    let digest = if algorithm.starts_with("Ed25519") {
        ""
    } else {
        " -sha256"
    };
    let engine_conf = format!(
        "printf '%s\\n' 'openssl_conf = init' '[init]' 'engines = engines' '[engines]' 'pkcs11 = pkcs11' '[pkcs11]' 'engine_id = pkcs11' 'MODULE_PATH = {module_path}' 'init = 0' > pkcs11-engine.cnf"
    );
    let openssl_verify =
        format!("openssl dgst{digest} -verify PUBLIC.pem -signature FILE.sig FILE");
    let mut unknown: Vec<&str> = others
        .iter()
        .map(String::as_str)
        .chain([algorithm])
        .filter(|a| unknown_to_libp11(a))
        .collect();
    unknown.sort_unstable();
    unknown.dedup();
    let libp11 = (!unknown.is_empty()).then(|| {
        text!(
            "uris.caveat_libp11",
            "Will not work on this token: Debian 12's libp11 (the pkcs11 engine) stops listing a token's keys when the token holds a key type it does not know, and this one holds {{algorithms}}. Sign with hsmc sign or the Sign view instead, or keep this key on a partition of classic keys.",
            algorithms = unknown.join(", ")
        )
    });
    vec![
        ToolCommand {
            tool: "OpenSSL 3 (pkcs11 engine)".into(),
            purpose: text!("uris.purpose_openssl_engine", "sign a file; the PIN is read from PIN-FILE (Debian: libengine-pkcs11-openssl)"),
            command: format!(
                "{engine_conf}\nOPENSSL_CONF=pkcs11-engine.cnf openssl dgst{digest} -engine pkcs11 -keyform engine -passin file:PIN-FILE -sign {k} -out FILE.sig FILE"
            ),
            verify: Some(openssl_verify.clone()),
            caveat: libp11.clone(),
        },
        ToolCommand {
            tool: "OpenSSL 3 (pkcs11 provider)".into(),
            purpose: text!("uris.purpose_openssl_provider", "sign a file; asks for the PIN (pkcs11-provider, packaged from Debian 13)"),
            command: format!(
                "PKCS11_PROVIDER_MODULE={m} openssl dgst{digest} -provider pkcs11 -provider default -sign {k} -out FILE.sig FILE"
            ),
            verify: Some(openssl_verify),
            caveat: Some(text!(
                "uris.caveat_provider_untested",
                "Not tested here: Debian 12 has no pkcs11-provider package."
            )),
        },
        ToolCommand {
            tool: "osslsigncode".into(),
            purpose: text!("uris.purpose_osslsigncode", "Authenticode-sign a Windows binary; the PIN is read from PIN-FILE"),
            command: format!(
                "osslsigncode sign -pkcs11module {m} -key {k} -readpass PIN-FILE -certs CERT.pem -h sha256 -in app.exe -out app-signed.exe"
            ),
            verify: Some("osslsigncode verify -CAfile CERT.pem -in app-signed.exe".into()),
            caveat: libp11.clone(),
        },
        ToolCommand {
            tool: "sbsign".into(),
            purpose: text!("uris.purpose_sbsign", "sign an EFI binary for Secure Boot; libp11 reads the PIN from PIN-FILE, named in the URI"),
            command: format!(
                "{engine_conf}\nOPENSSL_CONF=pkcs11-engine.cnf sbsign --engine pkcs11 --key {} --cert CERT.pem --output grubx64.efi.signed grubx64.efi",
                sh(&format!("{key_uri}?pin-source=file:PIN-FILE"))
            ),
            verify: Some("sbverify --cert CERT.pem grubx64.efi.signed".into()),
            caveat: libp11,
        },
        ToolCommand {
            tool: "p11tool".into(),
            purpose: text!("uris.purpose_p11tool", "list the token's objects (GnuTLS); the PIN is read from PIN-FILE"),
            command: format!(
                "GNUTLS_PIN=\"$(cat PIN-FILE)\" p11tool --provider={m} --login --list-all {t}"
            ),
            verify: None,
            caveat: None,
        },
    ]
}

impl Signing<'_> {
    fn token_ident(p: &Partition, t: Option<crate::core::views::TokenView>) -> TokenIdent {
        match t {
            Some(t) => TokenIdent {
                label: t.label,
                manufacturer: t.manufacturer,
                model: t.model,
                serial: t.serial,
            },
            None => TokenIdent {
                label: p.label.clone(),
                serial: p.serial.clone(),
                ..Default::default()
            },
        }
    }

    /// The URIs of an object (and of its token and module) and, for a private key, the
    /// command lines of other tools that use it.
    pub async fn object_uri(self, partition: &str, handle: u64) -> ApiResult<ObjectUri> {
        let p = self.partition_ref(partition).await?;
        let summary = p
            .pool
            .run_idempotent_async("objects.uri", move |s| hk::summary(s, handle))
            .await?;
        let ident = Self::token_ident(&p, self.token_view(&p).await);
        let class = match summary.class.as_str() {
            "PRIVATE_KEY" => Some(p11::sys::CKO_PRIVATE_KEY),
            "PUBLIC_KEY" => Some(p11::sys::CKO_PUBLIC_KEY),
            "SECRET_KEY" => Some(p11::sys::CKO_SECRET_KEY),
            "CERTIFICATE" => Some(p11::sys::CKO_CERTIFICATE),
            "DATA" => Some(p11::sys::CKO_DATA),
            _ => None,
        };
        let id = hex::decode(&summary.id_hex).unwrap_or_default();
        let object = uri::object_uri(&ident, &summary.label, &id, class.unwrap_or(u64::MAX));
        let token = uri::token_uri(&ident);
        let info = p.module.module.info().ok();
        let module = uri::module_uri(
            info.as_ref().map(|i| i.manufacturer.as_str()).unwrap_or(""),
            info.as_ref()
                .map(|i| i.library_description.as_str())
                .unwrap_or(""),
        );
        let module_path = p.module.path.display().to_string();
        let commands = if summary.class == "PRIVATE_KEY" {
            let others: Vec<String> = p
                .pool
                .run_idempotent_async("objects.uri", |s| {
                    hk::list_objects(
                        s,
                        &mut p11::Template::new()
                            .ulong(p11::sys::CKA_CLASS, p11::sys::CKO_PRIVATE_KEY),
                    )
                })
                .await?
                .into_iter()
                .map(|o| o.algorithm)
                .collect();
            tool_commands(&object, &token, &module_path, &summary.algorithm, &others)
        } else {
            Vec::new()
        };
        Ok(ObjectUri {
            uri: object,
            token_uri: token,
            module_uri: module,
            module_path,
            commands,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_quote_the_uri() {
        let c = tool_commands(
            "pkcs11:object=it's",
            "pkcs11:token=t",
            "/usr/lib/m.so",
            "ECDSA P-256",
            &["RSA-2048".into()],
        );
        assert_eq!(c.len(), 5);
        assert!(c[0].command.contains(
            "-engine pkcs11 -keyform engine -passin file:PIN-FILE -sign 'pkcs11:object=it'\\''s'"
        ));
        assert!(c[3]
            .command
            .contains("--key 'pkcs11:object=it'\\''s?pin-source=file:PIN-FILE'"));
        assert!(c[0].caveat.is_none() && c[2].caveat.is_none());
        // One ML-DSA key on the token: every line through libp11 says it will not work.
        let c = tool_commands(
            "pkcs11:object=k",
            "pkcs11:token=t",
            "/usr/lib/m.so",
            "ECDSA P-256",
            &["ML-DSA-65".into(), "ECDSA P-256".into()],
        );
        for i in [0, 2, 3] {
            let caveat = c[i].caveat.as_ref().expect("libp11 cannot read the token");
            assert!(caveat.text.contains("holds ML-DSA-65"), "{}", caveat.text);
        }
        assert!(c[4].caveat.is_none(), "p11tool reads such tokens");
    }

    /// The integration pages show the lines the console prints, verbatim (the tests run
    /// those): for a placeholder key on SoftHSM2.
    #[test]
    fn the_integration_pages_show_the_printed_lines() {
        let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/src");
        let pages = [
            ("authenticode.md", "code-signing", "osslsigncode"),
            ("secure-boot.md", "secure-boot", "sbsign"),
        ];
        for (page, object, tool) in pages {
            let text = std::fs::read_to_string(docs.join(page)).unwrap();
            let lines = tool_commands(
                &format!("pkcs11:token=release;object={object};type=private"),
                "pkcs11:token=release",
                "/usr/lib/softhsm/libsofthsm2.so",
                "RSA-2048",
                &[],
            );
            let c = lines.iter().find(|c| c.tool == tool).unwrap();
            let verify = c.verify.as_deref().unwrap();
            for line in [c.command.as_str(), verify] {
                let block = format!("```sh\n{line}\n```");
                assert!(text.contains(&block), "{page} lacks, verbatim:\n{block}");
            }
        }
    }
}
