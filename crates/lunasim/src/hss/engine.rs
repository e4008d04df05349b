//! The HSS signer: the trees of every level for the key's current position, the
//! authentication paths looked up, and the next block / next tree of each level built a
//! little with every signature, so that no signature waits for a whole tree.
//!
//! The key's position (the next leaf of every level) is the only state that decides
//! safety; it lives with the key object and is written to disk before a signature leaves.
//! Everything here is derived from the seed and the position and can be rebuilt — the
//! trees are kept (and cached on disk, see [`super::cache`]) for speed only.

use sha2::digest::Digest;
use zeroize::Zeroizing;

use super::lms::{self, Node, Params, TreeId};
use super::tree::{self, Block, BlockBuilder, Progress, Shape, Tree, TreeBuilder};

/// One level's state for the current position.
pub struct Level {
    /// The positions of the levels above: which tree of this level this is.
    pub prefix: Vec<u32>,
    pub tree: Tree,
    /// The parent's LMS signature of this tree's public key (empty at the top).
    pub signed: Vec<u8>,
    /// The next block of this tree, in work (trees taller than one block).
    pub next_block: Option<BlockBuilder>,
    /// The next tree of this level and its prefix, in work (levels below the top).
    pub next_tree: Option<(Vec<u32>, TreeBuilder)>,
    credit_block: f64,
    credit_tree: f64,
    /// Leaves built since the builders were last written to disk.
    pub unsaved_block: u64,
    pub unsaved_tree: u64,
}

impl Level {
    pub fn new(prefix: Vec<u32>, tree: Tree) -> Level {
        Level {
            prefix,
            tree,
            signed: Vec::new(),
            next_block: None,
            next_tree: None,
            credit_block: 0.0,
            credit_tree: 0.0,
            unsaved_block: 0,
            unsaved_tree: 0,
        }
    }
}

/// What changed and has to reach the disk cache.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Dirty {
    /// Levels whose tree or block changed.
    pub trees: Vec<usize>,
    /// Levels whose builders should be written.
    pub builders: Vec<usize>,
}

impl Dirty {
    fn tree(&mut self, l: usize) {
        if !self.trees.contains(&l) {
            self.trees.push(l);
        }
    }
    fn builder(&mut self, l: usize) {
        if !self.builders.contains(&l) {
            self.builders.push(l);
        }
    }
    pub fn merge(&mut self, other: Dirty) {
        other.trees.into_iter().for_each(|l| self.tree(l));
        other.builders.into_iter().for_each(|l| self.builder(l));
    }
    pub fn is_empty(&self) -> bool {
        self.trees.is_empty() && self.builders.is_empty()
    }
}

/// Everything needed to finish one signature at a reserved position, whatever the
/// engine does meanwhile: the signature's fixed parts and the one-time key's identity.
pub struct Reservation {
    /// `u32(L-1)` and the signed public keys of the levels below the top.
    head: Vec<u8>,
    bottom: TreeId,
    params: Params,
    q: u32,
    c: Node,
    path: Vec<Node>,
}

impl Reservation {
    /// The message hash, ready for the message.
    pub fn hasher(&self) -> sha2::Sha256 {
        lms::message_hasher(&self.bottom, self.q, &self.c, self.params.ots.n)
    }

    /// The HSS signature over the message fed to `hasher`.
    pub fn finish(self, hasher: sha2::Sha256) -> Vec<u8> {
        let q_hash: Node = hasher.finalize().into();
        let ots = lms::ots_sign(&self.bottom, self.params.ots, self.q, &self.c, &q_hash);
        let mut sig = self.head;
        sig.extend(lms::lms_signature(self.params, self.q, &ots, &self.path));
        sig
    }
}

/// The identity of the tree at `prefix` (its length is its level) of a key with these
/// levels' parameters.
pub fn tree_id(master: &[u8; 32], params: &[Params], prefix: &[u32]) -> TreeId {
    let mut id = lms::top_tree(master, params[0].n());
    for (q, child) in prefix.iter().zip(&params[1..]) {
        id = lms::child_tree(&id, *q, child.n());
    }
    id
}

/// The position after `pos` (bottom level fastest), or none after the last one.
pub fn increment(pos: &[u32], params: &[Params]) -> Option<Vec<u32>> {
    let mut next = pos.to_vec();
    for l in (0..next.len()).rev() {
        if (next[l] as u64) + 1 < 1u64 << params[l].lms.h {
            next[l] += 1;
            return Some(next);
        }
        next[l] = 0;
    }
    None
}

/// Positions from `pos` (included) that share its prefix `pos[..l]` — the signatures the
/// current tree of level `l` has left. 1 for `l` = the number of levels.
fn left_under(pos: &[u32], params: &[Params], l: usize) -> f64 {
    let mut n = 1.0;
    let mut below = 1.0;
    for k in (l..pos.len()).rev() {
        let size = (1u64 << params[k].lms.h) as f64;
        n += (size - 1.0 - pos[k] as f64) * below;
        below *= size;
    }
    n
}

/// How many of `remaining` leaves to build now, with `chances` opportunities left
/// (this one included) before they are needed.
fn share(credit: &mut f64, remaining: u64, chances: f64) -> u64 {
    if remaining == 0 {
        *credit = 0.0;
        return 0;
    }
    if chances <= 1.0 {
        return remaining;
    }
    *credit += remaining as f64 / chances;
    let n = (credit.floor() as u64).min(remaining);
    *credit -= n as f64;
    n
}

pub struct Engine {
    pub params: Vec<Params>,
    master: Zeroizing<[u8; 32]>,
    pub levels: Vec<Level>,
}

impl Engine {
    /// An engine with no trees yet (or the ones a cache held); [`Engine::align`] builds
    /// what is missing.
    pub fn new(params: Vec<Params>, master: &[u8; 32], levels: Vec<Level>) -> Engine {
        Engine {
            params,
            master: Zeroizing::new(*master),
            levels,
        }
    }

    /// The HSS public key: `u32(L) ‖` the top tree's LMS public key.
    pub fn public_key(&self) -> Vec<u8> {
        let mut pk = (self.params.len() as u32).to_be_bytes().to_vec();
        pk.extend(self.levels[0].tree.public_key());
        pk
    }

    pub fn tree_id(&self, prefix: &[u32]) -> TreeId {
        tree_id(&self.master, &self.params, prefix)
    }

    /// Make every level hold the tree and block of `pos`, and the signed public keys.
    /// Uses the builders when they hold what is needed; builds (on all cores) otherwise.
    pub fn align(&mut self, pos: &[u32], progress: Progress<'_>) -> Dirty {
        let mut dirty = Dirty::default();
        for l in 0..self.params.len() {
            let changed = self.align_tree(l, pos, progress, &mut dirty);
            self.align_block(l, pos[l], &mut dirty);
            if l > 0 && (changed || self.levels[l].signed.is_empty()) {
                self.levels[l].signed = self.sign_child(l, pos[l - 1]);
            }
        }
        dirty
    }

    fn align_tree(
        &mut self,
        l: usize,
        pos: &[u32],
        progress: Progress<'_>,
        dirty: &mut Dirty,
    ) -> bool {
        let prefix = &pos[..l];
        if self.levels.get(l).is_some_and(|lv| lv.prefix == prefix) {
            return false;
        }
        let params = self.params[l];
        let shape = Shape::of(params.lms.h);
        let id = self.tree_id(prefix);
        // The level's own next-tree builder holds the tree when the position moved on to it.
        let built = self
            .levels
            .get_mut(l)
            .and_then(|lv| lv.next_tree.take())
            .filter(|(p, _)| p == prefix)
            .and_then(|(_, mut b)| {
                b.finish(&id, params, shape, progress);
                b.into_tree(id.clone(), params, shape)
            });
        let tree = built.unwrap_or_else(|| tree::build(id, params, progress));
        let level = Level::new(prefix.to_vec(), tree);
        if l < self.levels.len() {
            self.levels[l] = level;
        } else {
            self.levels.push(level);
        }
        dirty.tree(l);
        dirty.builder(l);
        true
    }

    fn align_block(&mut self, l: usize, q: u32, dirty: &mut Dirty) {
        let lv = &mut self.levels[l];
        let want = q >> lv.tree.shape.b;
        if lv.tree.block.index == want {
            return;
        }
        let shape = lv.tree.shape;
        let block: Block = match lv.next_block.take() {
            Some(mut b) if b.block.index == want => {
                b.finish(&lv.tree.id, lv.tree.params, shape, None);
                b.block
            }
            _ => tree::build_block(&lv.tree, want),
        };
        lv.tree.block = block;
        dirty.tree(l);
        dirty.builder(l);
    }

    /// Level `l-1`'s signature (with its leaf `q`) of level `l`'s public key. Deterministic:
    /// made again after a restart, it is the same signature by the same one-time key.
    fn sign_child(&self, l: usize, q: u32) -> Vec<u8> {
        let parent = &self.levels[l - 1].tree;
        let child = &self.levels[l].tree;
        let n = parent.params.ots.n;
        let c = lms::randomizer(&child.id, q, n);
        let q_hash: Node = lms::message_hasher(&parent.id, q, &c, n)
            .chain_update(child.public_key())
            .finalize()
            .into();
        let ots = lms::ots_sign(&parent.id, parent.params.ots, q, &c, &q_hash);
        lms::lms_signature(parent.params, q, &ots, &parent.path(q))
    }

    /// The fixed parts of the signature at `pos` (the engine must be aligned to it).
    pub fn reserve(&self, pos: &[u32]) -> Reservation {
        let bottom = self.levels.last().expect("at least one level");
        let q = *pos.last().expect("at least one level");
        let mut head = ((self.params.len() - 1) as u32).to_be_bytes().to_vec();
        for lv in &self.levels[1..] {
            head.extend_from_slice(&lv.signed);
            head.extend(lv.tree.public_key());
        }
        Reservation {
            head,
            bottom: bottom.tree.id.clone(),
            params: bottom.tree.params,
            q,
            c: lms::randomizer(&bottom.tree.id, q, bottom.tree.params.ots.n),
            path: bottom.tree.path(q),
        }
    }

    /// After a signature: build each level's next block and next tree a little, at the
    /// rate that has them ready when `next` (the position of the following signature, if
    /// any) reaches them.
    pub fn advance(&mut self, next: &[u32]) -> Dirty {
        let mut dirty = Dirty::default();
        for l in 0..self.params.len() {
            if self.levels[l].prefix != next[..l] {
                continue; // moves to its next tree at the next signature
            }
            self.advance_block(l, next, &mut dirty);
            if l > 0 {
                self.advance_tree(l, next, &mut dirty);
            }
        }
        dirty
    }

    fn advance_block(&mut self, l: usize, next: &[u32], dirty: &mut Dirty) {
        let params = &self.params;
        let lv = &mut self.levels[l];
        let shape = lv.tree.shape;
        let want = (next[l] >> shape.b) + 1;
        if shape.h == shape.b || want >= shape.blocks() {
            lv.next_block = None;
            return;
        }
        if lv.next_block.as_ref().map(|b| b.block.index) != Some(want) {
            lv.next_block = Some(BlockBuilder::new(shape, want));
            lv.credit_block = 0.0;
        }
        let b = lv.next_block.as_mut().expect("set above");
        let below: f64 = params[l + 1..]
            .iter()
            .map(|p| (1u64 << p.lms.h) as f64)
            .product();
        let block_end = want << shape.b;
        let chances = (block_end - 1 - next[l]) as f64 * below + left_under(next, params, l + 1);
        let remaining = (shape.block_leaves() - b.done) as u64;
        let n = share(&mut lv.credit_block, remaining, chances);
        for _ in 0..n {
            b.step(&lv.tree.id, lv.tree.params, shape);
        }
        lv.unsaved_block += n;
        if n > 0
            && (b.complete(shape)
                || lv.unsaved_block >= checkpoint_every(shape.block_leaves() as u64))
        {
            lv.unsaved_block = 0;
            dirty.builder(l);
        }
    }

    fn advance_tree(&mut self, l: usize, next: &[u32], dirty: &mut Dirty) {
        let Some(prefix) = increment(&next[..l], &self.params[..l]) else {
            self.levels[l].next_tree = None;
            return;
        };
        let params = self.params[l];
        let shape = Shape::of(params.lms.h);
        let chances = left_under(next, &self.params, l);
        let id = self.tree_id(&prefix);
        let lv = &mut self.levels[l];
        if lv.next_tree.as_ref().map(|(p, _)| p) != Some(&prefix) {
            lv.next_tree = Some((prefix, TreeBuilder::new(shape)));
            lv.credit_tree = 0.0;
        }
        let (_, b) = lv.next_tree.as_mut().expect("set above");
        let remaining = shape.leaves() - b.leaves_done(shape);
        let n = share(&mut lv.credit_tree, remaining, chances);
        for _ in 0..n {
            b.step(&id, params, shape);
        }
        lv.unsaved_tree += n;
        if n > 0 && (b.complete(shape) || lv.unsaved_tree >= checkpoint_every(shape.leaves())) {
            lv.unsaved_tree = 0;
            dirty.builder(l);
        }
    }
}

/// Builders are written to disk every so many leaves: a crash costs at most that much
/// rebuilding, and the writes stay rare.
fn checkpoint_every(total: u64) -> u64 {
    (total / 16).max(256)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(lms: u32, ots: u32) -> Params {
        Params::from_codes(lms, ots).unwrap()
    }

    #[test]
    fn positions_count_like_a_mixed_radix_number() {
        let params = [p(5, 4), p(5, 4)];
        assert_eq!(increment(&[0, 0], &params), Some(vec![0, 1]));
        assert_eq!(increment(&[0, 31], &params), Some(vec![1, 0]));
        assert_eq!(increment(&[31, 31], &params), None);
        assert_eq!(left_under(&[0, 0], &params, 1), 32.0);
        assert_eq!(left_under(&[0, 30], &params, 1), 2.0);
        assert_eq!(left_under(&[0, 0], &params, 0), 1024.0);
        assert_eq!(left_under(&[0, 0], &params, 2), 1.0);
    }

    /// One signature at `pos` (moved on), as the key object makes it.
    fn sign(engine: &mut Engine, pos: &mut Option<Vec<u32>>, message: &[u8]) -> Vec<u8> {
        let p = pos.clone().expect("not exhausted");
        engine.align(&p, None);
        let r = engine.reserve(&p);
        *pos = increment(&p, &engine.params);
        if let Some(n) = pos {
            engine.advance(n);
        }
        let mut h = r.hasher();
        h.update(message);
        r.finish(h)
    }

    #[test]
    fn sha256_192_and_mixed_levels_sign_what_verifies() {
        // M24 over M24, M24 (W2) over M32 (W4), M32 over M24 (W1): past the first bottom
        // tree, and after a restart from the disk cache, the same signatures.
        for levels in [
            vec![(10, 8), (10, 7)],
            vec![(10, 6), (5, 3)],
            vec![(5, 4), (10, 5)],
        ] {
            let params: Vec<Params> = levels.iter().map(|(l, o)| p(*l, *o)).collect();
            let seed = [0x33u8; 32];
            let mut engine = Engine::new(params.clone(), &seed, Vec::new());
            engine.align(&[0, 0], None);
            let public = engine.public_key();
            assert_eq!(public.len(), super::super::public_key_len(&levels));
            let dir = tempfile::tempdir().unwrap();
            let trees = dir.path().join("k.trees");
            let mut pos = Some(vec![0, 0]);
            let mut sigs = Vec::new();
            for i in 0..40 {
                if i == 20 {
                    super::super::cache::save(&trees, &engine, &[0, 1], &[0, 1]).unwrap();
                }
                let msg = format!("artifact {i}");
                let sig = sign(&mut engine, &mut pos, msg.as_bytes());
                assert_eq!(
                    sig.len(),
                    super::super::signature_len(&levels),
                    "{levels:?}"
                );
                assert!(
                    super::super::verify(&public, msg.as_bytes(), &sig),
                    "{levels:?} {i}"
                );
                assert!(!super::super::verify(&public, b"other", &sig));
                sigs.push(sig);
            }
            let cached = super::super::cache::load(&trees, &seed, &params, &public);
            assert_eq!(cached.len(), 2, "{levels:?}: both levels from the disk");
            let mut again = Engine::new(params.clone(), &seed, cached);
            let mut pos = Some(vec![0, 20]);
            for (i, want) in sigs.iter().enumerate().skip(20) {
                let msg = format!("artifact {i}");
                assert_eq!(&sign(&mut again, &mut pos, msg.as_bytes()), want);
            }
        }
    }

    #[test]
    fn building_keeps_pace_with_the_deadline() {
        let mut credit = 0.0;
        let mut remaining = 32u64;
        let mut done_by = Vec::new();
        for chances in (1..=31).rev() {
            let n = share(&mut credit, remaining, chances as f64);
            remaining -= n;
            done_by.push(n);
        }
        assert_eq!(remaining, 0, "finished at the last chance");
        assert!(done_by.iter().all(|n| *n <= 2), "{done_by:?}");
    }
}
