//! A whole structure loaded or stored per lane (`rA[wtx]` of a `FOUR_VECTOR`): the
//! compiler splits the copy into one access per field, each with the lanes the
//! structure's size apart, so that is what a warp's instruction touches. A CUDA vector
//! type of 2 or 4 elements up to 16 bytes (`float4`, `double2`) is one vector access and
//! is not split.

use frontend::types::{Type, TypeId, TypeTable};

/// How a structure copy is counted: the access of its widest field.
pub(super) struct Copy {
    /// The field counted: its byte offset in the structure and its size.
    pub at: u64,
    pub bytes: u64,
    /// The structure's fields and size.
    pub fields: usize,
    pub size: u64,
    pub note: String,
}

/// The field accesses a copy of a value of type `ty` compiles to, when it is a structure
/// of scalar fields that is not a vector type; `None` otherwise.
pub(super) fn split(types: &TypeTable, ty: TypeId) -> Option<Copy> {
    let Type::Record(r) = types.get(ty) else {
        return None;
    };
    let record = types.record(*r);
    if record.is_union || !record.complete || record.fields.len() < 2 {
        return None;
    }
    let name = record
        .typedef_name
        .as_deref()
        .or(record.tag.as_deref())
        .unwrap_or("");
    if is_vector(name) && record.size <= 16 {
        return None;
    }
    let mut widest: Option<(u64, u64)> = None;
    for field in &record.fields {
        if field.bit_width.is_some() || !types.is_scalar(field.ty) {
            return None;
        }
        let bytes = types.size_of(field.ty)?;
        if widest.is_none_or(|(_, b)| bytes > b) {
            widest = Some((field.offset, bytes));
        }
    }
    let (at, bytes) = widest?;
    let shown = if name.is_empty() {
        String::new()
    } else {
        format!(" (`{name}`)")
    };
    Some(Copy {
        at,
        bytes,
        fields: record.fields.len(),
        size: record.size,
        note: format!(
            "a copy of a {size}-byte structure{shown} is {n} field accesses, each with the lanes \
             {size} bytes apart: the counts are those of one access of its widest field \
             ({bytes} bytes at byte {at}), per field access",
            size = record.size,
            n = record.fields.len(),
        ),
    })
}

/// A CUDA vector type of 2 or 4 elements (`float2`, `uint4`), which loads as one access.
fn is_vector(name: &str) -> bool {
    const ELEMENTS: [&str; 11] = [
        "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "longlong", "float",
        "double",
    ];
    name.strip_suffix('2')
        .or_else(|| name.strip_suffix('4'))
        .is_some_and(|e| ELEMENTS.contains(&e))
}
