//! Certificate files an officer imports or gives as a chain (`hsmc objects import`, the
//! import dialog, `hsmc sign --chain`): PEM bundles, DER, `.p7b` (DER or PEM). Every
//! certificate returned parses, and encoded again parses to the same certificate; from a
//! DER file or a `.p7b` it is the file's own bytes in the file's order (a `.p7b` once
//! gave them re-encoded and sorted); the same certificates written as DER, as PEM or as
//! one PEM bundle read back the same; a public key read back from its own PEM is the same
//! key; and the chain reader is the import reader restricted to certificates.
#![no_main]
use der::{Decode, Encode};
use libfuzzer_sys::fuzz_target;
use signing::chain::{parse_file, ChainError};
use signing::objects::{parse_import, ImportItem};
use x509_cert::Certificate;

fn certificates(items: &[ImportItem]) -> Vec<Vec<u8>> {
    items
        .iter()
        .filter_map(|i| match i {
            ImportItem::Certificate(d) => Some(d.clone()),
            ImportItem::PublicKey(_) => None,
        })
        .collect()
}

fn pem(der: &[u8]) -> String {
    signing::cert::to_pem("CERTIFICATE", der)
}

fn read_back(bytes: &[u8], what: &str) -> Vec<Vec<u8>> {
    let items = parse_import(bytes, "again")
        .unwrap_or_else(|e| panic!("{what} of an accepted certificate is refused: {e}"));
    assert!(
        items
            .iter()
            .all(|i| matches!(i, ImportItem::Certificate(_))),
        "{what} of a certificate read back as a public key"
    );
    certificates(&items)
}

fuzz_target!(|data: &[u8]| {
    let imported = parse_import(data, "f");
    let chain = parse_file(data, "f");
    match (&imported, &chain) {
        (Ok(items), Ok(given)) => {
            let ders: Vec<Vec<u8>> = given.iter().map(|g| g.der.clone()).collect();
            assert_eq!(ders, certificates(items));
            assert!(given.iter().all(|g| g.file == "f"));
        }
        (Ok(items), Err(ChainError::PublicKey { .. })) => assert!(
            items.iter().any(|i| matches!(i, ImportItem::PublicKey(_))),
            "a chain file refused for a public key it does not hold"
        ),
        (Ok(_), Err(e)) => panic!("imported, but refused as a chain file: {e}"),
        (Err(e), Ok(_)) => panic!("a chain file the import refuses: {e}"),
        (Err(e), Err(ce)) => {
            let private = e.to_string().contains("holds a private key");
            assert_eq!(private, matches!(ce, ChainError::PrivateKey { .. }));
        }
    }
    let Ok(items) = imported else {
        return;
    };
    assert!(!items.is_empty(), "an accepted file with nothing in it");
    let ders = certificates(&items);
    for der in &ders {
        let c = Certificate::from_der(der).expect("a returned certificate parses");
        let encoded = c.to_der().expect("re-encodes");
        assert_eq!(
            Certificate::from_der(&encoded).expect("its DER parses"),
            c,
            "encoded again, a certificate is another"
        );
        assert_eq!(read_back(der, "the DER"), std::slice::from_ref(der));
        assert_eq!(
            read_back(pem(der).as_bytes(), "the PEM"),
            std::slice::from_ref(der)
        );
        let info = signing::objects::describe(der).expect("an accepted certificate is described");
        let _ = signing::objects::signing_warnings(&info);
    }
    // Never altered (a changed byte breaks the certificate's signature) nor reordered: from
    // a DER file or a `.p7b` each certificate is the file's own bytes, in the file's order.
    if std::str::from_utf8(data).map_or(true, |t| !t.contains("-----BEGIN ")) {
        let mut from = 0;
        for der in &ders {
            let at = data[from..]
                .windows(der.len())
                .position(|w| w == der.as_slice())
                .expect("a certificate that is not the file's own bytes, or out of order");
            from += at + der.len();
        }
    }
    if ders.len() > 1 {
        let bundle: String = ders.iter().map(|d| pem(d)).collect();
        assert_eq!(read_back(bundle.as_bytes(), "a PEM bundle"), ders);
    }
    for i in &items {
        if let ImportItem::PublicKey(pk) = i {
            let spki = pk.spki_der();
            let again = hsm::pubkey::PublicKey::from_spki_der(&spki).expect("SPKI reads back");
            assert_eq!(&again, pk);
            let pem = signing::cert::to_pem("PUBLIC KEY", &spki);
            match &parse_import(pem.as_bytes(), "again").expect("its PEM imports")[..] {
                [ImportItem::PublicKey(p)] => assert_eq!(p, pk),
                other => panic!("a public key's PEM read back as {other:?}"),
            }
        }
    }
});
