//! Editing an object's attributes (`C_SetAttributeValue`): label, ID, start and end dates,
//! and the booleans PKCS#11 lets change (see `hsm::attr_edit`). Changing a key's `CKA_ID`
//! moves its other half and its certificates along, so the pair and its certificate stay
//! together. Checked first, recorded in the audit trail before the token is changed.
//!
//! `trusted` (`CKA_TRUSTED`) is the security officer's: PKCS#11 lets only the SO set it, so
//! a change of it is its own action (`Action::TrustKeys`), asked of the SO alone and made
//! on its own (not mixed with the user's attributes).

use audit::Event;
use hsm::attr_edit as ae;
use hsm::keys as hk;
use hsm::roles::Action;
use p11::sys::*;
use p11::{Session, Template};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::admin::Admin;
use crate::core::change::{Change, ChangeKind};
use crate::core::error::{ApiError, ApiResult};
use crate::core::i18n::Text;
use crate::core::{partitions::Partition, Core};
use crate::text;
use std::sync::Arc;

/// What to change (fields left out stay as they are).
#[derive(Debug, Clone, Default, Deserialize, TS)]
pub struct AttributeChanges {
    #[serde(default)]
    pub label: Option<String>,
    /// The new `CKA_ID`, hex.
    #[serde(default)]
    pub id_hex: Option<String>,
    /// `YYYY-MM-DD`, or empty to clear.
    #[serde(default)]
    pub start_date: Option<String>,
    #[serde(default)]
    pub end_date: Option<String>,
    /// Booleans by name (`sign`, `sensitive`, …).
    #[serde(default)]
    pub flags: Vec<FlagChange>,
}

#[derive(Debug, Clone, Deserialize, Serialize, TS)]
pub struct FlagChange {
    pub name: String,
    pub value: bool,
}

/// What the edit dialog may offer for an object.
#[derive(Debug, Clone, Serialize, TS)]
pub struct EditableAttributes {
    #[ts(type = "number")]
    pub handle: u64,
    pub class: String,
    pub label: String,
    pub id_hex: String,
    pub start_date: Option<String>,
    pub end_date: Option<String>,
    /// `CKA_MODIFIABLE` (nothing changes when false).
    pub modifiable: bool,
    pub flags: Vec<FlagOffer>,
    /// Objects that share the ID and move with a new one (the other half, certificates).
    pub related: Vec<String>,
}

/// One boolean as the edit dialog offers it.
#[derive(Debug, Clone, Serialize, TS)]
pub struct FlagOffer {
    pub name: String,
    pub value: bool,
    /// May be switched to the other value.
    pub changeable: bool,
    /// Why not, when not.
    pub reason: Option<Text>,
}

impl From<ae::FlagOffer> for FlagOffer {
    fn from(o: ae::FlagOffer) -> Self {
        FlagOffer {
            name: o.flag.name.into(),
            value: o.value,
            changeable: o.refusal.is_none(),
            reason: o.refusal.as_ref().map(flag_refusal_text),
        }
    }
}

/// After an edit.
#[derive(Debug, Clone, Serialize, TS)]
pub struct AttributesChanged {
    pub summary: hk::ObjectSummary,
    /// What was changed, in words (`label`, `id`, `sign=false`, …).
    pub changed: Vec<String>,
    /// Objects whose ID moved with it (`public key 'x'`, `certificate 'x'`).
    pub moved: Vec<String>,
}

fn flag_values(s: &Session, h: u64) -> p11::Result<Vec<(ae::EditableFlag, Option<bool>)>> {
    let attrs: Vec<u64> = ae::FLAGS.iter().map(|f| f.attr).collect();
    let v = s.get_attributes_with(h, &attrs, false)?;
    Ok(ae::FLAGS
        .iter()
        .copied()
        .zip(v.iter().map(|x| x.as_bool()))
        .collect())
}

fn class_of(s: &Session, h: u64) -> p11::Result<(u64, bool)> {
    let v = s.get_attributes_with(h, &[CKA_CLASS, CKA_MODIFIABLE], false)?;
    Ok((
        v[0].as_ulong().unwrap_or(u64::MAX),
        v[1].as_bool().unwrap_or(true),
    ))
}

/// Objects other than `h` with the same non-empty `CKA_ID`: the other half, certificates.
fn related(s: &Session, h: u64, id: &[u8]) -> hsm::Result<Vec<(u64, hk::ObjectSummary)>> {
    if id.is_empty() {
        return Ok(Vec::new());
    }
    let found = s.find_objects(&mut Template::new().bytes(CKA_ID, id))?;
    let mut out = Vec::new();
    for o in found.into_iter().filter(|o| *o != h) {
        let sm = hk::summary(s, o)?;
        if matches!(
            sm.class.as_str(),
            "PUBLIC_KEY" | "PRIVATE_KEY" | "CERTIFICATE"
        ) {
            out.push((o, sm));
        }
    }
    Ok(out)
}

fn describe(o: &hk::ObjectSummary) -> String {
    format!("{} '{}'", o.class.to_lowercase().replace('_', " "), o.label)
}

/// A flag refusal in words, in the officer's language.
pub fn flag_refusal_text(r: &ae::FlagRefusal) -> Text {
    use ae::FlagRefusal as R;
    match r {
        R::NotAKey { flag } => text!("errors.flag_not_a_key", "{{flag}} is a key attribute; this object is not a key", flag = flag.name),
        R::Missing { flag } => text!("errors.flag_missing", "the object has no {{flag}} attribute", flag = flag.name),
        R::SensitiveForever => text!("errors.flag_sensitive_forever", "a sensitive key can never be made non-sensitive (PKCS#11: CKA_SENSITIVE may only be set to true)"),
        R::ExtractableNever => text!("errors.flag_extractable_never", "a non-extractable key can never be made extractable (PKCS#11: CKA_EXTRACTABLE may only be set to false)"),
        R::NotOnPublicKeys { flag } => text!("errors.flag_not_on_public_keys", "{{flag}} applies to private and secret keys, not public ones", flag = flag.name),
        R::NotModifiable => text!("errors.flag_not_modifiable", "the object is not modifiable (CKA_MODIFIABLE false)"),
        R::WrapWithTrustedForever => text!("errors.flag_wrap_with_trusted_forever", "a key that may leave the token only under a trusted wrapping key keeps that restriction (PKCS#11: CKA_WRAP_WITH_TRUSTED may only be set to true)"),
        R::TrustedNotOnPrivateKeys => text!("errors.flag_trusted_not_on_private_keys", "trusted applies to the keys that wrap (public and secret keys), not to private keys"),
        R::TrustedBySoOnly => text!("errors.flag_trusted_by_so_only", "only the security officer marks a key trusted (PKCS#11: CKA_TRUSTED is set by the SO); log in as the SO"),
    }
}

/// An edit refused before anything reaches the token.
fn refused(t: Text) -> ApiError {
    ApiError::invalid(
        text!(
            "errors.edit_refused",
            "Nothing was changed: {{why}}.",
            why = &t.text
        )
        .nest("why", &t),
    )
}

/// What `plan` makes: the template, the changes in words, the new ID.
type Plan = (Template, Vec<String>, Option<Vec<u8>>);

/// The template of changes, checked against the standard's rules; and the words for them.
/// The outer error is the token's; the inner one a refusal before anything is sent.
fn plan(s: &Session, h: u64, c: &AttributeChanges) -> hsm::Result<ApiResult<Plan>> {
    let (class, modifiable) = class_of(s, h)?;
    if !modifiable {
        return Ok(Err(refused(text!(
            "errors.edit_not_modifiable",
            "the object is not modifiable (CKA_MODIFIABLE is false)"
        ))));
    }
    let mut t = Template::new();
    let mut words = Vec::new();
    if let Some(l) = &c.label {
        if let Err(e) = crate::admin::keys::validate_label(l) {
            return Ok(Err(e));
        }
        t = t.text(CKA_LABEL, l);
        words.push(format!("label={l}"));
    }
    let mut new_id = None;
    if let Some(i) = &c.id_hex {
        let Ok(id) = hex::decode(i.trim().trim_start_matches("0x")) else {
            return Ok(Err(refused(text!(
                "errors.edit_id_not_hex",
                "--id / ID: '{{id}}' is not hexadecimal (e.g. 0a1b2c)",
                id = i
            ))));
        };
        if id.is_empty() {
            return Ok(Err(refused(text!(
                "errors.edit_id_empty",
                "--id / ID: a key's ID cannot be made empty"
            ))));
        }
        t = t.bytes(CKA_ID, &id);
        words.push(format!("id={}", hex::encode(&id)));
        new_id = Some(id);
    }
    for (attr, v, name) in [
        (CKA_START_DATE, &c.start_date, "start_date"),
        (CKA_END_DATE, &c.end_date, "end_date"),
    ] {
        if let Some(d) = v {
            if s.module().family() == p11::Family::SoftHsm {
                // Seen with SoftHSM2 2.6: after C_SetAttributeValue of a date the object can
                // no longer be read (every C_GetAttributeValue: CKR_OBJECT_HANDLE_INVALID).
                return Ok(Err(refused(text!("errors.edit_dates_softhsm", "{{name}}: SoftHSM2 loses an object whose dates are changed (it cannot be read afterwards), so the console does not change dates there", name = name))));
            }
            let bytes = match ae::parse_date(d) {
                Ok(b) => b,
                Err(e) => {
                    return Ok(Err(refused(text!(
                        "errors.edit_not_a_date",
                        "{{name}}: '{{date}}' is not a date such as 2027-12-31",
                        name = name,
                        date = e.input
                    ))))
                }
            };
            t = t.bytes(attr, &bytes);
            words.push(format!("{name}={}", d.trim()));
        }
    }
    if !c.flags.is_empty() {
        let current = flag_values(s, h)?;
        for fc in &c.flags {
            let Some(f) = ae::flag(&fc.name) else {
                return Ok(Err(refused(text!(
                    "errors.edit_unknown_flag",
                    "{{name}} is not an attribute the console changes",
                    name = fc.name
                ))));
            };
            if f == ae::TRUSTED && s.module().family() == p11::Family::SoftHsm {
                // SoftHSM2 2.6 (P11AttrTrusted): CKA_TRUSTED is set by the SO when the object
                // is made, never with C_SetAttributeValue (CKR_ATTRIBUTE_READ_ONLY).
                return Ok(Err(refused(text!(
                    "errors.edit_trusted_softhsm",
                    "SoftHSM2 lets the security officer set CKA_TRUSTED only when an object is made (C_CreateObject), never on an existing one"
                ))));
            }
            let cur = current.iter().find(|(g, _)| *g == f).and_then(|(_, v)| *v);
            if let Err(r) = ae::check_flag(f, class, cur, fc.value) {
                return Ok(Err(refused(flag_refusal_text(&r))));
            }
            t = t.bool(f.attr, fc.value);
            words.push(format!("{}={}", f.name, fc.value));
        }
    }
    if words.is_empty() {
        return Ok(Err(refused(text!(
            "errors.edit_nothing",
            "nothing to change: give a label, an ID, a date or ATTR=VALUE"
        ))));
    }
    Ok(Ok((t, words, new_id)))
}

impl Admin<'_> {
    /// What the edit dialog may offer for an object.
    pub async fn editable_attributes(
        self,
        partition: &str,
        handle: u64,
    ) -> ApiResult<EditableAttributes> {
        let p = self.partition_ref(partition).await?;
        let refs = p.clone();
        Ok(p.pool
            .run_service_idempotent_async("attributes.editable", move |s| {
                let handle = refs.key_refs.resolve(s, handle)?;
                let sm = hk::summary(s, handle)?;
                let (class, modifiable) = class_of(s, handle)?;
                let so = refs.logged_in() == Some(crate::core::views::UserKind::So);
                let dates =
                    s.get_attributes_with(handle, &[CKA_START_DATE, CKA_END_DATE], false)?;
                let id = hex::decode(&sm.id_hex).unwrap_or_default();
                Ok(EditableAttributes {
                    handle,
                    class: sm.class.clone(),
                    label: sm.label.clone(),
                    id_hex: sm.id_hex.clone(),
                    start_date: dates[0].as_date().filter(|d| !d.is_empty()),
                    end_date: dates[1].as_date().filter(|d| !d.is_empty()),
                    modifiable,
                    flags: ae::offers(class, modifiable, so, &flag_values(s, handle)?)
                        .into_iter()
                        .map(FlagOffer::from)
                        .collect(),
                    related: related(s, handle, &id)?
                        .iter()
                        .map(|(_, o)| describe(o))
                        .collect(),
                })
            })
            .await?)
    }

    /// Change attributes of an object (`C_SetAttributeValue`). A new `CKA_ID` moves the other
    /// half of a key pair and its certificates too. Audited before the token is changed.
    pub async fn set_attributes(
        self,
        partition: &str,
        handle: u64,
        changes: AttributeChanges,
    ) -> ApiResult<AttributesChanged> {
        self.changes()
            .apply(
                partition,
                SetAttributes {
                    handle,
                    changes,
                    target: None,
                    words: Vec::new(),
                },
            )
            .await
    }
}

impl SetAttributes {
    /// The change sets `CKA_TRUSTED`.
    fn trusts(&self) -> bool {
        self.changes
            .flags
            .iter()
            .any(|f| ae::flag(&f.name) == Some(ae::TRUSTED))
    }
}

/// `C_SetAttributeValue` on the object the officer chose (and, for a new `CKA_ID`, on the
/// objects that share its old one).
struct SetAttributes {
    /// The handle the officer's list showed.
    handle: u64,
    changes: AttributeChanges,
    /// The object as it was read before the request (resolved).
    target: Option<hk::ObjectSummary>,
    words: Vec<String>,
}

impl Change for SetAttributes {
    type Output = AttributesChanged;

    fn kind(&self) -> ChangeKind {
        ChangeKind::AttributeSet
    }

    /// Marking a key trusted (or not) is the security officer's ([`Action::TrustKeys`]);
    /// everything else the user's.
    fn permission(&self) -> Option<Action> {
        Some(if self.trusts() {
            Action::TrustKeys
        } else {
            Action::EditAttributes
        })
    }

    async fn resolve(&mut self, _c: &Core, p: &Arc<Partition>) -> ApiResult<Event> {
        let c = &self.changes;
        let others = c.label.is_some()
            || c.id_hex.is_some()
            || c.start_date.is_some()
            || c.end_date.is_some()
            || c.flags
                .iter()
                .any(|f| ae::flag(&f.name) != Some(ae::TRUSTED));
        if self.trusts() && others {
            return Err(refused(text!(
                "errors.edit_trusted_alone",
                "trusted is changed on its own: it is the security officer's, the other attributes the user's"
            )));
        }
        let (handle, c2, refs) = (self.handle, self.changes.clone(), p.clone());
        let (before, words, moving) = p
            .pool
            .run_service_idempotent_async("attributes.plan", move |s| {
                let handle = refs.key_refs.resolve(s, handle)?;
                let sm = hk::summary(s, handle)?;
                let (_, words, new_id) = match plan(s, handle, &c2)? {
                    Ok(planned) => planned,
                    Err(refusal) => return Ok(Err(refusal)),
                };
                let moving = match new_id {
                    Some(_) => related(s, handle, &hex::decode(&sm.id_hex).unwrap_or_default())?
                        .into_iter()
                        .map(|(_, o)| o)
                        .collect(),
                    None => Vec::new(),
                };
                Ok(Ok((sm, words, moving)))
            })
            .await??;
        let ev = Event::new("object.set_attributes", "object")
            .resource(&before.label)
            .algorithm(&before.algorithm)
            .meta("partition", &p.id)
            .meta("id", &before.id_hex)
            .meta("class", &before.class)
            .meta("changes", &words)
            .meta("moves", moving.iter().map(describe).collect::<Vec<_>>());
        self.target = Some(before);
        self.words = words;
        Ok(ev)
    }

    async fn act(&mut self, _c: &Core, p: &Arc<Partition>) -> ApiResult<AttributesChanged> {
        let c3 = self.changes.clone();
        let refs = p.clone();
        let target = self.target.clone().expect("resolved");
        // What the object is once the edit took effect: a repeat after a lost answer finds
        // it under its new label.
        let mut edited = target.clone();
        if let Some(l) = &c3.label {
            edited.label = l.clone();
        }
        let mut attempts = 0u32;
        // Setting attributes to values ends the same however often it is done, so after a
        // reconnection (an answer lost) the pool sets them again, the object found again by
        // its class, ID and label. Not when the ID itself changes: the object and those that
        // move with it are then under another ID, and a lost answer is recorded unknown.
        let repeatable = c3.id_hex.is_none();
        let set = move |s: &p11::Session| {
            attempts += 1;
            let handle = match crate::core::change::locate(s, &refs, &target) {
                Err(hsm::HsmError::KeyNotFound(_)) if attempts > 1 => {
                    crate::core::change::locate(s, &refs, &edited)?
                }
                r => r?,
            };
            let (mut t, _, new_id) = match plan(s, handle, &c3)? {
                Ok(planned) => planned,
                Err(refusal) => return Ok(Err(refusal)),
            };
            let old_id = hex::decode(&hk::summary(s, handle)?.id_hex).unwrap_or_default();
            let others = match &new_id {
                Some(_) => related(s, handle, &old_id)?,
                None => Vec::new(),
            };
            s.set_attributes(handle, &mut t)?;
            let mut moved = Vec::new();
            if let Some(id) = new_id {
                for (o, sm) in others {
                    s.set_attributes(o, &mut Template::new().bytes(CKA_ID, &id))?;
                    moved.push(describe(&sm));
                }
            }
            Ok(Ok((hk::summary(s, handle)?, moved)))
        };
        let r = if repeatable {
            p.pool
                .run_service_idempotent_async("attributes.set", set)
                .await
        } else {
            p.pool.run_service_async("attributes.set", set).await
        };
        let words = self.words.clone();
        r.map_err(ApiError::from)
            .and_then(|r| r)
            .map(|(summary, moved)| AttributesChanged {
                summary,
                changed: words,
                moved,
            })
    }
}
