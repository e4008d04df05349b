//! PKCS#11 URIs (RFC 7512) for a partition and its objects, and ready-to-copy command lines
//! that use a key from other tools: OpenSSL 3 with the pkcs11 engine or provider,
//! osslsigncode, sbsign, cosign and p11tool — filled in with the key's URI and the module.

use hsm::keys as hk;
use hsm::uri::{self, TokenIdent};
use serde::Serialize;
use ts_rs::TS;

use crate::error::ApiResult;
use crate::partitions::Partition;
use crate::Console;

/// One tool's command line for a key.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ToolCommand {
    pub tool: String,
    /// What it does, in words.
    pub purpose: String,
    pub command: String,
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

/// The command lines other tools take for a private key's URI.
pub fn tool_commands(
    key_uri: &str,
    token_uri: &str,
    module_path: &str,
    algorithm: &str,
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
    vec![
        ToolCommand {
            tool: "OpenSSL 3 (pkcs11 engine)".into(),
            purpose: "sign a file (Debian: libengine-pkcs11-openssl)".into(),
            command: format!(
                "{engine_conf}\nOPENSSL_CONF=pkcs11-engine.cnf openssl dgst{digest} -engine pkcs11 -keyform engine -sign {k} -out FILE.sig FILE"
            ),
        },
        ToolCommand {
            tool: "OpenSSL 3 (pkcs11 provider)".into(),
            purpose: "sign a file (Debian: pkcs11-provider)".into(),
            command: format!(
                "PKCS11_PROVIDER_MODULE={m} openssl dgst{digest} -provider pkcs11 -provider default -sign {k} -out FILE.sig FILE"
            ),
        },
        ToolCommand {
            tool: "osslsigncode".into(),
            purpose: "Authenticode-sign a Windows binary".into(),
            command: format!(
                "osslsigncode sign -pkcs11module {m} -key {k} -certs CERT.pem -h sha256 -in app.exe -out app-signed.exe"
            ),
        },
        ToolCommand {
            tool: "sbsign".into(),
            purpose: "sign an EFI binary for Secure Boot".into(),
            command: format!(
                "sbsign --engine pkcs11 --key {k} --cert CERT.pem --output grubx64.efi.signed grubx64.efi"
            ),
        },
        ToolCommand {
            tool: "cosign".into(),
            purpose: "sign a blob (cosign built with PKCS#11 support)".into(),
            command: format!(
                "cosign sign-blob --key {} --output-signature FILE.sig FILE",
                sh(&format!("{key_uri}?module-path={module_path}"))
            ),
        },
        ToolCommand {
            tool: "p11tool".into(),
            purpose: "list the token's objects (GnuTLS)".into(),
            command: format!("p11tool --provider={m} --login --list-all {t}"),
        },
    ]
}

impl Console {
    fn token_ident(p: &Partition, t: Option<crate::views::TokenView>) -> TokenIdent {
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
    pub async fn object_uri(&self, partition: &str, handle: u64) -> ApiResult<ObjectUri> {
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
            tool_commands(&object, &token, &module_path, &summary.algorithm)
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
        );
        assert_eq!(c.len(), 6);
        assert!(c[0]
            .command
            .contains("-engine pkcs11 -keyform engine -sign 'pkcs11:object=it'\\''s'"));
        assert!(c[4].command.contains("?module-path=/usr/lib/m.so"));
    }
}
