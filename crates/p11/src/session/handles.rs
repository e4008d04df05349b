//! Object handles that carry the module generation they were given out in.
//!
//! A PKCS#11 object handle is valid for one initialization of the module: after
//! `C_Finalize` + `C_Initialize` (which the session pool does by itself when an HSM comes
//! back) a token may number its objects anew, and an old number may name another object.
//! So every handle this binding gives out carries its generation in the bits above the
//! token's own 32 (`generation − 1`, so the handles of a module's first initialization —
//! what a one-shot `hsmc` run and `pkcs11-tool` print — are the token's own numbers), and
//! every call that takes a handle checks it against the session's generation first. A
//! handle from another generation never reaches the token: the call fails with
//! [`Error::StaleHandle`], and the caller finds the object again by what it is.
//!
//! The tag keeps handles below 2^53, so they survive a JavaScript number. A token whose
//! own handles do not fit in 32 bits is refused (no module the project knows does that).

use cryptoki_sys::CK_OBJECT_HANDLE;

use super::Session;
use crate::error::{Error, Result};
use crate::types::ObjectHandle;

const TOKEN_BITS: u32 = 32;
const TOKEN_MASK: u64 = (1 << TOKEN_BITS) - 1;
/// Generations are counted modulo this (21 bits: tagged handles stay below 2^53).
const TAGS: u64 = 1 << 21;

/// The number the token itself uses for `h` (what `pkcs11-tool` prints).
pub fn token_handle(h: ObjectHandle) -> u64 {
    h & TOKEN_MASK
}

/// The module generation `h` was given out in (1 for a bare token number).
pub fn handle_generation(h: ObjectHandle) -> u64 {
    (h >> TOKEN_BITS) + 1
}

fn tag_of(generation: u64) -> u64 {
    generation.saturating_sub(1) % TAGS
}

impl Session {
    /// A handle the token returned, as this binding gives it out.
    pub(crate) fn given_out(
        &self,
        function: &'static str,
        raw: CK_OBJECT_HANDLE,
    ) -> Result<ObjectHandle> {
        if raw > TOKEN_MASK {
            return Err(Error::Malformed {
                function,
                detail: format!("object handle {raw:#x} does not fit in 32 bits"),
            });
        }
        Ok(tag_of(self.generation) << TOKEN_BITS | raw)
    }

    /// Whether `h` was given out in this session's module generation.
    pub fn gave_out(&self, h: ObjectHandle) -> bool {
        h >> TOKEN_BITS == tag_of(self.generation)
    }

    /// The token's number for `h`, when `h` was given out in this session's generation.
    pub(crate) fn on_token(&self, h: ObjectHandle) -> Result<CK_OBJECT_HANDLE> {
        if !self.gave_out(h) {
            return Err(Error::StaleHandle {
                handle: h,
                given_in: handle_generation(h),
                now: self.generation,
            });
        }
        Ok(token_handle(h))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_generation_handles_are_the_tokens_own_numbers() {
        assert_eq!(tag_of(1) << TOKEN_BITS | 7, 7);
        assert_eq!(handle_generation(7), 1);
        assert_eq!(token_handle(7), 7);
    }

    #[test]
    fn later_generations_are_told_apart_and_stay_below_2_pow_53() {
        let h = tag_of(3) << TOKEN_BITS | 7;
        assert_ne!(h, 7);
        assert_eq!(handle_generation(h), 3);
        assert_eq!(token_handle(h), 7);
        let last = tag_of(TAGS) << TOKEN_BITS | TOKEN_MASK;
        assert!(last < 1 << 53);
    }
}
