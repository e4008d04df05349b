//! HA groups in the console, on lunasim groups: the group and its members with their
//! statistics, the drift check (an object deleted on one member's own slot, a label
//! changed on one member, a member down) with its audit record once per change of state,
//! probes' per-member throughput, a refused group beside working slots, and Luna's usage
//! limits. One process per test (cargo nextest).

use std::sync::Arc;

use audit::store::Query;
use console::ha::{DriftVerdict, MemberCheck};
use console::views::{GenerateRequest, UserKind};
use console::{Console, ConsoleConfig, ErrorCode};
use hsm::algo::{Curve, KeySpec};
use hsm::drift::DifferenceKind;
use p11::sys::*;
use p11::{Mechanism, Template};
use sha2::{Digest, Sha256};
use testkit::{ha_group_toml, ha_member_serial, HaRig, HA_LABEL, HA_SERIAL, HA_SLOT};

struct Env {
    rig: HaRig,
    c: Arc<Console>,
    /// The group's virtual slot.
    pid: String,
    _dir: tempfile::TempDir,
}

async fn console_on(
    rig: HaRig,
) -> (
    HaRig,
    Arc<Console>,
    Vec<console::views::SlotView>,
    tempfile::TempDir,
) {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = ConsoleConfig::new(dir.path().join("data"));
    cfg.builtin = false;
    let c = Console::open(cfg).await.unwrap();
    let m = c
        .add_module(&rig.module_path.display().to_string())
        .await
        .unwrap();
    let slots = c.slots(&m.id).await.unwrap();
    (rig, c, slots, dir)
}

async fn env(members: usize, group_extra: &str) -> Env {
    let (rig, c, slots, dir) = console_on(HaRig::group(members, group_extra, "")).await;
    let pid = slots
        .iter()
        .find(|s| s.slot_id == HA_SLOT)
        .and_then(|s| s.partition_id.clone())
        .expect("the virtual slot is a partition");
    c.login(&pid, UserKind::User, p11::pin(testkit::USER_PIN))
        .await
        .unwrap();
    Env {
        rig,
        c,
        pid,
        _dir: dir,
    }
}

impl Env {
    async fn generate(&self, spec: KeySpec, label: &str) -> console::views::GeneratedKey {
        self.c
            .admin()
            .generate_key(
                &self.pid,
                GenerateRequest {
                    spec,
                    label: label.into(),
                    token: true,
                    extractable: false,
                    always_authenticate: false,
                },
            )
            .await
            .unwrap()
    }

    fn member_pid(&self, position: u32) -> String {
        format!(
            "{}:{}",
            self.pid.split(':').next().unwrap(),
            ha_member_serial(position as usize)
        )
    }

    async fn on_member<T: Send + 'static>(
        &self,
        position: u32,
        f: impl FnMut(&p11::Session) -> p11::Result<T> + Send + 'static,
    ) -> T {
        let p = self
            .c
            .partition_ref(&self.member_pid(position))
            .await
            .unwrap();
        p.pool.run_async("test", f).await.unwrap()
    }

    async fn ha_records(&self) -> Vec<serde_json::Value> {
        let q = Query {
            action: Some("ha.state".into()),
            limit: 100,
            ascending: true,
            ..Query::default()
        };
        self.c
            .audit()
            .store()
            .query(self.c.audit().log_id(), &q)
            .await
            .unwrap()
            .iter()
            .map(|r| serde_json::from_str(&r.event.metadata).unwrap())
            .collect()
    }
}

fn by_id(class: u64, id: &[u8]) -> Template {
    Template::new().ulong(CKA_CLASS, class).bytes(CKA_ID, id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_group_and_its_members_side_by_side() {
    let e = env(2, "").await;
    let groups = e.c.ha().ha_groups().await.unwrap();
    assert_eq!(groups.len(), 1);
    let g = &groups[0];
    assert_eq!((g.label.as_str(), g.serial.as_str()), (HA_LABEL, HA_SERIAL));
    assert!(g.members_visible);
    for (i, m) in g.members.iter().enumerate() {
        assert_eq!(m.serial, ha_member_serial(i + 1));
        assert!(m.alive);
        assert_eq!(m.status, "CKR_OK");
        assert_eq!(
            m.logged_in,
            Some(UserKind::User),
            "a group login logs in its members"
        );
    }
    let k = e
        .generate(KeySpec::Ec { curve: Curve::P256 }, "served")
        .await;
    let first = e.c.ha().ha_group(&e.pid).await.unwrap().unwrap();
    let p = e.c.partition_ref(&e.pid).await.unwrap();
    let key = k.private_handle;
    p.pool
        .run_async("test.sign", move |s| {
            for _ in 0..4 {
                s.sign(&Mechanism::new(CKM_ECDSA), key, &Sha256::digest(b"x"))?;
            }
            Ok(())
        })
        .await
        .unwrap();
    let after = e.c.ha().ha_group(&e.pid).await.unwrap().unwrap();
    for (a, b) in first.members.iter().zip(&after.members) {
        assert!(
            b.commands.unwrap() > a.commands.unwrap(),
            "member {} served",
            b.position
        );
        assert!(b.last_served.is_some());
        assert!(b.busy_percent.is_none() || b.busy_percent.unwrap() <= 100.0);
    }
    // The statistics of the virtual slot carry the group too.
    let stats = e.c.stats(&e.pid).await.unwrap();
    assert_eq!(stats.ha.unwrap().members.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_drift_check_finds_a_deleted_object_a_changed_label_and_a_member_down() {
    let e = env(3, "").await;
    let k = e
        .generate(KeySpec::Ec { curve: Curve::P256 }, "fw_sign")
        .await;
    e.generate(KeySpec::Aes { bits: 256 }, "wrap").await;
    let id = hex::decode(&k.id_hex).unwrap();

    let r = e.c.ha().ha_drift(&e.pid).await.unwrap();
    assert_eq!(r.verdict, DriftVerdict::InSync, "{r:?}");
    assert_eq!(r.summary, "in sync");
    assert!(r.members.iter().all(|m| m.check == MemberCheck::Compared));
    assert!(r.kcv_method.contains("AES-ECB encryption of a zero block"));
    assert!(
        e.ha_records().await.is_empty(),
        "nothing to record while in sync"
    );

    // Deleted on member 2's own slot.
    let id2 = id.clone();
    e.on_member(2, move |s| {
        let h = s.find_objects(&mut by_id(CKO_PRIVATE_KEY, &id2))?[0];
        s.destroy_object(h)
    })
    .await;
    let r = e.c.ha().ha_drift(&e.pid).await.unwrap();
    assert_eq!(r.verdict, DriftVerdict::Drift);
    assert_eq!(r.summary, "drift on member 2");
    let d = &r.differences[0];
    assert_eq!(
        (d.kind, d.members.clone()),
        (DifferenceKind::Missing, vec![2])
    );
    assert!(d.object.contains("private key 'fw_sign'"), "{}", d.object);
    let w = e.c.ha().ha_warnings().await;
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].text, "drift on member 2");
    e.c.ha().ha_drift(&e.pid).await.unwrap();
    assert_eq!(e.ha_records().await.len(), 1, "once per change of state");

    // lunasim's resync puts it back; the check says so (and records the recovery).
    e.rig.control(r#"{"op":"resync"}"#);
    assert_eq!(
        e.c.ha().ha_drift(&e.pid).await.unwrap().verdict,
        DriftVerdict::InSync
    );
    assert!(e.c.ha().ha_warnings().await.is_empty());

    // A label changed on member 1's own slot: the majority names member 1.
    e.on_member(1, |s| {
        let h = s.find_objects(
            &mut Template::new()
                .ulong(CKA_CLASS, CKO_SECRET_KEY)
                .text(CKA_LABEL, "wrap"),
        )?[0];
        s.set_attributes(h, &mut Template::new().text(CKA_LABEL, "wrap-old"))
    })
    .await;
    let r = e.c.ha().ha_drift(&e.pid).await.unwrap();
    assert_eq!(r.summary, "drift on member 1");
    let d = &r.differences[0];
    assert_eq!(d.kind, DifferenceKind::Different);
    assert_eq!(d.field.as_deref(), Some("label"));
    assert_eq!(d.members, vec![1]);
    assert!(d
        .values
        .iter()
        .any(|v| v.value.as_deref() == Some("wrap-old")));
    let group = e.c.ha().ha_group(&e.pid).await.unwrap().unwrap();
    let needs: Vec<_> = group.members.iter().map(|m| m.needs_sync).collect();
    assert_eq!(needs, vec![Some(true), Some(false), Some(false)]);
    e.on_member(1, |s| {
        let h = s.find_objects(&mut Template::new().text(CKA_LABEL, "wrap-old"))?[0];
        s.set_attributes(h, &mut Template::new().text(CKA_LABEL, "wrap"))
    })
    .await;
    assert_eq!(
        e.c.ha().ha_drift(&e.pid).await.unwrap().verdict,
        DriftVerdict::InSync
    );

    // A member down.
    e.rig.control(r#"{"op":"member_down","member":3}"#);
    let r = e.c.ha().ha_drift(&e.pid).await.unwrap();
    assert_eq!(r.verdict, DriftVerdict::MemberDown);
    assert_eq!(r.summary, "member 3 down; members 1, 2 in sync");
    assert_eq!(r.members[2].check, MemberCheck::Down);
    let w = e.c.ha().ha_warnings().await;
    assert_eq!(w[0].text, "member 3 down; members 1, 2 in sync");
    assert!(!e.c.ha().ha_group(&e.pid).await.unwrap().unwrap().members[2].alive);

    let recs = e.ha_records().await;
    let verdicts: Vec<&str> = recs
        .iter()
        .map(|r| r["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(
        verdicts,
        vec!["drift", "in_sync", "drift", "in_sync", "member_down"],
        "one record per change of state"
    );
    assert_eq!(recs[0]["drifting_members"], serde_json::json!([2]));
    assert_eq!(recs[4]["down_members"], serde_json::json!([3]));
    // The trail still verifies with the new records in it.
    let v =
        e.c.trail()
            .audit_verify(&|_, _| {}, &std::sync::atomic::AtomicBool::new(false))
            .await
            .unwrap();
    assert!(v.is_intact(), "{v:?}");
}

/// A member whose objects cannot be read is reported as failed with the token's error, which
/// the window shows in the officer's language (the key and arguments travel with it), and
/// the other members are still compared.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_that_cannot_be_read_says_why_in_the_officers_language() {
    let e = env(3, "").await;
    e.generate(KeySpec::Aes { bits: 256 }, "wrap").await;
    // The next object search anywhere fails: the drift check's read of member 1.
    e.rig
        .control(r#"{"op":"fail","function":"C_FindObjectsInit","rv":"CKR_FUNCTION_FAILED"}"#);
    let r = e.c.ha().ha_drift(&e.pid).await.unwrap();
    let checks: Vec<_> = r.members.iter().map(|m| m.check).collect();
    assert_eq!(
        checks,
        vec![
            MemberCheck::Failed,
            MemberCheck::Compared,
            MemberCheck::Compared
        ],
        "{r:?}"
    );
    let err = r.members[0].error.as_ref().expect("why member 1 failed");
    assert!(err.message.contains("CKR_FUNCTION_FAILED"), "{err:?}");
    assert!(r.members[1..].iter().all(|m| m.error.is_none()));
    let i18n = err.i18n.as_ref().expect("the message as a catalog key");
    let key = i18n.message.as_deref().expect("a message key");
    for lang in [console::i18n::Lang::ZhHant, console::i18n::Lang::ZhHans] {
        let args = console::i18n::with_nested(lang, &i18n.args);
        let shown = console::i18n::translate(lang, key, &args)
            .unwrap_or_else(|| panic!("{key} is missing from the {lang:?} catalog"));
        assert!(shown != err.message, "{lang:?}: {shown}");
        assert!(shown.contains("CKR_FUNCTION_FAILED"), "{lang:?}: {shown}");
    }
    // The members that were read still agree.
    assert_eq!(r.differences.len(), 0, "{r:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_probe_on_the_group_reports_each_members_share() {
    let e = env(2, "").await;
    let req = bench::probe::ProbeRequest {
        op: bench::probe::ProbeOp::Random32,
        mode: bench::probe::ProbeMode::Count { calls: 300 },
        workers: 1,
        sweep: Vec::new(),
        warmup: 10,
        profile: Default::default(),
    };
    let report =
        e.c.observe()
            .run_probe(
                &e.pid,
                req,
                Arc::new(|_| {}),
                Arc::new(std::sync::atomic::AtomicBool::new(false)),
            )
            .await
            .unwrap();
    let ha = report.ha.expect("a probe on a group reports its members");
    assert!(ha.total_per_s > 0.0);
    assert_eq!(ha.members.len(), 2);
    for m in &ha.members {
        assert!(
            (30.0..=70.0).contains(&m.share_percent),
            "round-robin spreads the calls: {:?}",
            ha.members
        );
        assert!(m.per_s > 0.0);
    }
    let sum: f64 = ha.members.iter().map(|m| m.per_s).sum();
    assert!((sum - ha.total_per_s).abs() < 1e-6 * ha.total_per_s.max(1.0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_group_leaves_the_other_slots_working() {
    let bad = ha_group_toml(HA_LABEL, HA_SERIAL, &[(ha_member_serial(1), 1)], "");
    let (_rig, c, slots, _dir) = console_on(HaRig::new(2, &[1, 2], "", &bad)).await;
    let refused = slots.iter().find(|s| s.slot_id == HA_SLOT).expect("listed");
    assert!(refused.token.is_none() && refused.partition_id.is_none());
    assert!(
        refused
            .description
            .contains("HA group 'ha-test' not started: 1 member"),
        "{}",
        refused.description
    );
    let member = slots
        .iter()
        .find(|s| s.slot_id == 1)
        .and_then(|s| s.partition_id.clone())
        .unwrap();
    c.login(&member, UserKind::User, p11::pin(testkit::USER_PIN))
        .await
        .unwrap();
    // The login made the audit trail's keys there: the partition works as any other.
    assert!(!c.list_keys(&member).await.unwrap().is_empty());
    assert!(c.ha().ha_groups().await.unwrap().is_empty());
    assert!(
        c.ha().ha_group(&member).await.unwrap().is_none(),
        "a member is not a group"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_limits_show_uses_left_and_refuse_past_the_limit() {
    let e = env(2, "").await;
    let k = e
        .generate(KeySpec::Ec { curve: Curve::P256 }, "limited")
        .await;
    let s =
        e.c.observe()
            .set_usage_limit(&e.pid, k.private_handle, 3)
            .await
            .unwrap();
    assert_eq!((s.usage_limit, s.usage_count), (Some(3), Some(0)));
    let p = e.c.partition_ref(&e.pid).await.unwrap();
    let key = k.private_handle;
    let sign =
        move |s: &p11::Session| s.sign(&Mechanism::new(CKM_ECDSA), key, &Sha256::digest(b"x"));
    p.pool.run_async("test.sign", sign).await.unwrap();
    let all = e.c.observe().usage_keys().await.unwrap();
    // The group and each member's own slot (logged in with the group) list the key.
    assert_eq!(all.len(), 3);
    let u: Vec<_> = all
        .into_iter()
        .filter(|k| k.partition_id == e.pid)
        .collect();
    // Each member counts the uses it served; the group shows the primary's count.
    assert!(u[0].used <= 1);
    assert_eq!(u[0].limit, 3);
    assert!(u[0].uses_left().ends_with("of 3 uses left"));
    // Past the limit on a member: Luna's code, the console's words.
    for _ in 0..8 {
        match p.pool.run_async("test.sign", sign).await {
            Ok(_) => continue,
            Err(err) => {
                let a = console::ApiError::from(err);
                assert_eq!(a.code, ErrorCode::KeyUsageExhausted);
                assert_eq!(a.pkcs11.unwrap().name, "CKR_KEY_NOT_ACTIVE");
                break;
            }
        }
    }
    let e2 =
        e.c.observe()
            .set_usage_limit(&e.pid, k.private_handle, 0)
            .await
            .unwrap_err();
    assert_eq!(e2.code, ErrorCode::InvalidInput);
    let raised =
        e.c.observe()
            .set_usage_limit(&e.pid, k.private_handle, 100)
            .await
            .unwrap();
    assert_eq!(raised.usage_limit, Some(100));
    p.pool.run_async("test.sign", sign).await.unwrap();
    let recs =
        e.c.audit()
            .store()
            .query(
                e.c.audit().log_id(),
                &Query {
                    action: Some("key.usage_limit".into()),
                    limit: 10,
                    ..Query::default()
                },
            )
            .await
            .unwrap();
    let done = recs
        .iter()
        .filter(|r| r.event.action == "key.usage_limit")
        .count();
    let asked = recs
        .iter()
        .filter(|r| r.event.action == "key.usage_limit.request")
        .count();
    assert_eq!(
        (asked, done),
        (2, 2),
        "each change of a limit is audited before and after"
    );
}

/// The overview's cards name the group on its virtual slot and on each member's own slot;
/// a drift found by the last check and a member down are items on the group's card that
/// lead to its Partition view. A console that has not checked the group itself (as `hsmc
/// status`) knows the drift from the trail's record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_shows_each_group_its_members_down_and_the_last_drift() {
    use console::overview::{AttentionKind, HaRole, LinkView, Severity};
    let e = env(2, "").await;
    let k = e
        .generate(KeySpec::Ec { curve: Curve::P256 }, "fw_sign")
        .await;
    let o = e.c.overview().await.unwrap();
    let card = |o: &console::overview::Overview, pid: &str| {
        o.partitions
            .iter()
            .find(|c| c.partition_id == pid)
            .cloned()
            .unwrap_or_else(|| panic!("a card for {pid}"))
    };
    let g = card(&o, &e.pid);
    assert_eq!(g.ha.len(), 1);
    let s = &g.ha[0];
    assert_eq!((s.role, s.group.as_str()), (HaRole::Group, HA_LABEL));
    assert_eq!((s.members_online, s.members_total), (2, 2));
    assert!(s.healthy && s.drift.is_none(), "{s:?}");
    assert!(!g.items.iter().any(|i| i.kind == AttentionKind::Ha));
    for n in 1..=2 {
        let m = card(&o, &e.member_pid(n));
        assert_eq!(m.ha.len(), 1, "member {n} names its group");
        assert_eq!((m.ha[0].role, m.ha[0].position), (HaRole::Member, Some(n)));
        assert_eq!(m.ha[0].partition_id, e.pid);
    }

    // Drift on member 2, found by a check: on the card, with the check's words.
    let id = hex::decode(&k.id_hex).unwrap();
    e.on_member(2, move |s| {
        let h = s.find_objects(&mut by_id(CKO_PRIVATE_KEY, &id))?[0];
        s.destroy_object(h)
    })
    .await;
    e.c.ha().ha_drift(&e.pid).await.unwrap();
    let o = e.c.overview().await.unwrap();
    let g = card(&o, &e.pid);
    assert_eq!(g.ha[0].drift, Some(DriftVerdict::Drift));
    assert!(!g.ha[0].healthy);
    let drift = g
        .items
        .iter()
        .find(|i| i.message.key == "overview.items.ha_drift")
        .expect("the drift is an item");
    assert_eq!(drift.severity, Severity::Warning);
    assert!(
        drift.message.text.contains("(drift on member 2)"),
        "{}",
        drift.message.text
    );
    assert_eq!(
        drift.message.args["summary.key"],
        "ha.summary.drift_on_member"
    );
    assert_eq!(
        (drift.link.view, drift.link.partition_id.as_deref()),
        (LinkView::Partition, Some(e.pid.as_str()))
    );
    assert!(o.needs_attention());

    // A member down: from the group's HA state, no check needed.
    e.rig.control(r#"{"op":"member_down","member":2}"#);
    let o = e.c.overview().await.unwrap();
    let g = card(&o, &e.pid);
    assert_eq!(
        (g.ha[0].members_online, g.ha[0].down_members.clone()),
        (1, vec![2])
    );
    let down = g
        .items
        .iter()
        .find(|i| i.message.key == "overview.items.ha_member_down")
        .expect("the member down is an item");
    assert_eq!(down.severity, Severity::Warning);
    assert!(
        down.message.text.starts_with(&format!(
            "HA group {HA_LABEL}: 1 of 2 members down (2 ({}, ",
            ha_member_serial(2)
        )),
        "{}",
        down.message.text
    );
    e.rig.control(r#"{"op":"member_up","member":2}"#);

    // Another console on the same trail, which has not checked the group: the drift is
    // known from the trail's record of the last check.
    let data = e._dir.path().join("data");
    e.c.close().await;
    let c2 = Console::open({
        let mut cfg = ConsoleConfig::new(data);
        cfg.builtin = false;
        cfg
    })
    .await
    .unwrap();
    let m = c2
        .add_module(&e.rig.module_path.display().to_string())
        .await
        .unwrap();
    c2.slots(&m.id).await.unwrap();
    c2.login(&e.pid, UserKind::User, p11::pin(testkit::USER_PIN))
        .await
        .unwrap();
    let o = c2.overview().await.unwrap();
    let g = card(&o, &e.pid);
    assert_eq!(g.ha[0].drift, Some(DriftVerdict::Drift), "{:?}", g.ha[0]);
    assert_eq!(
        g.ha[0].drift_summary.as_ref().map(|t| t.text.as_str()),
        Some("drift on member 2")
    );
    assert!(g
        .items
        .iter()
        .any(|i| i.message.key == "overview.items.ha_drift"));
    c2.close().await;
}
