//! Re-exports Kryoptic's three PKCS#11 entry points under their standard C names so the
//! result loads like any other module (`C_GetFunctionList`, `C_GetInterfaceList`,
//! `C_GetInterface`). Everything else is reached through the function tables.
#![allow(non_snake_case)]

use kryoptic_lib::fns::general::{fn_get_function_list, fn_get_interface, fn_get_interface_list};
use kryoptic_lib::pkcs11::{
    CK_FLAGS, CK_FUNCTION_LIST_PTR_PTR, CK_INTERFACE_PTR, CK_INTERFACE_PTR_PTR, CK_RV,
    CK_ULONG_PTR, CK_UTF8CHAR_PTR, CK_VERSION_PTR,
};

#[unsafe(no_mangle)]
pub extern "C" fn C_GetFunctionList(list: CK_FUNCTION_LIST_PTR_PTR) -> CK_RV {
    fn_get_function_list(list)
}

#[unsafe(no_mangle)]
pub extern "C" fn C_GetInterfaceList(list: CK_INTERFACE_PTR, count: CK_ULONG_PTR) -> CK_RV {
    fn_get_interface_list(list, count)
}

#[unsafe(no_mangle)]
pub extern "C" fn C_GetInterface(
    name: CK_UTF8CHAR_PTR,
    version: CK_VERSION_PTR,
    interface: CK_INTERFACE_PTR_PTR,
    flags: CK_FLAGS,
) -> CK_RV {
    fn_get_interface(name, version, interface, flags)
}
