//! A global allocator for tests that checks secrets are wiped before their memory is
//! given back: while armed it scans every heap block the process frees (and every block a
//! `realloc` moves away from) for the byte strings it watches, and counts the blocks that
//! still held one. A PIN kept in a [`crate::Pin`] is zeroized on drop and never counts; a
//! plain `String` copy that is dropped does.
//!
//! Only memory that goes through Rust's global allocator is seen: the PKCS#11 module's own
//! allocations (C `malloc` inside SoftHSM, or another Rust cdylib's allocator) are the
//! token's business. Install it in a test binary:
//!
//! ```ignore
//! #[global_allocator]
//! static HEAP: p11::heapwatch::SecretWatch = p11::heapwatch::SecretWatch;
//! ```
//!
//! Behind the `heapwatch` feature; nothing in the product links it. It needs `unsafe` (it
//! is an allocator), which is why it lives in this crate.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};

const MAX_NEEDLES: usize = 4;
const MAX_NEEDLE_LEN: usize = 256;
const MAX_RECORDED: usize = 8;

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: AtomicU8 = AtomicU8::new(0);
#[allow(clippy::declare_interior_mutable_const)]
const NO_NEEDLE: [AtomicU8; MAX_NEEDLE_LEN] = [ZERO; MAX_NEEDLE_LEN];
#[allow(clippy::declare_interior_mutable_const)]
const NONE: AtomicUsize = AtomicUsize::new(0);

// Fixed storage: the allocator must not allocate to decide what to look for.
static NEEDLES: [[AtomicU8; MAX_NEEDLE_LEN]; MAX_NEEDLES] = [NO_NEEDLE; MAX_NEEDLES];
static NEEDLE_LENS: [AtomicUsize; MAX_NEEDLES] = [NONE; MAX_NEEDLES];
static ARMED: AtomicBool = AtomicBool::new(false);
static BLOCKS: AtomicUsize = AtomicUsize::new(0);
static BYTES: AtomicUsize = AtomicUsize::new(0);
static HITS: AtomicUsize = AtomicUsize::new(0);
static HIT_SIZES: [AtomicUsize; MAX_RECORDED] = [NONE; MAX_RECORDED];

/// What the watch saw between [`watch`] and [`stop`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// Heap blocks freed (or moved) while armed, and their bytes: how hard it looked.
    pub blocks_scanned: usize,
    pub bytes_scanned: usize,
    /// Blocks that still held a watched string when they were freed.
    pub unwiped_blocks: usize,
    /// Sizes of the first few such blocks (to find them).
    pub unwiped_sizes: Vec<usize>,
}

/// Start watching for these byte strings (at most 4, each 1..=256 bytes); resets counts.
pub fn watch(needles: &[&[u8]]) {
    assert!(
        needles.len() <= MAX_NEEDLES,
        "at most {MAX_NEEDLES} needles"
    );
    ARMED.store(false, Ordering::SeqCst);
    for (i, slot) in NEEDLE_LENS.iter().enumerate() {
        let n = needles.get(i).copied().unwrap_or_default();
        assert!(
            n.len() <= MAX_NEEDLE_LEN,
            "a needle longer than {MAX_NEEDLE_LEN} bytes"
        );
        for (j, b) in n.iter().enumerate() {
            NEEDLES[i][j].store(*b, Ordering::Relaxed);
        }
        slot.store(n.len(), Ordering::Relaxed);
    }
    for c in [&BLOCKS, &BYTES, &HITS].into_iter().chain(HIT_SIZES.iter()) {
        c.store(0, Ordering::Relaxed);
    }
    ARMED.store(true, Ordering::SeqCst);
}

/// Stop watching and report.
pub fn stop() -> Report {
    ARMED.store(false, Ordering::SeqCst);
    let hits = HITS.load(Ordering::SeqCst);
    Report {
        blocks_scanned: BLOCKS.load(Ordering::SeqCst),
        bytes_scanned: BYTES.load(Ordering::SeqCst),
        unwiped_blocks: hits,
        unwiped_sizes: HIT_SIZES
            .iter()
            .take(hits.min(MAX_RECORDED))
            .map(|s| s.load(Ordering::SeqCst))
            .collect(),
    }
}

/// Read byte `i` of a block being freed.
///
/// # Safety
/// `ptr` must point to a live block longer than `i`.
unsafe fn byte(ptr: *const u8, i: usize) -> u8 {
    // SAFETY: in bounds of a live block (caller). Bytes a program never wrote (a Vec's spare
    // capacity) are still memory the allocator handed out; a volatile read fetches whatever
    // is there without letting the compiler reason about its contents.
    unsafe { std::ptr::read_volatile(ptr.add(i)) }
}

/// Does the block hold a watched string?
///
/// # Safety
/// `ptr` must point to a live block of `size` bytes.
unsafe fn holds_needle(ptr: *const u8, size: usize) -> bool {
    NEEDLE_LENS.iter().enumerate().any(|(i, len)| {
        let n = len.load(Ordering::Relaxed);
        n > 0
            && size >= n
            && (0..=size - n).any(|at| {
                (0..n).all(|k| {
                    // SAFETY: at + k < size.
                    let b = unsafe { byte(ptr, at + k) };
                    b == NEEDLES[i][k].load(Ordering::Relaxed)
                })
            })
    })
}

/// Scan a block that is about to be freed.
///
/// # Safety
/// `ptr` must point to a live block of `size` bytes.
unsafe fn inspect(ptr: *const u8, size: usize) {
    BLOCKS.fetch_add(1, Ordering::Relaxed);
    BYTES.fetch_add(size, Ordering::Relaxed);
    // SAFETY: as the caller guarantees.
    if unsafe { holds_needle(ptr, size) } {
        let k = HITS.fetch_add(1, Ordering::SeqCst);
        if let Some(s) = HIT_SIZES.get(k) {
            s.store(size, Ordering::SeqCst);
        }
    }
}

/// The watching allocator: `System` underneath.
pub struct SecretWatch;

// SAFETY: every method forwards to `System` with the caller's arguments; the only extra
// work is reading a block before it is freed, and `realloc` done as alloc + copy + free
// while armed (a valid realloc: same contents up to the smaller size, old block freed).
unsafe impl GlobalAlloc for SecretWatch {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded under the same contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded under the same contract.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if ARMED.load(Ordering::Relaxed) {
            // SAFETY: `ptr` is a live block of `layout.size()` bytes until the dealloc below.
            unsafe { inspect(ptr, layout.size()) };
        }
        // SAFETY: forwarded under the same contract.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !ARMED.load(Ordering::Relaxed) {
            // SAFETY: forwarded under the same contract.
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        // SAFETY: the caller guarantees new_size > 0 and a valid size for this alignment.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: a fresh block of the new layout.
        let new = unsafe { System.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: both blocks are live, distinct, and at least min(old, new) long.
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                inspect(ptr, layout.size());
                System.dealloc(ptr, layout);
            }
        }
        new
    }
}
