#!/usr/bin/env python3
"""Certificate chains for the console's CMS signatures, outside the console: a test CA made
with pyca/cryptography, and path validation of a `.p7s` up to a given root, for the
algorithms Debian's OpenSSL 3.0 cannot verify in CMS (ML-DSA, Ed25519).

    verify_chain.py make-ca DIR ALG          root.pem + int.pem (+ keys) in DIR; ALG: ml-dsa-65 | ed25519 | ec
    verify_chain.py issue DIR CSR.pem OUT    the intermediate issues a code-signing certificate
    verify_chain.py verify FILE P7S ROOT     the signer's path to ROOT, and the CMS signature

`verify` checks, with asn1crypto for the structures and the path logic and pyca/cryptography
for the signatures (dilithium-py, a pure-Python FIPS 204 implementation, too for ML-DSA):
the signer (named by the SignerInfo) is among the certificates; from it, issuer by issuer
among the certificates the `.p7s` carries, each link's issuer name is the next subject and
the next key verifies its signature, every certificate is valid now, each issuer is a CA
(basicConstraints cA, keyCertSign where key usage is present), the path ends at a
certificate equal to ROOT (whose self-signature verifies); then verify_release.py's CMS check
(signed attributes, message digest, signingCertificateV2, the signature by the signer's key).

Exit 0 = valid, 1 = invalid (the reason on stderr), 2 = usage.
"""
import datetime
import os
import sys

from asn1crypto import cms as acms
from asn1crypto import pem as apem
from asn1crypto import x509 as ax509

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import verify_release  # noqa: E402
from verify_release import Invalid  # noqa: E402


def _private_key(alg):
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, mldsa

    if alg == "ml-dsa-65":
        return mldsa.MLDSA65PrivateKey.generate()
    if alg == "ed25519":
        return ed25519.Ed25519PrivateKey.generate()
    if alg == "ec":
        return ec.generate_private_key(ec.SECP256R1())
    raise SystemExit(2)


def _hash_for(key):
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    return hashes.SHA256() if isinstance(key, ec.EllipticCurvePrivateKey) else None


def _name(cn):
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Example")])


def _build(subject, issuer, public_key, signer, serial, ca):
    from cryptography import x509
    from cryptography.x509.oid import ExtendedKeyUsageOID

    now = datetime.datetime.now(datetime.timezone.utc)
    b = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(serial)
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    usage = dict(digital_signature=not ca, content_commitment=False, key_encipherment=False, data_encipherment=False,
                 key_agreement=False, key_cert_sign=ca, crl_sign=ca, encipher_only=False, decipher_only=False)
    b = b.add_extension(x509.KeyUsage(**usage), critical=True)
    if not ca:
        b = b.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), critical=False)
    return b.sign(signer, _hash_for(signer))


def _write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def make_ca(folder, alg):
    from cryptography.hazmat.primitives import serialization

    root_key, int_key = _private_key(alg), _private_key(alg)
    root_name, int_name = _name("Test Root CA"), _name("Test Intermediate CA")
    root = _build(root_name, root_name, root_key.public_key(), root_key, 1, True)
    inter = _build(int_name, root_name, int_key.public_key(), root_key, 2, True)
    pem = serialization.Encoding.PEM
    _write(os.path.join(folder, "root.pem"), root.public_bytes(pem))
    _write(os.path.join(folder, "int.pem"), inter.public_bytes(pem))
    _write(os.path.join(folder, "int.key"), int_key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))


def issue(folder, csr_path, out):
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    csr = x509.load_pem_x509_csr(open(csr_path, "rb").read())
    if not csr.is_signature_valid:
        raise Invalid("the request's signature is invalid")
    inter = x509.load_pem_x509_certificate(open(os.path.join(folder, "int.pem"), "rb").read())
    key = serialization.load_pem_private_key(open(os.path.join(folder, "int.key"), "rb").read(), None)
    leaf = _build(csr.subject, inter.subject, csr.public_key(), key, 77, False)
    _write(out, leaf.public_bytes(serialization.Encoding.PEM))


def _load_cert(path):
    data = open(path, "rb").read()
    if apem.detect(data):
        _, _, data = apem.unarmor(data)
    return ax509.Certificate.load(data)


def _signature_ok(child, issuer):
    """pyca verifies `child`'s signature with `issuer`'s key and checks the names; for
    ML-DSA, dilithium-py verifies it as well."""
    from cryptography import x509
    from cryptography.exceptions import InvalidSignature

    c = x509.load_der_x509_certificate(child.dump())
    i = x509.load_der_x509_certificate(issuer.dump())
    try:
        c.verify_directly_issued_by(i)
    except (InvalidSignature, ValueError, TypeError) as e:
        return f"pyca: {type(e).__name__} {e}"
    oid, raw, _ = verify_release.spki_parts(issuer["tbs_certificate"]["subject_public_key_info"].dump())
    if oid in verify_release.MLDSA:
        from dilithium_py.ml_dsa import ML_DSA_44, ML_DSA_65, ML_DSA_87

        impl = {"44": ML_DSA_44, "65": ML_DSA_65, "87": ML_DSA_87}[verify_release.MLDSA[oid]]
        if not impl.verify(raw, child["tbs_certificate"].dump(), child["signature_value"].native):
            return "dilithium-py: the signature is invalid"
    return None


def _check_validity(cert, now):
    v = cert["tbs_certificate"]["validity"]
    if not (v["not_before"].native <= now <= v["not_after"].native):
        raise Invalid(f"{cert.subject.human_friendly} is not valid now ({v['not_before'].native} to {v['not_after'].native})")


def _check_issuer_is_ca(cert):
    if not cert.ca:
        raise Invalid(f"{cert.subject.human_friendly} issues a certificate but is not a CA")
    ku = cert.key_usage_value
    if ku is not None and "key_cert_sign" not in ku.native:
        raise Invalid(f"{cert.subject.human_friendly} lacks the keyCertSign key usage")


def path_to_root(p7s, root_path):
    """The path from the signer to the root, leaf first; raises Invalid."""
    ci = acms.ContentInfo.load(open(p7s, "rb").read())
    sd = ci["content"]
    certs = [c.chosen for c in sd["certificates"] if isinstance(c.chosen, ax509.Certificate)]
    [si] = list(sd["signer_infos"])
    sid = si["sid"].chosen
    signer = next((c for c in certs if c.serial_number == sid["serial_number"].native and c.issuer == sid["issuer"]), None)
    if signer is None:
        raise Invalid("the signer's certificate is not in the signature")
    root = _load_cert(root_path)
    now = datetime.datetime.now(datetime.timezone.utc)
    path, current = [signer], signer
    for _ in range(8):
        _check_validity(current, now)
        if current.dump() == root.dump():
            why = _signature_ok(root, root)
            if why:
                raise Invalid(f"the root's self-signature does not verify: {why}")
            return path
        # The next link: the root if it issued `current`, else a certificate carried.
        candidates = [root] + [c for c in certs if c.dump() not in {p.dump() for p in path}]
        named = [c for c in candidates if c.subject == current.issuer]
        if not named:
            raise Invalid(f"no certificate carried or given issued {current.subject.human_friendly} (issuer {current.issuer.human_friendly})")
        reasons = []
        for c in named:
            why = _signature_ok(current, c)
            if why is None:
                _check_issuer_is_ca(c)
                path.append(c)
                current = c
                break
            reasons.append(why)
        else:
            raise Invalid(f"no issuer's key verifies {current.subject.human_friendly}: {'; '.join(reasons)}")
    raise Invalid("the path is longer than 8")


def verify(path, p7s, root):
    chain = path_to_root(p7s, root)
    verify_release.cms(path, p7s)
    print(" -> ".join(c.subject.human_friendly for c in chain))


def main(argv):
    try:
        cmd, args = argv[1], argv[2:]
        if cmd == "make-ca" and len(args) == 2:
            make_ca(*args)
        elif cmd == "issue" and len(args) == 3:
            issue(*args)
        elif cmd == "verify" and len(args) == 3:
            verify(*args)
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
