//! Random numbers from the token.

use cryptoki_sys::*;

use super::Session;
use crate::error::Result;
use crate::module::func::p11_fn;

impl Session {
    pub fn generate_random(&self, buf: &mut [u8]) -> Result<()> {
        let generate_random = p11_fn!(self.module, C_GenerateRandom)?;
        // SAFETY: buf is a live mutable slice of the length we pass.
        let rv =
            unsafe { (generate_random.f)(self.handle, buf.as_mut_ptr(), buf.len() as CK_ULONG) };
        generate_random.check(rv)
    }
}
