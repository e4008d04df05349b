//! The signer against `hbs-lms` (the library earlier lunasim versions signed with, and a
//! reference implementation of RFC 8554's derivation): same seed, same public key, and —
//! everything being deterministic — the same signature at every position; through tree
//! and block switches, a restart from the disk cache, a damaged cache, and an old key file.

use hbs_lms::{HssParameter, LmotsAlgorithm, LmsAlgorithm, Seed, Sha256_256};

use super::engine::{increment, Engine};
use super::lms::Params;
use super::tree::test_split;
use super::{cache, keygen, parameters, progress, verify};

const SEED: [u8; 32] = [0x5A; 32];

/// hbs-lms keeps large arrays on the stack.
fn big_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn_scoped(s, f)
            .unwrap()
            .join()
            .unwrap()
    })
}

/// Every hbs-lms signature of `count` messages (`msg(i)`), and its public key.
fn reference(levels: &[(u32, u32)], count: usize) -> (Vec<u8>, Vec<Vec<u8>>) {
    let params: Vec<HssParameter<Sha256_256>> = levels
        .iter()
        .map(|(l, o)| HssParameter::new(LmotsAlgorithm::from(*o), LmsAlgorithm::from(*l)))
        .collect();
    big_stack(move || {
        let mut seed = Seed::<Sha256_256>::default();
        seed.as_mut_slice().copy_from_slice(&SEED);
        let (sk, vk) = hbs_lms::keygen::<Sha256_256>(&params, &seed, None).unwrap();
        let mut state = sk.as_slice().to_vec();
        let mut sigs = Vec::new();
        for i in 0..count {
            let mut next = Vec::new();
            let sig = hbs_lms::sign::<Sha256_256>(
                &msg(i),
                &state,
                &mut |s: &[u8]| {
                    next = s.to_vec();
                    Ok(())
                },
                None,
            )
            .unwrap();
            sigs.push(sig.as_ref().to_vec());
            state = next;
        }
        (vk.as_slice().to_vec(), sigs)
    })
}

fn msg(i: usize) -> Vec<u8> {
    format!("artifact {i}").into_bytes()
}

fn sign(engine: &mut Engine, pos: &mut Option<Vec<u32>>, message: &[u8]) -> Vec<u8> {
    let p = pos.clone().expect("not exhausted");
    engine.align(&p, None);
    let r = engine.reserve(&p);
    *pos = increment(&p, &engine.params);
    if let Some(n) = pos {
        engine.advance(n);
    }
    let mut h = r.hasher();
    sha2::digest::Digest::update(&mut h, message);
    r.finish(h)
}

fn new_engine(levels: &[(u32, u32)]) -> Engine {
    let running = progress::start(b"test", super::keygen_leaves(levels));
    let k = keygen(levels, &SEED, &running).unwrap();
    assert_eq!(
        running.0.done.load(std::sync::atomic::Ordering::Relaxed),
        super::keygen_leaves(levels),
        "progress counts every leaf"
    );
    k.engine
}

#[test]
fn same_keys_and_signatures_as_the_reference() {
    let levels = [(5, 3), (5, 3)];
    let (public, sigs) = reference(&levels, 70);
    let mut engine = new_engine(&levels);
    assert_eq!(engine.public_key(), public);
    let mut pos = Some(vec![0, 0]);
    for (i, want) in sigs.iter().enumerate() {
        let sig = sign(&mut engine, &mut pos, &msg(i));
        assert_eq!(&sig, want, "signature {i}");
        assert!(verify(&public, &msg(i), &sig));
    }
    assert!(!verify(&public, b"other", &sigs[0]));
}

#[test]
fn blocks_switch_like_the_tall_trees_do() {
    // Cut H5 trees into blocks of 4 leaves, as H20 trees are cut into blocks of 1024.
    test_split::set(4, 2);
    let levels = [(5, 2), (5, 2)];
    let (public, sigs) = reference(&levels, 1024);
    let mut engine = new_engine(&levels);
    assert_eq!(engine.levels[0].tree.shape.b, 2);
    assert_eq!(engine.public_key(), public);
    let mut pos = Some(vec![0, 0]);
    for (i, want) in sigs.iter().enumerate() {
        let sig = sign(&mut engine, &mut pos, &msg(i));
        assert_eq!(&sig, want, "signature {i}");
    }
    assert_eq!(pos, None, "every one-time key used");
}

#[test]
fn three_levels_of_mixed_heights() {
    // Past the middle level's first tree (1024 signatures); cheap LM-OTS types, since
    // the reference rebuilds every tree for every signature.
    let levels = [(5, 1), (5, 2), (5, 1)];
    let (public, sigs) = reference(&levels, 1030);
    let mut engine = new_engine(&levels);
    assert_eq!(engine.public_key(), public);
    let mut pos = Some(vec![0, 0, 0]);
    for (i, want) in sigs.iter().enumerate() {
        if i == 1024 {
            assert_eq!(pos, Some(vec![1, 0, 0]), "the top level moved on");
        }
        let sig = sign(&mut engine, &mut pos, &msg(i));
        assert_eq!(&sig, want, "signature {i}");
    }
}

#[test]
fn a_restart_signs_from_the_disk_cache() {
    test_split::set(4, 2);
    let levels = [(5, 3), (5, 3)];
    let params: Vec<Params> = parameters(&levels);
    let (public, sigs) = reference(&levels, 200);
    let dir = tempfile::tempdir().unwrap();
    let trees = dir.path().join("k.trees");
    let mut engine = new_engine(&levels);
    let all: Vec<usize> = vec![0, 1];
    cache::save(&trees, &engine, &all, &all).unwrap();
    let mut pos = Some(vec![0, 0]);
    for (i, want) in sigs.iter().enumerate().take(77) {
        let p = pos.clone().unwrap();
        let mut d = engine.align(&p, None);
        let r = engine.reserve(&p);
        pos = increment(&p, &params);
        d.merge(engine.advance(pos.as_ref().unwrap()));
        cache::save(&trees, &engine, &d.trees, &d.builders).unwrap();
        let mut h = r.hasher();
        sha2::digest::Digest::update(&mut h, msg(i));
        assert_eq!(&r.finish(h), want);
    }
    // A new process: the trees come from the disk, nothing needs building.
    let levels_back = cache::load(&trees, &SEED, &params, &public);
    assert_eq!(levels_back.len(), 2);
    let mut engine = Engine::new(params.clone(), &SEED, levels_back);
    let p = pos.clone().unwrap();
    assert!(engine.align(&p, None).trees.is_empty(), "aligned already");
    for (i, want) in sigs.iter().enumerate().skip(77) {
        assert_eq!(&sign(&mut engine, &mut pos, &msg(i)), want, "signature {i}");
    }
    // A damaged file is ignored (and the tree rebuilt), a stranger's public key refused.
    let f = trees.join("tree-1");
    let mut bytes = std::fs::read(&f).unwrap();
    bytes[100] ^= 1;
    std::fs::write(&f, bytes).unwrap();
    assert_eq!(cache::load(&trees, &SEED, &params, &public).len(), 1);
    let mut other = public.clone();
    other[40] ^= 1;
    assert!(cache::load(&trees, &SEED, &params, &other).is_empty());
}

/// The reference's state after `count` signatures: counter ‖ parameters ‖ seed.
fn reference_state(levels: &[(u32, u32)], count: u64) -> Vec<u8> {
    let mut state = count.to_be_bytes().to_vec();
    let mut params = [0xFFu8; 8];
    for (k, (l, o)) in levels.iter().enumerate() {
        params[k] = ((*l as u8) << 4) + *o as u8;
    }
    state.extend_from_slice(&params);
    state.extend_from_slice(&SEED);
    state
}

fn sign_with(key: &mut crate::objects::HssKey, store: &std::path::Path, message: &[u8]) -> Vec<u8> {
    let r = key.reserve(store).unwrap();
    let mut h = r.hasher();
    sha2::digest::Digest::update(&mut h, message);
    r.finish(h)
}

#[test]
fn key_files_of_the_hbs_lms_versions_keep_signing() {
    use crate::objects::HssKey;
    let levels = [(5, 3), (5, 3)];
    let (public, sigs) = reference(&levels, 40);
    let store = tempfile::tempdir().unwrap();
    let old = serde_json::json!({
        "label": hex::encode("old"),
        "id": "",
        "levels": levels,
        "public_key": hex::encode(&public),
        "private_state": hex::encode(reference_state(&levels, 33)),
        "public_present": true,
        "aux": null,
    });
    let text = serde_json::to_vec(&old).unwrap();
    let mut key = HssKey::from_file("old".into(), 0, &text, crate::objects::HANDLE_BASE).unwrap();
    assert_eq!(key.used(), 33);
    assert_eq!(sign_with(&mut key, store.path(), &msg(33)), sigs[33]);
    // Written back in this version's form, at the next position, and reloaded from it.
    let file = store.path().join("hss/slot-0/old.json");
    let back: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(back["position"], serde_json::json!([1, 2]));
    assert!(back.get("private_state").is_none());
    let mut again = HssKey::from_file(
        "old".into(),
        0,
        &std::fs::read(&file).unwrap(),
        crate::objects::HANDLE_BASE,
    )
    .unwrap();
    assert_eq!(sign_with(&mut again, store.path(), &msg(34)), sigs[34]);
    // An exhausted (wiped) reference key has nothing left.
    let mut wiped = reference_state(&levels, 0);
    wiped[8..16].fill(0xFF);
    let mut old = old;
    old["private_state"] = hex::encode(&wiped).into();
    let k = HssKey::from_file("w".into(), 0, &serde_json::to_vec(&old).unwrap(), 7).unwrap();
    assert_eq!(k.remaining(), 0);
}

#[test]
fn two_processes_sharing_a_store_never_take_the_same_key() {
    use crate::objects::HssKey;
    let levels = [(5, 3), (5, 3)];
    let (_, sigs) = reference(&levels, 8);
    let store = tempfile::tempdir().unwrap();
    let old = serde_json::json!({
        "label": "", "id": "", "levels": levels,
        "public_key": hex::encode(reference(&levels, 0).0),
        "private_state": hex::encode(reference_state(&levels, 0)),
        "public_present": true,
    });
    let text = serde_json::to_vec(&old).unwrap();
    // Two processes load the same key file; each signs in turn.
    let mut a = HssKey::from_file("k".into(), 0, &text, 7).unwrap();
    let mut b = HssKey::from_file("k".into(), 0, &text, 7).unwrap();
    assert_eq!(sign_with(&mut a, store.path(), &msg(0)), sigs[0]);
    assert_eq!(sign_with(&mut a, store.path(), &msg(1)), sigs[1]);
    assert_eq!(
        sign_with(&mut b, store.path(), &msg(2)),
        sigs[2],
        "b takes the position a left on disk"
    );
    assert_eq!(sign_with(&mut a, store.path(), &msg(3)), sigs[3]);
}
