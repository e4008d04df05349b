//! IPC commands, one module per domain. Each command validates its input's shape, calls one
//! `console` service and returns its result or the `ApiError`; file locations come from
//! native dialogs opened here, never from the page. `surface.rs` lists them all.

pub mod app;
pub mod audit;
pub mod connections;
pub mod credentials;
mod dialogs;
pub mod ha;
pub mod health;
pub mod keys;
pub mod objects;
pub mod overview;
pub mod pqc;
pub mod probes;
pub mod sign;

type Cmd<T> = Result<T, console::ApiError>;

macro_rules! surface {
    ($($module:ident::{$($command:ident),* $(,)?}),* $(,)?) => {
        /// Every command's name, in the surface's order.
        #[cfg(test)]
        pub const NAMES: &[&str] = &[$($(stringify!($command)),*),*];

        /// The function Tauri dispatches every command to.
        pub fn handler() -> impl Fn(tauri::ipc::Invoke<tauri::Wry>) -> bool + Send + Sync + 'static {
            tauri::generate_handler![$($($module::$command),*),*]
        }

        /// What each command exchanges with the page (the generators' input).
        #[cfg(test)]
        pub fn signatures() -> Vec<crate::ipc::Signature> {
            use crate::ipc::Command;
            vec![$($(<$module::$command>::signature()),*),*]
        }
    };
}

include!("surface.rs");
