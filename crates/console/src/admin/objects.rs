//! Certificates, public keys and data objects brought onto a token (`C_CreateObject`),
//! shown and exported. A certificate whose public key matches a key pair on the token gets
//! that key's `CKA_ID` (and label, unless one is given): it becomes *the key's
//! certificate*, which CMS signatures carry with its chain. CA certificates are stored with
//! `CKA_CERTIFICATE_CATEGORY` = authority. Everything is parsed and checked before the token
//! is touched; every import is audited before it runs.

use std::path::{Path, PathBuf};

use audit::Event;
use hsm::keys as hk;
use hsm::objects as ho;
use hsm::roles::Action;
use p11::sys::*;
use serde::{Deserialize, Serialize};
use signing::objects::{CertificateInfo, ImportItem};
use ts_rs::TS;

use crate::admin::Admin;
use crate::core::change::{Change, ChangeKind};
use crate::core::error::{ApiError, ApiResult};
use crate::core::i18n::Text;
use crate::core::{partitions::Partition, Core};
use crate::text;
use std::sync::Arc;

/// Files larger than this are not imported (a certificate or key is a few KiB; a data
/// object on an HSM rarely more than a few hundred).
pub const MAX_IMPORT_BYTES: u64 = 1024 * 1024;

/// What to import.
#[derive(Debug, Clone, Deserialize, TS)]
pub struct ImportRequest {
    #[ts(type = "string")]
    pub path: PathBuf,
    /// The label; for a certificate of a key on the token, the key's label by default.
    #[serde(default)]
    pub label: Option<String>,
    /// `CKA_ID` in hex; for a certificate of a key on the token, the key's by default.
    #[serde(default)]
    pub id_hex: Option<String>,
    /// Import the file as it is, as a data object (`CKO_DATA`).
    #[serde(default)]
    pub data: bool,
    /// The data object's `CKA_APPLICATION`.
    #[serde(default)]
    pub application: Option<String>,
}

/// One object the import made.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ImportedObject {
    #[ts(type = "number")]
    pub handle: u64,
    /// `certificate`, `public_key` or `data`.
    pub kind: String,
    pub label: String,
    pub id_hex: String,
    /// The certificate's details.
    pub certificate: Option<CertificateInfo>,
    /// The label of the key pair whose certificate this is (`None`: it matches no key).
    pub key_label: Option<String>,
    /// Stored as a CA certificate (`CKA_CERTIFICATE_CATEGORY` = authority).
    pub authority: bool,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct ImportResult {
    pub file: String,
    pub objects: Vec<ImportedObject>,
}

/// A certificate on the token, described, with the chain it builds to on the token.
#[derive(Debug, Clone, Serialize, TS)]
pub struct CertificateDetails {
    #[ts(type = "number")]
    pub handle: u64,
    pub label: String,
    pub id_hex: String,
    pub info: CertificateInfo,
    /// Subjects of the issuers found on the token, nearest first.
    pub chain: Vec<String>,
    /// The chain ends at a self-signed certificate on the token.
    pub chain_complete: bool,
    /// The label of the key pair whose certificate this is.
    pub key_label: Option<String>,
    /// Why it should not sign code (expired, key usage, EKU).
    pub signing_warnings: Vec<String>,
    /// The same in a form each language translates.
    pub signing_warnings_text: Vec<hsm::Text>,
}

/// How to export an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ObjectFormat {
    /// PEM for certificates and public keys, the bytes for data objects.
    Pem,
    /// DER for certificates and public keys, the bytes for data objects.
    Der,
}

hsm::wire_display!(ObjectFormat);

/// Object classes as `hsmc objects ls --class` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ObjectClass {
    Cert,
    Data,
    Public,
    Private,
    Secret,
}

hsm::wire_display!(ObjectClass);

impl ObjectClass {
    /// The class as [`hk::ObjectSummary::class`] spells it.
    pub fn name(self) -> &'static str {
        match self {
            ObjectClass::Cert => "CERTIFICATE",
            ObjectClass::Data => "DATA",
            ObjectClass::Public => "PUBLIC_KEY",
            ObjectClass::Private => "PRIVATE_KEY",
            ObjectClass::Secret => "SECRET_KEY",
        }
    }
}

/// A parsed import, before it reaches the token.
struct Planned {
    kind: &'static str,
    template: p11::Template,
    label: String,
    id: Vec<u8>,
    certificate: Option<CertificateInfo>,
    key_label: Option<String>,
    authority: bool,
}

/// "FILE: cannot be read: ERROR", for an import file.
fn unreadable(name: &str, e: &std::io::Error) -> Text {
    text!(
        "errors.import_unreadable",
        "{{file}}: cannot be read: {{error}}",
        file = name,
        error = e
    )
}

fn read_import_file(path: &Path) -> ApiResult<Vec<u8>> {
    let name = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| ApiError::invalid(unreadable(&name, &e)))?;
    if !meta.is_file() {
        return Err(ApiError::invalid(text!(
            "errors.import_not_regular_file",
            "{{file}}: is not a regular file",
            file = name
        )));
    }
    if meta.len() > MAX_IMPORT_BYTES {
        return Err(ApiError::invalid(text!(
            "errors.import_too_large",
            "{{file}}: {{bytes}} bytes is more than the {{max}} an import takes",
            file = name,
            bytes = meta.len(),
            max = MAX_IMPORT_BYTES
        )));
    }
    std::fs::read(path).map_err(|e| ApiError::invalid(unreadable(&name, &e)))
}

fn parse_id(id_hex: &Option<String>) -> ApiResult<Option<Vec<u8>>> {
    match id_hex.as_deref().map(str::trim) {
        None | Some("") => Ok(None),
        Some(h) => hex::decode(h.trim_start_matches("0x"))
            .map(Some)
            .map_err(|_| {
                ApiError::invalid(text!(
                    "errors.id_not_hex",
                    "--id / ID: '{{id}}' is not hexadecimal (e.g. 0a1b2c)",
                    id = h
                ))
            }),
    }
}

fn file_label(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "imported".into())
}

/// Plan the objects for a file: everything checked, nothing sent.
fn plan(
    s: &p11::Session,
    req: &ImportRequest,
    bytes: &[u8],
    file: &str,
) -> hsm::Result<Vec<Planned>> {
    let invalid = crate::core::error::hsm_side;
    let id = parse_id(&req.id_hex).map_err(ApiError::into_refused)?;
    if let Some(l) = &req.label {
        crate::admin::keys::validate_label(l).map_err(ApiError::into_refused)?;
    }
    if req.data {
        return plan_data(s, req, bytes, file);
    }
    let items = signing::objects::parse_import(bytes, file).map_err(invalid)?;
    let certs: Vec<Vec<u8>> = items
        .iter()
        .filter_map(|i| match i {
            ImportItem::Certificate(d) => Some(d.clone()),
            _ => None,
        })
        .collect();
    signing::objects::check_chain_order(&certs, file).map_err(invalid)?;
    let on_token = ho::certificates(s)?;
    let family = s.module().family();
    let several = items.len() > 1;
    let mut out = Vec::new();
    for item in items {
        match item {
            ImportItem::Certificate(der_bytes) => {
                let info = signing::objects::describe(&der_bytes).map_err(invalid)?;
                if let Some((_, l, _)) = on_token.iter().find(|(_, _, d)| *d == der_bytes) {
                    return Err(hsm::HsmError::Refused(
                        text!(
                            "errors.import_certificate_exists",
                            "{{file}}: the certificate {{subject}} is already on the token as '{{label}}'",
                            file = file,
                            subject = info.subject,
                            label = l
                        ),
                    ));
                }
                let pk = signing::objects::certificate_public_key(&der_bytes).map_err(invalid)?;
                let pair = ho::key_pair_for(s, &pk)?;
                let authority = info.is_ca;
                // A given label and ID name the leaf (the first certificate) only.
                let first = out.is_empty();
                let label = match (&req.label, &pair) {
                    (Some(l), _) if first => l.clone(),
                    (_, Some((_, kl))) => kl.clone(),
                    _ => cn_or(&info.subject, &file_label(&req.path)),
                };
                let cert_id = match (&id, &pair) {
                    (Some(i), _) if first => i.clone(),
                    (_, Some((kid, _))) => kid.clone(),
                    _ => hex::decode(&info.sha256_fingerprint[..16]).unwrap_or_default(),
                };
                let (subject, issuer, serial) =
                    signing::objects::certificate_names(&der_bytes).map_err(invalid)?;
                let category = if authority {
                    ho::CATEGORY_AUTHORITY
                } else if pair.is_some() {
                    ho::CATEGORY_TOKEN_USER
                } else {
                    ho::CATEGORY_OTHER_ENTITY
                };
                let template = p11::Template::new()
                    .ulong(CKA_CLASS, CKO_CERTIFICATE)
                    .ulong(CKA_CERTIFICATE_TYPE, CKC_X_509)
                    .bool(CKA_TOKEN, true)
                    .bool(CKA_PRIVATE, false)
                    .text(CKA_LABEL, &label)
                    .bytes(CKA_ID, &cert_id)
                    .bytes(CKA_SUBJECT, &subject)
                    .bytes(CKA_ISSUER, &issuer)
                    .bytes(CKA_SERIAL_NUMBER, &serial)
                    .ulong(CKA_CERTIFICATE_CATEGORY, category)
                    .bytes(CKA_VALUE, &der_bytes);
                out.push(Planned {
                    kind: "certificate",
                    template,
                    label,
                    id: cert_id,
                    certificate: Some(info),
                    key_label: pair.map(|(_, l)| l),
                    authority,
                });
            }
            ImportItem::PublicKey(pk) => {
                if several {
                    return Err(hsm::HsmError::Refused(text!(
                        "errors.import_public_key_alone",
                        "{{file}}: import a public key on its own, not with certificates",
                        file = file
                    )));
                }
                let label = req.label.clone().unwrap_or_else(|| file_label(&req.path));
                let key_id = match &id {
                    Some(i) => i.clone(),
                    None => hk::new_key_id(s)?,
                };
                let template = ho::public_key_template(&pk, family, &label, &key_id)?;
                out.push(Planned {
                    kind: "public_key",
                    template,
                    label,
                    id: key_id,
                    certificate: None,
                    key_label: None,
                    authority: false,
                });
            }
        }
    }
    Ok(out)
}

/// A file imported as it is, as a data object (refused when one with its label and
/// application is there already).
fn plan_data(
    s: &p11::Session,
    req: &ImportRequest,
    bytes: &[u8],
    file: &str,
) -> hsm::Result<Vec<Planned>> {
    let label = req.label.clone().unwrap_or_else(|| file_label(&req.path));
    let app = req
        .application
        .clone()
        .unwrap_or_else(|| "hsm-console".into());
    let exists = s.find_objects(
        &mut p11::Template::new()
            .ulong(CKA_CLASS, CKO_DATA)
            .text(CKA_LABEL, &label)
            .text(CKA_APPLICATION, &app),
    )?;
    if !exists.is_empty() {
        return Err(hsm::HsmError::Refused(
            text!(
                "errors.import_data_exists",
                "{{file}}: a data object labelled '{{label}}' of application '{{app}}' is already on the token",
                file = file,
                label = label,
                app = app
            ),
        ));
    }
    Ok(vec![Planned {
        kind: "data",
        template: ho::data_template(&label, &app, bytes, true),
        label,
        id: Vec::new(),
        certificate: None,
        key_label: None,
        authority: false,
    }])
}

/// `CN=…` of a subject, else `fallback`.
fn cn_or(subject: &str, fallback: &str) -> String {
    subject
        .split(',')
        .find_map(|rdn| rdn.trim().strip_prefix("CN="))
        .map(str::to_string)
        .unwrap_or_else(|| fallback.to_string())
}

impl Admin<'_> {
    /// Import a file (`C_CreateObject`): certificates (PEM, DER, a PEM chain leaf first, a
    /// `.p7b`), a public key (SPKI), or with `data` the file as a data object. Parsed and
    /// checked first; recorded in the audit trail before the token is changed.
    pub async fn import_objects(
        self,
        partition: &str,
        req: ImportRequest,
    ) -> ApiResult<ImportResult> {
        self.changes()
            .apply(
                partition,
                ImportObjects {
                    req,
                    planned: Vec::new(),
                    settled: 0,
                },
            )
            .await
    }

    /// A certificate on the token described, with its chain among the token's certificates.
    pub async fn certificate_details(
        self,
        partition: &str,
        handle: u64,
    ) -> ApiResult<CertificateDetails> {
        let p = self.partition_ref(partition).await?;
        let refs = p.clone();
        p.pool
            .run_service_idempotent_async("objects.cert", move |s| {
                let handle = refs.key_refs.resolve(s, handle)?;
                let summary = hk::summary(s, handle)?;
                if summary.class != "CERTIFICATE" {
                    return Err(hsm::HsmError::Refused(text!(
                        "errors.not_a_certificate",
                        "'{{label}}' is not a certificate",
                        label = summary.label
                    )));
                }
                let der_bytes = ho::value(s, handle)?;
                let invalid = crate::core::error::hsm_side;
                let info = signing::objects::describe(&der_bytes).map_err(invalid)?;
                let pool: Vec<Vec<u8>> = ho::certificates(s)?
                    .into_iter()
                    .map(|(_, _, d)| d)
                    .collect();
                let chain_der = signing::objects::build_chain(&der_bytes, &pool);
                let chain: Vec<String> = chain_der
                    .iter()
                    .filter_map(|d| signing::objects::describe(d).ok())
                    .map(|c| c.subject)
                    .collect();
                let chain_complete = info.self_signed
                    || chain_der
                        .last()
                        .and_then(|d| signing::objects::describe(d).ok())
                        .is_some_and(|c| c.self_signed);
                let pk = signing::objects::certificate_public_key(&der_bytes).ok();
                let key_label = match pk {
                    Some(pk) => ho::key_pair_for(s, &pk)?.map(|(_, l)| l),
                    None => None,
                };
                Ok(CertificateDetails {
                    handle,
                    label: summary.label,
                    id_hex: summary.id_hex,
                    signing_warnings: signing::objects::signing_warnings(&info),
                    signing_warnings_text: signing::objects::signing_warnings_text(&info),
                    info,
                    chain,
                    chain_complete,
                    key_label,
                })
            })
            .await
            .map_err(Into::into)
    }

    /// An object's content for export: a certificate (PEM/DER), a public key (SPKI
    /// PEM/DER), a data object's bytes. Audited.
    pub async fn export_object(
        self,
        partition: &str,
        handle: u64,
        format: ObjectFormat,
    ) -> ApiResult<(hk::ObjectSummary, Vec<u8>)> {
        let p = self.partition_ref(partition).await?;
        let refs = p.clone();
        let (summary, bytes) = p
            .pool
            .run_service_idempotent_async("objects.export", move |s| {
                let handle = refs.key_refs.resolve(s, handle)?;
                let summary = hk::summary(s, handle)?;
                let bytes = match summary.class.as_str() {
                    "CERTIFICATE" => {
                        let d = ho::value(s, handle)?;
                        match format {
                            ObjectFormat::Pem => {
                                signing::cert::to_pem("CERTIFICATE", &d).into_bytes()
                            }
                            ObjectFormat::Der => d,
                        }
                    }
                    "DATA" => ho::value(s, handle)?,
                    "PUBLIC_KEY" => {
                        let pk = hk::read_public_key(s, handle)?;
                        match format {
                            ObjectFormat::Pem => pk.spki_pem().into_bytes(),
                            ObjectFormat::Der => pk.spki_der(),
                        }
                    }
                    other => {
                        let class = crate::admin::keys::class_word(other);
                        return Err(hsm::HsmError::Refused(
                            text!(
                                "errors.object_not_exported",
                                "a {{class}} object is not exported here (public keys, certificates and data objects are; keys leave a token only wrapped)",
                                class = class
                            )
                            .nest("class", &class),
                        ));
                    }
                };
                Ok((summary, bytes))
            })
            .await?;
        self.record(
            Event::new("object.export", "object")
                .resource(&summary.label)
                .meta("partition", &p.id)
                .meta("id", &summary.id_hex)
                .meta("class", &summary.class)
                .meta("format", format),
        )
        .await;
        Ok((summary, bytes))
    }

    /// The objects of one class (`cert`, `data`, `public`, `private`, `secret`; all for
    /// `None`).
    pub async fn list_objects(
        self,
        partition: &str,
        class: Option<ObjectClass>,
    ) -> ApiResult<Vec<hk::ObjectSummary>> {
        let mut v = self.list_keys(partition).await?;
        if let Some(c) = class {
            v.retain(|o| o.class == c.name());
        }
        Ok(v)
    }

    /// Resolve `label:…`, `id:…` or `handle:…` to an exportable object: a certificate
    /// first (it shares its key's label and ID), then a data object, then a public key.
    pub async fn find_exportable(
        self,
        partition: &str,
        selector: &str,
    ) -> ApiResult<hk::ObjectSummary> {
        let sel = hk::KeySelector::parse(selector)?;
        let p = self.partition_ref(partition).await?;
        Ok(p.pool
            .run_service_idempotent_async("objects.find", move |s| {
                let mut last = None;
                for class in [CKO_CERTIFICATE, CKO_DATA, CKO_PUBLIC_KEY] {
                    match hk::find_one(s, &sel, Some(class)) {
                        Ok(h) => return Ok(hk::summary(s, h)?),
                        Err(e @ hsm::HsmError::KeyNotFound(_)) => last = Some(e),
                        Err(e) => return Err(e),
                    }
                }
                Err(last
                    .unwrap_or_else(|| hsm::HsmError::KeyNotFound(hsm::keys::selector_msg(&sel))))
            })
            .await?)
    }

    /// Export an object and write it to `path` (never over an existing file).
    pub async fn save_object(
        self,
        partition: &str,
        handle: u64,
        format: ObjectFormat,
        path: &Path,
    ) -> ApiResult<hk::ObjectSummary> {
        let (summary, bytes) = self.export_object(partition, handle, format).await?;
        outfile::write_new(path, &bytes)?;
        Ok(summary)
    }
}

/// `C_CreateObject` of what an import file holds.
struct ImportObjects {
    req: ImportRequest,
    /// What the file holds, parsed and checked (resolved).
    planned: Vec<Planned>,
    /// Objects whose lost answer was settled by reading the token.
    settled: u32,
}

impl Change for ImportObjects {
    type Output = ImportResult;

    fn kind(&self) -> ChangeKind {
        ChangeKind::ObjectImport
    }

    fn permission(&self) -> Option<Action> {
        Some(Action::ImportObjects)
    }

    async fn resolve(&mut self, _c: &Core, p: &Arc<Partition>) -> ApiResult<Event> {
        let file = self.req.path.display().to_string();
        let bytes = read_import_file(&self.req.path)?;
        let digest = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes));
        let (r2, f2) = (self.req.clone(), file.clone());
        let planned = p
            .pool
            .run_service_idempotent_async("objects.plan", move |s| plan(s, &r2, &bytes, &f2))
            .await?;
        let ev = Event::new("object.import", "object")
            .resource(&file)
            .meta("partition", &p.id)
            .meta("sha256", &digest)
            .meta(
                "objects",
                planned
                    .iter()
                    .map(|o| {
                        serde_json::json!({
                            "kind": o.kind,
                            "label": o.label,
                            "id": hex::encode(&o.id),
                            "subject": o.certificate.as_ref().map(|c| c.subject.clone()),
                            "key": o.key_label,
                        })
                    })
                    .collect::<Vec<_>>(),
            );
        self.planned = planned;
        Ok(ev)
    }

    async fn act(&mut self, _c: &Core, p: &Arc<Partition>) -> ApiResult<ImportResult> {
        let mut objects = Vec::new();
        for o in std::mem::take(&mut self.planned) {
            match create_settled(&p.pool, o.template).await {
                Ok((handle, after_reconnect)) => {
                    self.settled += u32::from(after_reconnect);
                    objects.push(ImportedObject {
                        handle,
                        kind: o.kind.into(),
                        label: o.label,
                        id_hex: hex::encode(&o.id),
                        certificate: o.certificate,
                        key_label: o.key_label,
                        authority: o.authority,
                    })
                }
                Err(e) => {
                    return Err(ApiError::from(e).details(text!(
                        "errors.import_partly_created",
                        "{{n}} of the file's objects were created before the token refused.",
                        n = objects.len()
                    )))
                }
            }
        }
        Ok(ImportResult {
            file: self.req.path.display().to_string(),
            objects,
        })
    }

    fn outcome(&self, ev: Event, _r: Result<&ImportResult, &ApiError>) -> Event {
        if self.settled > 0 {
            ev.meta("settled_after_reconnect", self.settled)
        } else {
            ev
        }
    }
}

/// Create an object once. When the answer is lost (the HSM disconnected during
/// `C_CreateObject`), the token is read after the pool's recovery: an object with every
/// attribute of the template that was not there before is the one made (`true`: settled by
/// reading); none means the call never took effect, and it is made now.
async fn create_settled(pool: &hsm::Pool, template: p11::Template) -> hsm::Result<(u64, bool)> {
    let find = |t: &p11::Template| {
        let mut t = t.clone();
        move |s: &p11::Session| s.find_objects(&mut t)
    };
    let before = pool
        .run_idempotent_async("objects.find", find(&template))
        .await?;
    let mut t = template.clone();
    match pool
        .run_async("objects.create", move |s| s.create_object(&mut t))
        .await
    {
        Ok(h) => Ok((h, false)),
        Err(e) if e.class() == p11::ErrorClass::Disconnected => {
            let after = pool
                .run_idempotent_async("objects.find", find(&template))
                .await?;
            // Handles may be new numbers after a reconnection: compare by count. Objects
            // that match the whole template are alike in everything the import set, so
            // any of them names what was made.
            if let (true, Some(made)) = (after.len() > before.len(), after.last()) {
                return Ok((*made, true));
            }
            let mut t = template;
            let h = pool
                .run_async("objects.create", move |s| s.create_object(&mut t))
                .await?;
            Ok((h, false))
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_common_names() {
        assert_eq!(
            parse_id(&Some("0a1B".into())).unwrap(),
            Some(vec![0x0a, 0x1b])
        );
        assert_eq!(parse_id(&None).unwrap(), None);
        let e = parse_id(&Some("xyz".into())).unwrap_err();
        assert!(e.message.contains("--id"), "{}", e.message);
        assert_eq!(cn_or("CN=Release CA,O=Example", "f"), "Release CA");
        assert_eq!(cn_or("O=Example", "f"), "f");
    }
}
