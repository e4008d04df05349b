//! PKCS#11 URIs (RFC 7512) as officers, scripts and other tools (p11tool, OpenSSL) write
//! them, for `--key pkcs11:…` and the key selector: the parser agrees with a strict
//! reading of the RFC's percent-encoding (`%` and two hexadecimal digits, nothing else),
//! what it accepts printed again parses to the same value, decoded values are never longer
//! than the text, a selector prints back to itself, and the URIs the console writes for an
//! object parse back to that object.
#![no_main]
use hsm::keys::KeySelector;
use hsm::uri::{self, Pkcs11Uri, TokenIdent};
use libfuzzer_sys::fuzz_target;
use p11::sys::*;

/// RFC 7512 `pk11-pct-encoded`, read independently of the console's decoder.
fn strict_decode(v: &str) -> Option<Vec<u8>> {
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let h = b.get(i + 1..i + 3)?;
            let digit = |c: u8| (c as char).to_digit(16);
            out.push((digit(h[0])? * 16 + digit(h[1])?) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Some(out)
}

/// The URI as the RFC's grammar splits it (path `;`, query after the first `?`, `&`).
fn reference(s: &str) -> Option<Pkcs11Uri> {
    let rest = s.strip_prefix("pkcs11:")?;
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let mut u = Pkcs11Uri::default();
    for part in path.split(';').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=')?;
        u.path.push((k.to_string(), strict_decode(v)?));
    }
    for part in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=')?;
        u.query
            .push((k.to_string(), String::from_utf8(strict_decode(v)?).ok()?));
    }
    Some(u)
}

/// Print a parsed URI again: path values with the RFC's path encoding, query values fully
/// encoded (`&` and `=` end a query value).
fn print(u: &Pkcs11Uri) -> String {
    let path: Vec<String> = u
        .path
        .iter()
        .map(|(k, v)| format!("{k}={}", uri::encode(v)))
        .collect();
    let mut s = format!("pkcs11:{}", path.join(";"));
    if !u.query.is_empty() {
        let query: Vec<String> = u
            .query
            .iter()
            .map(|(k, v)| format!("{k}={}", uri::encode_all(v.as_bytes())))
            .collect();
        s.push('?');
        s.push_str(&query.join("&"));
    }
    s
}

fn check(s: &str) {
    let parsed = Pkcs11Uri::parse(s);
    let strict = reference(s);
    assert_eq!(
        parsed.as_ref().ok(),
        strict.as_ref(),
        "the parser and RFC 7512 disagree on {s:?}"
    );
    if let Ok(u) = &parsed {
        let decoded: usize = u.path.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>()
            + u.query
                .iter()
                .map(|(k, v)| k.len() + v.len())
                .sum::<usize>();
        assert!(decoded <= s.len(), "decoded longer than the URI");
        let printed = print(u);
        let again = Pkcs11Uri::parse(&printed).expect("a printed URI parses");
        assert_eq!(&again, u, "printed as {printed:?}");
        assert_eq!(print(&again), printed, "printing is not stable");
        let _ = u.class();
    }
    if let Ok(sel) = KeySelector::parse(s) {
        let shown = sel.to_string();
        assert_eq!(
            KeySelector::parse(&shown).expect("a shown selector parses"),
            sel,
            "the selector {s:?} shown as {shown:?}"
        );
        if let (KeySelector::Uri { label, id, .. }, Ok(u)) = (&sel, &parsed) {
            assert_eq!(label, &u.text("object"));
            assert_eq!(id.as_deref(), u.get("id"));
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    check(text);
    if !text.starts_with("pkcs11:") {
        check(&format!("pkcs11:{text}"));
    }
    // The URIs the console writes for an object (the Key details pane, `hsmc keys uri`),
    // from fields taken from the same text: they parse back to the object.
    let mut f = text.split('\n');
    let mut next = || f.next().unwrap_or_default().to_string();
    let t = TokenIdent {
        label: next(),
        manufacturer: next(),
        model: next(),
        serial: next(),
    };
    let (label, id) = (next(), next().into_bytes());
    let class = [
        CKO_PRIVATE_KEY,
        CKO_PUBLIC_KEY,
        CKO_SECRET_KEY,
        CKO_CERTIFICATE,
        CKO_DATA,
        CKO_VENDOR_DEFINED,
    ][data.len() % 6];
    let written = uri::object_uri(&t, &label, &id, class);
    let u = Pkcs11Uri::parse(&written).expect("the console's object URI parses");
    assert_eq!(u.text("token").as_deref(), Some(t.label.trim()));
    assert_eq!(
        u.text("manufacturer").as_deref(),
        Some(t.manufacturer.trim())
    );
    assert_eq!(u.text("model").as_deref(), Some(t.model.trim()));
    assert_eq!(u.text("serial").as_deref(), Some(t.serial.trim()));
    assert_eq!(u.text("object"), (!label.is_empty()).then(|| label.clone()));
    assert_eq!(u.get("id"), (!id.is_empty()).then_some(id.as_slice()));
    let known = uri::type_of_class(class).is_some();
    assert_eq!(u.class(), Ok(known.then_some(class)));
    match KeySelector::parse(&written) {
        Ok(KeySelector::Uri {
            label: l,
            id: i,
            class: c,
            ..
        }) => {
            assert_eq!(l, (!label.is_empty()).then_some(label));
            assert_eq!(i, (!id.is_empty()).then_some(id));
            assert_eq!(c, known.then_some(class));
        }
        Ok(other) => panic!("{written:?} selected as {other:?}"),
        Err(_) => assert!(label.is_empty() && id.is_empty()),
    }
    let token = uri::token_uri(&t);
    assert_eq!(
        Pkcs11Uri::parse(&token).expect("the token URI parses"),
        Pkcs11Uri {
            path: u.path[..4].to_vec(),
            query: Vec::new()
        }
    );
});
