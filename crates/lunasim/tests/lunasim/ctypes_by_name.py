#!/usr/bin/env python3
"""Load liblunasim.so the way Thales' pycryptoki and Luna's C samples load libCryptoki2:
with ctypes, every function resolved BY NAME (dlsym), no function table. Reads the
firmware, storage, HSM statistics, utilization counters, a key's usage counters and the
HA state through structures written here from the Luna SDK facts
(/work/shared/reference/pkcs11-luna-facts.md §1.3; Linux x86_64: natural alignment,
8-byte CK_ULONG) — deliberately not taken from the console's p11::vendor, so the
console's own layouts are checked by something that did not borrow them.

usage: ctypes_by_name.py LIB MEMBER_SLOT HA_SLOT PIN KEY_LABEL LAYOUT(current|legacy)
Prints one JSON document; exits non-zero (with the reason) when a check fails.
"""

import ctypes
import json
import sys
from ctypes import (POINTER, Structure, byref, c_char, c_ubyte, c_ulong, c_ulonglong,
                    c_void_p, sizeof)

CK_ULONG = c_ulong
CK_RV = c_ulong
CKR_OK = 0
CKF_SERIAL_SESSION = 0x4
CKF_RW_SESSION = 0x2
CKU_USER = 1
CKA_CLASS = 0x0
CKA_LABEL = 0x3
CKO_PRIVATE_KEY = 3
CKM_ECDSA = 0x1041
CKA_USAGE_COUNT = 0x80000000 + 0x101
CKA_USAGE_LIMIT = 0x80000000 + 0x200
CKR_KEY_NOT_ACTIVE = 0x80000136
LUNA_STATS_UNKNOWN = 0xFFFFFFFF

PKCS11_3_2_FUNCTIONS = [
    "C_Initialize", "C_Finalize", "C_GetInfo", "C_GetFunctionList", "C_GetSlotList",
    "C_GetSlotInfo", "C_GetTokenInfo", "C_GetMechanismList", "C_GetMechanismInfo",
    "C_InitToken", "C_InitPIN", "C_SetPIN", "C_OpenSession", "C_CloseSession",
    "C_CloseAllSessions", "C_GetSessionInfo", "C_GetOperationState", "C_SetOperationState",
    "C_Login", "C_Logout", "C_CreateObject", "C_CopyObject", "C_DestroyObject",
    "C_GetObjectSize", "C_GetAttributeValue", "C_SetAttributeValue", "C_FindObjectsInit",
    "C_FindObjects", "C_FindObjectsFinal", "C_EncryptInit", "C_Encrypt", "C_EncryptUpdate",
    "C_EncryptFinal", "C_DecryptInit", "C_Decrypt", "C_DecryptUpdate", "C_DecryptFinal",
    "C_DigestInit", "C_Digest", "C_DigestUpdate", "C_DigestKey", "C_DigestFinal", "C_SignInit",
    "C_Sign", "C_SignUpdate", "C_SignFinal", "C_SignRecoverInit", "C_SignRecover",
    "C_VerifyInit", "C_Verify", "C_VerifyUpdate", "C_VerifyFinal", "C_VerifyRecoverInit",
    "C_VerifyRecover", "C_DigestEncryptUpdate", "C_DecryptDigestUpdate", "C_SignEncryptUpdate",
    "C_DecryptVerifyUpdate", "C_GenerateKey", "C_GenerateKeyPair", "C_WrapKey", "C_UnwrapKey",
    "C_DeriveKey", "C_SeedRandom", "C_GenerateRandom", "C_GetFunctionStatus",
    "C_CancelFunction", "C_WaitForSlotEvent", "C_GetInterfaceList", "C_GetInterface",
    "C_LoginUser", "C_SessionCancel", "C_MessageEncryptInit", "C_EncryptMessage",
    "C_EncryptMessageBegin", "C_EncryptMessageNext", "C_MessageEncryptFinal",
    "C_MessageDecryptInit", "C_DecryptMessage", "C_DecryptMessageBegin",
    "C_DecryptMessageNext", "C_MessageDecryptFinal", "C_MessageSignInit", "C_SignMessage",
    "C_SignMessageBegin", "C_SignMessageNext", "C_MessageSignFinal", "C_MessageVerifyInit",
    "C_VerifyMessage", "C_VerifyMessageBegin", "C_VerifyMessageNext", "C_MessageVerifyFinal",
    "C_EncapsulateKey", "C_DecapsulateKey", "C_VerifySignatureInit", "C_VerifySignature",
    "C_VerifySignatureUpdate", "C_VerifySignatureFinal", "C_GetSessionValidationFlags",
    "C_AsyncComplete", "C_AsyncGetID", "C_AsyncJoin", "C_WrapKeyAuthenticated",
    "C_UnwrapKeyAuthenticated",
]

# --- Luna SDK structures (facts §1.3) -----------------------------------------------


class HSM_STATS_PARAMS(Structure):
    _fields_ = [("ulId", CK_ULONG), ("ulHighValue", CK_ULONG), ("ulLowValue", CK_ULONG)]


class CK_UTILIZATION_COUNTER(Structure):
    # CK_ULONGLONG serNum; CK_CHAR label[66] (CK_LABLE_LENGTH_MAX = 64+2);
    # CK_ULONG ulBinId; CK_ULONG ulCounterId; CK_ULONGLONG count;
    _fields_ = [("serNum", c_ulonglong), ("label", c_char * 66), ("ulBinId", CK_ULONG),
                ("ulCounterId", CK_ULONG), ("count", c_ulonglong)]


class CK_HA_MEMBER(Structure):  # SDK >= 2018: CK_CHAR memberSerial[20]; CK_RV memberStatus;
    _fields_ = [("memberSerial", c_char * 20), ("memberStatus", CK_RV)]


class CK_HA_STATUS(Structure):  # CK_CHAR groupSerial[20]; CK_HA_MEMBER memberList[32]; CK_ULONG listSize;
    _fields_ = [("groupSerial", c_char * 20), ("memberList", CK_HA_MEMBER * 32),
                ("listSize", CK_ULONG)]


class CK_HA_MEMBER_V1(Structure):  # older SDKs: CK_ULONG memberSerial; CK_RV memberStatus;
    _fields_ = [("memberSerial", CK_ULONG), ("memberStatus", CK_RV)]


class CK_HA_STATUS_V1(Structure):  # CK_ULONG groupSerial; CK_HA_MEMBER memberList[32]; CK_USHORT(=ulong) listSize;
    _fields_ = [("groupSerial", CK_ULONG), ("memberList", CK_HA_MEMBER_V1 * 32),
                ("listSize", CK_ULONG)]


class CK_ATTRIBUTE(Structure):
    _fields_ = [("type", CK_ULONG), ("pValue", c_void_p), ("ulValueLen", CK_ULONG)]


class CK_MECHANISM(Structure):
    _fields_ = [("mechanism", CK_ULONG), ("pParameter", c_void_p), ("ulParameterLen", CK_ULONG)]


SIZES = {"HSM_STATS_PARAMS": (HSM_STATS_PARAMS, 24),
         "CK_UTILIZATION_COUNTER": (CK_UTILIZATION_COUNTER, 104),
         "CK_HA_MEMBER": (CK_HA_MEMBER, 32), "CK_HA_STATUS": (CK_HA_STATUS, 1056),
         "CK_HA_MEMBER_V1": (CK_HA_MEMBER_V1, 16), "CK_HA_STATUS_V1": (CK_HA_STATUS_V1, 528)}


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def check(rv, what):
    if rv != CKR_OK:
        fail(f"{what} returned {rv:#x}")


def main():
    lib_path, member_slot, ha_slot, pin, key_label, layout = sys.argv[1:7]
    member_slot, ha_slot = int(member_slot), int(ha_slot)
    for name, (ty, size) in SIZES.items():
        if sizeof(ty) != size:
            fail(f"sizeof({name}) = {sizeof(ty)}, the SDK facts say {size}")

    lib = ctypes.CDLL(lib_path)
    missing = [n for n in PKCS11_3_2_FUNCTIONS if not hasattr(lib, n)]
    if missing:
        fail(f"not exported by name: {missing}")
    for n in PKCS11_3_2_FUNCTIONS:
        getattr(lib, n).restype = CK_RV

    def ca(name, *argtypes):
        f = getattr(lib, name)  # dlsym; AttributeError if it is not exported
        f.restype = CK_RV
        f.argtypes = list(argtypes)
        return f

    U = POINTER(CK_ULONG)
    check(lib.C_Initialize(None), "C_Initialize")
    n = CK_ULONG(0)
    check(lib.C_GetSlotList(c_ubyte(1), None, byref(n)), "C_GetSlotList (count)")
    slots = (CK_ULONG * n.value)()
    check(lib.C_GetSlotList(c_ubyte(1), slots, byref(n)), "C_GetSlotList")
    slot_list = [slots[i] for i in range(n.value)]
    if member_slot not in slot_list or ha_slot not in slot_list:
        fail(f"slots {slot_list} lack {member_slot} or {ha_slot}")

    h = CK_ULONG(0)
    check(lib.C_OpenSession(CK_ULONG(member_slot), CK_ULONG(CKF_SERIAL_SESSION | CKF_RW_SESSION),
                            None, None, byref(h)), "C_OpenSession")
    p = pin.encode()
    check(lib.C_Login(h, CK_ULONG(CKU_USER), p, CK_ULONG(len(p))), "C_Login")
    rnd = (c_ubyte * 16)()
    check(lib.C_GenerateRandom(h, rnd, CK_ULONG(16)), "C_GenerateRandom")
    if not any(rnd):
        fail("16 random bytes, all zero")

    fw = [CK_ULONG(0), CK_ULONG(0), CK_ULONG(0)]
    check(ca("CA_GetFirmwareVersion", CK_ULONG, U, U, U)(member_slot, *[byref(x) for x in fw]),
          "CA_GetFirmwareVersion")
    hsm = [CK_ULONG(0) for _ in range(4)]
    check(ca("CA_GetHSMStorageInformation", CK_ULONG, U, U, U, U)(member_slot, *[byref(x) for x in hsm]),
          "CA_GetHSMStorageInformation")
    tok = [CK_ULONG(0) for _ in range(5)]
    check(ca("CA_GetTokenStorageInformation", CK_ULONG, U, U, U, U, U)(member_slot, *[byref(x) for x in tok]),
          "CA_GetTokenStorageInformation")
    if hsm[1].value != hsm[2].value + hsm[3].value:
        fail(f"HSM storage total {hsm[1].value} != used {hsm[2].value} + free {hsm[3].value}")

    ids = (CK_ULONG * 5)(1, 2, 3, 4, 77)
    stats = (HSM_STATS_PARAMS * 5)()
    check(ca("CA_GetHSMStats", CK_ULONG, CK_ULONG, U, POINTER(HSM_STATS_PARAMS))(
        member_slot, 5, ids, stats), "CA_GetHSMStats")
    value = [((s.ulHighValue & 0xFFFFFFFF) << 32) | (s.ulLowValue & 0xFFFFFFFF) for s in stats]
    if [s.ulId for s in stats[:4]] != [1, 2, 3, 4] or stats[4].ulId != LUNA_STATS_UNKNOWN:
        fail(f"stats IDs {[s.ulId for s in stats]}")
    if not (value[0] > 1_700_000_000 and value[1] >= value[2] and value[3] > 0):
        fail(f"stats values {value}")

    # The key the Rust side limited and used: its usage counters, by name, in this new process.
    label = key_label.encode()
    lbl = (c_char * len(label))(*label)
    cls = CK_ULONG(CKO_PRIVATE_KEY)
    tmpl = (CK_ATTRIBUTE * 2)(CK_ATTRIBUTE(CKA_CLASS, ctypes.cast(byref(cls), c_void_p), sizeof(cls)),
                              CK_ATTRIBUTE(CKA_LABEL, ctypes.cast(lbl, c_void_p), len(label)))
    check(lib.C_FindObjectsInit(h, tmpl, CK_ULONG(2)), "C_FindObjectsInit")
    key, got = CK_ULONG(0), CK_ULONG(0)
    check(lib.C_FindObjects(h, byref(key), CK_ULONG(1), byref(got)), "C_FindObjects")
    check(lib.C_FindObjectsFinal(h), "C_FindObjectsFinal")
    if got.value != 1:
        fail(f"key {key_label} not found")

    def usage():
        count, limit = CK_ULONG(0), CK_ULONG(0)
        t = (CK_ATTRIBUTE * 2)(CK_ATTRIBUTE(CKA_USAGE_COUNT, ctypes.cast(byref(count), c_void_p), 8),
                               CK_ATTRIBUTE(CKA_USAGE_LIMIT, ctypes.cast(byref(limit), c_void_p), 8))
        check(lib.C_GetAttributeValue(h, key, t, CK_ULONG(2)), "C_GetAttributeValue(CKA_USAGE_*)")
        return count.value, limit.value

    usage_before = usage()
    mech = CK_MECHANISM(CKM_ECDSA, None, 0)
    digest = (c_ubyte * 32)(*range(32))
    sig, sig_len = (c_ubyte * 256)(), CK_ULONG(256)
    signs = []
    for _ in range(usage_before[1] - usage_before[0] + 1):
        rv = lib.C_SignInit(h, byref(mech), key)
        if rv == CKR_OK:
            sig_len.value = 256
            rv = lib.C_Sign(h, digest, CK_ULONG(32), sig, byref(sig_len))
        signs.append(rv)
    if signs[-1] != CKR_KEY_NOT_ACTIVE or any(rv != CKR_OK for rv in signs[:-1]):
        fail(f"signing up to the limit and once past it returned {[hex(r) for r in signs]}")
    usage_after = usage()

    check(ca("CA_ReadUtilizationMetrics", CK_ULONG)(h), "CA_ReadUtilizationMetrics")
    nc = CK_ULONG(0)
    read_all = ca("CA_ReadAllUtilizationCounters", CK_ULONG, POINTER(CK_UTILIZATION_COUNTER), U)
    check(read_all(h, None, byref(nc)), "CA_ReadAllUtilizationCounters (count)")
    counters = (CK_UTILIZATION_COUNTER * nc.value)()
    check(read_all(h, counters, byref(nc)), "CA_ReadAllUtilizationCounters")
    util = [{"serial": c.serNum, "label": c.label.decode(), "bin": c.ulBinId,
             "counter": c.ulCounterId, "count": c.count} for c in counters[:nc.value]]

    if layout == "legacy":
        st = CK_HA_STATUS_V1()
        check(ca("CA_GetHAState", CK_ULONG, POINTER(CK_HA_STATUS_V1))(ha_slot, byref(st)), "CA_GetHAState")
        group = str(st.groupSerial)
        members = [{"serial": str(st.memberList[i].memberSerial), "status": st.memberList[i].memberStatus}
                   for i in range(st.listSize)]
    else:
        st = CK_HA_STATUS()
        check(ca("CA_GetHAState", CK_ULONG, POINTER(CK_HA_STATUS))(ha_slot, byref(st)), "CA_GetHAState")
        cur = CK_HA_STATUS()
        check(ca("CA_GetCurrentHAState", CK_ULONG, POINTER(CK_HA_STATUS))(ha_slot, byref(cur)),
              "CA_GetCurrentHAState")
        # Field by field: the bytes between a serial and its status are padding, which
        # neither C nor Rust promises to write.
        def fields(x):
            return (bytes(x.groupSerial), x.listSize,
                    [(bytes(x.memberList[i].memberSerial), x.memberList[i].memberStatus)
                     for i in range(x.listSize)])
        if fields(cur) != fields(st):
            fail("CA_GetCurrentHAState differs from CA_GetHAState")
        group = st.groupSerial.decode()
        members = [{"serial": st.memberList[i].memberSerial.decode(), "status": st.memberList[i].memberStatus}
                   for i in range(st.listSize)]

    check(lib.C_Logout(h), "C_Logout")
    check(lib.C_CloseSession(h), "C_CloseSession")
    check(lib.C_Finalize(None), "C_Finalize")
    print(json.dumps({
        "exported": len(PKCS11_3_2_FUNCTIONS), "slots": slot_list,
        "firmware": [x.value for x in fw],
        "hsm_storage": {"overhead": hsm[0].value, "total": hsm[1].value, "used": hsm[2].value, "free": hsm[3].value},
        "token_storage": {"total": tok[1].value, "used": tok[2].value, "free": tok[3].value, "objects": tok[4].value},
        "stats": {"boot_time": value[0], "cpu_up": value[1], "cpu_idle": value[2], "commands": value[3]},
        "usage_before": usage_before, "usage_after": usage_after, "signs": signs,
        "utilization": util, "ha": {"group_serial": group, "members": members},
    }))


main()
