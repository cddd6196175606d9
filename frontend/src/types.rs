//! C types with x86-64 LP64 layout: interning table, struct/union layout, usual conversions.
//!
//! Types are interned in a [`TypeTable`] and referred to by [`TypeId`]; two structurally equal
//! types get the same id, so type equality is an integer comparison. Qualifiers are not part
//! of a type except the two the analyses use: `restrict` on a pointer (no aliasing) and
//! `const` on a pointer's pointee (read-only data).

use std::collections::HashMap;
use std::fmt;
use std::fmt::Write as _;

/// An interned type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeId(u32);

/// An interned struct or union definition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RecordId(u32);

/// Integer ranks of C, in conversion-rank order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IntRank {
    Bool,
    Char,
    Short,
    Int,
    Long,
    LongLong,
    Int128,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FloatKind {
    Float,
    Double,
    LongDouble,
}

/// Length of an array type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArrayLen {
    Fixed(u64),
    /// A variable-length array; the length is an SSA value known only to the function
    /// that declared it, so the type records just that it is variable and a unique tag
    /// (two VLA types with different run-time lengths must not be interned together).
    Variable(u32),
    /// `int a[]` as a parameter or an extern declaration.
    Incomplete,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    Void,
    Int {
        rank: IntRank,
        signed: bool,
    },
    Float(FloatKind),
    Pointer {
        pointee: TypeId,
        pointee_const: bool,
        restrict: bool,
    },
    Array {
        elem: TypeId,
        len: ArrayLen,
    },
    Record(RecordId),
    Function {
        ret: TypeId,
        params: Vec<TypeId>,
        variadic: bool,
    },
}

/// One field of a struct or union, with its byte offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: Option<String>,
    pub ty: TypeId,
    pub offset: u64,
    /// `Some(width)` for a bit-field; `offset` is then the byte offset of its storage unit.
    pub bit_width: Option<u32>,
    /// For a bit-field: its first bit within the storage unit (least significant first).
    pub bit_offset: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub tag: Option<String>,
    /// For an anonymous record: the first typedef that names it, for printing.
    pub typedef_name: Option<String>,
    pub is_union: bool,
    pub fields: Vec<Field>,
    pub size: u64,
    pub align: u64,
    /// False until the definition with a body has been seen.
    pub complete: bool,
}

/// A field found by name, possibly through anonymous members: the total offset and type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldLookup {
    pub offset: u64,
    pub ty: TypeId,
    /// Index of the field in its own record (for printing).
    pub index: u32,
    /// For a bit-field: (first bit within the storage unit at `offset`, width).
    pub bit_field: Option<(u32, u32)>,
}

/// The interning table of all types of one program.
#[derive(Debug, Default)]
pub struct TypeTable {
    types: Vec<Type>,
    /// Per type, the declarator levels (pointers, arrays, functions) above its base type.
    depths: Vec<u32>,
    interned: HashMap<Type, TypeId>,
    records: Vec<Record>,
    next_vla_tag: u32,
    /// Where each variable-length array's length is written (`n + 1` of `double a[n][n + 1]`),
    /// by its tag: the text a port declares the array's rows with.
    /// (Byte offsets: the type table knows no IR spans.)
    vla_lengths: HashMap<u32, std::ops::Range<usize>>,
}

impl TypeTable {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn intern(&mut self, ty: Type) -> TypeId {
        if let Some(&id) = self.interned.get(&ty) {
            return id;
        }
        let id = TypeId(self.types.len() as u32);
        let depth = match &ty {
            Type::Pointer { pointee: inner, .. }
            | Type::Array { elem: inner, .. }
            | Type::Function { ret: inner, .. } => self.depth(*inner).saturating_add(1),
            _ => 0,
        };
        self.depths.push(depth);
        self.types.push(ty.clone());
        self.interned.insert(ty, id);
        id
    }

    pub fn get(&self, id: TypeId) -> &Type {
        &self.types[id.0 as usize]
    }

    /// The declarator levels (pointers, arrays, functions) between `id` and its base type:
    /// 2 for `int *[4]`, 0 for a struct whatever its fields.
    pub fn depth(&self, id: TypeId) -> u32 {
        self.depths.get(id.0 as usize).copied().unwrap_or(0)
    }

    /// The id of a type already in the table, without interning it (for a table that is
    /// shared read-only, e.g. when matching a type of another translation unit).
    pub fn lookup(&self, ty: &Type) -> Option<TypeId> {
        self.interned.get(ty).copied()
    }

    /// The first type of the table that satisfies `pred`.
    pub fn find(&self, pred: impl Fn(&Type) -> bool) -> Option<TypeId> {
        self.types.iter().position(pred).map(|i| TypeId(i as u32))
    }

    pub fn void(&mut self) -> TypeId {
        self.intern(Type::Void)
    }
    pub fn int(&mut self) -> TypeId {
        self.intern(Type::Int {
            rank: IntRank::Int,
            signed: true,
        })
    }
    pub fn uint(&mut self) -> TypeId {
        self.intern(Type::Int {
            rank: IntRank::Int,
            signed: false,
        })
    }
    pub fn long(&mut self) -> TypeId {
        self.intern(Type::Int {
            rank: IntRank::Long,
            signed: true,
        })
    }
    pub fn ulong(&mut self) -> TypeId {
        self.intern(Type::Int {
            rank: IntRank::Long,
            signed: false,
        })
    }
    pub fn char(&mut self) -> TypeId {
        self.intern(Type::Int {
            rank: IntRank::Char,
            signed: true,
        })
    }
    /// Interns every integer (each rank, signed and unsigned) and floating type, plain
    /// `char` first.
    pub fn intern_arithmetic_types(&mut self) {
        self.char();
        for rank in [
            IntRank::Bool,
            IntRank::Char,
            IntRank::Short,
            IntRank::Int,
            IntRank::Long,
            IntRank::LongLong,
            IntRank::Int128,
        ] {
            for signed in [true, false] {
                self.intern(Type::Int { rank, signed });
            }
        }
        for kind in [FloatKind::Float, FloatKind::Double, FloatKind::LongDouble] {
            self.intern(Type::Float(kind));
        }
    }

    pub fn double(&mut self) -> TypeId {
        self.intern(Type::Float(FloatKind::Double))
    }
    pub fn bool(&mut self) -> TypeId {
        self.intern(Type::Int {
            rank: IntRank::Bool,
            signed: false,
        })
    }
    pub fn pointer_to(&mut self, pointee: TypeId) -> TypeId {
        self.intern(Type::Pointer {
            pointee,
            pointee_const: false,
            restrict: false,
        })
    }
    pub fn array_of(&mut self, elem: TypeId, len: ArrayLen) -> TypeId {
        self.intern(Type::Array { elem, len })
    }
    /// A new variable-length array length, whose expression is written at the bytes
    /// `written` of the unit's preprocessed text.
    pub fn fresh_vla_len(&mut self, written: std::ops::Range<usize>) -> ArrayLen {
        self.next_vla_tag += 1;
        self.vla_lengths.insert(self.next_vla_tag, written);
        ArrayLen::Variable(self.next_vla_tag)
    }

    /// Where the length of the variable-length array `tag` is written: bytes of the unit's
    /// preprocessed text.
    pub fn vla_length_bytes(&self, tag: u32) -> Option<std::ops::Range<usize>> {
        self.vla_lengths.get(&tag).cloned()
    }

    pub fn new_record(&mut self, tag: Option<String>, is_union: bool) -> RecordId {
        let id = RecordId(self.records.len() as u32);
        self.records.push(Record {
            tag,
            typedef_name: None,
            is_union,
            fields: Vec::new(),
            size: 0,
            align: 1,
            complete: false,
        });
        id
    }

    /// Names an anonymous record after the typedef that declares it.
    pub fn name_anonymous_record(&mut self, ty: TypeId, name: &str) {
        if let Type::Record(r) = self.get(ty).clone() {
            let record = &mut self.records[r.0 as usize];
            if record.tag.is_none() && record.typedef_name.is_none() {
                record.typedef_name = Some(name.to_string());
            }
        }
    }

    pub fn record(&self, id: RecordId) -> &Record {
        &self.records[id.0 as usize]
    }

    pub fn records(&self) -> impl Iterator<Item = (RecordId, &Record)> {
        self.records
            .iter()
            .enumerate()
            .map(|(i, r)| (RecordId(i as u32), r))
    }

    /// Lays out the fields of a record with the System V x86-64 rules (natural alignment,
    /// bit-fields packed into units of their declared type) and marks it complete.
    /// `packed` corresponds to `__attribute__((packed))`.
    pub fn define_record(
        &mut self,
        id: RecordId,
        members: Vec<(Option<String>, TypeId, Option<u32>)>,
        packed: bool,
    ) {
        let is_union = self.records[id.0 as usize].is_union;
        let mut fields = Vec::with_capacity(members.len());
        let mut size: u64 = 0;
        let mut align: u64 = 1;
        // Bit position (in bits) for the next bit-field inside the current layout.
        let mut bit_cursor: u64 = 0;
        for (name, ty, bit_width) in members {
            let field_size = self.size_of(ty).unwrap_or(0);
            let field_align = if packed { 1 } else { self.align_of(ty).max(1) };
            match bit_width {
                Some(width) if !is_union => {
                    let unit_bits = field_size * 8;
                    if width == 0 {
                        // A zero-width bit-field pads to the next unit of its type.
                        bit_cursor = round_up(bit_cursor, field_align * 8);
                        size = size.max(bit_cursor / 8);
                        continue;
                    }
                    let start_unit = bit_cursor / unit_bits.max(1);
                    let end_unit = (bit_cursor + u64::from(width) - 1) / unit_bits.max(1);
                    if start_unit != end_unit && !packed {
                        bit_cursor = round_up(bit_cursor, unit_bits.max(1));
                    }
                    let unit_offset = (bit_cursor / 8) / field_size.max(1) * field_size.max(1);
                    fields.push(Field {
                        name,
                        ty,
                        offset: unit_offset,
                        bit_width,
                        bit_offset: (bit_cursor - unit_offset * 8) as u32,
                    });
                    bit_cursor += u64::from(width);
                    size = size.max(bit_cursor.div_ceil(8));
                    if name_is_some(&fields) {
                        align = align.max(field_align);
                    }
                }
                _ => {
                    if is_union {
                        fields.push(Field {
                            name,
                            ty,
                            offset: 0,
                            bit_width,
                            bit_offset: 0,
                        });
                        size = size.max(field_size);
                    } else {
                        let offset = round_up(bit_cursor.div_ceil(8), field_align);
                        fields.push(Field {
                            name,
                            ty,
                            offset,
                            bit_width,
                            bit_offset: 0,
                        });
                        size = offset + field_size;
                        bit_cursor = size * 8;
                    }
                    align = align.max(field_align);
                }
            }
        }
        let size = round_up(size, align);
        let record = &mut self.records[id.0 as usize];
        record.fields = fields;
        record.size = size;
        record.align = align;
        record.complete = true;
    }

    /// Raises a complete record's alignment to `align` (`__attribute__((aligned))`, vector
    /// types) or lowers it (`aligned(1)` on GCC's unaligned vector types); the size is
    /// rounded up to a multiple of it, as C requires of any type.
    pub fn set_record_alignment(&mut self, id: RecordId, align: u64) {
        let record = &mut self.records[id.0 as usize];
        record.align = align.max(1);
        record.size = round_up(record.size, record.align);
    }

    /// `sizeof`, `None` for incomplete, function and variable-length types.
    pub fn size_of(&self, id: TypeId) -> Option<u64> {
        match self.get(id) {
            Type::Void => Some(1), // GNU: arithmetic on void* steps by one byte
            Type::Int { rank, .. } => Some(match rank {
                IntRank::Bool | IntRank::Char => 1,
                IntRank::Short => 2,
                IntRank::Int => 4,
                IntRank::Long | IntRank::LongLong => 8,
                IntRank::Int128 => 16,
            }),
            Type::Float(kind) => Some(match kind {
                FloatKind::Float => 4,
                FloatKind::Double => 8,
                FloatKind::LongDouble => 16,
            }),
            Type::Pointer { .. } => Some(8),
            Type::Array {
                elem,
                len: ArrayLen::Fixed(n),
            } => self.size_of(*elem).and_then(|s| s.checked_mul(*n)),
            Type::Array { .. } => None,
            Type::Record(r) => {
                let record = self.record(*r);
                record.complete.then_some(record.size)
            }
            Type::Function { .. } => None,
        }
    }

    pub fn align_of(&self, id: TypeId) -> u64 {
        match self.get(id) {
            Type::Array { elem, .. } => self.align_of(*elem),
            Type::Record(r) => self.record(*r).align,
            Type::Void | Type::Function { .. } => 1,
            _ => self.size_of(id).unwrap_or(1),
        }
    }

    /// Finds a named field, looking through anonymous struct/union members (C11).
    pub fn find_field(&self, record: RecordId, name: &str) -> Option<FieldLookup> {
        let rec = self.record(record);
        for (index, field) in rec.fields.iter().enumerate() {
            match &field.name {
                Some(n) if n == name => {
                    return Some(FieldLookup {
                        offset: field.offset,
                        ty: field.ty,
                        index: index as u32,
                        bit_field: field.bit_width.map(|w| (field.bit_offset, w)),
                    })
                }
                None => {
                    if let Type::Record(inner) = self.get(field.ty) {
                        if let Some(found) = self.find_field(*inner, name) {
                            return Some(FieldLookup {
                                offset: field.offset + found.offset,
                                ..found
                            });
                        }
                    }
                }
                _ => {}
            }
        }
        None
    }

    pub fn is_integer(&self, id: TypeId) -> bool {
        matches!(self.get(id), Type::Int { .. })
    }
    pub fn is_float(&self, id: TypeId) -> bool {
        matches!(self.get(id), Type::Float(_))
    }
    /// Whether an access of type `a` may touch an object of type `b` under C99 6.5p7 (the
    /// effective-type rule): an object is accessed only through its own type (ignoring
    /// signedness) or a character type; pointers are taken to alias one another, and an
    /// aggregate anything (it may hold a member of the other type). Callers check first
    /// that the unit follows the rule (`-fno-strict-aliasing` says it does not).
    pub fn may_alias(&self, a: TypeId, b: TypeId) -> bool {
        let is_char = |t| {
            matches!(
                self.get(t),
                Type::Int {
                    rank: IntRank::Char,
                    ..
                }
            )
        };
        if a == b || is_char(a) || is_char(b) {
            return true;
        }
        match (self.get(a), self.get(b)) {
            (Type::Int { rank: x, .. }, Type::Int { rank: y, .. }) => x == y,
            (Type::Pointer { .. }, Type::Pointer { .. }) => true,
            (Type::Record(_), _)
            | (_, Type::Record(_))
            | (Type::Array { .. }, _)
            | (_, Type::Array { .. }) => true,
            _ => false,
        }
    }

    pub fn is_arithmetic(&self, id: TypeId) -> bool {
        self.is_integer(id) || self.is_float(id)
    }
    pub fn is_pointer(&self, id: TypeId) -> bool {
        matches!(self.get(id), Type::Pointer { .. })
    }
    pub fn is_scalar(&self, id: TypeId) -> bool {
        self.is_arithmetic(id) || self.is_pointer(id)
    }
    pub fn is_signed(&self, id: TypeId) -> bool {
        match self.get(id) {
            Type::Int { signed, .. } => *signed,
            Type::Float(_) => true,
            _ => false,
        }
    }
    pub fn pointee(&self, id: TypeId) -> Option<TypeId> {
        match self.get(id) {
            Type::Pointer { pointee, .. } => Some(*pointee),
            _ => None,
        }
    }
    pub fn array_elem(&self, id: TypeId) -> Option<TypeId> {
        match self.get(id) {
            Type::Array { elem, .. } => Some(*elem),
            _ => None,
        }
    }

    /// Integer promotion (C99 6.3.1.1): everything below `int` becomes `int`.
    pub fn promote(&mut self, id: TypeId) -> TypeId {
        match self.get(id) {
            Type::Int { rank, .. } if *rank < IntRank::Int => self.int(),
            _ => id,
        }
    }

    /// The usual arithmetic conversions (C99 6.3.1.8) of two arithmetic types.
    pub fn usual_arithmetic(&mut self, a: TypeId, b: TypeId) -> TypeId {
        match (self.get(a).clone(), self.get(b).clone()) {
            (Type::Float(x), Type::Float(y)) => self.intern(Type::Float(x.max(y))),
            (Type::Float(_), _) => a,
            (_, Type::Float(_)) => b,
            (Type::Int { .. }, Type::Int { .. }) => {
                let a = self.promote(a);
                let b = self.promote(b);
                let (
                    Type::Int {
                        rank: ra,
                        signed: sa,
                    },
                    Type::Int {
                        rank: rb,
                        signed: sb,
                    },
                ) = (self.get(a).clone(), self.get(b).clone())
                else {
                    return a;
                };
                if sa == sb {
                    return if ra >= rb { a } else { b };
                }
                let (urank, srank, uty, sty) = if sa { (rb, ra, b, a) } else { (ra, rb, a, b) };
                if urank >= srank {
                    uty
                } else if self.size_of(sty) > self.size_of(uty) {
                    sty
                } else {
                    self.intern(Type::Int {
                        rank: srank,
                        signed: false,
                    })
                }
            }
            _ => a,
        }
    }

    /// Renders a type in C syntax, e.g. `double (*)[1100]`, `const float *restrict`.
    pub fn display(&self, id: TypeId) -> String {
        let mut out = String::new();
        self.write_decl(id, String::new(), &mut out);
        out
    }

    /// Whether [`Self::display`] of `id` is a type a program can write: every struct or union
    /// in it has a tag or a typedef name. An anonymous one has neither (`static struct { int
    /// a; } s;`) and prints as `struct <anonymous#N>`, which is not C. A loop down the
    /// pointers and arrays, so a pointer 20,000 levels deep costs no stack.
    pub fn writable(&self, id: TypeId) -> bool {
        let mut work = vec![id];
        let mut seen = std::collections::HashSet::new();
        while let Some(t) = work.pop() {
            if !seen.insert(t) {
                continue;
            }
            match self.get(t) {
                Type::Pointer { pointee, .. } => work.push(*pointee),
                Type::Array { elem, .. } => work.push(*elem),
                Type::Function { ret, params, .. } => {
                    work.push(*ret);
                    work.extend(params.iter().copied());
                }
                Type::Record(r) => {
                    let rec = self.record(*r);
                    if rec.tag.is_none() && rec.typedef_name.is_none() {
                        return false;
                    }
                }
                Type::Void | Type::Int { .. } | Type::Float(_) => {}
            }
        }
        true
    }

    /// [`Self::display`] where the type is [`Self::writable`].
    pub fn display_writable(&self, id: TypeId) -> Option<String> {
        self.writable(id).then(|| self.display(id))
    }

    /// [`Self::display_pointer_to`] where the pointee is [`Self::writable`].
    pub fn display_pointer_to_writable(&self, pointee: TypeId) -> Option<String> {
        self.writable(pointee)
            .then(|| self.display_pointer_to(pointee))
    }

    /// Renders a pointer to `pointee` in C syntax without interning it: `int *`,
    /// `int (*)[128]` for a pointer to arrays.
    pub fn display_pointer_to(&self, pointee: TypeId) -> String {
        let decl = match self.get(pointee) {
            Type::Array { .. } | Type::Function { .. } => "(*)".to_string(),
            _ => "*".to_string(),
        };
        let mut out = String::new();
        self.write_decl(pointee, decl, &mut out);
        out
    }

    /// Writes type `id` around the declarator `inner`: `const` words first, then the base
    /// type, then the declarator the pointers, arrays and functions built around `inner`.
    /// One pass down the type, with the declarator kept as the pieces written to its left
    /// (in reverse) and to its right: a pointer 20,000 levels deep is 20,000 pieces, where
    /// rebuilding the declarator at each level wrote 200 MB.
    fn write_decl(&self, mut id: TypeId, inner: String, out: &mut String) {
        let mut left: Vec<&'static str> = Vec::new();
        let mut right = String::new();
        let mut empty = inner.is_empty();
        loop {
            match self.get(id) {
                Type::Pointer {
                    pointee,
                    pointee_const,
                    restrict,
                } => {
                    if *restrict {
                        left.push(if empty { "restrict" } else { "restrict " });
                    }
                    left.push("*");
                    empty = false;
                    let needs_parens = matches!(
                        self.get(*pointee),
                        Type::Array { .. } | Type::Function { .. }
                    );
                    if needs_parens {
                        left.push("(");
                        right.push(')');
                    } else if *pointee_const {
                        out.push_str("const ");
                    }
                    id = *pointee;
                }
                Type::Array { elem, len } => {
                    match len {
                        ArrayLen::Fixed(n) => {
                            let _ = write!(right, "[{n}]");
                        }
                        ArrayLen::Variable(_) => right.push_str("[*]"),
                        ArrayLen::Incomplete => right.push_str("[]"),
                    }
                    empty = false;
                    id = *elem;
                }
                Type::Function {
                    ret,
                    params,
                    variadic,
                } => {
                    let mut list: Vec<String> = params.iter().map(|p| self.display(*p)).collect();
                    if *variadic {
                        list.push("...".into());
                    }
                    if list.is_empty() {
                        list.push("void".into());
                    }
                    right.push('(');
                    right.push_str(&list.join(", "));
                    right.push(')');
                    empty = false;
                    id = *ret;
                }
                base => {
                    out.push_str(&self.base_name(base));
                    if !empty {
                        out.push(' ');
                        out.extend(left.iter().rev().copied());
                        out.push_str(&inner);
                        out.push_str(&right);
                    }
                    return;
                }
            }
        }
    }

    fn base_name(&self, ty: &Type) -> String {
        match ty {
            Type::Void => "void".into(),
            Type::Int { rank, signed } => {
                let name = match rank {
                    IntRank::Bool => return "_Bool".into(),
                    IntRank::Char => "char",
                    IntRank::Short => "short",
                    IntRank::Int => "int",
                    IntRank::Long => "long",
                    IntRank::LongLong => "long long",
                    IntRank::Int128 => "__int128",
                };
                if *signed {
                    name.into()
                } else {
                    format!("unsigned {name}")
                }
            }
            Type::Float(FloatKind::Float) => "float".into(),
            Type::Float(FloatKind::Double) => "double".into(),
            Type::Float(FloatKind::LongDouble) => "long double".into(),
            Type::Record(r) => {
                let rec = self.record(*r);
                let kw = if rec.is_union { "union" } else { "struct" };
                match (&rec.tag, &rec.typedef_name) {
                    (Some(tag), _) => format!("{kw} {tag}"),
                    (None, Some(name)) => name.clone(),
                    (None, None) => format!("{kw} <anonymous#{}>", r.0),
                }
            }
            _ => "?".into(),
        }
    }
}

fn name_is_some(_fields: &[Field]) -> bool {
    // Unnamed bit-fields do not affect the alignment of the record (SysV ABI); named ones do.
    _fields.last().is_some_and(|f| f.name.is_some())
}

fn round_up(value: u64, align: u64) -> u64 {
    if align <= 1 {
        value
    } else {
        value.div_ceil(align) * align
    }
}

impl fmt::Display for TypeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_to_arrays_print_as_c_declarators() {
        let mut types = TypeTable::new();
        let int = types.intern(Type::Int {
            rank: IntRank::Int,
            signed: true,
        });
        let row = types.intern(Type::Array {
            elem: int,
            len: ArrayLen::Fixed(128),
        });
        assert_eq!(types.display_pointer_to(int), "int *");
        assert_eq!(types.display_pointer_to(row), "int (*)[128]");
        // The same text as interning the pointer type and printing it.
        let pointer = types.pointer_to(row);
        assert_eq!(types.display(pointer), types.display_pointer_to(row));
    }

    #[test]
    fn declarators_nest_pointers_arrays_functions_and_qualifiers() {
        let mut types = TypeTable::new();
        let int = types.int();
        let double = types.intern(Type::Float(FloatKind::Double));
        let func = types.intern(Type::Function {
            ret: int,
            params: vec![double, int],
            variadic: true,
        });
        let to_func = types.pointer_to(func);
        let table = types.array_of(to_func, ArrayLen::Fixed(3));
        let to_table = types.pointer_to(table);
        assert_eq!(types.display(to_table), "int (*(*)[3])(double, int, ...)");
        let returns = types.intern(Type::Function {
            ret: to_table,
            params: vec![],
            variadic: false,
        });
        assert_eq!(
            types.display(returns),
            "int (*(*(void))[3])(double, int, ...)"
        );
        let const_int = types.intern(Type::Pointer {
            pointee: int,
            pointee_const: true,
            restrict: true,
        });
        let outer = types.intern(Type::Pointer {
            pointee: const_int,
            pointee_const: false,
            restrict: true,
        });
        assert_eq!(types.display(const_int), "const int *restrict");
        assert_eq!(types.display(outer), "const int *restrict *restrict");
        let rows = types.array_of(double, ArrayLen::Incomplete);
        assert_eq!(types.display(rows), "double []");
        let mut deep = int;
        for _ in 0..20_000 {
            deep = types.pointer_to(deep);
        }
        assert_eq!(types.display(deep), format!("int {}", "*".repeat(20_000)));
        assert_eq!(types.depth(deep), 20_000);
        assert_eq!(types.depth(to_table), 4);
        assert_eq!(types.depth(int), 0);
    }
}
