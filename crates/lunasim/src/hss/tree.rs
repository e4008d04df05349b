//! LMS trees kept in memory so a signature only looks its authentication path up.
//!
//! A tree of height h is cut into blocks: subtrees of height b (b = h up to H15, so the
//! whole tree — at most 2^16 nodes, 2 MiB — is one block; b = 10 for H20). The nodes above
//! the blocks (`top`, heights b…h) are kept for the tree's whole life; of the blocks only
//! the one holding the current leaf is kept, and the next one is built leaf by leaf while
//! the current one is used ([`BlockBuilder`]). A next tree is built the same way
//! ([`TreeBuilder`]) while the current tree of its level signs.
//!
//! Nodes are indexed as RFC 8554 indexes them: 1 is the root, `2^h + q` is leaf q.

use std::sync::atomic::{AtomicU64, Ordering};

use super::lms::{interior, leaf, Node, Params, TreeId};

/// How a tree of height h is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub h: u32,
    /// Height of a block.
    pub b: u32,
}

impl Shape {
    pub fn of(h: u32) -> Shape {
        #[cfg(test)]
        if let Some((whole, b)) = test_split::get() {
            return Shape {
                h,
                b: if h <= whole { h } else { b },
            };
        }
        Shape {
            h,
            b: if h <= 15 { h } else { 10 },
        }
    }

    pub fn leaves(&self) -> u64 {
        1 << self.h
    }

    pub fn blocks(&self) -> u32 {
        1 << (self.h - self.b)
    }

    pub fn block_leaves(&self) -> u32 {
        1 << self.b
    }

    /// Length of the `top` array (index 0 unused).
    pub fn top_len(&self) -> usize {
        1 << (self.h - self.b + 1)
    }

    /// Length of a block's node array (index 0 unused).
    pub fn block_len(&self) -> usize {
        1 << (self.b + 1)
    }

    /// The global index of node `rel` of block `block`.
    fn global(&self, block: u32, rel: u32) -> u32 {
        let k = 31 - rel.leading_zeros(); // depth of rel inside the block
        let root = (1u32 << (self.h - self.b)) + block;
        (root << k) + (rel - (1 << k))
    }
}

/// One block's nodes, indexed 1 (the block's root) … 2^(b+1) − 1.
#[derive(Clone, PartialEq, Eq)]
pub struct Block {
    pub index: u32,
    pub nodes: Vec<Node>,
}

/// A tree ready to sign: its top and the block of the current leaf.
#[derive(Clone)]
pub struct Tree {
    pub id: TreeId,
    pub params: Params,
    pub shape: Shape,
    pub top: Vec<Node>,
    pub block: Block,
}

impl Tree {
    pub fn root(&self) -> Node {
        if self.shape.h == self.shape.b {
            self.block.nodes[1]
        } else {
            self.top[1]
        }
    }

    pub fn public_key(&self) -> Vec<u8> {
        super::lms::lms_public_key(self.params, &self.id.i, &self.root())
    }

    /// The authentication path of leaf q, which must be in the current block.
    pub fn path(&self, q: u32) -> Vec<Node> {
        let s = self.shape;
        debug_assert_eq!(q >> s.b, self.block.index);
        let block_root = (1u32 << (s.h - s.b)) + self.block.index;
        let mut r = (1u32 << s.h) + q;
        let mut path = Vec::with_capacity(s.h as usize);
        for j in 0..s.h {
            let sibling = r ^ 1;
            if j < s.b {
                // Inside the block: from global to the block's own numbering.
                let k = s.b - j; // depth below the block root
                let rel = sibling - (block_root << k) + (1 << k);
                path.push(self.block.nodes[rel as usize]);
            } else {
                path.push(self.top[sibling as usize]);
            }
            r >>= 1;
        }
        path
    }

    /// Do the block and the top agree (the block's root is the top's node for it)?
    pub fn consistent(&self) -> bool {
        let s = self.shape;
        self.top.len() == s.top_len()
            && self.block.nodes.len() == s.block_len()
            && self.block.index < s.blocks()
            && self.top[(s.blocks() + self.block.index) as usize] == self.block.nodes[1]
    }
}

/// Work counted for progress reports: leaves computed.
pub type Progress<'a> = Option<&'a AtomicU64>;

/// A block built one leaf at a time.
#[derive(Clone, PartialEq, Eq)]
pub struct BlockBuilder {
    pub block: Block,
    /// Leaves done.
    pub done: u32,
}

impl BlockBuilder {
    pub fn new(shape: Shape, index: u32) -> BlockBuilder {
        BlockBuilder {
            block: Block {
                index,
                nodes: vec![[0; 32]; shape.block_len()],
            },
            done: 0,
        }
    }

    pub fn complete(&self, shape: Shape) -> bool {
        self.done == shape.block_leaves()
    }

    /// Compute the next leaf and every node it completes.
    pub fn step(&mut self, id: &TreeId, params: Params, shape: Shape) {
        if self.complete(shape) {
            return;
        }
        let q = (self.block.index << shape.b) + self.done;
        let mut rel = shape.block_leaves() + self.done;
        self.block.nodes[rel as usize] = leaf(id, params, q);
        while rel > 1 && rel & 1 == 1 {
            rel >>= 1;
            let (l, r) = (
                self.block.nodes[2 * rel as usize],
                self.block.nodes[2 * rel as usize + 1],
            );
            self.block.nodes[rel as usize] = interior(
                &id.i,
                shape.global(self.block.index, rel),
                &l,
                &r,
                params.lms.m,
            );
        }
        self.done += 1;
    }

    /// Finish the block now, its leaves spread over the machine's cores.
    pub fn finish(&mut self, id: &TreeId, params: Params, shape: Shape, progress: Progress<'_>) {
        if self.complete(shape) {
            return;
        }
        let first = self.done as usize;
        let n = shape.block_leaves() as usize;
        let base = self.block.index << shape.b;
        let leaves = &mut self.block.nodes[n + first..2 * n];
        let workers = std::thread::available_parallelism()
            .map(|w| w.get())
            .unwrap_or(1)
            .min(leaves.len().div_ceil(16))
            .max(1);
        let per = leaves.len().div_ceil(workers);
        std::thread::scope(|scope| {
            for (c, chunk) in leaves.chunks_mut(per).enumerate() {
                scope.spawn(move || {
                    for (k, out) in chunk.iter_mut().enumerate() {
                        let q = base + (first + c * per + k) as u32;
                        *out = leaf(id, params, q);
                        if let Some(p) = progress {
                            p.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        // Interior nodes (cheap next to the leaves): all of them again.
        for rel in (1..n as u32).rev() {
            let (l, r) = (
                self.block.nodes[2 * rel as usize],
                self.block.nodes[2 * rel as usize + 1],
            );
            self.block.nodes[rel as usize] = interior(
                &id.i,
                shape.global(self.block.index, rel),
                &l,
                &r,
                params.lms.m,
            );
        }
        self.done = shape.block_leaves();
    }
}

/// A whole tree built one leaf at a time: its top, its first block, and the block in work.
#[derive(Clone, PartialEq, Eq)]
pub struct TreeBuilder {
    pub top: Vec<Node>,
    pub first: Option<Block>,
    pub current: BlockBuilder,
}

impl TreeBuilder {
    pub fn new(shape: Shape) -> TreeBuilder {
        TreeBuilder {
            top: vec![[0; 32]; shape.top_len()],
            first: None,
            current: BlockBuilder::new(shape, 0),
        }
    }

    pub fn leaves_done(&self, shape: Shape) -> u64 {
        ((self.current.block.index as u64) << shape.b) + self.current.done as u64
    }

    pub fn complete(&self, shape: Shape) -> bool {
        self.leaves_done(shape) == shape.leaves()
    }

    /// One leaf more.
    pub fn step(&mut self, id: &TreeId, params: Params, shape: Shape) {
        if self.complete(shape) {
            return;
        }
        self.current.step(id, params, shape);
        self.close_block(id, params, shape);
    }

    /// Finish the whole tree now (on the machine's cores).
    pub fn finish(&mut self, id: &TreeId, params: Params, shape: Shape, progress: Progress<'_>) {
        while !self.complete(shape) {
            self.current.finish(id, params, shape, progress);
            self.close_block(id, params, shape);
        }
    }

    /// A completed block goes into the top; the next one starts.
    fn close_block(&mut self, id: &TreeId, params: Params, shape: Shape) {
        if !self.current.complete(shape) {
            return;
        }
        let index = self.current.block.index;
        let mut r = shape.blocks() + index;
        self.top[r as usize] = self.current.block.nodes[1];
        while r > 1 && r & 1 == 1 {
            r >>= 1;
            let (a, b) = (self.top[2 * r as usize], self.top[2 * r as usize + 1]);
            self.top[r as usize] = interior(&id.i, r, &a, &b, params.lms.m);
        }
        if index == 0 {
            self.first = Some(self.current.block.clone());
        }
        if index + 1 < shape.blocks() {
            self.current = BlockBuilder::new(shape, index + 1);
        }
    }

    /// The finished tree, at its first block.
    pub fn into_tree(self, id: TreeId, params: Params, shape: Shape) -> Option<Tree> {
        if !self.complete(shape) {
            return None;
        }
        Some(Tree {
            id,
            params,
            shape,
            top: self.top,
            block: self.first?,
        })
    }
}

/// Build a whole tree now (key generation, or a cache that was lost).
pub fn build(id: TreeId, params: Params, progress: Progress<'_>) -> Tree {
    let shape = Shape::of(params.lms.h);
    let mut b = TreeBuilder::new(shape);
    b.finish(&id, params, shape, progress);
    b.into_tree(id, params, shape).expect("a finished builder")
}

/// Build block `index` of a tree now.
pub fn build_block(tree: &Tree, index: u32) -> Block {
    let mut b = BlockBuilder::new(tree.shape, index);
    b.finish(&tree.id, tree.params, tree.shape, None);
    b.block
}

/// Tests cut small trees into blocks, to reach the block logic of H20 trees cheaply.
#[cfg(test)]
pub mod test_split {
    use std::cell::Cell;

    thread_local! {
        static SPLIT: Cell<Option<(u32, u32)>> = const { Cell::new(None) };
    }

    /// Trees taller than `whole` are cut into blocks of height `b` on this thread.
    pub fn set(whole: u32, b: u32) {
        SPLIT.with(|s| s.set(Some((whole, b))));
    }

    pub fn get() -> Option<(u32, u32)> {
        SPLIT.with(|s| s.get())
    }
}
