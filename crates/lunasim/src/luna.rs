//! Luna's `CA_*` extensions, with the prototypes and struct layouts of the Luna SDK
//! (`p11::vendor` defines them once for the console and for us).
//!
//! What is simulated: statistics (boot time, CPU up/idle time in milliseconds — the units
//! of the real HSM are not public — and command counts), utilization counters, storage
//! figures, firmware numbers, policies and capabilities. The cryptography is real.

#![allow(non_snake_case)]

use std::path::Path;
use std::sync::atomic::Ordering;

use cryptoki_sys::*;
use p11::names::luna as codes;
use p11::vendor::{stats_id, CK_UTILIZATION_COUNTER, HSM_STATS_PARAMS};

use crate::entry;
use crate::layer::Hsm;
use crate::raw;
use crate::sim::Sim;
use crate::stats::{Reading, Stats};

/// `LUNA_CF_*` status flags (Luna SDK `sfnt_extensions.h`).
pub const LUNA_CF_CONTAINER_ENABLED: u64 = 0x0100_0000;
pub const LUNA_CF_PARTITION_INITIALIZED: u64 = 0x0000_0400;
pub const LUNA_CF_USER_PIN_LOCKED: u64 = 0x0004_0000;
pub const LUNA_CF_SO_PIN_LOCKED: u64 = 0x0001_0000;

/// The slot whose partition answers: the slot itself, or an HA group's primary member for
/// its virtual slot.
fn slot_ok(s: &Sim, slot: CK_SLOT_ID) -> Result<CK_SLOT_ID, CK_RV> {
    let slot = crate::layer::get().physical_slot(slot);
    match s.inner.slots(false) {
        Ok(list) if list.contains(&slot) => Ok(slot),
        Ok(_) => Err(CKR_SLOT_ID_INVALID),
        Err(e) => Err(e.rv().unwrap_or(CKR_GENERAL_ERROR)),
    }
}

fn rv(r: Result<(), CK_RV>) -> CK_RV {
    r.err().unwrap_or(CKR_OK)
}

#[no_mangle]
pub extern "C" fn CA_GetFirmwareVersion(
    slot: CK_SLOT_ID,
    a: *mut CK_ULONG,
    b: *mut CK_ULONG,
    c: *mut CK_ULONG,
) -> CK_RV {
    entry::call("CA_GetFirmwareVersion", |s| {
        rv((|| {
            slot_ok(s, slot)?;
            let (x, y, z) = s.config.firmware();
            // SAFETY: out pointers per the Luna prototype; NULL is rejected by `put`.
            unsafe {
                raw::put(a, x)?;
                raw::put(b, y)?;
                raw::put(c, z)
            }
        })())
    })
}

/// One statistic, IDs 1–4, from a reading taken once per `CA_GetHSMStats` call (a real
/// HSM answers one call from one moment: up and idle time of the same instant).
pub fn hsm_stat(st: &Stats, at: &Reading, id: u64) -> Option<u64> {
    match id {
        stats_id::BOOT_TIME => Some(st.boot_time_unix.load(Ordering::Relaxed)),
        stats_id::CPU_UP_TIME => Some(at.up_ms),
        stats_id::CPU_IDLE_TIME => Some(at.idle_ms()),
        stats_id::ICD_COMMANDS_COUNT => Some(st.icd_commands.load(Ordering::Relaxed)),
        _ => None,
    }
}

#[no_mangle]
pub extern "C" fn CA_GetHSMStats(
    slot: CK_SLOT_ID,
    count: CK_ULONG,
    ids: *mut CK_ULONG,
    out: *mut HSM_STATS_PARAMS,
) -> CK_RV {
    entry::call("CA_GetHSMStats", |s| {
        rv((|| {
            let slot = slot_ok(s, slot)?;
            if count == 0 {
                return Ok(());
            }
            if ids.is_null() || out.is_null() || count > 64 {
                return Err(CKR_ARGUMENTS_BAD);
            }
            let hsm = crate::layer::stats_of_slot(slot);
            let at = hsm.reading();
            for i in 0..count as usize {
                // SAFETY: both arrays have `count` elements per the prototype.
                let id = unsafe { *ids.add(i) };
                let p = match hsm_stat(hsm, &at, id) {
                    Some(v) => HSM_STATS_PARAMS::new(id, v),
                    None => HSM_STATS_PARAMS::new(0xFFFF_FFFF, 0), // LUNA_STATS_UNKNOWN
                };
                // SAFETY: as above.
                unsafe { *out.add(i) = p };
            }
            Ok(())
        })())
    })
}

fn snapshot(hsm: &Stats, reset: bool) {
    let mut snap = [0u64; 6];
    for (i, c) in hsm.utilization.iter().enumerate() {
        snap[i] = if reset {
            c.swap(0, Ordering::Relaxed)
        } else {
            c.load(Ordering::Relaxed)
        };
    }
    *hsm.utilization_snapshot.lock() = Some(snap);
}

/// The HSMs a session's utilization covers: its partition's, or every member's for an HA
/// group's virtual session (each counter then carries its member's serial).
fn session_hsms(s: &Sim, h: CK_SESSION_HANDLE) -> Result<Vec<Hsm>, CK_RV> {
    crate::layer::hsms_of_session(s, h).ok_or(CKR_SESSION_HANDLE_INVALID)
}

#[no_mangle]
pub extern "C" fn CA_ReadUtilizationMetrics(h: CK_SESSION_HANDLE) -> CK_RV {
    entry::call("CA_ReadUtilizationMetrics", |s| {
        rv(session_hsms(s, h).map(|v| v.iter().for_each(|x| snapshot(x.stats, false))))
    })
}

#[no_mangle]
pub extern "C" fn CA_ReadAndResetUtilizationMetrics(h: CK_SESSION_HANDLE) -> CK_RV {
    entry::call("CA_ReadAndResetUtilizationMetrics", |s| {
        rv(session_hsms(s, h).map(|v| v.iter().for_each(|x| snapshot(x.stats, true))))
    })
}

#[no_mangle]
pub extern "C" fn CA_ReadAllUtilizationCounters(
    h: CK_SESSION_HANDLE,
    buf: *mut CK_UTILIZATION_COUNTER,
    len: *mut CK_ULONG,
) -> CK_RV {
    entry::call("CA_ReadAllUtilizationCounters", |s| {
        rv((|| {
            let hsms = session_hsms(s, h)?;
            let mut counters = Vec::new();
            for hsm in &hsms {
                let Some(snap) = *hsm.stats.utilization_snapshot.lock() else {
                    // Luna: the counters are read from a snapshot; there is none yet.
                    return Err(codes::CKR_INVALID_UTILIZATION_METRICS);
                };
                let label = s
                    .inner
                    .token_info(hsm.slot)
                    .map(|t| t.label)
                    .unwrap_or_default();
                for (i, count) in snap.iter().enumerate() {
                    let mut c = CK_UTILIZATION_COUNTER {
                        ullSerialNumber: hsm.serial,
                        ulBindId: i as CK_ULONG,
                        ulCounterId: 0,
                        ullCount: *count,
                        ..Default::default()
                    };
                    let l = label.as_bytes();
                    let n = l.len().min(c.label.len() - 1);
                    c.label[..n].copy_from_slice(&l[..n]);
                    counters.push(c);
                }
            }
            if len.is_null() {
                return Err(CKR_ARGUMENTS_BAD);
            }
            // SAFETY: len is non-null.
            let room = unsafe { *len } as usize;
            // SAFETY: as above.
            unsafe { *len = counters.len() as CK_ULONG };
            if buf.is_null() {
                return Ok(());
            }
            if room < counters.len() {
                return Err(CKR_BUFFER_TOO_SMALL);
            }
            // SAFETY: buf has room for `room >= counters.len()` counters.
            unsafe { std::ptr::copy_nonoverlapping(counters.as_ptr(), buf, counters.len()) };
            Ok(())
        })())
    })
}

fn dir_size(p: &Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(p) else {
        return std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    };
    rd.filter_map(|e| e.ok())
        .map(|e| {
            let path = e.path();
            if path.is_dir() {
                dir_size(&path)
            } else {
                e.metadata().map(|m| m.len()).unwrap_or(0)
            }
        })
        .sum()
}

/// Bytes in use: lunasim's own store plus the inner token's files (found through the
/// inner module's configuration when it names them).
fn used_bytes(s: &Sim) -> u64 {
    let mut used = dir_size(&s.store);
    for v in s.config.inner_env.values() {
        let p = Path::new(v);
        if p.is_file() {
            used += p.metadata().map(|m| m.len()).unwrap_or(0);
            if let Ok(text) = std::fs::read_to_string(p) {
                for line in text.lines() {
                    if let Some(db) = line
                        .trim()
                        .strip_prefix("dbargs")
                        .and_then(|r| r.split('"').nth(1))
                    {
                        used += std::fs::metadata(db).map(|m| m.len()).unwrap_or(0);
                    }
                }
            }
        }
    }
    used
}

fn capacity(s: &Sim) -> u64 {
    s.config.hsm_storage_bytes.unwrap_or(32 << 20)
}

#[no_mangle]
pub extern "C" fn CA_GetHSMStorageInformation(
    slot: CK_SLOT_ID,
    overhead: *mut CK_ULONG,
    total: *mut CK_ULONG,
    used: *mut CK_ULONG,
    free: *mut CK_ULONG,
) -> CK_RV {
    entry::call("CA_GetHSMStorageInformation", |s| {
        rv((|| {
            slot_ok(s, slot)?;
            let t = capacity(s);
            let u = used_bytes(s).min(t);
            // SAFETY: out pointers per prototype.
            unsafe {
                raw::put(overhead, 4096)?;
                raw::put(total, t)?;
                raw::put(used, u)?;
                raw::put(free, t - u)
            }
        })())
    })
}

/// Objects on the token, counted through a short-lived session (sees private objects when
/// the application is logged in, like any session of it).
fn object_count(s: &Sim, slot: CK_SLOT_ID) -> u64 {
    let Ok(session) = s.inner.open_session(slot, false) else {
        return 0;
    };
    let inner = session
        .find_objects(&mut p11::Template::new().bool(CKA_TOKEN, true))
        .map(|v| v.len() as u64)
        .unwrap_or(0);
    let ours = s
        .objects
        .lock()
        .keys
        .iter()
        .filter(|k| k.slot == slot && k.token)
        .map(|k| k.private.is_some() as u64 + k.public_present as u64)
        .sum::<u64>();
    inner + ours
}

#[no_mangle]
pub extern "C" fn CA_GetTokenStorageInformation(
    slot: CK_SLOT_ID,
    overhead: *mut CK_ULONG,
    total: *mut CK_ULONG,
    used: *mut CK_ULONG,
    free: *mut CK_ULONG,
    objects: *mut CK_ULONG,
) -> CK_RV {
    entry::call("CA_GetTokenStorageInformation", |s| {
        rv((|| {
            let slot = slot_ok(s, slot)?;
            let t = capacity(s) / 2;
            let u = used_bytes(s).min(t);
            let n = object_count(s, slot);
            // SAFETY: out pointers per prototype.
            unsafe {
                raw::put(overhead, 2048)?;
                raw::put(total, t)?;
                raw::put(used, u)?;
                raw::put(free, t - u)?;
                raw::put(objects, n)
            }
        })())
    })
}

/// (id, value, description, bit length, destructive) — partition policies
/// (`CONTAINER_CONFIG_*`) as a typical Luna 7 partition reports them.
pub const PARTITION_POLICIES: &[(u64, u64, &str, u64, bool)] = &[
    (0, 0, "Allow private key cloning", 1, true),
    (1, 0, "Allow private key wrapping", 1, true),
    (2, 1, "Allow private key unwrapping", 1, false),
    (4, 1, "Allow secret key cloning", 1, false),
    (5, 1, "Allow secret key wrapping", 1, false),
    (6, 1, "Allow secret key unwrapping", 1, false),
    (10, 1, "Allow multipurpose keys", 1, false),
    (11, 1, "Allow changing key attributes", 1, false),
    (15, 0, "Ignore failed challenge responses", 1, false),
    (17, 1, "Allow signing with non-local keys", 1, false),
    (20, 10, "Maximum failed user logins allowed", 8, false),
    // The value reported is the configured one (`force_user_pin_change`); see
    // [`partition_policies`].
    (21, 1, "Force user PIN change after set/reset", 1, false),
    (22, 0, "Allow activation", 1, false),
    (
        25,
        7,
        "Minimum PIN length (inverted: 255 minus value)",
        8,
        false,
    ),
    (26, 255, "Maximum PIN length", 8, false),
    (37, 0, "Enable secure trusted channel", 1, true),
];

/// HSM capabilities (`HSM_CONFIG_*`).
pub const HSM_CAPABILITIES: &[(u64, u64, &str, u64, bool)] = &[
    (0, 1, "Enable PIN-based authentication", 1, false),
    (1, 0, "Enable PED-based authentication", 1, false),
    (2, 15, "Performance level", 8, false),
    (7, 1, "Enable cloning", 1, false),
    (11, 1, "Enable ECC mechanisms", 1, false),
    (12, 1, "Enable non-FIPS algorithms", 1, false),
    (15, 1, "SO can reset partition PIN", 1, false),
    (16, 1, "Enable network replication", 1, false),
    (18, 1, "FIPS evaluated", 1, false),
    (20, 1, "Enable remote authentication", 1, false),
    (23, 1, "Enable partition groups", 1, false),
    (32, 1, "Allow public crypto operations", 1, false),
    (33, 100, "Maximum number of partitions", 16, false),
    (34, 1, "Enable ECIES", 1, false),
    (41, 1, "Per-partition security officer", 1, false),
    (49, 1, "Allow partition utilization metrics", 1, false),
];

fn id_value_set(
    list: &[(u64, u64, &str, u64, bool)],
    ids: *mut CK_ULONG,
    idlen: *mut CK_ULONG,
    vals: *mut CK_ULONG,
    vallen: *mut CK_ULONG,
) -> Result<(), CK_RV> {
    if idlen.is_null() || vallen.is_null() {
        return Err(CKR_ARGUMENTS_BAD);
    }
    // SAFETY: both counts are non-null.
    let (ri, rv_) = unsafe { (*idlen, *vallen) };
    // SAFETY: as above.
    unsafe {
        *idlen = list.len() as CK_ULONG;
        *vallen = list.len() as CK_ULONG;
    }
    if ids.is_null() || vals.is_null() {
        return Ok(());
    }
    if (ri as usize) < list.len() || (rv_ as usize) < list.len() {
        return Err(CKR_BUFFER_TOO_SMALL);
    }
    for (i, (id, v, ..)) in list.iter().enumerate() {
        // SAFETY: both arrays have room for list.len() entries.
        unsafe {
            *ids.add(i) = *id;
            *vals.add(i) = *v;
        }
    }
    Ok(())
}

macro_rules! id_value_fn {
    ($name:ident, $list:expr) => {
        #[no_mangle]
        pub extern "C" fn $name(
            slot: CK_SLOT_ID,
            ids: *mut CK_ULONG,
            idlen: *mut CK_ULONG,
            vals: *mut CK_ULONG,
            vallen: *mut CK_ULONG,
        ) -> CK_RV {
            entry::call(stringify!($name), |s| {
                rv(slot_ok(s, slot).and_then(|_| id_value_set($list, ids, idlen, vals, vallen)))
            })
        }
    };
}

/// The partition policies as this partition has them: policy 21 ("Force user PIN change
/// after set/reset", fact sheet: ecosystem-formats, Luna specifics) as configured.
pub fn partition_policies() -> Vec<(u64, u64, &'static str, u64, bool)> {
    let force = crate::sim::current().is_some_and(|s| s.config.force_user_pin_change);
    PARTITION_POLICIES
        .iter()
        .map(|&(id, v, d, b, x)| (id, if id == 21 { u64::from(force) } else { v }, d, b, x))
        .collect()
}

id_value_fn!(CA_GetTokenPolicies, &partition_policies());
id_value_fn!(CA_GetTokenCapabilities, PARTITION_POLICIES);
id_value_fn!(CA_GetHSMCapabilitySet, HSM_CAPABILITIES);
id_value_fn!(CA_GetHSMPolicySet, HSM_CAPABILITIES);

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub extern "C" fn CA_GetConfigurationElementDescription(
    slot: CK_SLOT_ID,
    is_container: CK_ULONG,
    _is_capability: CK_ULONG,
    id: CK_ULONG,
    bits: *mut CK_ULONG,
    destructive: *mut CK_ULONG,
    restricted: *mut CK_ULONG,
    desc: *mut CK_CHAR,
    desclen: *mut CK_ULONG,
) -> CK_RV {
    entry::call("CA_GetConfigurationElementDescription", |s| {
        rv((|| {
            slot_ok(s, slot)?;
            let list = if is_container != 0 {
                PARTITION_POLICIES
            } else {
                HSM_CAPABILITIES
            };
            let Some((_, _, text, b, d)) = list.iter().find(|e| e.0 == id) else {
                return Err(codes::CKR_POLICY_ID_INVALID);
            };
            // SAFETY: out pointers per prototype.
            unsafe {
                raw::put(bits, *b)?;
                raw::put(destructive, *d as CK_ULONG)?;
                raw::put(restricted, 0)?;
            }
            // SAFETY: desclen is checked by `output`; desc has *desclen bytes when non-null.
            match unsafe { raw::output(desc, desclen, text.as_bytes()) } {
                CKR_OK => Ok(()),
                e => Err(e),
            }
        })())
    })
}

#[no_mangle]
pub extern "C" fn CA_GetTokenStatus(
    slot: CK_SLOT_ID,
    flags: *mut CK_ULONG,
    sessions: *mut CK_ULONG,
    rw: *mut CK_ULONG,
) -> CK_RV {
    entry::call("CA_GetTokenStatus", |s| {
        rv((|| {
            let slot = slot_ok(s, slot)?;
            let ti = s
                .inner
                .token_info(slot)
                .map_err(|e| e.rv().unwrap_or(CKR_GENERAL_ERROR))?;
            let mut f = LUNA_CF_CONTAINER_ENABLED;
            if ti.initialized() {
                f |= LUNA_CF_PARTITION_INITIALIZED;
            }
            if ti.has(CKF_USER_PIN_LOCKED) {
                f |= LUNA_CF_USER_PIN_LOCKED;
            }
            if ti.has(CKF_SO_PIN_LOCKED) {
                f |= LUNA_CF_SO_PIN_LOCKED;
            }
            // Counted here: not every inner module reports its session counts.
            let (n, nrw) = s
                .sessions
                .lock()
                .values()
                .filter(|st| st.slot == slot)
                .fold((0, 0), |(n, r), st| (n + 1, r + st.rw as u64));
            // SAFETY: out pointers per prototype.
            unsafe {
                raw::put(flags, f)?;
                raw::put(sessions, n)?;
                raw::put(rw, nrw)
            }
        })())
    })
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub extern "C" fn CA_EncapsulateKey(
    h: CK_SESSION_HANDLE,
    m: *mut CK_MECHANISM,
    pk: CK_OBJECT_HANDLE,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
    ct: *mut CK_BYTE,
    ctl: *mut CK_ULONG,
    out: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    crate::intercept::C_EncapsulateKey(h, m, pk, t, n, ct, ctl, out)
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub extern "C" fn CA_DecapsulateKey(
    h: CK_SESSION_HANDLE,
    m: *mut CK_MECHANISM,
    sk: CK_OBJECT_HANDLE,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
    ct: *mut CK_BYTE,
    ctl: CK_ULONG,
    out: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    crate::intercept::C_DecapsulateKey(h, m, sk, t, n, ct, ctl, out)
}

// The console's vendor table must accept these exact prototypes.
const _: p11::vendor::CA_GetHSMStats = CA_GetHSMStats;
const _: p11::vendor::CA_GetFirmwareVersion = CA_GetFirmwareVersion;
const _: p11::vendor::CA_ReadAllUtilizationCounters = CA_ReadAllUtilizationCounters;
const _: p11::vendor::CA_GetTokenStorageInformation = CA_GetTokenStorageInformation;
const _: p11::vendor::CA_GetIdValueSet = CA_GetTokenPolicies;
const _: p11::vendor::CA_GetConfigurationElementDescription = CA_GetConfigurationElementDescription;
const _: p11::vendor::CA_EncapsulateKey = CA_EncapsulateKey;
const _: p11::vendor::CA_DecapsulateKey = CA_DecapsulateKey;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_stat_ids_are_none() {
        let st = crate::stats::stats();
        let at = st.reading();
        assert!(hsm_stat(st, &at, 1).is_some());
        assert!(hsm_stat(st, &at, 99).is_none());
    }

    #[test]
    fn idle_grows_no_faster_than_up_between_readings() {
        // Busy and idle stretches, readings also while a request is in progress (as the
        // CA_GetHSMStats call itself is).
        let st = crate::stats::new_hsm();
        let mut last = st.reading();
        // Across many millisecond boundaries of both clocks.
        let mut i = 0u64;
        while last.up_ms < 40 {
            i += 1;
            match i % 2000 {
                0 => st.enter(),
                1000 => st.leave(),
                _ => {}
            }
            let now = st.reading();
            assert!(now.up_ms >= last.up_ms, "up time only grows");
            assert!(now.busy_ms >= last.busy_ms, "busy time only grows");
            assert!(now.idle_ms() >= last.idle_ms(), "idle time only grows");
            assert!(now.idle_ms() - last.idle_ms() <= now.up_ms - last.up_ms);
            last = now;
        }
    }
}
