//! The trees of a key on disk, beside its key file, so a restarted process signs at once
//! instead of rebuilding them: `<uid>.trees/` holds per level `tree-L` (the tree of the
//! current position: its top and current block), `block-L` (the next block in work) and
//! `next-L` (the next tree in work).
//!
//! Tree nodes are public values (they appear in signatures); nothing here is secret, and
//! nothing here decides which one-time key signs next — that is the key file's position.
//! A file is written atomically (temp, fsync, rename, fsync the directory) and carries its
//! own SHA-256; one that is damaged, or belongs to another tree, is ignored and rebuilt.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::digest::Digest;
use sha2::Sha256;

use super::engine::{tree_id, Engine, Level};
use super::lms::{Node, Params};
use super::tree::{Block, BlockBuilder, Shape, Tree, TreeBuilder};

const MAGIC: &[u8; 8] = b"LSHSSTR1";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Tree = 1,
    NextBlock = 2,
    NextTree = 3,
}

impl Kind {
    fn file(self, level: usize) -> String {
        match self {
            Kind::Tree => format!("tree-{level}"),
            Kind::NextBlock => format!("block-{level}"),
            Kind::NextTree => format!("next-{level}"),
        }
    }
}

#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    fn nodes(&mut self, nodes: &[Node]) {
        self.u32(nodes.len() as u32);
        for n in nodes {
            self.0.extend_from_slice(n);
        }
    }
    fn prefix(&mut self, p: &[u32]) {
        self.u32(p.len() as u32);
        for q in p {
            self.u32(*q);
        }
    }
    fn block(&mut self, b: &Block) {
        self.u32(b.index);
        self.nodes(&b.nodes);
    }
    fn finish(mut self) -> Vec<u8> {
        let sum = Sha256::digest(&self.0);
        self.0.extend_from_slice(&sum);
        self.0
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn open(bytes: &'a [u8]) -> Option<Reader<'a>> {
        let (body, sum) = bytes.split_at_checked(bytes.len().checked_sub(32)?)?;
        (Sha256::digest(body)[..] == *sum && body.starts_with(MAGIC))
            .then(|| Reader(&body[MAGIC.len()..]))
    }
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (a, b) = self.0.split_at_checked(n)?;
        self.0 = b;
        Some(a)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }
    fn nodes(&mut self, want: usize) -> Option<Vec<Node>> {
        let n = self.u32()? as usize;
        if n != want {
            return None;
        }
        let raw = self.take(n * 32)?;
        Some(
            raw.chunks_exact(32)
                .map(|c| c.try_into().expect("32"))
                .collect(),
        )
    }
    fn prefix(&mut self) -> Option<Vec<u32>> {
        let n = self.u32()? as usize;
        if n > 8 {
            return None;
        }
        (0..n).map(|_| self.u32()).collect()
    }
    fn block(&mut self, shape: Shape) -> Option<Block> {
        let index = self.u32()?;
        if index >= shape.blocks() {
            return None;
        }
        Some(Block {
            index,
            nodes: self.nodes(shape.block_len())?,
        })
    }
}

fn header(kind: Kind, level: usize, i: &[u8; 16]) -> Writer {
    let mut w = Writer::default();
    w.0.extend_from_slice(MAGIC);
    w.u32(kind as u32);
    w.u32(level as u32);
    w.0.extend_from_slice(i);
    w
}

fn read_header(r: &mut Reader<'_>, kind: Kind, level: usize) -> Option<[u8; 16]> {
    (r.u32()? == kind as u32 && r.u32()? as usize == level).then_some(())?;
    r.take(16)?.try_into().ok()
}

/// The folder of a key's trees.
pub fn dir_of(key_file: &Path) -> PathBuf {
    key_file.with_extension("trees")
}

fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = dir.join(format!(".{name}.tmp"));
    {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    fs::rename(&tmp, dir.join(name))
}

fn remove(dir: &Path, name: &str) -> std::io::Result<()> {
    match fs::remove_file(dir.join(name)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Write level `l`'s tree (`tree`) and/or builders (`builders`), then fsync the folder.
pub fn save(
    dir: &Path,
    engine: &Engine,
    trees: &[usize],
    builders: &[usize],
) -> std::io::Result<()> {
    if trees.is_empty() && builders.is_empty() {
        return Ok(());
    }
    fs::create_dir_all(dir)?;
    for &l in trees {
        let lv = &engine.levels[l];
        let mut w = header(Kind::Tree, l, &lv.tree.id.i);
        w.prefix(&lv.prefix);
        w.nodes(&lv.tree.top);
        w.block(&lv.tree.block);
        write_atomic(dir, &Kind::Tree.file(l), &w.finish())?;
    }
    for &l in builders {
        let lv = &engine.levels[l];
        match &lv.next_block {
            Some(b) => {
                let mut w = header(Kind::NextBlock, l, &lv.tree.id.i);
                w.prefix(&lv.prefix);
                w.u32(b.done);
                w.block(&b.block);
                write_atomic(dir, &Kind::NextBlock.file(l), &w.finish())?;
            }
            None => remove(dir, &Kind::NextBlock.file(l))?,
        }
        match &lv.next_tree {
            Some((prefix, b)) => {
                let mut w = header(Kind::NextTree, l, &engine.tree_id(prefix).i);
                w.prefix(prefix);
                w.nodes(&b.top);
                w.u32(b.first.is_some() as u32);
                if let Some(f) = &b.first {
                    w.block(f);
                }
                w.u32(b.current.done);
                w.block(&b.current.block);
                write_atomic(dir, &Kind::NextTree.file(l), &w.finish())?;
            }
            None => remove(dir, &Kind::NextTree.file(l))?,
        }
    }
    File::open(dir)?.sync_all()
}

/// The levels a cache holds, top first, as far as they are whole and belong to this key
/// (`public_key`: the HSS public key, which the top tree's root must match).
pub fn load(dir: &Path, master: &[u8; 32], params: &[Params], public_key: &[u8]) -> Vec<Level> {
    let mut levels = Vec::new();
    for l in 0..params.len() {
        let Some(mut lv) = load_tree(dir, l, master, params) else {
            break;
        };
        let m = params[0].lms.m;
        if l == 0 && public_key.get(28..28 + m) != Some(&lv.tree.root()[..m]) {
            break;
        }
        lv.next_block = load_next_block(dir, l, &lv);
        lv.next_tree = load_next_tree(dir, l, master, params);
        levels.push(lv);
    }
    levels
}

fn load_tree(dir: &Path, l: usize, master: &[u8; 32], all: &[Params]) -> Option<Level> {
    let params = all[l];
    let bytes = fs::read(dir.join(Kind::Tree.file(l))).ok()?;
    let mut r = Reader::open(&bytes)?;
    let i = read_header(&mut r, Kind::Tree, l)?;
    let prefix = r.prefix()?;
    if prefix.len() != l {
        return None;
    }
    let id = tree_id(master, all, &prefix);
    if id.i != i {
        return None;
    }
    let shape = Shape::of(params.lms.h);
    let top = r.nodes(shape.top_len())?;
    let block = r.block(shape)?;
    let tree = Tree {
        id,
        params,
        shape,
        top,
        block,
    };
    tree.consistent().then(|| Level::new(prefix, tree))
}

fn load_next_block(dir: &Path, l: usize, lv: &Level) -> Option<BlockBuilder> {
    let bytes = fs::read(dir.join(Kind::NextBlock.file(l))).ok()?;
    let mut r = Reader::open(&bytes)?;
    let shape = lv.tree.shape;
    (read_header(&mut r, Kind::NextBlock, l)? == lv.tree.id.i && r.prefix()? == lv.prefix)
        .then_some(())?;
    let done = r.u32()?;
    let block = r.block(shape)?;
    (done <= shape.block_leaves()).then_some(BlockBuilder { block, done })
}

fn load_next_tree(
    dir: &Path,
    l: usize,
    master: &[u8; 32],
    all: &[Params],
) -> Option<(Vec<u32>, TreeBuilder)> {
    let params = all[l];
    let bytes = fs::read(dir.join(Kind::NextTree.file(l))).ok()?;
    let mut r = Reader::open(&bytes)?;
    let i = read_header(&mut r, Kind::NextTree, l)?;
    let prefix = r.prefix()?;
    if prefix.len() != l || tree_id(master, all, &prefix).i != i {
        return None;
    }
    let shape = Shape::of(params.lms.h);
    let top = r.nodes(shape.top_len())?;
    let first = match r.u32()? {
        0 => None,
        _ => Some(r.block(shape)?),
    };
    let done = r.u32()?;
    let block = r.block(shape)?;
    let b = TreeBuilder {
        top,
        first,
        current: BlockBuilder { block, done },
    };
    // A builder past its first block must hold that block.
    (done <= shape.block_leaves() && (b.current.block.index == 0 || b.first.is_some()))
        .then_some((prefix, b))
}
