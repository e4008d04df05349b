//! Errors of the HSM services.

use std::time::Duration;

use p11::ErrorClass;

#[derive(Debug, Clone, thiserror::Error)]
pub enum HsmError {
    /// A PKCS#11 call failed (any class except a disconnect, which has its own variant).
    #[error(transparent)]
    P11(p11::Error),
    /// The module reported the device or connection gone. `recovered` says whether the
    /// pool has already reinitialized it (the caller may simply try again).
    #[error("{error}{}", if *.recovered { " — the connection was re-established; try again" } else { "" })]
    Disconnected { error: p11::Error, recovered: bool },
    /// Too many consecutive failures: calls are refused for a while without touching the
    /// HSM (circuit breaker open).
    #[error("the HSM is failing repeatedly; calls are paused for {} ms", .retry_after.as_millis())]
    CircuitOpen { retry_after: Duration },
    /// The pool's backlog is full: refused at once instead of queueing without bound.
    #[error("all {size} sessions are busy and {waiting} requests are already waiting")]
    Busy { size: usize, waiting: usize },
    /// No session became free in time.
    #[error("no session became free within {} ms", .0.as_millis())]
    Timeout(Duration),
    /// After a reconnection the token refused the PIN the pool had logged in with; the
    /// pool forgot it (it is never tried again) and the partition is logged out.
    #[error("after the HSM reconnected, the token refused the PIN the console had logged in with ({0}); log in again")]
    LoginLost(p11::Error),
    /// The operation needs a logged-in partition.
    #[error("the partition is not logged in")]
    NotLoggedIn,
    #[error("key not found: {0}")]
    KeyNotFound(crate::Text),
    /// Invalid input with a plain English message (no catalog key): the bench's probes and
    /// a console refusal that has none. Officer-facing refusals are [`HsmError::Refused`].
    #[error("{0}")]
    InvalidInput(String),
    /// Unsupported, in plain English (the bench's probes); see [`HsmError::NotSupported`].
    #[error("{0}")]
    Unsupported(String),
    /// Input an officer gave that the console refuses (a selector that selects nothing
    /// usable, an object that does not reveal what was asked): the message has a catalog key.
    #[error("{0}")]
    Refused(crate::Text),
    /// Something the console or the token does not support, with a catalog key (like
    /// `Unsupported`, which stays for messages without one).
    #[error("{0}")]
    NotSupported(crate::Text),
    /// The token did something a correct token would not (e.g. ignored a parameter set),
    /// with a catalog key.
    #[error("{0}")]
    TokenMisbehaved(crate::Text),
}

impl HsmError {
    pub fn class(&self) -> ErrorClass {
        match self {
            HsmError::P11(e) => e.class(),
            HsmError::Disconnected { .. } | HsmError::CircuitOpen { .. } => {
                ErrorClass::Disconnected
            }
            HsmError::Busy { .. } | HsmError::Timeout(_) => ErrorClass::Busy,
            HsmError::NotLoggedIn | HsmError::LoginLost(_) => ErrorClass::Pin,
            HsmError::KeyNotFound(_) => ErrorClass::KeyNotFound,
            _ => ErrorClass::Operation,
        }
    }

    /// The PKCS#11 error behind this one, if any.
    pub fn p11(&self) -> Option<&p11::Error> {
        match self {
            HsmError::P11(e) | HsmError::Disconnected { error: e, .. } | HsmError::LoginLost(e) => {
                Some(e)
            }
            _ => None,
        }
    }
}

impl From<p11::Error> for HsmError {
    fn from(e: p11::Error) -> Self {
        if let p11::Error::StaleHandle { handle, .. } = e {
            return HsmError::KeyNotFound(crate::text!(
                "errors.handle_from_before_reconnect",
                "handle {{handle}} was given out before the HSM reconnected, and the token may have given its number to another object since; nothing was sent — list the objects again and choose",
                handle = handle
            ));
        }
        if e.class() == ErrorClass::Disconnected {
            HsmError::Disconnected {
                error: e,
                recovered: false,
            }
        } else {
            HsmError::P11(e)
        }
    }
}

pub type Result<T> = std::result::Result<T, HsmError>;
