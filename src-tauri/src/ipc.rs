//! The IPC surface described once. Every command is a function marked
//! `#[ipc_macros::command]` in `commands/`, listed once in `commands/surface.rs`; every event
//! the window receives is listed in [`EVENTS`]. From those descriptions come:
//! - the handler Tauri dispatches to and the build script's command list (`surface!`),
//! - the permission set in `permissions/console.toml` ([`permissions_toml`]),
//! - the UI's `ui/src/bindings.ts` (every type that crosses IPC, found by following the
//!   commands' and events' types) and `ui/src/commands.ts` (a typed function per command,
//!   the `Commands` map the UI's test backend is typed against, the `Events` map).
//!
//! A test fails when any generated file differs from what is on disk; `make bindings`
//! rewrites them.

/// The console's event stream: one name, a tagged union of payloads.
pub const CONSOLE_EVENT: &str = "console-event";

#[cfg(test)]
mod describe;
#[cfg(test)]
pub use describe::*;
