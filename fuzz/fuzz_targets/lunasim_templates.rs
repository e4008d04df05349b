//! lunasim's template handling, fed the way a PKCS#11 caller feeds it: raw `CK_ATTRIBUTE`
//! arrays (any types, any lengths, NULL values with lengths) through the reader, Luna's
//! HSS and ML-DSA key pair rules, `C_FindObjectsInit` matching, `C_GetAttributeValue`
//! filling caller buffers, and the HSS key files lunasim reads back from disk.
//!
//! Input: a sequence of entries `[selector][length][bytes…]`. The selector's top bit picks
//! the public (0) or private (1) template; the low bits index the attribute types Luna's
//! rules look at, or take the type from the next 8 bytes. Length 0xFF is a NULL value with
//! a length; 0xFE is a `CK_ULONG` array of small numbers (so the fuzzer reaches templates
//! the rules accept). Every caller buffer has guard bytes after it: a write past
//! `ulValueLen` is caught without a sanitizer. The `unsafe` calls are lunasim's own raw-pointer
//! contract, exercised the way its C callers exercise it.
#![no_main]
use cryptoki_sys::*;
use libfuzzer_sys::fuzz_target;
use lunasim::objects::{self, AttrOut, HssKey, Part, PrivateHalf, HANDLE_BASE};
use lunasim::{hss, raw, templates};
use zeroize::Zeroizing;

const TYPES: [CK_ATTRIBUTE_TYPE; 24] = [
    CKA_CLASS,
    CKA_KEY_TYPE,
    CKA_TOKEN,
    CKA_PRIVATE,
    CKA_LABEL,
    CKA_ID,
    CKA_EXTRACTABLE,
    CKA_SENSITIVE,
    CKA_SIGN,
    CKA_VERIFY,
    CKA_VALUE,
    CKA_HSS_LEVELS,
    CKA_HSS_LMS_TYPES,
    CKA_HSS_LMOTS_TYPES,
    CKA_HSS_LMS_TYPE,
    CKA_HSS_LMOTS_TYPE,
    CKA_HSS_KEYS_REMAINING,
    CKA_PARAMETER_SET,
    CKA_ALLOWED_MECHANISMS,
    CKA_KEY_GEN_MECHANISM,
    CKA_MODIFIABLE,
    CKA_START_DATE,
    CKA_ALWAYS_AUTHENTICATE,
    CKA_WRAP_WITH_TRUSTED,
];
const GUARD: u8 = 0xA5;
const GUARD_LEN: usize = 16;

/// One attribute as the caller built it: `None` is a NULL `pValue` with `len`.
struct Entry {
    ty: CK_ATTRIBUTE_TYPE,
    value: Option<Vec<u8>>,
    len: usize,
}

fn take<'a>(data: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    (data.len() >= n).then(|| {
        let (a, b) = data.split_at(n);
        *data = b;
        a
    })
}

fn parse(mut data: &[u8]) -> (Vec<Entry>, Vec<Entry>) {
    let (mut public, mut private) = (Vec::new(), Vec::new());
    while let Some(&[sel, len]) = take(&mut data, 2) {
        let i = (sel & 0x7F) as usize;
        let ty = if i < TYPES.len() {
            TYPES[i]
        } else {
            match take(&mut data, 8) {
                Some(b) => u64::from_le_bytes(b.try_into().unwrap()),
                None => break,
            }
        };
        let entry = match len {
            0xFF => {
                let n = take(&mut data, 1).map_or(1, |b| b[0] as usize + 1);
                Entry {
                    ty,
                    value: None,
                    len: n,
                }
            }
            0xFE => {
                let n = take(&mut data, 1).map_or(0, |b| (b[0] % 10) as usize);
                let small = take(&mut data, n).unwrap_or_default();
                let v: Vec<u8> = small
                    .iter()
                    .flat_map(|x| (*x as CK_ULONG).to_ne_bytes())
                    .collect();
                Entry {
                    ty,
                    len: v.len(),
                    value: Some(v),
                }
            }
            n => {
                let n = (n as usize).min(data.len());
                let v = take(&mut data, n).unwrap_or_default().to_vec();
                Entry {
                    ty,
                    len: v.len(),
                    value: Some(v),
                }
            }
        };
        if sel & 0x80 == 0 {
            public.push(entry);
        } else {
            private.push(entry);
        }
    }
    (public, private)
}

/// Read a template through lunasim's raw reader, as `C_GenerateKeyPair` does.
fn read(entries: &mut [Entry]) -> Result<templates::Values, CK_RV> {
    let mut raw_t: Vec<CK_ATTRIBUTE> = entries
        .iter_mut()
        .map(|e| CK_ATTRIBUTE {
            type_: e.ty,
            pValue: match &mut e.value {
                Some(v) if !v.is_empty() => v.as_mut_ptr() as *mut _,
                _ => std::ptr::null_mut(),
            },
            ulValueLen: e.len as CK_ULONG,
        })
        .collect();
    // SAFETY: every pValue is NULL or points to ulValueLen bytes of an entry alive here.
    let got = unsafe { raw::values(raw::template(raw_t.as_mut_ptr(), raw_t.len() as CK_ULONG)) };
    match &got {
        Ok(vals) => {
            assert_eq!(vals.len(), entries.len());
            for (e, (ty, v)) in entries.iter().zip(vals) {
                assert_eq!(*ty, e.ty);
                assert_eq!(v.as_slice(), e.value.as_deref().unwrap_or_default());
            }
        }
        Err(rv) => {
            assert_eq!(*rv, CKR_ATTRIBUTE_VALUE_INVALID);
            assert!(
                entries.iter().any(|e| e.value.is_none() && e.len > 0),
                "refused a template without a NULL value that has a length"
            );
        }
    }
    got
}

fn check_request(
    public: &templates::Values,
    private: &templates::Values,
) -> Option<Vec<(u32, u32)>> {
    let req = templates::hss_request(public, private).ok()?;
    assert!((1..=8).contains(&req.levels.len()));
    // What was accepted is exactly what the private template asked for, as full CK_ULONGs.
    let lms = raw::find(private, CKA_HSS_LMS_TYPES)
        .and_then(raw::as_ulongs)
        .unwrap();
    let ots = raw::find(private, CKA_HSS_LMOTS_TYPES)
        .and_then(raw::as_ulongs)
        .unwrap();
    let got_lms: Vec<u64> = req.levels.iter().map(|l| l.0 as u64).collect();
    let got_ots: Vec<u64> = req.levels.iter().map(|l| l.1 as u64).collect();
    assert_eq!(got_lms, lms);
    assert_eq!(got_ots, ots);
    for (l, o) in &req.levels {
        // SHA-256 (LMS 5–8, LM-OTS 1–4) or SHA-256/192 (LMS 10–13, LM-OTS 5–8); no H25
        // (9, 14); one tree hashes one way.
        assert!(
            hss::height(*l).is_some() && *l != 9 && *l != 14,
            "LMS type {l} accepted"
        );
        assert!((1..=8).contains(o), "LM-OTS type {o} accepted");
        assert_eq!(*l >= 10, *o >= 5, "LMS type {l} with LM-OTS type {o} accepted");
    }
    for a in [CKA_HSS_LEVELS, CKA_HSS_LMS_TYPES, CKA_HSS_LMOTS_TYPES] {
        assert!(
            raw::find(public, a).is_none(),
            "HSS parameter in the public template"
        );
    }
    assert_ne!(
        raw::find(private, CKA_EXTRACTABLE).and_then(raw::as_bool),
        Some(true)
    );
    Some(req.levels)
}

fn check_ml_dsa(public: &templates::Values, private: &templates::Values) {
    let (mut p, mut q) = (public.clone(), private.clone());
    let rewrote = templates::apply_ml_dsa_default(&mut p, &mut q);
    if rewrote {
        for t in [&p, &q] {
            let sets: Vec<_> = t
                .iter()
                .filter(|(ty, _)| *ty == CKA_PARAMETER_SET)
                .collect();
            assert_eq!(
                sets.len(),
                1,
                "one parameter set per half after the default"
            );
            assert_eq!(
                raw::as_ulong(&sets[0].1),
                Some(templates::ML_DSA_DEFAULT_PARAMETER_SET)
            );
        }
    } else {
        assert_eq!(
            (&p, &q),
            (public, private),
            "rewrote while reporting no change"
        );
    }
}

fn check_key(key: &HssKey, probe: &templates::Values, sizes: &[u8]) {
    assert!(key.remaining() <= key.capacity());
    // More levels never mean fewer one-time keys, up to Luna's eight levels of H20.
    let mut wider = clone_key(key);
    while wider.levels.len() < 8 {
        let before = wider.capacity();
        wider.levels.push((8, 4));
        assert!(
            wider.capacity() >= before,
            "capacity shrank with a level: {:?}",
            wider.levels
        );
    }
    for part in [Part::Private, Part::Public] {
        // A template made of the object's own values must match it.
        let own: templates::Values = probe
            .iter()
            .filter_map(|(ty, _)| match objects::attribute(key, part, *ty) {
                AttrOut::Value(v) => Some((*ty, v)),
                _ => None,
            })
            .collect();
        assert!(
            objects::matches(key, part, &own),
            "an object does not match itself"
        );
        let _ = objects::matches(key, part, probe);
        fill_checked(key, part, probe, sizes);
    }
}

/// `C_GetAttributeValue` into caller buffers of fuzzed sizes, each followed by guards.
fn fill_checked(key: &HssKey, part: Part, probe: &templates::Values, sizes: &[u8]) {
    let mut bufs: Vec<Option<Vec<u8>>> = probe
        .iter()
        .enumerate()
        .map(|(i, _)| match sizes.get(i).copied().unwrap_or(0) {
            0xFF => None,
            n => Some(vec![GUARD; n as usize + GUARD_LEN]),
        })
        .collect();
    let mut attrs: Vec<CK_ATTRIBUTE> = probe
        .iter()
        .zip(bufs.iter_mut())
        .map(|((ty, _), b)| match b {
            Some(b) => CK_ATTRIBUTE {
                type_: *ty,
                pValue: b.as_mut_ptr() as *mut _,
                ulValueLen: (b.len() - GUARD_LEN) as CK_ULONG,
            },
            None => CK_ATTRIBUTE {
                type_: *ty,
                pValue: std::ptr::null_mut(),
                ulValueLen: 0,
            },
        })
        .collect();
    // SAFETY: each pValue is NULL or has ulValueLen writable bytes (plus guards).
    let rv = unsafe { templates::fill(key, part, &mut attrs) };
    let mut worst = CKR_OK;
    for (a, b) in attrs.iter().zip(&bufs) {
        match (objects::attribute(key, part, a.type_), b) {
            (AttrOut::Value(v), None) => assert_eq!(a.ulValueLen as usize, v.len()),
            (AttrOut::Value(v), Some(b)) => {
                assert!(
                    b[b.len() - GUARD_LEN..].iter().all(|x| *x == GUARD),
                    "wrote past ulValueLen"
                );
                if v.len() <= b.len() - GUARD_LEN {
                    assert_eq!(a.ulValueLen as usize, v.len());
                    assert_eq!(&b[..v.len()], v.as_slice());
                } else {
                    assert_eq!(a.ulValueLen, CK_UNAVAILABLE_INFORMATION);
                    assert!(b.iter().all(|x| *x == GUARD), "wrote into a short buffer");
                    worst = CKR_BUFFER_TOO_SMALL;
                }
            }
            (_, b) => {
                assert_eq!(a.ulValueLen, CK_UNAVAILABLE_INFORMATION);
                if let Some(b) = b {
                    assert!(
                        b.iter().all(|x| *x == GUARD),
                        "wrote a secret or unknown value"
                    );
                }
                worst = CKR_ATTRIBUTE_TYPE_INVALID;
            }
        }
    }
    assert_eq!(
        rv == CKR_OK,
        worst == CKR_OK,
        "rv {rv:#x} disagrees with the attributes"
    );
}

/// A private half from fuzzed bytes: a seed, and a position per level within its tree (as
/// a key file that loads has) — or none, as an exhausted key has.
fn private_half(state: &[u8], levels: &[(u32, u32)]) -> PrivateHalf {
    let mut seed = [0u8; 32];
    for (s, b) in seed.iter_mut().zip(state) {
        *s = *b;
    }
    let rest = state.get(32..).unwrap_or_default();
    let position = (!rest.is_empty()).then(|| {
        levels
            .iter()
            .enumerate()
            .map(|(i, (lms, _))| {
                let b: [u8; 4] = std::array::from_fn(|j| rest.get(i * 4 + j).copied().unwrap_or(0));
                let leaves = 1u64 << hss::height(*lms).unwrap_or(5);
                (u64::from(u32::from_le_bytes(b)) % leaves) as u32
            })
            .collect()
    });
    PrivateHalf {
        seed: Zeroizing::new(seed),
        position,
        engine: None,
    }
}

fn clone_key(k: &HssKey) -> HssKey {
    HssKey {
        uid: k.uid.clone(),
        slot: k.slot,
        token: k.token,
        owner: k.owner,
        label: k.label.clone(),
        id: k.id.clone(),
        levels: k.levels.clone(),
        public_key: k.public_key.clone(),
        private: k.private.as_ref().map(|p| PrivateHalf {
            seed: p.seed.clone(),
            position: p.position.clone(),
            engine: None,
        }),
        public_present: k.public_present,
        handle: k.handle,
    }
}

fuzz_target!(|data: &[u8]| {
    // The same bytes are also an HSS key file read back from disk.
    if let Some(key) = HssKey::from_file("f".into(), 0, data, HANDLE_BASE) {
        check_key(&key, &Vec::new(), &[]);
    }
    let (mut public, mut private) = parse(data);
    let (Ok(pubv), Ok(privv)) = (read(&mut public), read(&mut private)) else {
        return;
    };
    check_ml_dsa(&pubv, &privv);
    let levels = check_request(&pubv, &privv).unwrap_or_else(|| vec![(5, 4)]);
    let state = privv
        .iter()
        .map(|(_, v)| v.as_slice())
        .next()
        .unwrap_or_default();
    let private = private_half(state, &levels);
    let key = HssKey {
        uid: "k".into(),
        slot: 0,
        token: true,
        owner: None,
        label: raw::find(&privv, CKA_LABEL).unwrap_or_default().to_vec(),
        id: raw::find(&pubv, CKA_ID).unwrap_or_default().to_vec(),
        levels,
        public_key: pubv.iter().flat_map(|(_, v)| v.clone()).take(60).collect(),
        private: Some(private),
        public_present: true,
        handle: HANDLE_BASE,
    };
    let mut probe = pubv.clone();
    probe.extend(privv.iter().cloned());
    let sizes: Vec<u8> = data.iter().rev().copied().collect();
    check_key(&key, &probe, &sizes);
});
