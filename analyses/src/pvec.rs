//! A persistent vector indexed by SSA value: the per-block states of the dense analyses.
//!
//! The monotone solver keeps an entry and an exit state per block and copies a state for
//! every CFG edge. With a plain `Vec` or `BTreeMap` per state, every copy and every join
//! costs the number of values in the function, so a function of `B` blocks costs `B * V`
//! time and memory: a 5,000-case `switch` (a compare chain of 10,000 blocks over 25,000
//! values) took 3.6 GB. Here a state is a radix trie of 32-way nodes shared by reference
//! count: a copy is one reference, a write copies one path (`log32 V` nodes), and a join
//! or a diff of two states descends only into subtrees that are not the same node, so
//! consecutive states of a chain, which differ in a few values, cost what they differ in.
//!
//! Every slot holds a value; slots never written hold the vector's default, and untouched
//! subtrees are the one shared all-default node of their level (so walks over the set
//! slots skip them by pointer).

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Weak};

const BITS: u32 = 5;
const WIDTH: usize = 1 << BITS;
const MASK: usize = WIDTH - 1;

/// A node: a pointer to 32 children or to 32 slots, so that a leaf of one-byte values is
/// not the size of an inner node.
enum Node<T> {
    Leaf(Arc<[T; WIDTH]>),
    Inner(Arc<[Node<T>; WIDTH]>),
}

impl<T> Clone for Node<T> {
    fn clone(&self) -> Self {
        match self {
            Node::Leaf(l) => Node::Leaf(l.clone()),
            Node::Inner(i) => Node::Inner(i.clone()),
        }
    }
}

impl<T> Node<T> {
    /// The address of the node's storage: its identity while the node is alive.
    fn address(&self) -> usize {
        match self {
            Node::Leaf(l) => Arc::as_ptr(l) as *const () as usize,
            Node::Inner(i) => Arc::as_ptr(i) as *const () as usize,
        }
    }

    /// Whether both are the same node (shared, hence equal).
    fn same(&self, other: &Node<T>) -> bool {
        match (self, other) {
            (Node::Leaf(a), Node::Leaf(b)) => Arc::ptr_eq(a, b),
            (Node::Inner(a), Node::Inner(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// A fixed-capacity vector of `T` with cheap copies; see the module documentation.
#[derive(Clone)]
pub struct PVec<T> {
    root: Node<T>,
    /// The all-default subtree of each level, leaves first: `defaults[depth]` is the empty
    /// root, shared by every vector cloned from the same one.
    defaults: Arc<Vec<Node<T>>>,
    /// Levels of inner nodes above the leaves.
    depth: u32,
    default: T,
}

impl<T: Clone + PartialEq> PVec<T> {
    /// A vector of at least `len` slots, all `default`.
    pub fn new(len: usize, default: T) -> PVec<T> {
        let mut defaults = vec![Node::Leaf(Arc::new(std::array::from_fn(|_| {
            default.clone()
        })))];
        let mut capacity = WIDTH;
        while capacity < len {
            let below = defaults.last().expect("a leaf level").clone();
            defaults.push(Node::Inner(Arc::new(std::array::from_fn(|_| {
                below.clone()
            }))));
            capacity *= WIDTH;
        }
        let depth = (defaults.len() - 1) as u32;
        PVec {
            root: defaults[depth as usize].clone(),
            defaults: Arc::new(defaults),
            depth,
            default,
        }
    }

    /// The number of slots.
    pub fn capacity(&self) -> usize {
        WIDTH << (BITS * self.depth)
    }

    /// The slot `i`, or `None` past the capacity.
    pub fn get(&self, i: usize) -> Option<&T> {
        if i >= self.capacity() {
            return None;
        }
        let mut node = &self.root;
        let mut shift = BITS * self.depth;
        loop {
            match node {
                Node::Inner(children) => {
                    node = &children[(i >> shift) & MASK];
                    shift -= BITS;
                }
                Node::Leaf(slots) => return Some(&slots[i & MASK]),
            }
        }
    }

    /// Writes slot `i`, copying the nodes on its path that other vectors share. Writing
    /// the value already there copies nothing.
    ///
    /// # Panics
    /// When `i` is past the capacity (a value of another function).
    pub fn set(&mut self, i: usize, value: T) {
        assert!(i < self.capacity(), "index {i} past a PVec's capacity");
        if self.get(i) == Some(&value) {
            return;
        }
        if value == self.default {
            self.reset(i);
            return;
        }
        let mut node = &mut self.root;
        let mut shift = BITS * self.depth;
        loop {
            match node {
                Node::Inner(children) => {
                    node = &mut Arc::make_mut(children)[(i >> shift) & MASK];
                    shift -= BITS;
                }
                Node::Leaf(slots) => {
                    Arc::make_mut(slots)[i & MASK] = value;
                    return;
                }
            }
        }
    }

    /// Writes the default into slot `i` (which holds something else), and puts back the
    /// shared all-default node of each level that becomes all-default on its path. Without
    /// that, the values a loop's back edge forgets left all-default copies that joins
    /// could not skip by pointer: after a 5,000-case `switch` in a loop, every join into
    /// the block after it compared some 50,000 forgotten slots (500 million in all).
    fn reset(&mut self, i: usize) {
        fn walk<T: Clone + PartialEq>(
            node: &mut Node<T>,
            i: usize,
            level: u32,
            defaults: &[Node<T>],
            default: &T,
        ) -> bool {
            let all_default = match node {
                Node::Inner(children) => {
                    let children = Arc::make_mut(children);
                    let below = &defaults[level as usize - 1];
                    walk(
                        &mut children[(i >> (BITS * level)) & MASK],
                        i,
                        level - 1,
                        defaults,
                        default,
                    ) && children.iter().all(|c| c.same(below))
                }
                Node::Leaf(slots) => {
                    let slots = Arc::make_mut(slots);
                    slots[i & MASK] = default.clone();
                    slots.iter().all(|s| s == default)
                }
            };
            if all_default {
                *node = defaults[level as usize].clone();
            }
            all_default
        }
        walk(&mut self.root, i, self.depth, &self.defaults, &self.default);
    }

    /// Every slot back to the default.
    pub fn clear(&mut self) {
        self.root = self.defaults[self.depth as usize].clone();
    }

    /// The slots that differ from the default, in index order.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &T)> {
        let mut out = Vec::new();
        self.collect(&self.root, 0, self.depth, &mut out);
        out.into_iter()
    }

    fn collect<'s>(
        &'s self,
        node: &'s Node<T>,
        base: usize,
        level: u32,
        out: &mut Vec<(usize, &'s T)>,
    ) {
        if node.same(&self.defaults[level as usize]) {
            return;
        }
        match node {
            Node::Inner(children) => {
                for (k, child) in children.iter().enumerate() {
                    self.collect(child, base + (k << (BITS * level)), level - 1, out);
                }
            }
            Node::Leaf(slots) => {
                for (k, slot) in slots.iter().enumerate() {
                    if *slot != self.default {
                        out.push((base + k, slot));
                    }
                }
            }
        }
    }

    /// Replaces each slot `i` with `f(i, &self[i], &other[i])` where that is `Some`, and
    /// says whether any slot changed. `f` is called only where the two slots differ (equal
    /// values must combine to themselves). Both vectors must have the same capacity.
    ///
    /// Where the result equals `other` over a whole subtree, `self` takes `other`'s node:
    /// states that the solver computed along different paths become shared again, so the
    /// next join of the two skips them by pointer instead of comparing them slot by slot.
    pub fn merge(&mut self, other: &PVec<T>, f: impl FnMut(usize, &T, &T) -> Option<T>) -> bool {
        self.merge_impl(other, f, false, None)
    }

    /// [`PVec::merge`] for an `f` that is a join with the default as its identity
    /// (`f(i, x, default)` keeps `x`, and `f(i, default, y)` gives `y`): the parts of
    /// `other` never written are skipped by pointer, and where both vectors share the
    /// default, a part of `self` never written takes `other`'s node whole. A block with
    /// many predecessors that each define values of their own (the cases of a `switch`)
    /// then costs each join what its edge adds, not everything the earlier ones added; and
    /// a join whose first edge defined little (the `else` of a `?:` around thousands of
    /// nested ones) costs what the two edges share, not what the other edge defined.
    pub fn join_with(
        &mut self,
        other: &PVec<T>,
        f: impl FnMut(usize, &T, &T) -> Option<T>,
    ) -> bool {
        self.merge_impl(other, f, true, None)
    }

    /// [`PVec::join_with`] that looks up and records in `memo` the join of each pair of
    /// subtrees it compares. `f` must be the same pure function on every call with one
    /// memo, and must not depend on the index. The solver joins the same pair of subtrees
    /// again and again: after a chain of `n` nested joins in a loop, the second pass
    /// brings each join a state whose parts for the levels inside were built by the
    /// joins inside, from the same two nodes, so without the memo every join compared
    /// them once more (`n` levels, `n` times).
    pub fn join_with_memo(
        &mut self,
        other: &PVec<T>,
        f: impl FnMut(usize, &T, &T) -> Option<T>,
        memo: &mut JoinMemo<T>,
    ) -> bool {
        self.merge_impl(other, f, true, Some(memo))
    }

    fn merge_impl(
        &mut self,
        other: &PVec<T>,
        mut f: impl FnMut(usize, &T, &T) -> Option<T>,
        default_is_neutral: bool,
        mut memo: Option<&mut JoinMemo<T>>,
    ) -> bool {
        assert_eq!(
            self.depth, other.depth,
            "merging PVecs of different capacities"
        );
        let neutral = default_is_neutral.then_some(Neutral {
            other: other.defaults.as_slice(),
            own: (self.default == other.default).then_some(self.defaults.as_slice()),
        });
        let mut changed = false;
        let merged = merge_node(
            &self.root,
            &other.root,
            0,
            self.depth,
            &mut f,
            neutral.as_ref(),
            &mut memo,
            &mut changed,
        );
        if let Some(root) = merged {
            self.root = root;
        }
        changed
    }

    /// The indices whose slots differ between `self` and `other` (same capacity), in
    /// index order; shared subtrees are skipped.
    pub fn diff(&self, other: &PVec<T>) -> Vec<usize> {
        assert_eq!(
            self.depth, other.depth,
            "comparing PVecs of different capacities"
        );
        let mut out = Vec::new();
        diff_node(&self.root, &other.root, 0, self.depth, &mut out);
        out
    }
}

fn diff_node<T: PartialEq>(
    a: &Node<T>,
    b: &Node<T>,
    base: usize,
    level: u32,
    out: &mut Vec<usize>,
) {
    if a.same(b) {
        return;
    }
    match (a, b) {
        (Node::Inner(ca), Node::Inner(cb)) => {
            for k in 0..WIDTH {
                diff_node(&ca[k], &cb[k], base + (k << (BITS * level)), level - 1, out);
            }
        }
        (Node::Leaf(la), Node::Leaf(lb)) => {
            out.extend((0..WIDTH).filter(|&k| la[k] != lb[k]).map(|k| base + k));
        }
        _ => unreachable!("PVecs of one capacity have the same shape"),
    }
}

/// Joins of pairs of subtrees already computed ([`PVec::join_with_memo`]), by the two
/// nodes' addresses and position. Entries hold the nodes weakly, so that the memo does
/// not keep the solver's old states alive: a weak reference keeps a node's allocation,
/// hence its address, from going to another node while the entry exists, so an address
/// that matches is the same node; a result that has died since is joined again.
pub struct JoinMemo<T> {
    joined: HashMap<(usize, usize, usize), Joined<T>, BuildHasherDefault<AddressHasher>>,
    /// Pairs of nodes compared: the work of the joins, for tests.
    compared: usize,
    /// The number of entries after the last sweep of dead ones.
    swept: usize,
}

struct Joined<T> {
    pair: (WeakNode<T>, WeakNode<T>),
    /// `None`: the join keeps the first node.
    result: Option<WeakNode<T>>,
    changed: bool,
}

enum WeakNode<T> {
    Leaf(Weak<[T; WIDTH]>),
    Inner(Weak<[Node<T>; WIDTH]>),
}

impl<T> WeakNode<T> {
    fn alive(&self) -> bool {
        match self {
            WeakNode::Leaf(l) => l.strong_count() > 0,
            WeakNode::Inner(i) => i.strong_count() > 0,
        }
    }

    fn of(node: &Node<T>) -> WeakNode<T> {
        match node {
            Node::Leaf(l) => WeakNode::Leaf(Arc::downgrade(l)),
            Node::Inner(i) => WeakNode::Inner(Arc::downgrade(i)),
        }
    }

    fn upgrade(&self) -> Option<Node<T>> {
        match self {
            WeakNode::Leaf(l) => l.upgrade().map(Node::Leaf),
            WeakNode::Inner(i) => i.upgrade().map(Node::Inner),
        }
    }
}

impl<T> JoinMemo<T> {
    pub fn new() -> JoinMemo<T> {
        JoinMemo {
            joined: HashMap::default(),
            compared: 0,
            swept: 0,
        }
    }

    fn insert(&mut self, key: (usize, usize, usize), joined: Joined<T>) {
        // An entry whose pair has died can never match again (no live node has its
        // address), but holds the pair's allocations: swept whenever the memo has doubled,
        // so that it stays proportional to the live states, at a linear cost.
        if self.joined.len() >= 2 * self.swept.max(1024) {
            self.joined
                .retain(|_, j| j.pair.0.alive() && j.pair.1.alive());
            self.swept = self.joined.len();
        }
        self.joined.insert(key, joined);
    }

    /// Pairs of different nodes the joins compared (memo hits not counted).
    pub fn compared(&self) -> usize {
        self.compared
    }
}

impl<T> Default for JoinMemo<T> {
    fn default() -> Self {
        JoinMemo::new()
    }
}

/// A multiplicative hash of the memo's keys, which are addresses and indices: no
/// adversary chooses them, and a keyed hash cost more than the joins it saves.
#[derive(Default)]
pub struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
}

/// The all-default subtrees of each level of a join's two vectors ([`PVec::join_with`]):
/// `other`'s, and `self`'s when both vectors have the same default.
struct Neutral<'d, T> {
    other: &'d [Node<T>],
    own: Option<&'d [Node<T>]>,
}

/// The node that replaces `a` when `b` is merged into it, or `None` to keep `a`: `b`
/// itself where the result equals it, else a new node where anything changed. Sets
/// `changed` when a slot's value changed. With `neutral` (a join), a default subtree of
/// `b` keeps `a` without a look, and a default subtree of `a` becomes `b` (`changed` is
/// then set without a look: `b`'s subtree is not the shared default one, so it holds a
/// value other than the default unless a merge left it all-default unshared). With a
/// `memo`, a pair of nodes joined before takes the recorded result.
#[allow(clippy::too_many_arguments)]
fn merge_node<T: Clone + PartialEq>(
    a: &Node<T>,
    b: &Node<T>,
    base: usize,
    level: u32,
    f: &mut impl FnMut(usize, &T, &T) -> Option<T>,
    neutral: Option<&Neutral<'_, T>>,
    memo: &mut Option<&mut JoinMemo<T>>,
    changed: &mut bool,
) -> Option<Node<T>> {
    if a.same(b) || neutral.is_some_and(|d| b.same(&d.other[level as usize])) {
        return None;
    }
    if neutral.is_some_and(|d| d.own.is_some_and(|own| a.same(&own[level as usize]))) {
        *changed = true;
        return Some(b.clone());
    }
    let Some(m) = memo.as_deref_mut() else {
        return merge_pair(a, b, base, level, f, neutral, memo, changed);
    };
    let key = (a.address(), b.address(), base);
    if let Some(done) = m.joined.get(&key) {
        let result = match &done.result {
            None => Some(None),
            Some(node) => node.upgrade().map(Some),
        };
        if let Some(result) = result {
            *changed |= done.changed;
            return result;
        }
    }
    m.compared += 1;
    let mut here = false;
    let result = merge_pair(a, b, base, level, f, neutral, memo, &mut here);
    *changed |= here;
    if let Some(m) = memo.as_deref_mut() {
        m.insert(
            key,
            Joined {
                pair: (WeakNode::of(a), WeakNode::of(b)),
                result: result.as_ref().map(WeakNode::of),
                changed: here,
            },
        );
    }
    result
}

/// [`merge_node`] of two different nodes, neither of them a default one that settles the
/// join without a look.
#[allow(clippy::too_many_arguments)]
fn merge_pair<T: Clone + PartialEq>(
    a: &Node<T>,
    b: &Node<T>,
    base: usize,
    level: u32,
    f: &mut impl FnMut(usize, &T, &T) -> Option<T>,
    neutral: Option<&Neutral<'_, T>>,
    memo: &mut Option<&mut JoinMemo<T>>,
    changed: &mut bool,
) -> Option<Node<T>> {
    match (a, b) {
        (Node::Inner(ca), Node::Inner(cb)) => {
            let mut out: Option<[Node<T>; WIDTH]> = None;
            for k in 0..WIDTH {
                let child_base = base + (k << (BITS * level));
                if let Some(new) = merge_node(
                    &ca[k],
                    &cb[k],
                    child_base,
                    level - 1,
                    f,
                    neutral,
                    memo,
                    changed,
                ) {
                    out.get_or_insert_with(|| (**ca).clone())[k] = new;
                }
            }
            let children = out?;
            if children.iter().zip(cb.iter()).all(|(x, y)| x.same(y)) {
                Some(b.clone())
            } else {
                Some(Node::Inner(Arc::new(children)))
            }
        }
        (Node::Leaf(la), Node::Leaf(lb)) => {
            let mut out: Option<[T; WIDTH]> = None;
            let mut equals_b = true;
            for k in 0..WIDTH {
                if la[k] == lb[k] {
                    continue;
                }
                match f(base + k, &la[k], &lb[k]) {
                    Some(new) => {
                        equals_b &= new == lb[k];
                        *changed |= new != la[k];
                        out.get_or_insert_with(|| (**la).clone())[k] = new;
                    }
                    None => equals_b = false,
                }
            }
            if equals_b {
                Some(b.clone())
            } else {
                out.map(|s| Node::Leaf(Arc::new(s)))
            }
        }
        _ => unreachable!("PVecs of one capacity have the same shape"),
    }
}

impl<T: Clone + PartialEq> PartialEq for PVec<T> {
    fn eq(&self, other: &Self) -> bool {
        if self.depth != other.depth {
            return false;
        }
        if self.default == other.default {
            return self.diff(other).is_empty();
        }
        // Vectors grown from different defaults share no nodes: slot by slot.
        (0..self.capacity()).all(|i| self.get(i) == other.get(i))
    }
}

impl<T: Clone + Eq> Eq for PVec<T> {}

impl<T: Clone + PartialEq + fmt::Debug> fmt::Debug for PVec<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_iter_and_sharing() {
        let mut a = PVec::new(2000, 0u8);
        assert!(a.capacity() >= 2000);
        a.set(5, 1);
        a.set(1999, 2);
        let mut b = a.clone();
        b.set(40, 3);
        assert_eq!(a.get(40), Some(&0));
        assert_eq!(b.get(40), Some(&3));
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![(5, &1), (1999, &2)]);
        assert_eq!(b.diff(&a), vec![40]);
        assert_eq!(a.get(a.capacity()), None);
    }

    #[test]
    fn merge_and_reset() {
        let mut a = PVec::new(100, 0u8);
        a.set(3, 1);
        let mut b = a.clone();
        b.set(3, 2);
        b.set(70, 4);
        let changed = a.merge(&b, |_, x, y| (x | y != *x).then_some(x | y));
        assert!(changed);
        assert_eq!(a.get(3), Some(&3));
        assert_eq!(a.get(70), Some(&4));
        assert!(!a.merge(&a.clone(), |_, _, _| Some(9)));
        a.set(70, 0);
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![(3, &3)]);
        a.clear();
        assert_eq!(a.iter().count(), 0);
    }

    #[test]
    fn a_join_takes_the_parts_only_the_other_side_wrote_by_pointer() {
        let empty = PVec::new(5000, 0u8);
        let mut before = empty.clone();
        before.set(3, 1);
        let mut long = before.clone();
        for i in 1000..1100 {
            long.set(i, 2);
        }
        let mut short = before.clone();
        short.set(4, 4);
        let mut calls = 0;
        let changed = short.join_with(&long, |_, x, y| {
            calls += 1;
            (x | y != *x).then_some(x | y)
        });
        assert!(changed);
        // Slots 1000..1100 came with `long`'s nodes, not one by one: the one call is for
        // slot 4, in the leaf both sides changed.
        assert_eq!(calls, 1);
        assert_eq!(short.iter().count(), 102);
        assert_eq!(short.get(1050), Some(&2));
        assert_eq!(short.get(4), Some(&4));
        assert_eq!(short.diff(&long), vec![4]);
        // Nothing new the second time.
        assert!(!short.join_with(&long, |_, x, y| (x | y != *x).then_some(x | y)));
    }

    #[test]
    fn forgotten_slots_give_back_the_shared_default_nodes() {
        let empty = PVec::new(5000, 0u8);
        let mut a = empty.clone();
        a.set(40, 1);
        a.set(41, 2);
        a.set(4000, 3);
        let kept = a.clone();
        a.set(41, 0);
        a.set(40, 0);
        // Slot 4000's leaf is still there; 40's whole path is the default one again.
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![(4000, &3)]);
        let Node::Inner(children) = &a.root else {
            panic!("5,000 slots need inner nodes")
        };
        assert!(children[0].same(&a.defaults[a.depth as usize - 1]));
        a.set(4000, 0);
        assert!(a.root.same(&empty.root));
        // The copy made before is untouched.
        assert_eq!(kept.iter().count(), 3);
    }

    #[test]
    fn a_memo_joins_a_pair_once_and_agrees_with_the_plain_join() {
        let join = |_: usize, x: &u8, y: &u8| (x | y != *x).then_some(x | y);
        let empty = PVec::new(5000, 0u8);
        let mut left = empty.clone();
        let mut right = empty.clone();
        for i in (0..4000).step_by(7) {
            left.set(i, 1);
            right.set(i + 1, 2);
        }
        let mut memo = JoinMemo::new();
        let mut plain = left.clone();
        let mut first = left.clone();
        let mut second = left.clone();
        assert!(plain.join_with(&right, join));
        assert!(first.join_with_memo(&right, join, &mut memo));
        let compared = memo.compared();
        assert!(compared > 0);
        // The same pair again: every node comes from the memo, with its change.
        assert!(second.join_with_memo(&right, join, &mut memo));
        assert_eq!(memo.compared(), compared);
        assert_eq!(first, plain);
        assert_eq!(second, plain);
        assert!(!first.join_with_memo(&right, join, &mut memo));
    }
}
