//! The HA control commands (through `LUNASIM_Control` or the control file):
//!
//! - `{"op":"member_down","member":2}` — member 2 (1-based, or its serial) stops serving:
//!   the group fails over to the others without an error to the caller, and notes what the
//!   member misses;
//! - `{"op":"member_up","member":2}` — it serves again; it "needs sync" until what it
//!   missed is replicated (at once when the group has `auto_resync` and a login);
//! - `{"op":"resync"}` (optionally `"member"`) — replicate now;
//! - `{"op":"ha_state"}` — every group as JSON: members, alive, needs sync, missing
//!   objects, which member served the last calls.
//!
//! `"group"` (label or serial) picks a group; the first one by default.

use std::sync::Arc;
use std::time::SystemTime;

use serde_json::{json, Value};

use super::group::Group;
use super::{all, replicate, state};

fn pick_group(v: &Value) -> Result<Arc<Group>, String> {
    let groups = all();
    let g = match v.get("group").and_then(Value::as_str) {
        Some(which) => groups
            .iter()
            .find(|g| g.config.label == which || g.config.serial == which)
            .cloned()
            .ok_or_else(|| format!("no HA group {which}"))?,
        None => groups.first().cloned().ok_or("no HA group is configured")?,
    };
    if let Some(why) = &g.refused {
        return Err(why.message.clone());
    }
    Ok(g)
}

fn pick_member(g: &Group, v: &Value) -> Result<Option<usize>, String> {
    let which = match v.get("member") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => return Err(format!("member must be a number or a serial, not {other}")),
    };
    g.member_by(&which)
        .map(Some)
        .ok_or_else(|| format!("{} has no member {which}", g.name()))
}

/// Resync every alive member that needs it (after a login, or a member coming back in a
/// group with `auto_resync`). Failures stay in the member's state.
pub fn resync_waiting(g: &Group) {
    for m in &g.members {
        if m.alive() && m.needs_sync() {
            if let Err(e) = replicate::resync(g, m.index) {
                eprintln!("lunasim: {}: automatic resync: {e}", g.name());
            }
        }
    }
}

/// Execute an HA command; `None` when `op` is not one.
pub fn execute(op: &str, v: &Value) -> Option<Result<String, String>> {
    let r = match op {
        "member_down" | "member_up" => (|| {
            let g = pick_group(v)?;
            let m = pick_member(&g, v)?.ok_or("which member? give \"member\"")?;
            {
                let mut st = g.members[m].state.lock();
                st.down = op == "member_down";
                st.down_since = st.down.then(SystemTime::now);
            }
            if op == "member_up" && g.config.auto_resync {
                resync_waiting(&g);
            }
            Ok(json!({"ok": true, "group": state::to_json(&g)}).to_string())
        })(),
        "resync" => (|| {
            let g = pick_group(v)?;
            let members: Vec<usize> = match pick_member(&g, v)? {
                Some(m) => vec![m],
                None => g.alive(),
            };
            let mut applied = 0;
            for m in members {
                applied += replicate::resync(&g, m)?;
            }
            Ok(json!({"ok": true, "applied": applied, "group": state::to_json(&g)}).to_string())
        })(),
        "ha_state" => Ok(json!({
            "groups": all().iter().map(|g| state::to_json(g)).collect::<Vec<_>>(),
        })
        .to_string()),
        _ => return None,
    };
    Some(r)
}
