//! Editing attributes on real tokens: a new label and ID (the pair's other half and its
//! certificate move along), an end date, usage flags; the standard's one-way flags refused
//! before anything is sent. Read back by `pkcs11-tool`. One test per process (nextest).

use console::attributes::{AttributeChanges, FlagChange};
use console::i18n::Lang;
use console::views::GenerateRequest;
use console::ErrorCode;
use hsm::algo::{Curve, KeySpec};
use testkit::tools::{pkcs11_tool, text};
use testkit::{Backend, TOKEN_LABEL, USER_PIN};

use crate::common;

fn flag(name: &str, value: bool) -> FlagChange {
    FlagChange {
        name: name.into(),
        value,
    }
}

async fn edit_label_id_dates_and_flags(backend: Backend) {
    let e = common::token(backend).await;
    let key = e
        .generate(KeySpec::Ec { curve: Curve::P256 }, "attr_key")
        .await;
    e.c.signing()
        .issue_certificate(&e.pid, key.private_handle, "CN=attr_key", 30, true)
        .await
        .unwrap();
    let offer =
        e.c.admin()
            .editable_attributes(&e.pid, key.private_handle)
            .await
            .unwrap();
    assert!(offer.modifiable);
    assert_eq!(offer.related.len(), 2, "{:?}", offer.related);
    let sensitive = offer.flags.iter().find(|f| f.name == "sensitive").unwrap();
    assert!(sensitive.value && !sensitive.changeable, "{sensitive:?}");
    assert!(sensitive.reason.as_ref().unwrap().text.contains("never"));

    rename_moves_the_public_half_and_certificate_along(&e, key.private_handle).await;
    end_date_is_set_or_refused_on_softhsm(&e, key.private_handle, backend).await;
    pkcs11_tool_sees_the_new_label_and_id(&e, &key.id_hex);

    // A usage flag, both ways.
    let r =
        e.c.admin()
            .set_attributes(
                &e.pid,
                key.private_handle,
                AttributeChanges {
                    flags: vec![flag("sign", false)],
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    assert!(!r.summary.capabilities.sign);

    one_way_flags_and_a_bad_date_are_refused_before_the_call(&e).await;
    common::request_before_outcome(&e.c, "object.set_attributes", None).await;
}

/// A new label and ID: the pair's other half and its certificate move along.
async fn rename_moves_the_public_half_and_certificate_along(e: &common::Env, key: u64) {
    let r =
        e.c.admin()
            .set_attributes(
                &e.pid,
                key,
                AttributeChanges {
                    label: Some("attr_key_renamed".into()),
                    id_hex: Some("c0ffee01".into()),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    assert_eq!(r.summary.label, "attr_key_renamed");
    assert_eq!(r.summary.id_hex, "c0ffee01");
    assert_eq!(
        r.moved.len(),
        2,
        "public half and certificate: {:?}",
        r.moved
    );
}

async fn end_date_is_set_or_refused_on_softhsm(e: &common::Env, key_handle: u64, backend: Backend) {
    let dates = AttributeChanges {
        end_date: Some("2027-12-31".into()),
        ..Default::default()
    };
    let r = e.c.admin().set_attributes(&e.pid, key_handle, dates).await;
    if backend == Backend::SoftHsm {
        // SoftHSM2 loses an object whose dates change; the console refuses to.
        let err = r.unwrap_err();
        assert!(err.message.contains("SoftHSM2"), "{}", err.message);
    } else {
        r.unwrap();
        let offer =
            e.c.admin()
                .editable_attributes(&e.pid, key_handle)
                .await
                .unwrap();
        assert_eq!(offer.end_date.as_deref(), Some("2027-12-31"));
    }
}

/// Another lineage sees the label and the three objects under the new ID, none under
/// `old_id`.
fn pkcs11_tool_sees_the_new_label_and_id(e: &common::Env, old_id: &str) {
    let t = e.token();
    let o = pkcs11_tool(
        &t.module_path,
        t.env(),
        &[
            "--token-label",
            TOKEN_LABEL,
            "--login",
            "--pin",
            USER_PIN,
            "--list-objects",
        ],
    );
    let listed = text(&o);
    assert!(listed.contains("attr_key_renamed"), "{listed}");
    assert_eq!(listed.matches("c0ffee01").count(), 3, "{listed}");
    assert!(
        !listed.contains(old_id),
        "nothing left under the old ID: {listed}"
    );
}

/// The standard's one-way flags: refused before the call, nothing changed, said in the
/// officer's language too; a date not in ISO form is refused.
async fn one_way_flags_and_a_bad_date_are_refused_before_the_call(e: &common::Env) {
    let aes =
        e.c.admin()
            .generate_key(
                &e.pid,
                GenerateRequest {
                    spec: KeySpec::Aes { bits: 256 },
                    label: "attr_aes".into(),
                    token: true,
                    extractable: false,
                    always_authenticate: false,
                },
            )
            .await
            .unwrap();
    for (name, value) in [("sensitive", false), ("extractable", true)] {
        let current =
            e.c.admin()
                .editable_attributes(&e.pid, aes.private_handle)
                .await
                .unwrap();
        let f = current.flags.iter().find(|f| f.name == name).unwrap();
        if f.value == value {
            continue; // already so: nothing to refuse
        }
        let err =
            e.c.admin()
                .set_attributes(
                    &e.pid,
                    aes.private_handle,
                    AttributeChanges {
                        flags: vec![flag(name, value)],
                        ..Default::default()
                    },
                )
                .await
                .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidInput, "{}", err.message);
        assert!(err.message.contains("never"), "{}", err.message);
        // The officer reads the refusal in their language, the rule inside it too.
        let zh = err.message_in(Lang::ZhHans);
        assert!(
            !zh.contains("never") && !zh.contains("Nothing was changed"),
            "{zh}"
        );
        assert!(zh.contains(&format!("CKA_{}", name.to_uppercase())), "{zh}");
        let reason = f.reason.as_ref().expect("the dialog says why not");
        assert!(!f.changeable && reason.text.contains("never"), "{reason:?}");
    }
    let err =
        e.c.admin()
            .set_attributes(
                &e.pid,
                aes.private_handle,
                AttributeChanges {
                    end_date: Some("31.12.2027".into()),
                    ..Default::default()
                },
            )
            .await
            .unwrap_err();
    assert!(err.message.contains("end_date"), "{}", err.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn softhsm_edit_label_id_dates_and_flags() {
    edit_label_id_dates_and_flags(Backend::SoftHsm).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kryoptic_edit_label_id_dates_and_flags() {
    edit_label_id_dates_and_flags(Backend::Kryoptic).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lunasim_edit_label_id_dates_and_flags() {
    edit_label_id_dates_and_flags(Backend::LunaSim).await;
}
