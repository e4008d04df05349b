#!/usr/bin/env python3
"""Outside verifier for the console's tests: a third lineage next to the tokens (OpenSSL,
hbs-lms) and the console's own RustCrypto verifiers.

    verify.py ALG PUBLIC_KEY_FILE MESSAGE_FILE SIGNATURE_FILE [CONTEXT_HEX]

ALG: hss | ml-dsa-44|65|87 | ml-dsa-65-dilithium-py (etc.) | ecdsa-p256 | ecdsa-p384 |
     ed25519 | rsa-pss-sha256
Public keys: raw bytes for hss, ml-dsa, ed25519; SubjectPublicKeyInfo DER or PEM for
ecdsa/rsa; ml-dsa and ed25519 keys may also be SubjectPublicKeyInfo, DER or PEM.
ECDSA signatures: DER. Exit 0 = valid, 1 = invalid, 2 = usage or unsupported.
"""
import sys


def load_spki(data):
    from cryptography.hazmat.primitives import serialization
    if data.startswith(b"-----BEGIN"):
        return serialization.load_pem_public_key(data)
    return serialization.load_der_public_key(data)


def main(argv):
    if len(argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    alg, pub, msg, sig = argv[1], *(open(p, "rb").read() for p in argv[2:5])
    ctx = bytes.fromhex(argv[5]) if len(argv) > 5 else b""
    try:
        if alg == "hss":
            import hsslms
            try:
                hsslms.HSS_Pub(pub).verify(msg, sig)
            except hsslms.INVALID:
                return 1
            return 0
        if alg.startswith("ml-dsa-") and alg.endswith("-dilithium-py"):
            from dilithium_py.ml_dsa import ML_DSA_44, ML_DSA_65, ML_DSA_87
            impl = {"44": ML_DSA_44, "65": ML_DSA_65, "87": ML_DSA_87}[alg.split("-")[2]]
            return 0 if impl.verify(pub, msg, sig, ctx=ctx) else 1
        from cryptography.exceptions import InvalidSignature
        if alg.startswith("ml-dsa-"):
            from cryptography.hazmat.primitives.asymmetric import mldsa
            cls = {"44": mldsa.MLDSA44PublicKey, "65": mldsa.MLDSA65PublicKey, "87": mldsa.MLDSA87PublicKey}[alg[7:]]
            key = load_spki(pub) if pub[:1] in (b"0", b"-") else cls.from_public_bytes(pub)
            try:
                key.verify(sig, msg, ctx) if ctx else key.verify(sig, msg)
            except InvalidSignature:
                return 1
            return 0
        if alg == "ed25519":
            from cryptography.hazmat.primitives.asymmetric import ed25519
            key = ed25519.Ed25519PublicKey.from_public_bytes(pub) if len(pub) == 32 else load_spki(pub)
            try:
                key.verify(sig, msg)
            except InvalidSignature:
                return 1
            return 0
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec, padding
        key = load_spki(pub)
        try:
            if alg == "ecdsa-p256":
                key.verify(sig, msg, ec.ECDSA(hashes.SHA256()))
            elif alg == "ecdsa-p384":
                key.verify(sig, msg, ec.ECDSA(hashes.SHA384()))
            elif alg == "rsa-pss-sha256":
                key.verify(sig, msg, padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=32), hashes.SHA256())
            else:
                print(f"unsupported algorithm {alg}", file=sys.stderr)
                return 2
        except InvalidSignature:
            return 1
        return 0
    except Exception as e:  # malformed input counts as a rejection, loudly
        print(f"verify.py: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
