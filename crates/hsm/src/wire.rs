//! One spelling per name: closed sets that cross IPC and the CLI are enums whose serde
//! name is the text everywhere (JSON, TypeScript unions, `hsmc` text output, audit records).
//! [`wire_display!`](crate::wire_display) gives such an enum a `Display` that prints its
//! serde name, so text output cannot drift from JSON.

use serde::Serialize;

/// The serde name of a unit enum variant (or any value serialising to a JSON string).
pub fn wire_name<T: Serialize + ?Sized>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

/// `impl Display` for enums by their serde names.
#[macro_export]
macro_rules! wire_display {
    ($($t:ty),* $(,)?) => {$(
        impl ::std::fmt::Display for $t {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.pad(&$crate::wire::wire_name(self))
            }
        }
    )*};
}

#[cfg(test)]
mod tests {
    #[derive(serde::Serialize)]
    #[serde(rename_all = "snake_case")]
    enum Kind {
        ManifestSignature,
    }
    crate::wire_display!(Kind);

    #[test]
    fn display_is_the_serde_name_and_honours_width() {
        assert_eq!(Kind::ManifestSignature.to_string(), "manifest_signature");
        assert_eq!(
            format!("[{:<20}]", Kind::ManifestSignature),
            "[manifest_signature  ]"
        );
    }
}
