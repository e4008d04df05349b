//! PINs are wiped from memory after use. This test binary runs on a watching allocator
//! (`p11::heapwatch`): every heap block freed while a session runs — a wrong PIN, a login,
//! key work, a logout, a second login, closing the console — is scanned for either PIN
//! before it goes back to the allocator. A block that still holds one is a copy somebody
//! forgot to zeroize.
//!
//! What it cannot see: the PKCS#11 module's own memory (SoftHSM's allocations are the
//! token's business), the webview's JavaScript string and Tauri's IPC buffers (the PIN
//! crosses IPC once as JSON; the console takes it from there), and `hsmc`'s environment
//! when the PIN comes from `HSMC_PIN`.

use console::views::UserKind;
use console::ErrorCode;
use hsm::algo::{Curve, KeySpec};
use p11::heapwatch::{self, SecretWatch};

use crate::common;

#[global_allocator]
static HEAP: SecretWatch = SecretWatch;

const WRONG_PIN: &str = "wrong-pin-86420";

fn watch_pins() {
    heapwatch::watch(&[testkit::USER_PIN.as_bytes(), WRONG_PIN.as_bytes()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pins_are_wiped_before_their_memory_is_freed() {
    // The built-in partition is off: the trail's key goes to the SoftHSM token, so its PIN
    // is the one watched.
    let e = common::token_logged_out(testkit::Backend::SoftHsm).await;
    let (c, pid) = (&e.c, &e.pid);

    // The watch sees a forgotten copy, and does not see a PIN that was zeroized.
    watch_pins();
    drop(std::hint::black_box(String::from(WRONG_PIN)));
    let r = heapwatch::stop();
    assert_eq!(r.unwiped_blocks, 1, "the watch missed a plain copy: {r:?}");
    watch_pins();
    drop(std::hint::black_box(p11::pin(String::from(WRONG_PIN))));
    let r = heapwatch::stop();
    assert_eq!(r.unwiped_blocks, 0, "a zeroized PIN was seen: {r:?}");

    // A session as an officer has it.
    watch_pins();
    let err = c
        .login(pid, UserKind::User, p11::pin(WRONG_PIN))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::PinIncorrect, "{err:?}");
    c.login(pid, UserKind::User, p11::pin(testkit::USER_PIN))
        .await
        .unwrap();
    let g = e
        .generate(KeySpec::Ec { curve: Curve::P256 }, "pin_memory")
        .await;
    c.admin().key_details(pid, g.private_handle).await.unwrap();
    c.logout(pid).await.unwrap();
    c.login(pid, UserKind::User, p11::pin(testkit::USER_PIN))
        .await
        .unwrap();
    c.close().await;
    // The console goes under the watch; the token and its files after it.
    let common::Env { c, .. } = e;
    drop(c);
    let r = heapwatch::stop();
    assert_eq!(
        r.unwiped_blocks, 0,
        "a PIN was left in freed memory (block sizes {:?}); {} blocks, {} bytes scanned",
        r.unwiped_sizes, r.blocks_scanned, r.bytes_scanned
    );
    assert!(r.blocks_scanned > 1000, "the watch was not looking: {r:?}");
    println!(
        "{} freed blocks ({} bytes) scanned, none held a PIN",
        r.blocks_scanned, r.bytes_scanned
    );
}
