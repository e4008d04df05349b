//! Administrative changes when the HSM's answer is lost (lunasim's `"after":true`: the call
//! ran, its reply was replaced by CKR_DEVICE_ERROR) or the call never reached it: the
//! officer is told what the token now holds — found out by reading the token — or that it
//! is not known, and the trail says the same. What the token holds is read back with
//! `pkcs11-tool` (OpenSC), not with the console. One test per process (nextest).

use console::objects::ImportRequest;
use console::views::UserKind;
use console::ErrorCode;
use hsm::algo::{Curve, KeySpec};
use testkit::tools::pkcs11_tool_logs_in;
use testkit::{Backend, TOKEN_LABEL, USER_PIN};

use crate::common;

const NEW_PIN: &str = "officer-new-2468";

async fn control(e: &common::Env, cmd: &str) -> serde_json::Value {
    let p = e.c.partition_ref(&e.pid).await.unwrap();
    serde_json::from_str(&p.module.module.sim_control(cmd).unwrap()).unwrap()
}

fn fail(function: &str, after: bool) -> String {
    format!(r#"{{"op":"fail","function":"{function}","rv":"CKR_DEVICE_ERROR","after":{after}}}"#)
}

/// The newest record of exactly `action`.
async fn last(e: &common::Env, action: &str) -> audit::Record {
    e.c.audit()
        .records(&audit::store::Query {
            action: Some(action.into()),
            limit: 50,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_iter()
        .find(|r| r.event.action == action)
        .unwrap_or_else(|| panic!("a {action} record"))
}

fn meta(r: &audit::Record) -> serde_json::Value {
    serde_json::from_str(&r.event.metadata).unwrap()
}

fn logs_in(e: &common::Env, pin: &str) -> bool {
    let t = e.token();
    pkcs11_tool_logs_in(&t.module_path, t.env(), TOKEN_LABEL, pin)
}

async fn c_login_calls(e: &common::Env) -> u64 {
    control(e, r#"{"op":"stats"}"#).await["calls"]["C_Login"]
        .as_u64()
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pin_change_whose_answer_is_lost_says_which_pin_is_valid() {
    let e = common::token(Backend::LunaSim).await;

    // The change took effect, its answer was lost: the console finds the new PIN works,
    // says the PIN changed, and goes on logged in.
    control(&e, &fail("C_SetPIN", true)).await;
    e.c.admin()
        .change_pin(&e.pid, p11::pin(USER_PIN), p11::pin(NEW_PIN))
        .await
        .expect("settled: the new PIN is valid");
    let r = last(&e, "pin.change").await;
    assert_eq!(r.event.status, "success");
    assert_eq!(meta(&r)["pin_now"], "new");
    assert_eq!(meta(&r)["settled_by"], "login_with_new_pin");
    assert!(logs_in(&e, NEW_PIN) && !logs_in(&e, USER_PIN));
    e.generate(KeySpec::Ec { curve: Curve::P256 }, "after_lost_change")
        .await;

    // The call never reached the token: the officer is told nothing changed.
    control(&e, &fail("C_SetPIN", false)).await;
    let err =
        e.c.admin()
            .change_pin(&e.pid, p11::pin(NEW_PIN), p11::pin(USER_PIN))
            .await
            .unwrap_err();
    assert_eq!(err.code, ErrorCode::HsmDisconnected);
    assert!(
        err.message.contains("did not take effect"),
        "{}",
        err.message
    );
    let r = last(&e, "pin.change").await;
    assert_eq!(r.event.status, "failure");
    assert_eq!(meta(&r)["pin_now"], "current");
    assert!(logs_in(&e, NEW_PIN) && !logs_in(&e, USER_PIN));
    assert!(
        e.c.partition(&e.pid).await.unwrap().logged_in.is_some(),
        "logged in again with the PIN that is valid"
    );
    e.generate(KeySpec::Ec { curve: Curve::P256 }, "after_unreached_change")
        .await;
    let verdict =
        e.c.trail()
            .audit_verify(&|_, _| {}, &std::sync::atomic::AtomicBool::new(false))
            .await
            .unwrap();
    assert!(verdict.is_intact(), "{verdict:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pin_change_that_cannot_be_settled_is_recorded_unknown_and_shown() {
    let e = common::token(Backend::LunaSim).await;
    // The change runs, its answer is lost, and the token cannot be read afterwards: the
    // console cannot know, tries neither PIN, and says so.
    control(
        &e,
        r#"{"op":"fail","function":"C_GetTokenInfo","rv":"CKR_DEVICE_ERROR","count":null}"#,
    )
    .await;
    control(&e, &fail("C_SetPIN", true)).await;
    let logins = c_login_calls(&e).await;
    let err =
        e.c.admin()
            .change_pin(&e.pid, p11::pin(USER_PIN), p11::pin(NEW_PIN))
            .await
            .unwrap_err();
    assert_eq!(err.code, ErrorCode::HsmDisconnected);
    assert!(err.message.contains("is not known"), "{}", err.message);
    assert_eq!(c_login_calls(&e).await, logins, "no PIN was tried");
    let r = last(&e, "pin.change").await;
    assert_eq!(r.event.status, "unknown");
    assert_eq!(meta(&r)["pin_now"], "unknown");
    assert_eq!(meta(&r)["outcome"], "unknown — check the token");
    control(&e, r#"{"op":"clear"}"#).await;
    assert!(
        e.c.partition(&e.pid).await.unwrap().logged_in.is_none(),
        "logged out: the console holds no PIN it knows to be valid"
    );
    let o = e.c.overview().await.unwrap();
    let item = o
        .failures
        .items
        .iter()
        .find(|i| i.message.key == "overview.items.unknown_outcome")
        .expect("the overview names the unknown outcome");
    assert_eq!(item.link.seq, Some(r.seq));
    // The truth, read by another tool: the change happened.
    assert!(logs_in(&e, NEW_PIN));
    e.c.login(&e.pid, UserKind::User, p11::pin(NEW_PIN))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pin_changed_elsewhere_is_tried_once_after_a_reconnect() {
    let e = common::token(Backend::LunaSim).await;
    // Another tool changes the PIN while the console is logged in; then the HSM reconnects.
    let t = e.token();
    let o = std::process::Command::new("pkcs11-tool")
        .envs(t.env().iter().map(|(k, v)| (k, v)))
        .args(["--module", &t.module_path.display().to_string()])
        .args(["--token-label", TOKEN_LABEL, "--login", "--pin", USER_PIN])
        .args(["--change-pin", "--new-pin", NEW_PIN])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", testkit::tools::text(&o));
    control(&e, r#"{"op":"disconnect","count":1}"#).await;
    let logins = c_login_calls(&e).await;
    let err = e.c.list_keys(&e.pid).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NotLoggedIn, "{}", err.message);
    assert_eq!(
        err.i18n.as_ref().and_then(|i| i.message.clone()).as_deref(),
        Some("errors.login_lost"),
        "{}",
        err.message
    );
    // Later calls do not try the refused PIN again (each try would use up an attempt).
    for _ in 0..3 {
        let _ = e.c.list_keys(&e.pid).await;
        let _ = e.c.partition(&e.pid).await;
    }
    assert_eq!(
        c_login_calls(&e).await,
        logins + 1,
        "the old PIN was tried once"
    );
    assert!(e.c.partition(&e.pid).await.unwrap().logged_in.is_none());
    e.c.login(&e.pid, UserKind::User, p11::pin(NEW_PIN))
        .await
        .unwrap();
    e.c.list_keys(&e.pid).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_so_setting_the_user_pin_is_done_again_after_a_lost_answer() {
    let e = common::token_logged_out(Backend::LunaSim).await;
    e.c.login(&e.pid, UserKind::So, p11::pin(testkit::SO_PIN))
        .await
        .unwrap();
    let init_pin_calls = || async {
        control(&e, r#"{"op":"stats"}"#).await["calls"]["C_InitPIN"]
            .as_u64()
            .unwrap_or(0)
    };
    let before = init_pin_calls().await;
    control(&e, &fail("C_InitPIN", true)).await;
    e.c.admin()
        .set_user_pin(&e.pid, p11::pin(NEW_PIN))
        .await
        .expect("set again after the reconnection");
    assert_eq!(
        init_pin_calls().await - before,
        2,
        "the lost call and the one made again"
    );
    e.c.logout(&e.pid).await.unwrap();
    assert!(logs_in(&e, NEW_PIN) && !logs_in(&e, USER_PIN));
    // The SO's records were spooled (the trail's key is the user's); the user's login
    // chains them.
    e.c.login(&e.pid, UserKind::User, p11::pin(NEW_PIN))
        .await
        .unwrap();
    let r = last(&e, "pin.init").await;
    assert_eq!(r.event.status, "success");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_whose_answer_is_lost_creates_each_object_once() {
    let e = common::token(Backend::LunaSim).await;
    for (case, after) in [("lost_reply", true), ("not_reached", false)] {
        let file = e.dir.path().join(format!("{case}.bin"));
        std::fs::write(&file, format!("release notes for {case}")).unwrap();
        control(&e, &fail("C_CreateObject", after)).await;
        let done =
            e.c.admin()
                .import_objects(
                    &e.pid,
                    ImportRequest {
                        path: file.clone(),
                        label: Some(case.into()),
                        id_hex: None,
                        data: true,
                        application: Some("hsmc-test".into()),
                    },
                )
                .await
                .unwrap_or_else(|err| panic!("{case}: {}", err.message));
        assert_eq!(done.objects.len(), 1, "{case}");
        let t = e.token();
        let o = std::process::Command::new("pkcs11-tool")
            .envs(t.env().iter().map(|(k, v)| (k, v)))
            .args(["--module", &t.module_path.display().to_string()])
            .args(["--token-label", TOKEN_LABEL, "--login", "--pin", USER_PIN])
            .args(["--list-objects", "--type", "data"])
            .output()
            .unwrap();
        let listed = String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            labelled(&listed, case),
            1,
            "{case}: one data object on the token:\n{listed}"
        );
        let r = last(&e, "object.import").await;
        assert_eq!(r.event.status, "success", "{case}");
        assert_eq!(
            meta(&r)["settled_after_reconnect"].as_u64().unwrap_or(0),
            u64::from(after),
            "{case}"
        );
    }
}

/// How many objects `pkcs11-tool --list-objects` shows with `label` (quoted for data
/// objects, bare for keys).
fn labelled(listed: &str, label: &str) -> usize {
    listed
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("label:"))
        .filter(|v| v.trim().trim_matches('\'') == label)
        .count()
}

fn pkcs11_tool_list(e: &common::Env, kind: &str) -> String {
    let t = e.token();
    let o = std::process::Command::new("pkcs11-tool")
        .envs(t.env().iter().map(|(k, v)| (k, v)))
        .args(["--module", &t.module_path.display().to_string()])
        .args(["--token-label", TOKEN_LABEL, "--login", "--pin", USER_PIN])
        .args(["--list-objects", "--type", kind])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", testkit::tools::text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attribute_edit_whose_answer_is_lost_is_made_again_and_an_id_change_is_unknown() {
    use console::attributes::AttributeChanges;
    let e = common::token(Backend::LunaSim).await;
    let k = e
        .generate(KeySpec::Ec { curve: Curve::P256 }, "edit_lost")
        .await;
    control(&e, &fail("C_SetAttributeValue", true)).await;
    let done =
        e.c.admin()
            .set_attributes(
                &e.pid,
                k.private_handle,
                AttributeChanges {
                    label: Some("edit_lost_renamed".into()),
                    ..Default::default()
                },
            )
            .await
            .unwrap_or_else(|err| panic!("{}", err.message));
    assert_eq!(done.summary.label, "edit_lost_renamed");
    let listed = pkcs11_tool_list(&e, "privkey");
    assert_eq!(labelled(&listed, "edit_lost_renamed"), 1, "{listed}");
    assert_eq!(labelled(&listed, "edit_lost"), 0, "{listed}");
    assert_eq!(
        last(&e, "object.set_attributes").await.event.status,
        "success"
    );

    // An ID change moves the key's other objects too: its lost answer is not guessed at.
    let k = e
        .generate(KeySpec::Ec { curve: Curve::P256 }, "edit_id_lost")
        .await;
    control(&e, &fail("C_SetAttributeValue", true)).await;
    let err =
        e.c.admin()
            .set_attributes(
                &e.pid,
                k.private_handle,
                AttributeChanges {
                    id_hex: Some("c0ffee".into()),
                    ..Default::default()
                },
            )
            .await
            .unwrap_err();
    assert_eq!(err.code, ErrorCode::HsmDisconnected);
    let r = last(&e, "object.set_attributes").await;
    assert_eq!(r.event.status, "unknown");
    let o = e.c.overview().await.unwrap();
    assert!(o
        .failures
        .items
        .iter()
        .any(|i| i.message.key == "overview.items.unknown_outcome" && i.link.seq == Some(r.seq)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unwrap_whose_answer_is_lost_makes_one_key() {
    use p11::sys::*;
    use p11::Mechanism;
    let e = common::token(Backend::LunaSim).await;
    // An AES wrapping key (wrap and unwrap allowed) and an extractable AES data key.
    let aes = |label: &'static str, id: &'static [u8], wrapping: bool| {
        move |s: &p11::Session| {
            s.generate_key(
                &Mechanism::new(CKM_AES_KEY_GEN),
                &mut testkit::setup::aes256_template(label, id, !wrapping)
                    .bool(CKA_WRAP, wrapping)
                    .bool(CKA_UNWRAP, wrapping)
                    .bool(CKA_ENCRYPT, true),
            )
        }
    };
    let wrapping = common::on(&e, aes("kwp_wrapping", &[0x77, 0x01], true)).await;

    let data = common::on(&e, aes("kwp_data", &[0x77, 0x02], false)).await;
    let file = e.dir.path().join("kwp_data.wrapped.json");
    e.c.admin()
        .wrap_key(&e.pid, data, wrapping, &file, None, true)
        .await
        .unwrap_or_else(|err| panic!("{}", err.message));
    for (case, after) in [("restored_lost", true), ("restored_unreached", false)] {
        // The wrapping key's handle as the window has it: from a listing (a reconnection
        // in the case before may have numbered the objects anew).
        let wrapping =
            e.c.list_keys(&e.pid)
                .await
                .unwrap()
                .into_iter()
                .find(|o| o.label == "kwp_wrapping")
                .unwrap()
                .handle;
        control(&e, &fail("C_UnwrapKey", after)).await;
        let u =
            e.c.admin()
                .unwrap_key(&e.pid, &file, wrapping, Some(case.into()))
                .await
                .unwrap_or_else(|err| panic!("{case}: {}", err.message));
        assert_eq!(u.summary.label, case);
        let listed = pkcs11_tool_list(&e, "secrkey");
        assert_eq!(labelled(&listed, case), 1, "{case}: one key\n{listed}");
        let r = last(&e, "key.unwrap").await;
        assert_eq!(r.event.status, "success", "{case}");
        assert_eq!(
            meta(&r)["settled_after_reconnect"]
                .as_bool()
                .unwrap_or(false),
            after,
            "{case}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_initialization_whose_answer_is_lost_is_made_again() {
    use console::credentials::InitTokenRequest;
    let e = common::token(Backend::LunaSim).await;
    e.generate(KeySpec::Ec { curve: Curve::P256 }, "doomed_lost")
        .await;
    let calls = |v: serde_json::Value| v["calls"]["C_InitToken"].as_u64().unwrap_or(0);
    let before = calls(control(&e, r#"{"op":"stats"}"#).await);
    control(&e, &fail("C_InitToken", true)).await;
    let done =
        e.c.admin()
            .init_token(
                &e.pid,
                p11::pin(testkit::SO_PIN),
                InitTokenRequest {
                    label: "fresh_lost".into(),
                    confirmation: TOKEN_LABEL.into(),
                    destroy_audit_key: true,
                },
            )
            .await
            .unwrap_or_else(|err| panic!("{}", err.message));
    assert_eq!(done.label, "fresh_lost");
    let new_pid = done.partition_id.expect("the token is found again");
    let p = e.c.partition_ref(&new_pid).await.unwrap();
    let stats: serde_json::Value =
        serde_json::from_str(&p.module.module.sim_control(r#"{"op":"stats"}"#).unwrap()).unwrap();
    assert_eq!(
        calls(stats) - before,
        2,
        "the lost call and the one made again"
    );
    // pkcs11-tool sees the new label and none of the old objects.
    let t = e.token();
    let out = testkit::tools::pkcs11_tool(&t.module_path, t.env(), &["--list-slots"]);
    assert!(
        testkit::tools::text(&out).contains("fresh_lost"),
        "{}",
        testkit::tools::text(&out)
    );
    let out = testkit::tools::pkcs11_tool(
        &t.module_path,
        t.env(),
        &["--token-label", "fresh_lost", "--list-objects"],
    );
    assert!(!testkit::tools::text(&out).contains("doomed_lost"));
}
