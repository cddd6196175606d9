//! Interned variable names: equality and hashing by pointer, ordering by name.

use std::collections::HashSet;
use std::fmt;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

/// A symbolic variable (an integer-valued program quantity).
///
/// Names are interned in a process-wide table, so equality and hashing are a pointer
/// comparison, while ordering is by name: printed output is deterministic whatever the
/// order in which names were first seen. Names starting with `#` are reserved for
/// variables the engine creates internally (the parser never produces them).
#[derive(Clone)]
pub struct Var(Arc<str>);

fn interner() -> &'static Mutex<HashSet<Arc<str>>> {
    static TABLE: OnceLock<Mutex<HashSet<Arc<str>>>> = OnceLock::new();
    TABLE.get_or_init(|| Mutex::new(HashSet::new()))
}

impl Var {
    /// The variable with this name (interned).
    pub fn new(name: &str) -> Var {
        // A poisoned lock only means another thread panicked while inserting; the set is still valid.
        let mut table = interner().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(existing) = table.get(name) {
            return Var(existing.clone());
        }
        let arc: Arc<str> = Arc::from(name);
        table.insert(arc.clone());
        Var(arc)
    }

    /// The variable's name.
    pub fn name(&self) -> &str {
        &self.0
    }

    /// Whether this is an engine-internal variable (name starts with `#`).
    pub fn is_internal(&self) -> bool {
        self.0.starts_with('#')
    }
}

impl PartialEq for Var {
    fn eq(&self, other: &Var) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Var {}

impl Hash for Var {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (Arc::as_ptr(&self.0) as *const u8 as usize).hash(state);
    }
}

impl PartialOrd for Var {
    fn partial_cmp(&self, other: &Var) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Var {
    fn cmp(&self, other: &Var) -> std::cmp::Ordering {
        if Arc::ptr_eq(&self.0, &other.0) {
            std::cmp::Ordering::Equal
        } else {
            self.0.cmp(&other.0)
        }
    }
}

impl fmt::Debug for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Display for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for Var {
    fn from(name: &str) -> Var {
        Var::new(name)
    }
}

/// Hasher for maps keyed by [`Var`]: the key hashes as one pointer, so a multiply and a fold
/// are enough (much cheaper than SipHash for the sign lookups of every product).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct VarHasher(u64);

const MIX: u64 = 0x9E37_79B9_7F4A_7C15;

impl Hasher for VarHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(*b)).wrapping_mul(MIX);
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.0 = (self.0.rotate_left(5) ^ n as u64).wrapping_mul(MIX);
    }

    fn finish(&self) -> u64 {
        // Pointers are aligned: fold the well-mixed high bits into the low ones (bucket index).
        self.0 ^ (self.0 >> 32)
    }
}

/// Build-hasher for `HashMap<Var, _>` with [`VarHasher`].
pub(crate) type VarBuildHasher = BuildHasherDefault<VarHasher>;
