#!/usr/bin/env python3
"""Outside verifier for the console's release signatures (a lineage other than the tokens'
OpenSSL/hbs-lms and the console's RustCrypto): asn1crypto parses the structures,
pyca/cryptography verifies ML-DSA, ECDSA, RSA-PSS and Ed25519, hsslms verifies HSS/LMS, the
`slh-dsa` package (FIPS 205, pure Python) verifies SLH-DSA.

    verify_release.py cms FILE P7S                 detached CMS, every signer (with its certificate)
    verify_release.py cms-only P7S OID-PREFIX OUT  writes OUT: P7S with only the signers whose
                                                   signature algorithm starts with OID-PREFIX
                                                   (for verifiers that know only some algorithms)
    verify_release.py raw FILE SIG PUBKEY.pem [CONTEXT_HEX]
    verify_release.py bundle FILE BUNDLE.json
    verify_release.py manifest SHA256SUMS SIG PUBKEY.pem

With ML_DSA_VERIFIER=dilithium-py in the environment, ML-DSA signatures are verified by
dilithium-py (pure-Python FIPS 204) instead of pyca/cryptography.

Exit 0 = valid, 1 = invalid (the reason on stderr), 2 = usage or unsupported.
"""
import base64
import hashlib
import json
import os
import sys

from asn1crypto import algos
from asn1crypto import cms as acms
from asn1crypto import core
from asn1crypto import pem as apem
from asn1crypto import x509 as ax509

HSS_OID = "1.2.840.113549.1.9.16.3.17"
MLDSA = {"2.16.840.1.101.3.4.3.17": "44", "2.16.840.1.101.3.4.3.18": "65", "2.16.840.1.101.3.4.3.19": "87"}
ED25519_OID = "1.3.101.112"
# RFC 9814 §3 / FIPS 205: id-slh-dsa-* → the `slhdsa` package's parameter set names.
SLHDSA = {f"2.16.840.1.101.3.4.3.{20 + i}": name for i, name in enumerate(
    f"{h}_{n}{v}" for h in ("sha2", "shake") for n in (128, 192, 256) for v in ("s", "f"))}
# RFC 8702: SHAKE128 and SHAKE256 digests in CMS are 32 and 64 bytes.
XOF_LENGTH = {"shake128": 32, "shake256": 64}


class Invalid(Exception):
    pass


class _AlgId(core.Sequence):
    _fields = [("algorithm", core.ObjectIdentifier), ("parameters", core.Any, {"optional": True})]


class _Spki(core.Sequence):
    # asn1crypto's own PublicKeyInfo rejects algorithms it does not know (ML-DSA, HSS).
    _fields = [("algorithm", _AlgId), ("public_key", core.OctetBitString)]


def spki_parts(der):
    """(algorithm OID, raw key bytes, der) of a SubjectPublicKeyInfo."""
    info = _Spki.load(der)
    return info["algorithm"]["algorithm"].dotted, info["public_key"].native, der


def load_pub(path):
    data = open(path, "rb").read()
    if apem.detect(data):
        _, _, data = apem.unarmor(data)
    return spki_parts(data)


def file_digest(path, name):
    h = hashlib.new(name)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.digest(XOF_LENGTH[name]) if name in XOF_LENGTH else h.digest()


def verify_sig(oid, raw, spki_der, message, sig, ctx=b"", pss=False, digest_name=None):
    """Verify `sig` over `message` with the key. ECDSA/RSA hash the message themselves."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, mldsa, padding, rsa

    try:
        if oid == HSS_OID:
            import hsslms
            try:
                hsslms.HSS_Pub(raw).verify(message, sig)
            except hsslms.INVALID as e:
                raise Invalid(f"HSS signature invalid: {e}")
            return
        if oid in MLDSA and os.environ.get("ML_DSA_VERIFIER") == "dilithium-py":
            from dilithium_py.ml_dsa import ML_DSA_44, ML_DSA_65, ML_DSA_87
            impl = {"44": ML_DSA_44, "65": ML_DSA_65, "87": ML_DSA_87}[MLDSA[oid]]
            if not impl.verify(raw, message, sig, ctx=ctx):
                raise Invalid("ML-DSA signature invalid (dilithium-py)")
            return
        if oid in MLDSA:
            cls = {"44": mldsa.MLDSA44PublicKey, "65": mldsa.MLDSA65PublicKey, "87": mldsa.MLDSA87PublicKey}[MLDSA[oid]]
            key = cls.from_public_bytes(raw)
            key.verify(sig, message, ctx) if ctx else key.verify(sig, message)
            return
        if oid in SLHDSA:
            import slhdsa
            key = slhdsa.PublicKey.from_digest(raw, getattr(slhdsa, SLHDSA[oid]))
            if not key.verify_pure(message, sig, ctx):
                raise Invalid("SLH-DSA signature invalid")
            return
        if oid == ED25519_OID:
            ed25519.Ed25519PublicKey.from_public_bytes(raw).verify(sig, message)
            return
        key = serialization.load_der_public_key(spki_der)
        h = {"sha256": hashes.SHA256(), "sha384": hashes.SHA384(), "sha512": hashes.SHA512()}
        if isinstance(key, ec.EllipticCurvePublicKey):
            name = digest_name or ("sha384" if key.curve.name == "secp384r1" else "sha256")
            key.verify(sig, message, ec.ECDSA(h[name]))
            return
        if isinstance(key, rsa.RSAPublicKey):
            key.verify(sig, message, padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=32), hashes.SHA256())
            return
    except InvalidSignature:
        raise Invalid("signature invalid")
    raise SystemExit(2)


class EssCertIdV2(core.Sequence):
    """RFC 5035 §4 (asn1crypto has no type for this attribute)."""

    _fields = [
        ("hash_algorithm", algos.DigestAlgorithm, {"default": {"algorithm": "sha256"}}),
        ("cert_hash", core.OctetString),
        ("issuer_serial", core.Any, {"optional": True}),
    ]


class EssCertIdsV2(core.SequenceOf):
    _child_spec = EssCertIdV2


class SigningCertificateV2(core.Sequence):
    _fields = [("certs", EssCertIdsV2), ("policies", core.Any, {"optional": True})]


def cms(path, p7s):
    """Every signer must verify; prints one line per signer (its signature algorithm)."""
    ci = acms.ContentInfo.load(open(p7s, "rb").read())
    if ci["content_type"].native != "signed_data":
        raise Invalid("not SignedData")
    sd = ci["content"]
    if sd["encap_content_info"]["content"].native is not None:
        raise Invalid("not detached")
    signers = list(sd["signer_infos"])
    if not signers:
        raise Invalid("no signer")
    for si in signers:
        cms_signer(path, sd, si)
        print(f"signer ok: {si['signature_algorithm']['algorithm'].dotted}")


def _tlvs(data):
    """The DER elements (whole encodings) of `data`, one after another."""
    out, i = [], 0
    while i < len(data):
        start, n = i, data[i + 1]
        i += 2
        if n & 0x80:
            k = n & 0x7F
            n = int.from_bytes(data[i:i + k], "big")
            i += k
        out.append((data[start], data[start:i + n], data[i:i + n]))
        i += n
    return out


def _der(tag, body):
    n = len(body)
    if n < 0x80:
        return bytes([tag, n]) + body
    k = (n.bit_length() + 7) // 8
    return bytes([tag, 0x80 | k]) + n.to_bytes(k, "big") + body


def cms_only(p7s, prefix, out):
    """Byte for byte the same, but for the SignerInfos SET: the signers kept are copied."""
    [(_, _, ci)] = _tlvs(open(p7s, "rb").read())
    (_, oid, _), (_, _, explicit) = _tlvs(ci)
    [(_, _, sd)] = _tlvs(explicit)
    parts = _tlvs(sd)
    kept = [whole for _, whole, _ in _tlvs(parts[-1][2])
            if acms.SignerInfo.load(whole)["signature_algorithm"]["algorithm"].dotted.startswith(prefix)]
    if not kept:
        raise Invalid(f"no signer with an algorithm under {prefix}")
    body = b"".join(whole for _, whole, _ in parts[:-1]) + _der(0x31, b"".join(sorted(kept)))
    open(out, "wb").write(_der(0x30, oid + _der(0xA0, _der(0x30, body))))


def cms_signer(path, sd, si):
    sid = si["sid"].chosen
    # The signer's certificate among those included (a chain's issuers may sort first).
    cert = next((c.chosen for c in sd["certificates"] if isinstance(c.chosen, ax509.Certificate)
                 and c.chosen.serial_number == sid["serial_number"].native and c.chosen.issuer == sid["issuer"]), None)
    if cert is None:
        raise Invalid("the signer identifier does not name an included certificate")
    attrs = {a["type"].dotted: a["values"][0] for a in si["signed_attrs"]}
    if attrs["1.2.840.113549.1.9.3"].dotted != "1.2.840.113549.1.7.1":
        raise Invalid("content type is not id-data")
    # RFC 5035: the signed signingCertificateV2 names the included certificate by its hash
    # (CMS leaves the certificate itself unsigned).
    ess = attrs.get("1.2.840.113549.1.9.16.2.47")
    if ess is None:
        raise Invalid("no signingCertificateV2 attribute")
    first = SigningCertificateV2.load(ess.dump())["certs"][0]
    if first["cert_hash"].native != hashlib.new(first["hash_algorithm"]["algorithm"].native, cert.dump()).digest():
        raise Invalid("signingCertificateV2 does not name the included certificate")
    dname = si["digest_algorithm"]["algorithm"].native  # sha256 / sha384 / sha512
    if attrs["1.2.840.113549.1.9.4"].native != file_digest(path, dname):
        raise Invalid("message digest does not match the file")
    signed = si["signed_attrs"].untag().dump()  # DER as SET OF, what was signed
    sig_oid = si["signature_algorithm"]["algorithm"].dotted
    key_der = cert["tbs_certificate"]["subject_public_key_info"].dump()
    oid, raw, _ = spki_parts(key_der)
    if (oid in MLDSA or oid in SLHDSA) and sig_oid != oid:
        raise Invalid(f"signature algorithm {sig_oid} does not match the key {oid}")
    if oid == HSS_OID and sig_oid != HSS_OID:
        raise Invalid("signature algorithm is not HSS/LMS")
    verify_sig(oid, raw, key_der, signed, si["signature"].native, digest_name=dname if oid not in MLDSA and oid not in SLHDSA else None)


def raw(path, sig, pub, ctx=b""):
    oid, rawkey, der = load_pub(pub)
    verify_sig(oid, rawkey, der, open(path, "rb").read(), open(sig, "rb").read(), ctx=ctx)


def bundle(path, js):
    b = json.load(open(js))
    if b["format"] != "hsm-console/signature-bundle/v1":
        raise Invalid("unknown format")
    data = open(path, "rb").read()
    f = b["file"]
    if len(data) != f["size"] or hashlib.sha256(data).hexdigest() != f["sha256"] or hashlib.sha512(data).hexdigest() != f["sha512"]:
        raise Invalid("the file differs from the bundle")
    _, _, der = apem.unarmor(b["key"]["public_key"].encode())
    if "SHA256:" + hashlib.sha256(der).hexdigest() != b["key"]["fingerprint"]:
        raise Invalid("the key fingerprint does not match the key")
    oid, rawkey, der = spki_parts(der)
    ctx = bytes.fromhex(b["parameters"].get("context", "")) if isinstance(b.get("parameters"), dict) else b""
    verify_sig(oid, rawkey, der, data, base64.b64decode(b["signature"]), ctx=ctx)


def manifest(sums, sig, pub):
    raw(sums, sig, pub)
    folder = os.path.dirname(os.path.abspath(sums))
    for line in open(sums):
        if line.strip():
            h, name = line.rstrip("\n").split("  ", 1)
            if file_digest(os.path.join(folder, name), "sha256").hex() != h:
                raise Invalid(f"{name} does not match the manifest")


def main(argv):
    try:
        cmd, args = argv[1], argv[2:]
        if cmd == "cms" and len(args) == 2:
            cms(*args)
        elif cmd == "cms-only" and len(args) == 3:
            cms_only(*args)
        elif cmd == "raw" and len(args) in (3, 4):
            raw(args[0], args[1], args[2], bytes.fromhex(args[3]) if len(args) == 4 else b"")
        elif cmd == "bundle" and len(args) == 2:
            bundle(*args)
        elif cmd == "manifest" and len(args) == 3:
            manifest(*args)
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except Invalid as e:
        print(f"invalid: {e}", file=sys.stderr)
        return 1
    except IndexError:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
