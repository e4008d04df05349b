//! `ui/src/bindings.ts` must be exactly what the Rust types generate.

#[test]
fn typescript_bindings_are_current() {
    let path = testkit::repo_root().join("ui/src/bindings.ts");
    let fresh = console::bindings::typescript();
    if std::env::var_os("UPDATE_BINDINGS").is_some() {
        std::fs::write(&path, &fresh).unwrap();
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == fresh,
        "ui/src/bindings.ts is stale: run `make bindings` (UPDATE_BINDINGS=1 cargo test -p console --test bindings) and commit the result"
    );
}
