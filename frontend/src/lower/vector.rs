//! GCC vector types: `typedef float __m128 __attribute__((__vector_size__(16)));`, the
//! types of the x86 intrinsics headers (`__m128`, `__m128d`, `__m128i`, `__m256`, ...).
//!
//! A vector type becomes a record of the right size and alignment holding one array of its
//! elements (`struct { float __v[4]; }`, 16 bytes, aligned 16), so that structs and arrays
//! containing vectors are laid out as GCC lays them out, whole vectors can be copied,
//! passed and returned, and a brace initializer fills the elements. Arithmetic on vectors
//! is refused where it happens (like any arithmetic on a struct): the intrinsics are
//! functions of the header, host-only as far as the analyses go. Vector types with the same
//! element, size and alignment are one type (GCC's `__m128` and `__v4sf` convert freely).

use super::{LResult, Lowerer};
use crate::types::{ArrayLen, Type, TypeId};
use lang_c::ast;
use lang_c::span::Node;

impl<'a> Lowerer<'a> {
    /// `ty` with the `vector_size` (and `aligned`) attributes among `extensions` applied;
    /// `ty` itself when there is none. `name` names a new vector type for printing.
    pub(super) fn apply_vector_attribute(
        &mut self,
        ty: TypeId,
        extensions: &[Node<ast::Extension>],
        name: Option<&str>,
    ) -> LResult<TypeId> {
        let mut size = None;
        let mut align = None;
        for ext in extensions {
            let ast::Extension::Attribute(attr) = &ext.node else {
                continue;
            };
            let value = match attr.arguments.first() {
                Some(arg) => self.const_eval(arg),
                None => None,
            };
            match attr.name.node.trim_matches('_') {
                "vector_size" => match value {
                    Some(n) if n > 0 => size = Some(n as u64),
                    _ => return super::err(ext.span, "vector size is not a positive constant"),
                },
                "aligned" => align = value.filter(|&n| n > 0).map(|n| n as u64),
                _ => {}
            }
        }
        let Some(size) = size else {
            return Ok(ty);
        };
        let types = &self.program.types;
        let elem_size = match types.get(ty) {
            Type::Int { .. } | Type::Float(_) | Type::Pointer { .. } => types.size_of(ty),
            _ => None,
        };
        let Some(elem_size) = elem_size.filter(|&e| e > 0 && size % e == 0) else {
            return super::err(
                extensions
                    .first()
                    .map_or(crate::ir::Span::NONE, |e| e.span.into()),
                format!("`vector_size({size})` needs a scalar element type whose size divides it"),
            );
        };
        let align = align.unwrap_or(size);
        if let Some(&known) = self.vector_types.get(&(ty, size, align)) {
            return Ok(known);
        }
        let types = &mut self.program.types;
        let array = types.array_of(ty, ArrayLen::Fixed(size / elem_size));
        let record = types.new_record(None, false);
        types.define_record(record, vec![(Some("__v".to_string()), array, None)], false);
        types.set_record_alignment(record, align);
        let vector = types.intern(Type::Record(record));
        if let Some(name) = name {
            types.name_anonymous_record(vector, name);
        }
        self.vector_types.insert((ty, size, align), vector);
        Ok(vector)
    }
}
