//! PKCS#11 URIs (RFC 7512): what every other tool — OpenSSL's pkcs11 engine and provider,
//! p11tool, cosign, osslsigncode, sbsign, jsign — takes to name a token or a key. Written
//! with the RFC's percent-encoding (`id` always fully encoded), and parsed, with a bad
//! percent-encoding an error that says where.

use p11::sys::*;

use crate::Text;

/// Characters a path attribute value keeps as they are (RFC 7512 `pk11-pchar` without
/// percent-encoding: unreserved, and `: [ ] @ ! $ ' ( ) * + , = &`).
fn keeps(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~:[]@!$'()*+,=&".contains(&b)
}

/// Percent-encode a value for a path attribute.
pub fn encode(v: &[u8]) -> String {
    let mut s = String::with_capacity(v.len());
    for &b in v {
        if keeps(b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// Every byte percent-encoded (how tools write `id=`).
pub fn encode_all(v: &[u8]) -> String {
    v.iter().map(|b| format!("%{b:02X}")).collect()
}

fn decode(v: &str, attr: &str) -> Result<Vec<u8>, Text> {
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    // Two hexadecimal digits and nothing else (a sign, as `from_str_radix` takes, is not one).
    let digit = |j: usize| b.get(j).and_then(|c| (*c as char).to_digit(16));
    while i < b.len() {
        if b[i] == b'%' {
            let (Some(hi), Some(lo)) = (digit(i + 1), digit(i + 2)) else {
                // What follows the '%' as characters: a byte count could end inside one.
                let at: String = v[i..].chars().take(3).collect();
                return Err(crate::text!(
                    "errors.uri_bad_percent",
                    "'{{attr}}={{value}}': bad percent-encoding at '{{at}}' (write %XX with two hexadecimal digits)",
                    attr = attr,
                    value = v,
                    at = at
                ));
            };
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Ok(out)
}

/// A parsed `pkcs11:` URI: its path attributes (decoded) and query attributes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pkcs11Uri {
    pub path: Vec<(String, Vec<u8>)>,
    pub query: Vec<(String, String)>,
}

impl Pkcs11Uri {
    /// Parse a URI; what is wrong with one is said with a catalog key, for the officer's
    /// language.
    pub fn parse(s: &str) -> Result<Pkcs11Uri, Text> {
        let rest = s.strip_prefix("pkcs11:").ok_or_else(|| {
            crate::text!(
                "errors.uri_not_pkcs11",
                "'{{uri}}' is not a PKCS#11 URI (it starts with pkcs11:)",
                uri = s
            )
        })?;
        let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
        let mut u = Pkcs11Uri::default();
        for part in path.split(';').filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').ok_or_else(|| {
                crate::text!(
                    "errors.uri_part_not_pair",
                    "'{{part}}' in the URI is not attribute=value",
                    part = part
                )
            })?;
            u.path.push((k.to_string(), decode(v, k)?));
        }
        for part in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').ok_or_else(|| {
                crate::text!(
                    "errors.uri_query_not_pair",
                    "'{{part}}' in the URI's query is not attribute=value",
                    part = part
                )
            })?;
            let v = String::from_utf8(decode(v, k)?).map_err(|_| {
                crate::text!(
                    "errors.uri_query_not_utf8",
                    "'{{attr}}' in the URI's query is not UTF-8",
                    attr = k
                )
            })?;
            u.query.push((k.to_string(), v));
        }
        Ok(u)
    }

    /// A path attribute as bytes.
    pub fn get(&self, attr: &str) -> Option<&[u8]> {
        self.path
            .iter()
            .find(|(k, _)| k == attr)
            .map(|(_, v)| v.as_slice())
    }

    /// A path attribute as text.
    pub fn text(&self, attr: &str) -> Option<String> {
        self.get(attr)
            .map(|v| String::from_utf8_lossy(v).into_owned())
    }

    /// A query attribute (`module-path`, `pin-value`, …).
    pub fn query(&self, attr: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == attr)
            .map(|(_, v)| v.as_str())
    }

    /// `type=` as a `CKO_*` class.
    pub fn class(&self) -> Result<Option<u64>, Text> {
        match self.text("type").as_deref() {
            None => Ok(None),
            Some(t) => class_of_type(t).map(Some).ok_or_else(|| {
                crate::text!(
                    "errors.uri_type_unknown",
                    "type={{value}} is not one of private, public, secret-key, cert, data",
                    value = t
                )
            }),
        }
    }
}

/// RFC 7512's `type=` for a class.
pub fn type_of_class(class: u64) -> Option<&'static str> {
    match class {
        CKO_PRIVATE_KEY => Some("private"),
        CKO_PUBLIC_KEY => Some("public"),
        CKO_SECRET_KEY => Some("secret-key"),
        CKO_CERTIFICATE => Some("cert"),
        CKO_DATA => Some("data"),
        _ => None,
    }
}

pub fn class_of_type(t: &str) -> Option<u64> {
    match t {
        "private" => Some(CKO_PRIVATE_KEY),
        "public" => Some(CKO_PUBLIC_KEY),
        "secret-key" => Some(CKO_SECRET_KEY),
        "cert" => Some(CKO_CERTIFICATE),
        "data" => Some(CKO_DATA),
        _ => None,
    }
}

/// What names a token in a URI (blank-padded `CK_TOKEN_INFO` fields, trimmed).
#[derive(Debug, Clone, Default)]
pub struct TokenIdent {
    pub label: String,
    pub manufacturer: String,
    pub model: String,
    pub serial: String,
}

fn token_part(t: &TokenIdent) -> String {
    format!(
        "token={};manufacturer={};serial={};model={}",
        encode(t.label.trim().as_bytes()),
        encode(t.manufacturer.trim().as_bytes()),
        encode(t.serial.trim().as_bytes()),
        encode(t.model.trim().as_bytes()),
    )
}

/// `pkcs11:token=…;manufacturer=…;serial=…;model=…`.
pub fn token_uri(t: &TokenIdent) -> String {
    format!("pkcs11:{}", token_part(t))
}

/// `pkcs11:library-manufacturer=…;library-description=…`.
pub fn module_uri(manufacturer: &str, description: &str) -> String {
    format!(
        "pkcs11:library-manufacturer={};library-description={}",
        encode(manufacturer.trim().as_bytes()),
        encode(description.trim().as_bytes())
    )
}

/// `pkcs11:token=…;…;object=LABEL;id=%..;type=…`.
pub fn object_uri(t: &TokenIdent, label: &str, id: &[u8], class: u64) -> String {
    let mut s = format!("pkcs11:{}", token_part(t));
    if !label.is_empty() {
        s.push_str(";object=");
        s.push_str(&encode(label.as_bytes()));
    }
    if !id.is_empty() {
        s.push_str(";id=");
        s.push_str(&encode_all(id));
    }
    if let Some(ty) = type_of_class(class) {
        s.push_str(";type=");
        s.push_str(ty);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t() -> TokenIdent {
        TokenIdent {
            label: "Release CA; prod ".into(),
            manufacturer: "SoftHSM project".into(),
            model: "SoftHSM v2".into(),
            serial: "1a2b".into(),
        }
    }

    #[test]
    fn object_uris_round_trip_with_the_rfcs_encoding() {
        let u = object_uri(&t(), "release key/1", &[0x0a, 0xff], CKO_PRIVATE_KEY);
        assert_eq!(
            u,
            "pkcs11:token=Release%20CA%3B%20prod;manufacturer=SoftHSM%20project;serial=1a2b;model=SoftHSM%20v2;object=release%20key%2F1;id=%0A%FF;type=private"
        );
        let p = Pkcs11Uri::parse(&u).unwrap();
        assert_eq!(p.text("token").as_deref(), Some("Release CA; prod"));
        assert_eq!(p.text("object").as_deref(), Some("release key/1"));
        assert_eq!(p.get("id"), Some(&[0x0a, 0xff][..]));
        assert_eq!(p.class().unwrap(), Some(CKO_PRIVATE_KEY));
    }

    #[test]
    fn queries_and_bad_input() {
        let p =
            Pkcs11Uri::parse("pkcs11:token=a?module-path=/usr/lib/x.so&pin-value=1234").unwrap();
        assert_eq!(p.query("module-path"), Some("/usr/lib/x.so"));
        assert_eq!(p.query("pin-value"), Some("1234"));
        let e = Pkcs11Uri::parse("pkcs11:object=a%2").unwrap_err();
        assert_eq!(e.key, "errors.uri_bad_percent");
        assert!(
            e.text.contains("bad percent-encoding") && e.text.contains("object"),
            "{e}"
        );
        let e = Pkcs11Uri::parse("pkcs11:id=%zz").unwrap_err();
        assert!(e.text.contains("%zz"), "{e}");
        // The pkcs11_uri fuzz target found "%+A" read as %0A (a sign is not a hexadecimal
        // digit); the same error path cut a character after the '%' in the middle (a panic).
        let e = Pkcs11Uri::parse("pkcs11:id=%+A").unwrap_err();
        assert!(e.text.contains("'%+A'"), "{e}");
        let e = Pkcs11Uri::parse("pkcs11:object=%a\u{e9}t\u{e9}").unwrap_err();
        assert!(e.text.contains("'%a\u{e9}'"), "{e}");
        assert!(Pkcs11Uri::parse("pkcs11:object=%\u{e9}").is_err());
        assert!(Pkcs11Uri::parse("pkcs11:object=100%").is_err());
        assert_eq!(
            Pkcs11Uri::parse("pkcs11:id=%0a%FF").unwrap().get("id"),
            Some(&[0x0a, 0xff][..])
        );
        assert_eq!(
            Pkcs11Uri::parse("label:x").unwrap_err().key,
            "errors.uri_not_pkcs11"
        );
        assert_eq!(
            Pkcs11Uri::parse("pkcs11:token").unwrap_err().key,
            "errors.uri_part_not_pair"
        );
        assert_eq!(
            Pkcs11Uri::parse("pkcs11:token=a?pin-value")
                .unwrap_err()
                .key,
            "errors.uri_query_not_pair"
        );
        assert_eq!(
            Pkcs11Uri::parse("pkcs11:token=a?pin-value=%FF")
                .unwrap_err()
                .key,
            "errors.uri_query_not_utf8"
        );
        let e = Pkcs11Uri::parse("pkcs11:type=banana")
            .unwrap()
            .class()
            .unwrap_err();
        assert_eq!(e.key, "errors.uri_type_unknown");
        assert!(e.text.starts_with("type=banana is not one of"), "{e}");
    }
}
