//! Credentials and roles on real tokens, read back by tools of another lineage
//! (`pkcs11-tool`, GnuTLS's `p11tool`): changing the PIN, the SO setting the user PIN,
//! initializing a token, Luna's policy 21 with the audit trail, and Luna's roles. One test
//! per process (nextest).

use std::sync::atomic::AtomicBool;

use console::credentials::InitTokenRequest;
use console::views::{AuditKeyView, UserKind};
use console::ErrorCode;
use hsm::algo::{Curve, KeySpec};
use hsm::roles::Action;
use testkit::tools::{p11tool_logs_in, pkcs11_tool, pkcs11_tool_logs_in, text};
use testkit::{Backend, SO_PIN, TOKEN_LABEL, USER_PIN};

use crate::common;
use console::i18n::InLang;

const NEW_PIN: &str = "officer-new-9753";

async fn change_pin_is_seen_by_other_tools(backend: Backend) {
    let e = common::token(backend).await;
    let t = e.token();
    e.c.admin()
        .change_pin(&e.pid, p11::pin(USER_PIN), p11::pin(NEW_PIN))
        .await
        .expect("the PIN changes");
    for (pin, works) in [(NEW_PIN, true), (USER_PIN, false)] {
        assert_eq!(
            pkcs11_tool_logs_in(&t.module_path, t.env(), TOKEN_LABEL, pin),
            works,
            "pkcs11-tool with {pin}"
        );
        assert_eq!(
            p11tool_logs_in(&t.module_path, t.env(), TOKEN_LABEL, pin),
            works,
            "p11tool with {pin}"
        );
    }
    // The console goes on with the new PIN after a reconnection (the pool re-logs in).
    t.module.reinitialize().unwrap();
    e.generate(KeySpec::Ec { curve: Curve::P256 }, "after_pin_change")
        .await;
    common::request_before_outcome(&e.c, "pin.change", Some("success")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn softhsm_pin_change_is_seen_by_pkcs11_tool_and_p11tool() {
    change_pin_is_seen_by_other_tools(Backend::SoftHsm).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kryoptic_pin_change_is_seen_by_pkcs11_tool_and_p11tool() {
    change_pin_is_seen_by_other_tools(Backend::Kryoptic).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lunasim_pin_change_is_seen_by_pkcs11_tool_and_p11tool() {
    change_pin_is_seen_by_other_tools(Backend::LunaSim).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_old_pin_uses_one_try_and_says_what_is_left() {
    let e = common::token(Backend::SoftHsm).await;
    let err =
        e.c.admin()
            .change_pin(&e.pid, p11::pin("not-the-pin"), p11::pin(NEW_PIN))
            .await
            .unwrap_err();
    assert_eq!(err.code, ErrorCode::PinIncorrect);
    assert!(err.message.contains("not changed"), "{}", err.message);
    let details = err.details.unwrap_or_default();
    assert!(details.contains("attempt"), "{details}");
    // One try used: the token says so; the old PIN still works everywhere.
    let view = e.c.partition(&e.pid).await.unwrap();
    assert!(
        view.token.user_pin_count_low,
        "the token counted the wrong PIN"
    );
    let t = e.token();
    assert!(pkcs11_tool_logs_in(
        &t.module_path,
        t.env(),
        TOKEN_LABEL,
        USER_PIN
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_pin_outside_the_tokens_range_is_refused_before_it_is_sent() {
    let e = common::token(Backend::SoftHsm).await;
    let view = e.c.partition(&e.pid).await.unwrap();
    let (min, max) = (view.token.min_pin_len, view.token.max_pin_len);
    assert!(min > 1, "SoftHSM reports a minimum ({min})");
    for bad in ["x".repeat(min as usize - 1), "y".repeat(max as usize + 1)] {
        let err =
            e.c.admin()
                .change_pin(&e.pid, p11::pin(USER_PIN), p11::pin(bad.clone()))
                .await
                .unwrap_err();
        assert_eq!(err.code, ErrorCode::PinInvalid, "{}", err.message);
        assert!(err.message.contains("this token"), "{}", err.message);
    }
    let view = e.c.partition(&e.pid).await.unwrap();
    assert!(!view.token.user_pin_count_low, "nothing reached the token");
    let t = e.token();
    assert!(pkcs11_tool_logs_in(
        &t.module_path,
        t.env(),
        TOKEN_LABEL,
        USER_PIN
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_so_sets_the_user_pin_and_the_user_cannot() {
    let e = common::token_logged_out(Backend::SoftHsm).await;
    // The user is not allowed to.
    e.c.login(&e.pid, UserKind::User, p11::pin(USER_PIN))
        .await
        .unwrap();
    let err =
        e.c.admin()
            .set_user_pin(&e.pid, p11::pin(NEW_PIN))
            .await
            .unwrap_err();
    assert_eq!(err.code, ErrorCode::NotAuthorized);
    assert!(err.message.contains("security officer"), "{}", err.message);
    e.c.logout(&e.pid).await.unwrap();
    // The SO is; the console records it (the trail's key is locked meanwhile: the user
    // logged out — this partition holds it, so the record is spooled, then chained).
    e.c.login(&e.pid, UserKind::So, p11::pin(SO_PIN))
        .await
        .unwrap();
    let view = e.c.partition(&e.pid).await.unwrap();
    let allowed = |a: Action| {
        view.permissions
            .iter()
            .find(|p| p.action == a)
            .unwrap()
            .allowed
    };
    assert!(allowed(Action::SetUserPin) && !allowed(Action::GenerateKeys));
    e.c.admin()
        .set_user_pin(&e.pid, p11::pin(NEW_PIN))
        .await
        .unwrap();
    e.c.logout(&e.pid).await.unwrap();
    let t = e.token();
    assert!(pkcs11_tool_logs_in(
        &t.module_path,
        t.env(),
        TOKEN_LABEL,
        NEW_PIN
    ));
    assert!(!p11tool_logs_in(
        &t.module_path,
        t.env(),
        TOKEN_LABEL,
        USER_PIN
    ));
    e.c.login(&e.pid, UserKind::User, p11::pin(NEW_PIN))
        .await
        .unwrap();
    let actions: Vec<String> =
        e.c.trail()
            .audit_records(audit::store::Query {
                limit: 100,
                ascending: true,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.event.action)
            .collect();
    let req = actions
        .iter()
        .position(|a| a == "pin.init.request")
        .expect("spooled, then chained");
    let done = actions.iter().position(|a| a == "pin.init").unwrap();
    assert!(req < done, "{actions:?}");
    let v =
        e.c.trail()
            .audit_verify(&|_, _| {}, &AtomicBool::new(false))
            .await
            .unwrap();
    assert!(v.is_intact(), "{v:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initializing_a_token_needs_its_label_typed_and_destroys_its_objects() {
    let e = common::token(Backend::SoftHsm).await;
    e.generate(KeySpec::Ec { curve: Curve::P256 }, "doomed")
        .await;
    let contents = e.c.admin().token_contents(&e.pid).await.unwrap();
    assert!(contents.objects >= 2, "{contents:?}");
    assert!(
        contents.holds_audit_key,
        "the first login put the trail's key here"
    );
    let req = |confirmation: &str, destroy_audit_key: bool| InitTokenRequest {
        label: "fresh".into(),
        confirmation: confirmation.into(),
        destroy_audit_key,
    };
    let err =
        e.c.admin()
            .init_token(&e.pid, p11::pin(SO_PIN), req("wrong", true))
            .await
            .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
    assert!(err.message.contains(TOKEN_LABEL), "{}", err.message);
    let err =
        e.c.admin()
            .init_token(&e.pid, p11::pin(SO_PIN), req(TOKEN_LABEL, false))
            .await
            .unwrap_err();
    assert!(err.message.contains("audit trail's key"), "{}", err.message);
    let err =
        e.c.admin()
            .init_token(&e.pid, p11::pin("not-the-so-pin"), req(TOKEN_LABEL, true))
            .await
            .unwrap_err();
    assert_eq!(err.code, ErrorCode::PinIncorrect, "{}", err.message);
    assert!(err.message.contains("not initialized"), "{}", err.message);
    let done =
        e.c.admin()
            .init_token(&e.pid, p11::pin(SO_PIN), req(TOKEN_LABEL, true))
            .await
            .unwrap();
    assert_eq!(done.label, "fresh");
    assert!(done.objects_destroyed >= 2);
    assert!(done.partition_id.is_some());
    // pkcs11-tool sees the new label and no objects (the user PIN is gone with them).
    let t = e.token();
    let out = pkcs11_tool(&t.module_path, t.env(), &["--list-slots"]);
    assert!(text(&out).contains("fresh"), "{}", text(&out));
    let out = pkcs11_tool(
        &t.module_path,
        t.env(),
        &["--token-label", "fresh", "--list-objects"],
    );
    assert!(!text(&out).contains("doomed"), "{}", text(&out));
    assert!(!pkcs11_tool_logs_in(
        &t.module_path,
        t.env(),
        "fresh",
        USER_PIN
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lunasim_policy_21_the_officer_changes_the_pin_before_anything_and_the_trail_records_it() {
    let e = common::token_logged_out_with(Backend::LunaSim, "force_user_pin_change = true").await;
    let r =
        e.c.login(&e.pid, UserKind::User, p11::pin(USER_PIN))
            .await
            .unwrap();
    assert!(r.pin_to_be_changed, "the token flags the PIN the SO set");
    assert!(r.pin_change_reason.unwrap().contains("policy 21"));
    assert!(matches!(r.audit, AuditKeyView::NoKeyYet), "{:?}", r.audit);
    assert_eq!(r.role_name, "Crypto Officer");
    // Other operations are refused by the token, explained.
    let err = e.c.list_keys(&e.pid).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::PinExpired, "{}", err.message);
    assert!(err.message.contains("PIN changed"), "{}", err.message);
    // The change is recorded (spooled: the trail's key cannot exist yet), then opens the key.
    let done =
        e.c.admin()
            .change_pin(&e.pid, p11::pin(USER_PIN), p11::pin(NEW_PIN))
            .await
            .unwrap();
    assert!(
        matches!(done.audit, AuditKeyView::Unlocked { .. }),
        "{:?}",
        done.audit
    );
    assert!(
        !e.c.partition(&e.pid)
            .await
            .unwrap()
            .token
            .user_pin_to_be_changed
    );
    e.generate(KeySpec::Ec { curve: Curve::P256 }, "after_change")
        .await;
    let records =
        e.c.trail()
            .audit_records(audit::store::Query {
                limit: 100,
                ascending: true,
                ..Default::default()
            })
            .await
            .unwrap();
    let req = records
        .iter()
        .find(|r| r.event.action == "pin.change.request")
        .expect("recorded");
    assert!(
        req.event.metadata.contains("\"was_to_be_changed\":true"),
        "{}",
        req.event.metadata
    );
    assert!(
        req.event.metadata.contains("spooled_before_unlock"),
        "{}",
        req.event.metadata
    );
    let done_at = records
        .iter()
        .position(|r| r.event.action == "pin.change")
        .unwrap();
    let req_at = records
        .iter()
        .position(|r| r.event.action == "pin.change.request")
        .unwrap();
    assert!(req_at < done_at);
    let v =
        e.c.trail()
            .audit_verify(&|_, _| {}, &AtomicBool::new(false))
            .await
            .unwrap();
    assert!(v.is_intact(), "{v:?}");
    let t = e.token();
    assert!(pkcs11_tool_logs_in(
        &t.module_path,
        t.env(),
        TOKEN_LABEL,
        NEW_PIN
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lunasim_the_crypto_user_signs_but_the_console_disables_what_it_may_not_do() {
    let e = common::token(Backend::LunaSim).await;
    let key = e
        .generate(KeySpec::Ec { curve: Curve::P256 }, "release_p256")
        .await;
    e.c.admin()
        .set_role_pin(&e.pid, UserKind::CryptoUser, p11::pin("crypto-user-2468"))
        .await
        .unwrap();
    e.c.logout(&e.pid).await.unwrap();
    let view = e.c.partition(&e.pid).await.unwrap();
    assert_eq!(
        view.roles,
        vec![
            UserKind::User,
            UserKind::CryptoUser,
            UserKind::LimitedCryptoOfficer,
            UserKind::So
        ]
    );
    let r =
        e.c.login(&e.pid, UserKind::CryptoUser, p11::pin("crypto-user-2468"))
            .await
            .unwrap();
    assert_eq!(r.role_name, "Crypto User");
    // The trail's key exists on this partition: the Crypto User may use it.
    assert!(
        matches!(r.audit, AuditKeyView::Unlocked { .. }),
        "{:?}",
        r.audit
    );
    let view = e.c.partition(&e.pid).await.unwrap();
    assert_eq!(view.role_name.as_deref(), Some("Crypto User"));
    let gen = view
        .permissions
        .iter()
        .find(|p| p.action == Action::GenerateKeys)
        .unwrap();
    assert!(!gen.allowed);
    let reason = gen.reason.as_ref().unwrap();
    assert!(reason.text.contains("Crypto User cannot generate keys"));
    // In the officer's language, the role's name and the rule inside the sentence too.
    let zh = reason.in_lang(console::i18n::Lang::ZhHant);
    assert!(zh.starts_with("加密使用者不能產生金鑰："), "{zh}");
    let err =
        e.c.admin()
            .generate_key(
                &e.pid,
                console::views::GenerateRequest {
                    spec: KeySpec::Ec { curve: Curve::P256 },
                    label: "cu_attempt".into(),
                    token: true,
                    extractable: false,
                    always_authenticate: false,
                },
            )
            .await
            .unwrap_err();
    assert_eq!(err.code, ErrorCode::NotAuthorized);
    let err =
        e.c.admin()
            .destroy_keys(&e.pid, &[key.private_handle], "release_p256")
            .await
            .unwrap_err();
    assert_eq!(err.code, ErrorCode::NotAuthorized);
    // It reads and signs.
    assert!(e
        .c
        .list_keys(&e.pid)
        .await
        .unwrap()
        .iter()
        .any(|k| k.label == "release_p256"));
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a.bin");
    std::fs::write(&f, b"artifact").unwrap();
    let report =
        e.c.signing()
            .sign_files(
                &e.pid,
                console::sign::SignRequest {
                    files: vec![f.display().to_string()],
                    key: format!("id:{}", key.id_hex),
                    also_keys: vec![],
                    formats: vec![console::sign::SignFormat::Raw],
                    out_dir: None,
                    manifest: false,
                    context: None,
                    on_error: console::sign::OnError::Stop,
                    confirm_hss: false,
                    timestamp: None,
                    kit: None,
                    chain: vec![],
                    context_login: None,
                },
                std::sync::Arc::new(|_| {}),
                std::sync::Arc::new(AtomicBool::new(false)),
            )
            .await
            .unwrap();
    assert_eq!(report.signatures_made, 1, "{report:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn luna_roles_are_refused_on_other_modules() {
    let e = common::token_logged_out(Backend::SoftHsm).await;
    let err =
        e.c.login(&e.pid, UserKind::CryptoUser, p11::pin("whatever-1"))
            .await
            .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
    assert!(err.message.contains("Luna"), "{}", err.message);
    let view = e.c.partition(&e.pid).await.unwrap();
    assert_eq!(view.roles, vec![UserKind::User, UserKind::So]);
}
