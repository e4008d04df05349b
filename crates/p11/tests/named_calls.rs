//! Every call reports the function it made: the name a function is looked up by in the
//! module's tables is the name its errors carry. On real tokens; one process per test
//! (cargo nextest).

use p11::sys::*;
use p11::{Error, Mechanism, Template};
use testkit::{Backend, TestToken};

fn not_offered<T: std::fmt::Debug>(r: p11::Result<T>) -> &'static str {
    match r {
        Err(Error::NotSupported { function }) => function,
        other => panic!("expected NotSupported, got {other:?}"),
    }
}

/// SoftHSM2 has a 2.40 table and no vendor symbols: every vendor call, and the KEM calls
/// (neither the 3.2 functions nor Luna's), are "not offered", by name.
#[test]
fn calls_a_module_lacks_are_named() {
    let t = TestToken::new(Backend::SoftHsm);
    let (m, slot) = (&t.module, t.slot);
    assert_eq!(
        not_offered(m.ca_firmware_version(slot)),
        "CA_GetFirmwareVersion"
    );
    assert_eq!(not_offered(m.ca_hsm_stats(slot, &[1])), "CA_GetHSMStats");
    assert_eq!(
        not_offered(m.ca_hsm_storage(slot)),
        "CA_GetHSMStorageInformation"
    );
    assert_eq!(
        not_offered(m.ca_token_storage(slot)),
        "CA_GetTokenStorageInformation"
    );
    assert_eq!(
        not_offered(m.ca_token_policies(slot)),
        "CA_GetTokenPolicies"
    );
    assert_eq!(
        not_offered(m.ca_token_capabilities(slot)),
        "CA_GetTokenCapabilities"
    );
    assert_eq!(
        not_offered(m.ca_hsm_capabilities(slot)),
        "CA_GetHSMCapabilitySet"
    );
    assert_eq!(not_offered(m.ca_hsm_policies(slot)), "CA_GetHSMPolicySet");
    assert_eq!(
        not_offered(m.ca_element_description(slot, true, false, 0)),
        "CA_GetConfigurationElementDescription"
    );
    assert_eq!(not_offered(m.ca_token_status(slot)), "CA_GetTokenStatus");
    assert_eq!(not_offered(m.sim_control("{}")), "LUNASIM_Control");

    let s = t.user_session();
    assert_eq!(
        not_offered(s.ca_utilization(false)),
        "CA_ReadUtilizationMetrics"
    );
    assert_eq!(
        not_offered(s.ca_utilization(true)),
        "CA_ReadAndResetUtilizationMetrics"
    );
    let kem = Mechanism::new(CKM_ML_KEM);
    assert_eq!(
        not_offered(s.encapsulate(&kem, 1, &mut Template::new())),
        "C_EncapsulateKey"
    );
    assert_eq!(
        not_offered(s.decapsulate(&kem, 1, &mut Template::new(), &[0; 8])),
        "C_DecapsulateKey"
    );
}

/// A vendor call that fails names the vendor function, and its vendor code by the name
/// the module's family gives it.
#[test]
fn failed_vendor_calls_are_named() {
    let t = TestToken::new(Backend::LunaSim);
    let e = t.module.ca_firmware_version(t.slot + 1000).unwrap_err();
    assert_eq!(e.function(), Some("CA_GetFirmwareVersion"));
    assert_eq!(e.rv(), Some(CKR_SLOT_ID_INVALID));

    let e = t
        .module
        .ca_element_description(t.slot, true, false, 9999)
        .unwrap_err();
    assert_eq!(e.function(), Some("CA_GetConfigurationElementDescription"));
    assert_eq!(e.rv(), Some(p11::names::luna::CKR_POLICY_ID_INVALID));
    assert!(e.to_string().contains("CKR_POLICY_ID_INVALID"), "{e}");
}
