//! Sessions on a group's virtual slot. Each holds one session per member, opened when the
//! member is first needed and logged in with the group's login; an operation runs on the
//! member its `*Init` call chose until it ends; searches run on the primary member.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use cryptoki_sys::*;
use parking_lot::{Mutex, RwLock};

use super::call;
use super::group::Group;
use super::objects::{self, VObject};

/// Virtual session handles: 0x4853_0000 ("HS") and up.
pub const VSESSION_BASE: CK_SESSION_HANDLE = 0x4853_0000;
const VSESSION_SPAN: CK_SESSION_HANDLE = 0x0100_0000;

/// The kinds of operation a session can have active at once (one each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpKind {
    Encrypt,
    Decrypt,
    Digest,
    Sign,
    SignRecover,
    Verify,
    VerifyRecover,
    MessageEncrypt,
    MessageDecrypt,
    MessageSign,
    MessageVerify,
    VerifySignature,
}

#[derive(Default)]
pub struct VState {
    /// Virtual handles still to be returned by the current search.
    pub find: Option<VecDeque<CK_OBJECT_HANDLE>>,
    /// Which member serves each active operation.
    pub ops: HashMap<OpKind, usize>,
}

pub struct VSession {
    pub handle: CK_SESSION_HANDLE,
    pub group: Arc<Group>,
    pub flags: CK_FLAGS,
    inner: Mutex<HashMap<usize, CK_SESSION_HANDLE>>,
    pub state: Mutex<VState>,
}

fn registry() -> &'static RwLock<HashMap<CK_SESSION_HANDLE, Arc<VSession>>> {
    static R: OnceLock<RwLock<HashMap<CK_SESSION_HANDLE, Arc<VSession>>>> = OnceLock::new();
    R.get_or_init(Default::default)
}

static NEXT: AtomicU64 = AtomicU64::new(VSESSION_BASE);

pub fn is_virtual(h: CK_SESSION_HANDLE) -> bool {
    (VSESSION_BASE..VSESSION_BASE + VSESSION_SPAN).contains(&h)
}

pub fn get(h: CK_SESSION_HANDLE) -> Result<Arc<VSession>, CK_RV> {
    registry()
        .read()
        .get(&h)
        .cloned()
        .ok_or(CKR_SESSION_HANDLE_INVALID)
}

/// The group's open virtual sessions.
pub fn of_group(group: &Group) -> Vec<Arc<VSession>> {
    registry()
        .read()
        .values()
        .filter(|s| s.group.index == group.index)
        .cloned()
        .collect()
}

/// Open a virtual session: the primary member's session is opened at once (so a member
/// that refuses the flags refuses here), the others when they are needed.
pub fn open(group: &Arc<Group>, flags: CK_FLAGS) -> Result<CK_SESSION_HANDLE, CK_RV> {
    let primary = group
        .primary()
        .ok_or(p11::names::luna::CKR_UNABLE_TO_CONNECT)?;
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let handle = VSESSION_BASE + (n - VSESSION_BASE) % VSESSION_SPAN;
    let s = Arc::new(VSession {
        handle,
        group: group.clone(),
        flags,
        inner: Mutex::new(HashMap::new()),
        state: Mutex::new(VState::default()),
    });
    s.inner(primary)?;
    registry().write().insert(handle, s);
    Ok(handle)
}

/// Close a virtual session and its member sessions.
pub fn close(h: CK_SESSION_HANDLE) -> Result<(), CK_RV> {
    let s = registry()
        .write()
        .remove(&h)
        .ok_or(CKR_SESSION_HANDLE_INVALID)?;
    s.close_members();
    Ok(())
}

/// Forget every virtual session (the module was finalized: member sessions are gone).
pub fn forget_all() {
    registry().write().clear();
}

/// Drop every virtual session's member sessions (sessions were dropped under them, as a
/// token removal does); the virtual sessions answer `CKR_SESSION_HANDLE_INVALID` from now.
pub fn drop_all() {
    let all: Vec<_> = registry().write().drain().map(|(_, s)| s).collect();
    for s in all {
        s.inner.lock().clear();
        s.group.objects.lock().forget_session_objects(None);
    }
}

impl VSession {
    /// This session's member session on `member`, opened (and logged in with the group's
    /// login) on first use.
    pub fn inner(&self, member: usize) -> Result<CK_SESSION_HANDLE, CK_RV> {
        if let Some(h) = self.inner.lock().get(&member) {
            return Ok(*h);
        }
        let m = &self.group.members[member];
        let h = call::open_session(m.slot, self.flags)?;
        if let Some(login) = self.group.login.lock().as_ref() {
            let rv = call::login(h, login.user, &login.pin);
            if rv != CKR_OK {
                call::close_session(h);
                return Err(rv);
            }
        }
        Ok(*self.inner.lock().entry(member).or_insert(h))
    }

    /// The member sessions open so far.
    pub fn members(&self) -> Vec<(usize, CK_SESSION_HANDLE)> {
        let mut v: Vec<_> = self.inner.lock().iter().map(|(m, h)| (*m, *h)).collect();
        v.sort();
        v
    }

    /// Run `f` on `member`'s session and note that the member served `function`.
    pub fn on(
        &self,
        member: usize,
        function: &'static str,
        f: impl FnOnce(CK_SESSION_HANDLE) -> CK_RV,
    ) -> CK_RV {
        let h = match self.inner(member) {
            Ok(h) => h,
            Err(rv) => return rv,
        };
        let rv = f(h);
        self.group.record_served(member, function);
        rv
    }

    /// Forget the member session on `member` (it was closed under us).
    pub fn forget_member(&self, member: usize) {
        self.inner.lock().remove(&member);
    }

    fn close_members(&self) {
        let members: Vec<_> = self.inner.lock().drain().collect();
        for (_, h) in members {
            call::close_session(h);
        }
        self.group
            .objects
            .lock()
            .forget_session_objects(Some(self.handle));
    }

    /// The member for a new operation: the one already serving another operation of this
    /// session (dual-function calls need both on one member), else the next in turn.
    pub fn member_for_new_op(&self) -> Option<usize> {
        if let Some(m) = self.state.lock().ops.values().next() {
            return Some(*m);
        }
        self.group.next_member()
    }

    /// The member copy of a virtual object, located and remembered on first use.
    pub fn resolve(&self, obj: CK_OBJECT_HANDLE, member: usize) -> Result<CK_OBJECT_HANDLE, CK_RV> {
        let known: VObject = self
            .group
            .objects
            .lock()
            .get(obj)
            .cloned()
            .ok_or(CKR_OBJECT_HANDLE_INVALID)?;
        if let Some(h) = known.on.get(&member) {
            return Ok(*h);
        }
        let h = self.inner(member)?;
        let found =
            objects::locate(h, &known.identity, known.token)?.ok_or(CKR_OBJECT_HANDLE_INVALID)?;
        if let Some(o) = self.group.objects.lock().get_mut(obj) {
            o.on.insert(member, found);
        }
        Ok(found)
    }

    /// Resolve, and if the remembered handle went stale (the copy was destroyed and made
    /// again on the member's own slot), look once more.
    pub fn with_object(
        &self,
        obj: CK_OBJECT_HANDLE,
        member: usize,
        f: impl Fn(CK_OBJECT_HANDLE) -> CK_RV,
    ) -> CK_RV {
        let h = match self.resolve(obj, member) {
            Ok(h) => h,
            Err(rv) => return rv,
        };
        let rv = f(h);
        if rv != CKR_OBJECT_HANDLE_INVALID && rv != CKR_KEY_HANDLE_INVALID {
            return rv;
        }
        if let Some(o) = self.group.objects.lock().get_mut(obj) {
            o.on.remove(&member);
        }
        match self.resolve(obj, member) {
            Ok(h2) if h2 != h => f(h2),
            _ => rv,
        }
    }
}
