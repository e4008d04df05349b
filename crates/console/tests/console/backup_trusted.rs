//! Backups that stay under the officers' control, on SoftHSM2 and on lunasim: a key made
//! extractable for backup carries CKA_WRAP_WITH_TRUSTED and leaves only under a wrapping key
//! the security officer marked CKA_TRUSTED. The user cannot mark one; the SO can; a wrap
//! under an untrusted key is refused by the console before anything is sent and, sent on a
//! raw session, by the token itself (CKR_KEY_NOT_WRAPPABLE), which the console explains.
//! The wrapped key is unwrapped on another token (SoftHSM2 → the built-in Luna partition) or
//! restored on the same one (lunasim), with its check value; `pkcs11-tool` and `p11tool`
//! read the attributes back. An extractable HSS key is refused; a key without
//! CKA_WRAP_WITH_TRUSTED is wrapped only once the officer confirms. One test per process.

use console::attributes::{AttributeChanges, FlagChange};
use console::objects::ImportRequest;
use console::views::{GenerateRequest, UserKind};
use console::ErrorCode;
use hsm::algo::{Curve, HssParams, KeySpec, LmotsType, LmsType};
use hsm::pubkey::PublicKeyFormat;
use p11::sys::*;
use p11::{Mechanism, Template};
use testkit::tools::{p11tool, pkcs11_tool, text};
use testkit::{Backend, SO_PIN, TOKEN_LABEL, USER_PIN};

use crate::common;

fn flag(name: &str, value: bool) -> AttributeChanges {
    AttributeChanges {
        flags: vec![FlagChange {
            name: name.into(),
            value,
        }],
        ..Default::default()
    }
}

fn request(spec: KeySpec, label: &str) -> GenerateRequest {
    GenerateRequest {
        spec,
        label: label.into(),
        token: true,
        extractable: true,
        always_authenticate: false,
    }
}

/// An RSA pair on `owner` whose private half may unwrap: (its private handle, its public
/// key's handle on `on` — imported there when `on` is another token).
async fn rsa_pair(owner: &common::Env, on: &common::Env, label: &str, same: bool) -> (u64, u64) {
    let k = owner.generate(KeySpec::Rsa { bits: 2048 }, label).await;
    owner
        .c
        .admin()
        .set_attributes(&owner.pid, k.private_handle, flag("unwrap", true))
        .await
        .unwrap();
    if same {
        // The console's public halves verify; this one wraps too.
        let public = k.public_handle.unwrap();
        owner
            .c
            .admin()
            .set_attributes(&owner.pid, public, flag("wrap", true))
            .await
            .unwrap();
        return (k.private_handle, public);
    }
    let file = on.dir.path().join(format!("{label}.pub.pem"));
    owner
        .c
        .admin()
        .save_public_key(&owner.pid, k.private_handle, PublicKeyFormat::Pem, &file)
        .await
        .unwrap();
    let imported =
        on.c.admin()
            .import_objects(
                &on.pid,
                ImportRequest {
                    path: file,
                    label: Some(format!("{label}_pub")),
                    id_hex: None,
                    data: false,
                    application: None,
                },
            )
            .await
            .unwrap();
    (k.private_handle, imported.objects[0].handle)
}

async fn as_role(e: &common::Env, who: UserKind) {
    e.c.logout(&e.pid).await.unwrap();
    let pin = if who == UserKind::So {
        SO_PIN
    } else {
        USER_PIN
    };
    e.c.login(&e.pid, who, p11::pin(pin)).await.unwrap();
}

/// The keys of one backup run on `a`: the transport key that becomes trusted (`wrapping`,
/// its private half `b_private` on the restoring token), a key the SO never marks
/// (`untrusted`), and the file the data key is wrapped to.
struct Backup<'a> {
    a: &'a common::Env,
    /// The token the wrapped key is unwrapped on (`None`: the same token, under a new label).
    restore: Option<&'a common::Env>,
    b_private: u64,
    wrapping: u64,
    untrusted: u64,
    out: std::path::PathBuf,
}

/// `restore`: the token the wrapped key is unwrapped on, and its RSA private key there
/// (`None`: the same token, under a new label).
async fn backup_under_trusted_keys(a: &common::Env, restore: Option<&common::Env>) {
    let (b_private, wrapping) = match restore {
        Some(b) => rsa_pair(b, a, "transport", false).await,
        None => rsa_pair(a, a, "transport", true).await,
    };
    let (_, untrusted) = rsa_pair(a, a, "untrusted", true).await;
    let mut k = Backup {
        a,
        restore,
        b_private,
        wrapping,
        untrusted,
        out: a.dir.path().join("backup_aes.wrapped.json"),
    };
    let (data, kcv) = k.generate_for_backup_and_audit_it().await;
    k.untrusted_wrap_is_refused_by_console_and_token(data).await;
    k.only_the_so_marks_keys_trusted().await;
    k.wrapping = k.so_marks_the_transport_key_trusted().await;
    let data_key =
        a.c.admin()
            .find_key(&a.pid, "label:backup_aes")
            .await
            .unwrap()
            .handle;
    k.other_tools_read_the_flags_back();
    k.wrapped_under_trusted_and_restored_with_its_kcv(data_key, &kcv)
        .await;
    k.private_key_leaves_only_under_a_trusted_aes_key().await;
    hss_keys_are_never_extractable(a).await;
    k.key_without_wrap_with_trusted_needs_confirmation().await;
}

impl Backup<'_> {
    /// Extractable for backup: sensitive, extractable, trusted wrapping keys only, and the
    /// audit record says so. The data key and its check value.
    async fn generate_for_backup_and_audit_it(&self) -> (u64, String) {
        let a = self.a;
        let data =
            a.c.admin()
                .generate_key(&a.pid, request(KeySpec::Aes { bits: 256 }, "backup_aes"))
                .await
                .unwrap();
        assert!(data.extractable);
        assert_eq!(data.wrap_with_trusted, Some(true));
        let s =
            a.c.admin()
                .find_key(&a.pid, "label:backup_aes")
                .await
                .unwrap();
        assert_eq!(
            (s.extractable, s.sensitive, s.wrap_with_trusted),
            (Some(true), Some(true), Some(true))
        );
        let kcv =
            a.c.admin()
                .key_check_value(&a.pid, data.private_handle)
                .await
                .unwrap();
        // The audit record says so.
        let records =
            a.c.trail()
                .audit_records(audit::store::Query {
                    limit: 500,
                    ascending: true,
                    ..Default::default()
                })
                .await
                .unwrap();
        let gen = records
            .iter()
            .find(|r| {
                r.event.action == "key.generate"
                    && r.event.resource_id.as_deref() == Some("backup_aes")
            })
            .expect("the generation is recorded");
        let meta: serde_json::Value = serde_json::from_str(&gen.event.metadata).unwrap();
        assert_eq!(meta["extractable"], "for_backup");
        assert_eq!(meta["wrap_with_trusted"], true);
        (data.private_handle, kcv)
    }

    /// Not yet trusted: the console refuses before anything is sent, and says why; sent
    /// anyway on a raw session, the token itself refuses, and the console explains it.
    async fn untrusted_wrap_is_refused_by_console_and_token(&self, data: u64) {
        let a = self.a;
        let err =
            a.c.admin()
                .wrap_key(&a.pid, data, self.wrapping, &self.out, None, false)
                .await
                .unwrap_err();
        assert_eq!(err.code, ErrorCode::NotAuthorized, "{}", err.message);
        assert!(
            err.message.contains("only under a trusted wrapping key")
                && err.message.contains("not trusted"),
            "{}",
            err.message
        );
        assert!(!self.out.exists());
        // Sent anyway on a raw session, the token itself refuses; the console explains it.
        let (key, with) = (data, self.untrusted);
        let p = a.c.partition_ref(&a.pid).await.unwrap();
        let raw = p
            .pool
            .run_async("test.raw_wrap", move |s| {
                Ok(s.wrap_key(&Mechanism::rsa_oaep(CKM_SHA_1, CKG_MGF1_SHA1), with, key))
            })
            .await
            .unwrap()
            .unwrap_err();
        assert_eq!(raw.rv(), Some(CKR_KEY_NOT_WRAPPABLE), "{raw}");
        let explained = console::ApiError::from(raw);
        assert!(
            explained.message.contains("CKR_KEY_NOT_WRAPPABLE"),
            "{}",
            explained.message
        );
        assert!(
            format!("{:?}", explained.details).contains("CKA_TRUSTED"),
            "{:?}",
            explained.details
        );
    }

    /// The user cannot mark a key trusted: the SO's, said so.
    async fn only_the_so_marks_keys_trusted(&self) {
        let a = self.a;
        let err =
            a.c.admin()
                .set_attributes(&a.pid, self.wrapping, flag("trusted", true))
                .await
                .unwrap_err();
        assert_eq!(err.code, ErrorCode::NotAuthorized, "{}", err.message);
        assert!(
            err.message
                .contains("only the security officer marks keys trusted"),
            "{}",
            err.message
        );
        let offer =
            a.c.admin()
                .editable_attributes(&a.pid, self.wrapping)
                .await
                .unwrap();
        let t = offer.flags.iter().find(|f| f.name == "trusted").unwrap();
        assert!(!t.value && !t.changeable, "{t:?}");
        assert!(t.reason.as_ref().unwrap().text.contains("security officer"));
    }

    /// The SO marks the wrapping key trusted (its public key is a public object), alone;
    /// back as the user: the trusted wrapping key's handle now.
    async fn so_marks_the_transport_key_trusted(&self) -> u64 {
        let a = self.a;
        let wrapping = self.wrapping;
        as_role(a, UserKind::So).await;
        let offer =
            a.c.admin()
                .editable_attributes(&a.pid, wrapping)
                .await
                .unwrap();
        assert!(offer
            .flags
            .iter()
            .any(|f| f.name == "trusted" && f.changeable));
        let wrapping = if a.token().backend == Backend::SoftHsm {
            // SoftHSM2 sets CKA_TRUSTED only on creation: the console says so before sending,
            // and the SO makes the trusted copy of the transport key (as softhsm2-util would).
            let err =
                a.c.admin()
                    .set_attributes(&a.pid, wrapping, flag("trusted", true))
                    .await
                    .unwrap_err();
            assert!(
                err.message.contains("only when an object is made"),
                "{}",
                err.message
            );
            let family = p11::Family::SoftHsm;
            common::on(a, move |s| {
                let pk = hsm::keys::read_public_key(s, wrapping)
                    .map_err(|e| p11::Error::InvalidArgument(e.to_string()))?;
                let mut t =
                    hsm::objects::public_key_template(&pk, family, "transport_trusted", b"tt")
                        .unwrap()
                        .bool(CKA_TRUSTED, true);
                s.create_object(&mut t)
            })
            .await
        } else {
            let r =
                a.c.admin()
                    .set_attributes(&a.pid, wrapping, flag("trusted", true))
                    .await
                    .unwrap();
            assert_eq!(r.summary.trusted, Some(true));
            wrapping
        };
        // Nothing else alongside: that is the user's.
        let mut mixed = flag("trusted", true);
        mixed.label = Some("renamed".into());
        let err =
            a.c.admin()
                .set_attributes(&a.pid, wrapping, mixed)
                .await
                .unwrap_err();
        assert!(err.message.contains("on its own"), "{}", err.message);
        as_role(a, UserKind::User).await;
        // Found again by label after the logins: SoftHSM2 numbers private objects anew after a
        // logout (and the SO made its trusted copy of the transport key).
        match a.token().backend {
            Backend::SoftHsm => {
                a.c.admin()
                    .find_key(&a.pid, "label:transport_trusted")
                    .await
                    .unwrap()
                    .handle
            }
            _ => wrapping,
        }
    }

    /// Another lineage reads it back: CKA_TRUSTED on the wrapping key (p11tool), the data
    /// key sensitive and extractable (pkcs11-tool).
    fn other_tools_read_the_flags_back(&self) {
        let t = self.a.token();
        let listed = text(&p11tool(
            &t.module_path,
            t.env(),
            &[
                "--login",
                &format!("--set-pin={USER_PIN}"),
                "--list-all",
                &format!("pkcs11:token={TOKEN_LABEL}"),
            ],
        ));
        let label = if t.backend == Backend::SoftHsm {
            "Label: transport_trusted\n"
        } else {
            "Label: transport\n"
        };
        let block = listed
            .split("Object ")
            .find(|b| b.contains(label) && b.contains("Public key"))
            .unwrap_or_else(|| panic!("{listed}"));
        assert!(block.contains("CKA_TRUSTED"), "{block}");
        let untrusted_block = listed
            .split("Object ")
            .find(|b| b.contains("Label: untrusted\n") && b.contains("Public key"))
            .unwrap_or_else(|| panic!("{listed}"));
        assert!(
            !untrusted_block.contains("CKA_TRUSTED"),
            "{untrusted_block}"
        );
        let o = text(&pkcs11_tool(
            &t.module_path,
            t.env(),
            &[
                "--token-label",
                TOKEN_LABEL,
                "--login",
                "--pin",
                USER_PIN,
                "--list-objects",
                "--type",
                "secrkey",
            ],
        ));
        let aes = o
            .split("Secret Key Object")
            .find(|b| b.contains("backup_aes"))
            .unwrap_or_else(|| panic!("{o}"));
        assert!(
            aes.contains("sensitive")
                && aes.contains("extractable")
                && !aes.contains("never extractable"),
            "{aes}"
        );
    }

    /// Trusted now: wrapped, and unwrapped on the other token (or restored) with its KCV and
    /// its restriction; the untrusted key is still refused.
    async fn wrapped_under_trusted_and_restored_with_its_kcv(&self, data_key: u64, kcv: &str) {
        let a = self.a;
        let w =
            a.c.admin()
                .wrap_key(&a.pid, data_key, self.wrapping, &self.out, None, false)
                .await
                .unwrap();
        assert!(
            w.flags.contains(&("wrap_with_trusted".into(), true)),
            "{:?}",
            w.flags
        );
        let (b, label) = match self.restore {
            Some(b) => (b, None),
            None => (a, Some("backup_aes_restored".to_string())),
        };
        let u =
            b.c.admin()
                .unwrap_key(&b.pid, &self.out, self.b_private, label)
                .await
                .unwrap();
        assert_eq!(u.kcv.as_deref(), Some(kcv));
        assert_eq!(u.summary.wrap_with_trusted, Some(true));
        assert_eq!(u.summary.extractable, Some(true));
        // The untrusted key is still refused.
        let err =
            a.c.admin()
                .wrap_key(
                    &a.pid,
                    data_key,
                    self.untrusted,
                    &a.dir.path().join("x.json"),
                    None,
                    true,
                )
                .await
                .unwrap_err();
        assert!(
            err.message.contains("'untrusted' is not trusted"),
            "{}",
            err.message
        );
    }

    /// A private key: not under RSA (its scheme goes through an untrusted ephemeral key), but
    /// under an AES key the SO trusts (a public object, so the SO sees it).
    async fn private_key_leaves_only_under_a_trusted_aes_key(&self) {
        let a = self.a;
        let ec =
            a.c.admin()
                .generate_key(
                    &a.pid,
                    request(KeySpec::Ec { curve: Curve::P256 }, "backup_ec"),
                )
                .await
                .unwrap();
        let err =
            a.c.admin()
                .wrap_key(
                    &a.pid,
                    ec.private_handle,
                    self.wrapping,
                    &a.dir.path().join("ec_rsa.json"),
                    None,
                    false,
                )
                .await
                .unwrap_err();
        assert!(err.message.contains("trusted AES key"), "{}", err.message);
        let kek = so_trusted_kek(a).await;
        let ec_key =
            a.c.admin()
                .find_key(&a.pid, "label:backup_ec")
                .await
                .unwrap()
                .handle;
        let ec_file = a.dir.path().join("backup_ec.wrapped.json");
        a.c.admin()
            .wrap_key(&a.pid, ec_key, kek, &ec_file, None, false)
            .await
            .unwrap();
        let u =
            a.c.admin()
                .unwrap_key(&a.pid, &ec_file, kek, Some("backup_ec_restored".into()))
                .await
                .unwrap();
        assert_eq!(u.summary.algorithm, "ECDSA P-256");
        assert!(u.public_handle.is_some());
    }

    /// A key without CKA_WRAP_WITH_TRUSTED (another tool's): wrapped only once confirmed.
    async fn key_without_wrap_with_trusted_needs_confirmation(&self) {
        let a = self.a;
        let untrusted = self.untrusted;
        let loose = common::on(a, |s| {
            s.generate_key(
                &Mechanism::new(CKM_AES_KEY_GEN),
                &mut testkit::setup::aes256_template("loose_aes", b"loose", true),
            )
        })
        .await;
        let loose_file = a.dir.path().join("loose.json");
        let err =
            a.c.admin()
                .wrap_key(&a.pid, loose, untrusted, &loose_file, None, false)
                .await
                .unwrap_err();
        assert!(
            err.message
                .contains("could be wrapped under any wrapping key"),
            "{}",
            err.message
        );
        assert!(
            format!("{:?}", err.suggestion).contains("--confirm-untrusted"),
            "{:?}",
            err.suggestion
        );
        a.c.admin()
            .wrap_key(&a.pid, loose, untrusted, &loose_file, None, true)
            .await
            .unwrap();
    }
}

/// An AES key-encryption key (public object, wraps and unwraps) that the SO marked trusted
/// — on SoftHSM2 made trusted by the SO, on lunasim made by the user and then marked — back
/// as the user: its handle.
async fn so_trusted_kek(a: &common::Env) -> u64 {
    let softhsm = a.token().backend == Backend::SoftHsm;
    let kek_template = move || {
        Template::new()
            .ulong(CKA_CLASS, CKO_SECRET_KEY)
            .ulong(CKA_KEY_TYPE, CKK_AES)
            .ulong(CKA_VALUE_LEN, 32)
            .bool(CKA_TOKEN, true)
            .bool(CKA_PRIVATE, false)
            .bool(CKA_SENSITIVE, true)
            .bool(CKA_EXTRACTABLE, false)
            .bool(CKA_WRAP, true)
            .bool(CKA_UNWRAP, true)
            .bool(CKA_ENCRYPT, true)
            .text(CKA_LABEL, "backup_kek")
            .bytes(CKA_ID, b"kek")
    };
    let generate_kek = move |trusted: bool| {
        move |s: &p11::Session| {
            let mut t = kek_template();
            if trusted {
                t = t.bool(CKA_TRUSTED, true);
            }
            s.generate_key(&Mechanism::new(CKM_AES_KEY_GEN), &mut t)
        }
    };
    if softhsm {
        as_role(a, UserKind::So).await;
        common::on(a, generate_kek(true)).await;
    } else {
        common::on(a, generate_kek(false)).await;
        as_role(a, UserKind::So).await;
        let kek_now =
            a.c.admin()
                .find_key(&a.pid, "label:backup_kek")
                .await
                .unwrap()
                .handle;
        a.c.admin()
            .set_attributes(&a.pid, kek_now, flag("trusted", true))
            .await
            .unwrap();
    }
    as_role(a, UserKind::User).await;
    a.c.admin()
        .find_key(&a.pid, "label:backup_kek")
        .await
        .unwrap()
        .handle
}

/// HSS keys never leave: refused before the token is asked.
async fn hss_keys_are_never_extractable(a: &common::Env) {
    let params = HssParams::new(vec![(LmsType::H5, LmotsType::W8)]).unwrap();
    let err =
        a.c.admin()
            .generate_key(&a.pid, request(KeySpec::Hss { params }, "hss_backup"))
            .await
            .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
    assert!(err.message.contains("never extractable"), "{}", err.message);
}

/// SoftHSM2 → the built-in Luna partition (lunasim over Kryoptic): the data key travels
/// under the Luna side's RSA public key, which SoftHSM2's SO marked trusted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn softhsm_backs_up_only_under_keys_its_so_trusts() {
    let b = common::builtin().await;
    let a = common::token(Backend::SoftHsm).await;
    backup_under_trusted_keys(&a, Some(&b)).await;
}

/// lunasim: it keeps CKA_TRUSTED and CKA_WRAP_WITH_TRUSTED as a Luna does (its inner module
/// lets nobody set CKA_TRUSTED) and refuses the untrusted wrap with CKR_KEY_NOT_WRAPPABLE;
/// the key is restored on the same partition.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lunasim_backs_up_only_under_keys_its_so_trusts() {
    let a = common::token(Backend::LunaSim).await;
    backup_under_trusted_keys(&a, None).await;
}
