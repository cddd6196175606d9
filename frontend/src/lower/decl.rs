//! Declarations: C types from specifiers and declarators, struct/union/enum definitions,
//! globals, function definitions and their parameters, and local variables.

use super::builder::FunctionBuilder;
use super::{err, Binding, LResult, LocalStorage, Lowerer, Tag};
use crate::ir::{
    CudaVariable, ExecutionSpace, Function, Global, GlobalId, InstKind, LocalDeclaration, Param,
    SlotData, Span, ThreadBuiltin,
};
use crate::types::{ArrayLen, FloatKind, IntRank, Type, TypeId};
use lang_c::ast;
use lang_c::span::Node;

/// Declarator levels a declared type may have. C99 asks compilers for 12 (5.2.4.1); past
/// this the declaration stops its function (or is left out, at file scope) with one error.
/// Reports grow with the square of the depth (every level a dereference chain reaches is a
/// parameter, written with its type), so 20,000 levels made a 400 MB report.
pub const MAX_TYPE_DEPTH: u32 = 256;

/// Storage class and type of a declaration's specifiers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BaseType {
    pub ty: TypeId,
    pub is_typedef: bool,
    pub is_static: bool,
    pub is_extern: bool,
    pub is_const: bool,
    /// `volatile` on the declaration: the object may change outside the program's view.
    pub is_volatile: bool,
    /// `_Thread_local` / `__thread`: one object per host thread.
    pub is_thread_local: bool,
    /// CUDA's qualifiers, as warpwise's `cuda_runtime.h` spells them (attributes).
    pub cuda: CudaQualifiers,
}

/// CUDA's declaration qualifiers. warpwise's `cuda_runtime.h` defines `__global__` and the
/// others as GNU attributes (`__attribute__((__warpwise_global__))`), which lang-c keeps
/// among the declaration's specifiers.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CudaQualifiers {
    pub global: bool,
    pub device: bool,
    pub host: bool,
    pub shared: bool,
    pub constant: bool,
    /// One of the built-in coordinates warpwise's header declares (`threadIdx`, ...).
    pub builtin: bool,
}

impl CudaQualifiers {
    /// Records the qualifier an attribute named `name` stands for, if it is one.
    fn note(&mut self, name: &str) {
        match name.trim_matches('_') {
            "warpwise_global" => self.global = true,
            "warpwise_device" => self.device = true,
            "warpwise_host" => self.host = true,
            "warpwise_shared" => self.shared = true,
            "warpwise_constant" => self.constant = true,
            "warpwise_builtin" => self.builtin = true,
            _ => {}
        }
    }

    /// Where a function with these qualifiers runs.
    pub fn execution(self) -> ExecutionSpace {
        match (self.global, self.device, self.host) {
            (true, _, _) => ExecutionSpace::Kernel,
            (false, true, true) => ExecutionSpace::HostDevice,
            (false, true, false) => ExecutionSpace::Device,
            _ => ExecutionSpace::Host,
        }
    }

    /// The memory space of a variable `name` with these qualifiers.
    pub fn variable(self, name: &str) -> Option<CudaVariable> {
        if self.builtin {
            return ThreadBuiltin::named(name).map(CudaVariable::Builtin);
        }
        if self.shared {
            Some(CudaVariable::Shared)
        } else if self.constant {
            Some(CudaVariable::Constant)
        } else if self.device {
            Some(CudaVariable::Device)
        } else {
            None
        }
    }
}

/// A declarator resolved to its name and full type.
#[derive(Debug)]
pub(crate) struct Declared {
    pub name: Option<String>,
    pub name_span: Span,
    pub ty: TypeId,
    /// Parameters of the outermost function declarator, if this declares a function.
    pub params: Option<Vec<Node<ast::ParameterDeclaration>>>,
    /// The identifier list of the outermost declarator when it is a K&R one (`f(a, b)`).
    pub kr_params: Option<Vec<Node<ast::Identifier>>>,
    pub restrict: bool,
}

impl<'a> Lowerer<'a> {
    /// The base type and storage class of a declaration specifier list.
    pub fn base_type(
        &mut self,
        specs: &[Node<ast::DeclarationSpecifier>],
        span: Span,
    ) -> LResult<BaseType> {
        let mut type_specs = Vec::new();
        let mut extensions = Vec::new();
        let mut base = BaseType {
            ty: self.void_ty(),
            is_typedef: false,
            is_static: false,
            is_extern: false,
            is_const: false,
            is_volatile: false,
            is_thread_local: false,
            cuda: CudaQualifiers::default(),
        };
        for spec in specs {
            match &spec.node {
                ast::DeclarationSpecifier::StorageClass(sc) => match sc.node {
                    ast::StorageClassSpecifier::Typedef => base.is_typedef = true,
                    ast::StorageClassSpecifier::Static => base.is_static = true,
                    ast::StorageClassSpecifier::Extern => base.is_extern = true,
                    ast::StorageClassSpecifier::ThreadLocal => base.is_thread_local = true,
                    _ => {}
                },
                ast::DeclarationSpecifier::TypeSpecifier(ts) => type_specs.push(ts),
                ast::DeclarationSpecifier::TypeQualifier(q) => match q.node {
                    ast::TypeQualifier::Const => base.is_const = true,
                    ast::TypeQualifier::Volatile => base.is_volatile = true,
                    _ => {}
                },
                ast::DeclarationSpecifier::Extension(exts) => extensions.extend(exts),
                _ => {}
            }
        }
        // `struct P { ... } __attribute__((packed));`: the attribute sits among the
        // declaration's specifiers, the layout belongs to the struct they define.
        for e in &extensions {
            if let ast::Extension::Attribute(a) = &e.node {
                base.cuda.note(&a.name.node);
            }
        }
        self.packed_record = extensions.iter().any(|e| {
            matches!(&e.node, ast::Extension::Attribute(a) if a.name.node.trim_matches('_') == "packed")
        });
        let ty = self.type_from_specifiers(&type_specs, span);
        self.packed_record = false;
        base.ty = ty?;
        if !extensions.is_empty() {
            let extensions: Vec<_> = extensions.into_iter().cloned().collect();
            base.ty = self.apply_vector_attribute(base.ty, &extensions, None)?;
        }
        Ok(base)
    }

    /// The type of a specifier-qualifier list (struct fields, type names).
    pub fn base_type_sq(
        &mut self,
        specs: &[Node<ast::SpecifierQualifier>],
        span: Span,
    ) -> LResult<(TypeId, bool)> {
        let mut type_specs = Vec::new();
        let mut is_const = false;
        for spec in specs {
            match &spec.node {
                ast::SpecifierQualifier::TypeSpecifier(ts) => type_specs.push(ts),
                ast::SpecifierQualifier::TypeQualifier(q) => {
                    if matches!(q.node, ast::TypeQualifier::Const) {
                        is_const = true;
                    }
                }
                ast::SpecifierQualifier::Extension(_) => {}
            }
        }
        Ok((self.type_from_specifiers(&type_specs, span)?, is_const))
    }

    fn type_from_specifiers(
        &mut self,
        specs: &[&Node<ast::TypeSpecifier>],
        span: Span,
    ) -> LResult<TypeId> {
        let (mut void, mut char, mut short, mut int, mut long) = (false, false, false, false, 0u32);
        let (mut float, mut double, mut signed, mut unsigned, mut bool_, mut complex) =
            (false, false, false, false, false, false);
        let mut int128 = false;
        for spec in specs {
            match &spec.node {
                ast::TypeSpecifier::Void => void = true,
                ast::TypeSpecifier::Char => char = true,
                ast::TypeSpecifier::Short => short = true,
                ast::TypeSpecifier::Int => int = true,
                ast::TypeSpecifier::Long => long += 1,
                ast::TypeSpecifier::Float => float = true,
                ast::TypeSpecifier::Double => double = true,
                ast::TypeSpecifier::Signed => signed = true,
                ast::TypeSpecifier::Unsigned => unsigned = true,
                ast::TypeSpecifier::Bool => bool_ = true,
                ast::TypeSpecifier::Complex => complex = true,
                ast::TypeSpecifier::Atomic(type_name) => return self.type_name(type_name),
                ast::TypeSpecifier::Struct(st) => return self.struct_type(st),
                ast::TypeSpecifier::Enum(en) => return self.enum_type(en),
                ast::TypeSpecifier::TypedefName(id) => {
                    if id.node.name == "__int128" || id.node.name == "__int128_t" {
                        int128 = true;
                        continue;
                    }
                    if id.node.name == "__uint128_t" {
                        int128 = true;
                        unsigned = true;
                        continue;
                    }
                    match self.scopes.lookup(&id.node.name) {
                        Some(Binding::Typedef(ty)) => return Ok(*ty),
                        _ => return err(id.span, format!("unknown type name `{}`", id.node.name)),
                    }
                }
                ast::TypeSpecifier::TypeOf(of) => {
                    return match &of.node {
                        ast::TypeOf::Type(type_name) => self.type_name(type_name),
                        ast::TypeOf::Expression(e) => self.type_of_expression(e),
                    }
                }
                ast::TypeSpecifier::TS18661Float(f) => {
                    let kind = match f.width {
                        32 => FloatKind::Float,
                        64 => FloatKind::Double,
                        _ => FloatKind::LongDouble,
                    };
                    return Ok(self.program.types.intern(Type::Float(kind)));
                }
            }
        }
        let types = &mut self.program.types;
        let ty = if void {
            types.void()
        } else if bool_ {
            types.bool()
        } else if float || double {
            let kind = if float {
                FloatKind::Float
            } else if long > 0 {
                FloatKind::LongDouble
            } else {
                FloatKind::Double
            };
            let scalar = types.intern(Type::Float(kind));
            if complex {
                // `_Complex` values are laid out as two components; arithmetic on them is
                // rejected where it happens.
                return Ok(types.array_of(scalar, ArrayLen::Fixed(2)));
            }
            scalar
        } else {
            let rank = if int128 {
                IntRank::Int128
            } else if char {
                IntRank::Char
            } else if short {
                IntRank::Short
            } else if long >= 2 {
                IntRank::LongLong
            } else if long == 1 {
                IntRank::Long
            } else if int || signed || unsigned {
                IntRank::Int
            } else {
                return err(span, "declaration without a type (implicit int is not C99)");
            };
            types.intern(Type::Int {
                rank,
                signed: !unsigned,
            })
        };
        Ok(ty)
    }

    fn struct_type(&mut self, st: &Node<ast::StructType>) -> LResult<TypeId> {
        // Only this record is packed, not the records its members declare.
        let packed = std::mem::take(&mut self.packed_record);
        let is_union = matches!(st.node.kind.node, ast::StructKind::Union);
        let tag = st.node.identifier.as_ref().map(|i| i.node.name.clone());
        let record = match (&tag, &st.node.declarations) {
            (Some(name), Some(_)) => match self.scopes.lookup_tag_innermost(name) {
                Some(Tag::Record(r)) if !self.program.types.record(r).complete => r,
                _ => {
                    let r = self.program.types.new_record(tag.clone(), is_union);
                    self.scopes.bind_tag(name, Tag::Record(r));
                    r
                }
            },
            (Some(name), None) => match self.scopes.lookup_tag(name) {
                Some(Tag::Record(r)) => r,
                _ => {
                    let r = self.program.types.new_record(tag.clone(), is_union);
                    self.scopes.bind_tag(name, Tag::Record(r));
                    r
                }
            },
            (None, _) => self.program.types.new_record(None, is_union),
        };
        if let Some(decls) = &st.node.declarations {
            let mut members = Vec::new();
            for decl in decls {
                let ast::StructDeclaration::Field(field) = &decl.node else {
                    continue;
                };
                let (base, _) = self.base_type_sq(&field.node.specifiers, field.span.into())?;
                if field.node.declarators.is_empty() {
                    // Anonymous struct/union member (C11).
                    members.push((None, base, None));
                }
                for sd in &field.node.declarators {
                    let bit_width = match &sd.node.bit_width {
                        Some(w) => match self.const_eval(w) {
                            Some(v) => Some(v.clamp(0, 128) as u32),
                            None => return err(w.span, "bit-field width is not a constant"),
                        },
                        None => None,
                    };
                    let (name, ty) = match &sd.node.declarator {
                        Some(d) => {
                            let declared = self.declarator(base, d)?;
                            (declared.name, declared.ty)
                        }
                        None => (None, base),
                    };
                    members.push((name, ty, bit_width));
                }
            }
            self.program.types.define_record(record, members, packed);
        }
        Ok(self.program.types.intern(Type::Record(record)))
    }

    fn enum_type(&mut self, en: &Node<ast::EnumType>) -> LResult<TypeId> {
        if let Some(id) = &en.node.identifier {
            self.scopes.bind_tag(&id.node.name, Tag::Enum);
        }
        let mut next: i128 = 0;
        let mut min = 0i128;
        let mut max = 0i128;
        for e in &en.node.enumerators {
            let value = match &e.node.expression {
                Some(expr) => match self.const_eval(expr) {
                    Some(v) => v,
                    None => return err(expr.span, "enumerator value is not a constant"),
                },
                None => next,
            };
            min = min.min(value);
            max = max.max(value);
            self.scopes
                .bind(&e.node.identifier.node.name, Binding::EnumConst(value));
            next = value.wrapping_add(1);
        }
        let types = &mut self.program.types;
        // GCC: unsigned int when no value is negative, widened when the values need it.
        Ok(if min < 0 {
            if min >= i32::MIN as i128 && max <= i32::MAX as i128 {
                types.int()
            } else {
                types.long()
            }
        } else if max <= u32::MAX as i128 {
            types.uint()
        } else {
            types.ulong()
        })
    }

    pub fn type_name(&mut self, tn: &Node<ast::TypeName>) -> LResult<TypeId> {
        let (base, _) = self.base_type_sq(&tn.node.specifiers, tn.span.into())?;
        match &tn.node.declarator {
            Some(d) => Ok(self.declarator(base, d)?.ty),
            None => Ok(base),
        }
    }

    /// Applies a declarator to a base type. Pointers bind looser than array and function
    /// suffixes; lang-c lists the pointers first, then the suffixes in source order.
    pub fn declarator(&mut self, base: TypeId, d: &Node<ast::Declarator>) -> LResult<Declared> {
        let mut ty = base;
        let mut restrict = false;
        let mut params = None;
        let mut kr_params = None;
        for derived in &d.node.derived {
            if let ast::DerivedDeclarator::Pointer(quals) = &derived.node {
                let (is_const, is_restrict) = pointer_qualifiers(quals);
                let _ = is_const;
                ty = self.pointer_type(ty, false, is_restrict);
                restrict = is_restrict;
            }
        }
        let suffixes: Vec<_> = d
            .node
            .derived
            .iter()
            .filter(|x| !matches!(x.node, ast::DerivedDeclarator::Pointer(_)))
            .collect();
        for (position, derived) in suffixes.iter().enumerate().rev() {
            match &derived.node {
                ast::DerivedDeclarator::Array(array) => {
                    let len = self.array_len(&array.node.size)?;
                    ty = self.program.types.array_of(ty, len);
                }
                ast::DerivedDeclarator::Function(f) => {
                    let mut param_types = Vec::new();
                    let is_void_list = f.node.parameters.len() == 1
                        && self.is_void_param(&f.node.parameters[0])?;
                    if !is_void_list {
                        for p in &f.node.parameters {
                            let pty = self.parameter_type(p)?;
                            param_types.push(pty);
                        }
                    }
                    if position == 0 {
                        params = Some(f.node.parameters.clone());
                    }
                    let variadic = matches!(f.node.ellipsis, ast::Ellipsis::Some);
                    ty = self.program.types.intern(Type::Function {
                        ret: ty,
                        params: param_types,
                        variadic,
                    });
                }
                ast::DerivedDeclarator::KRFunction(names) => {
                    if position == 0 {
                        params = Some(Vec::new());
                        kr_params = Some(names.clone());
                    }
                    ty = self.program.types.intern(Type::Function {
                        ret: ty,
                        params: Vec::new(),
                        variadic: true,
                    });
                }
                ast::DerivedDeclarator::Block(_) => {
                    return err(derived.span, "Apple block pointers are not supported");
                }
                ast::DerivedDeclarator::Pointer(_) => {}
            }
        }
        if self.program.types.depth(ty) > MAX_TYPE_DEPTH {
            return err(
                d.span,
                format!(
                    "a type more than {MAX_TYPE_DEPTH} pointer, array or function levels deep; \
                     warpwise cannot analyse this"
                ),
            );
        }
        match &d.node.kind.node {
            ast::DeclaratorKind::Abstract => Ok(Declared {
                name: None,
                name_span: d.span.into(),
                ty,
                params,
                kr_params,
                restrict,
            }),
            ast::DeclaratorKind::Identifier(id) => Ok(Declared {
                // `typedef float __m128 __attribute__((__vector_size__(16)));`
                ty: if d.node.derived.is_empty() {
                    self.apply_vector_attribute(ty, &d.node.extensions, Some(&id.node.name))?
                } else {
                    ty
                },
                name: Some(id.node.name.clone()),
                name_span: id.span.into(),
                params,
                kr_params,
                restrict,
            }),
            ast::DeclaratorKind::Declarator(inner) => {
                let mut declared = self.declarator(ty, inner)?;
                if declared.params.is_none() {
                    declared.params = params;
                    declared.kr_params = kr_params;
                }
                Ok(declared)
            }
        }
    }

    pub fn pointer_type(&mut self, pointee: TypeId, pointee_const: bool, restrict: bool) -> TypeId {
        self.program.types.intern(Type::Pointer {
            pointee,
            pointee_const,
            restrict,
        })
    }

    fn array_len(&mut self, size: &ast::ArraySize) -> LResult<ArrayLen> {
        Ok(match size {
            ast::ArraySize::Unknown => ArrayLen::Incomplete,
            ast::ArraySize::VariableUnknown => ArrayLen::Incomplete,
            ast::ArraySize::VariableExpression(e) | ast::ArraySize::StaticExpression(e) => {
                match self.const_eval(e) {
                    Some(n) if n >= 0 => ArrayLen::Fixed(n as u64),
                    Some(_) => return err(e.span, "array size is negative"),
                    None => {
                        let len = self.program.types.fresh_vla_len(e.span.start..e.span.end);
                        if let ArrayLen::Variable(tag) = len {
                            self.pending_vla.push((tag, (**e).clone()));
                        }
                        len
                    }
                }
            }
        })
    }

    fn is_void_param(&mut self, p: &Node<ast::ParameterDeclaration>) -> LResult<bool> {
        if p.node
            .declarator
            .as_ref()
            .is_some_and(|d| !d.node.derived.is_empty())
        {
            return Ok(false);
        }
        let base = self.base_type(&p.node.specifiers, p.span.into())?;
        Ok(matches!(self.program.types.get(base.ty), Type::Void))
    }

    /// The adjusted type of a parameter: arrays become pointers to their element (keeping
    /// inner VLA dimensions), functions become function pointers.
    pub fn parameter_type(&mut self, p: &Node<ast::ParameterDeclaration>) -> LResult<TypeId> {
        let base = self.base_type(&p.node.specifiers, p.span.into())?;
        let (ty, restrict) = match &p.node.declarator {
            Some(d) => {
                let declared = self.declarator(base.ty, d)?;
                (declared.ty, declared.restrict)
            }
            None => (base.ty, false),
        };
        Ok(self.adjust_parameter(ty, base.is_const, restrict))
    }

    pub(super) fn adjust_parameter(
        &mut self,
        ty: TypeId,
        is_const: bool,
        restrict: bool,
    ) -> TypeId {
        match self.program.types.get(ty).clone() {
            Type::Array { elem, len } => {
                if let ArrayLen::Variable(tag) = len {
                    // The outermost dimension of an array parameter is dropped by the
                    // adjustment; its size expression is never evaluated.
                    self.pending_vla.retain(|(t, _)| *t != tag);
                }
                self.program.types.intern(Type::Pointer {
                    pointee: elem,
                    pointee_const: is_const,
                    restrict,
                })
            }
            Type::Function { .. } => self.pointer_type(ty, false, false),
            Type::Pointer {
                pointee,
                restrict: r,
                ..
            } => self.program.types.intern(Type::Pointer {
                pointee,
                pointee_const: is_const,
                restrict: r || restrict,
            }),
            _ => ty,
        }
    }

    /// A file-scope declaration: typedefs, globals, prototypes, tag definitions.
    pub fn global_declaration(&mut self, decl: &Node<ast::Declaration>) -> LResult<()> {
        let base = self.base_type(&decl.node.specifiers, decl.span.into())?;
        self.pending_vla.clear();
        for init in &decl.node.declarators {
            let declared = self.declarator(base.ty, &init.node.declarator)?;
            self.pending_vla.clear();
            let Some(name) = declared.name.clone() else {
                continue;
            };
            if base.is_typedef {
                self.program.types.name_anonymous_record(declared.ty, &name);
                self.scopes.bind(&name, Binding::Typedef(declared.ty));
                continue;
            }
            if matches!(self.program.types.get(declared.ty), Type::Function { .. }) {
                if super::noreturn::declared(&decl.node.specifiers, &init.node.declarator.node) {
                    self.program.noreturn.insert(name.clone());
                }
                self.declared_at
                    .entry(name.clone())
                    .or_insert(declared.name_span);
                if !matches!(self.scopes.lookup(&name), Some(Binding::Function { .. }))
                    || !self.defined.contains(&name)
                {
                    self.scopes.bind(
                        &name,
                        Binding::Function {
                            name: name.clone(),
                            ty: declared.ty,
                        },
                    );
                }
                continue;
            }
            // Tentative definitions and `extern` redeclarations refer to one global.
            if let Some(Binding::Global { id, .. }) = self.scopes.lookup(&name).cloned() {
                let ty = self.complete_array_from_init(declared.ty, init.node.initializer.as_ref());
                let global = &mut self.program.globals[id.index()];
                if self.program.types.size_of(ty).is_some() {
                    global.ty = ty;
                }
                if !base.is_extern {
                    global.is_extern = false;
                }
                self.scopes
                    .bind(&name, Binding::Global { id, ty: global.ty });
                self.lower_global_initializer(id, init.node.initializer.as_ref());
                continue;
            }
            let ty = self.complete_array_from_init(declared.ty, init.node.initializer.as_ref());
            let id = self.global_id(Global {
                name: name.clone(),
                ty,
                is_static: base.is_static,
                is_extern: base.is_extern,
                is_const: base.is_const,
                is_volatile: base.is_volatile,
                is_thread_local: base.is_thread_local,
                local_to: None,
                span: declared.name_span,
                init: None,
                values_elided: false,
                cuda: base.cuda.variable(&name),
            });
            self.scopes.bind(&name, Binding::Global { id, ty });
            self.lower_global_initializer(id, init.node.initializer.as_ref());
        }
        Ok(())
    }

    /// Lowers the initializer of a global or local static into its own function (see
    /// [`Global::init`]), leaving the function being lowered untouched. An initializer that
    /// cannot be lowered only costs a warning: the analyses do not depend on it.
    fn lower_global_initializer(&mut self, id: GlobalId, init: Option<&Node<ast::Initializer>>) {
        let Some(init) = init else {
            return;
        };
        let global = self.program.globals[id.index()].clone();
        let void = self.void_ty();
        let mut func = super::empty_function(&mut self.program, void);
        func.name = format!("{}.init", global.name);
        func.span = init.span.into();
        let outer = std::mem::replace(&mut self.fb, FunctionBuilder::new(func));
        let outer_pending = std::mem::take(&mut self.pending_vla);
        let outer_bit_fields = std::mem::take(&mut self.bit_fields);
        let result = (|| {
            let ptr = self.pointer_type(global.ty, false, false);
            let addr = self
                .fb
                .emit(InstKind::GlobalAddr(id), ptr, init.span.into());
            self.initialize_memory(addr, global.ty, init, true)?;
            self.fb
                .terminate(crate::ir::Terminator::Return(None), Span::NONE);
            Ok::<(), super::LowerError>(())
        })();
        self.pending_vla = outer_pending;
        self.bit_fields = outer_bit_fields;
        let builder = std::mem::replace(&mut self.fb, outer);
        match result {
            Ok(()) => self.program.globals[id.index()].init = Some(Box::new(builder.finish())),
            Err(e) => self.warn(
                e.span,
                format!(
                    "initializer of `{}` not lowered: {}",
                    global.name, e.message
                ),
            ),
        }
    }

    /// `int a[] = {1, 2, 3}` and `char s[] = "abc"` take their length from the initializer.
    pub fn complete_array_from_init(
        &mut self,
        ty: TypeId,
        init: Option<&Node<ast::Initializer>>,
    ) -> TypeId {
        let Type::Array {
            elem,
            len: ArrayLen::Incomplete,
        } = self.program.types.get(ty).clone()
        else {
            return ty;
        };
        let len = match init.map(|i| &i.node) {
            Some(ast::Initializer::List(items)) => {
                let mut index: u64 = 0;
                let mut max: u64 = 0;
                for item in items {
                    if let Some(first) = item.node.designation.first() {
                        if let ast::Designator::Index(e) = &first.node {
                            if let Some(v) = self.const_eval(e) {
                                index = v.max(0) as u64;
                            }
                        }
                    }
                    index += 1;
                    max = max.max(index);
                }
                max
            }
            Some(ast::Initializer::Expression(e)) => match &e.node {
                ast::Expression::StringLiteral(s) => string_literal_len(&s.node) + 1,
                _ => return ty,
            },
            None => return ty,
        };
        self.program.types.array_of(elem, ArrayLen::Fixed(len))
    }

    /// Registers a function defined in a system header as a declaration only.
    pub fn declare_function_only(&mut self, def: &Node<ast::FunctionDefinition>) -> LResult<()> {
        let base = self.base_type(&def.node.specifiers, def.span.into())?;
        let declared = self.declarator(base.ty, &def.node.declarator)?;
        self.pending_vla.clear();
        if let Some(name) = declared.name {
            if super::noreturn::declared(&def.node.specifiers, &def.node.declarator.node) {
                self.program.noreturn.insert(name.clone());
            }
            self.declared_at
                .entry(name.clone())
                .or_insert(declared.name_span);
            self.scopes.bind_global(
                &name,
                Binding::Function {
                    name: name.clone(),
                    ty: declared.ty,
                },
            );
        }
        Ok(())
    }

    pub fn lower_function(&mut self, def: &Node<ast::FunctionDefinition>) -> LResult<Function> {
        let base = self.base_type(&def.node.specifiers, def.span.into())?;
        self.pending_vla.clear();
        let declared = self.declarator(base.ty, &def.node.declarator)?;
        let Some(name) = declared.name.clone() else {
            return err(def.span, "function definition without a name");
        };
        self.in_function = Some(name.clone());
        if super::noreturn::declared(&def.node.specifiers, &def.node.declarator.node) {
            self.program.noreturn.insert(name.clone());
        }
        let Type::Function { ret, .. } = self.program.types.get(declared.ty).clone() else {
            return err(
                def.node.declarator.span,
                format!("`{name}` is defined like a function but its type is not a function type"),
            );
        };
        self.scopes.bind_global(
            &name,
            Binding::Function {
                name: name.clone(),
                ty: declared.ty,
            },
        );
        self.defined.insert(name.clone());

        self.address_taken = super::stmt::address_taken_names(&def.node.statement);
        let void = self.void_ty();
        let mut func = super::empty_function(&mut self.program, void);
        func.name = name.clone();
        func.ty = declared.ty;
        func.ret = ret;
        func.is_static = base.is_static;
        func.execution = base.cuda.execution();
        func.span = def.span.into();
        func.name_span = declared.name_span;
        self.fb = FunctionBuilder::new(func);
        self.labels.clear();
        self.defined_labels.clear();
        self.gotos.clear();
        self.bit_fields.clear();
        self.vla_lengths.clear();
        self.pending_vla.clear();
        self.scopes.push(Span::from(def.span).end);

        if let Some(names) = declared.kr_params.as_ref().filter(|n| !n.is_empty()) {
            // `f(a, b) double *a; { ... }`: the types come from the declaration list.
            let ty = self.lower_kr_parameters(names, &def.node.declarations, ret)?;
            self.fb.func.ty = ty;
            self.scopes.bind_global(
                &name,
                Binding::Function {
                    name: name.clone(),
                    ty,
                },
            );
        } else {
            let params = declared.params.unwrap_or_default();
            let is_void_list = params.len() == 1 && self.is_void_param(&params[0])?;
            if !is_void_list {
                for (index, p) in params.iter().enumerate() {
                    self.lower_parameter(p, index as u32)?;
                }
            }
        }
        // VLA parameter dimensions may refer to earlier parameters: evaluate them now.
        self.evaluate_pending_vla()?;
        let param_vla: Vec<(usize, Vec<crate::ir::Value>)> = self
            .fb
            .func
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| (i, self.vla_dims_of(p.ty)))
            .collect();
        for (i, dims) in param_vla {
            self.fb.func.params[i].vla_dims = dims;
        }

        self.lower_statement(&def.node.statement)?;
        // A jump to nowhere: C rejects it, and its block would have no place in the CFG.
        if let Some((label, span)) = self
            .gotos
            .iter()
            .find(|(label, _)| !self.defined_labels.contains(label))
        {
            return err(
                *span,
                format!("`goto {label}`: the function has no label `{label}`"),
            );
        }
        if self.fb.is_open() {
            // Falling off the end: `main` returns 0 (C99 5.1.2.2.3), others return nothing.
            let value = if name == "main" {
                let int = self.program.types.int();
                Some(self.fb.emit(
                    InstKind::Const(crate::ir::Constant::Int(0)),
                    int,
                    Span::NONE,
                ))
            } else {
                None
            };
            let end = Span::new(def.span.end.saturating_sub(1), def.span.end);
            self.fb.terminate(crate::ir::Terminator::Return(value), end);
        }
        self.scopes.pop();
        let placeholder = super::empty_function(&mut self.program, void);
        let builder = std::mem::replace(&mut self.fb, FunctionBuilder::new(placeholder));
        Ok(builder.finish())
    }

    fn lower_parameter(&mut self, p: &Node<ast::ParameterDeclaration>, index: u32) -> LResult<()> {
        let ty = self.parameter_type(p)?;
        let declared_name = p.node.declarator.as_ref().and_then(declarator_name);
        let span: Span = p.span.into();
        let value = self.fb.emit(InstKind::Param(index), ty, span);
        self.bind_parameter(declared_name, value, ty, (value, ty), span);
        Ok(())
    }

    /// Records parameter `param` (the `Param` instruction, of type `param_ty`) and binds its
    /// name to a local of type `local_ty` that starts as `local` (the parameter itself, or
    /// for a K&R `float` its conversion from the `double` callers pass).
    pub(super) fn bind_parameter(
        &mut self,
        declared_name: Option<String>,
        param: crate::ir::Value,
        param_ty: TypeId,
        (value, ty): (crate::ir::Value, TypeId),
        span: Span,
    ) {
        let mut param = Param {
            name: declared_name.clone(),
            ty: param_ty,
            value: param,
            slot: None,
            vla_dims: Vec::new(),
        };
        if let Some(name) = &declared_name {
            self.fb.name_value(param.value, name);
            // Structs and unions live in memory, like local ones, so `.member` works.
            if !self.program.types.is_scalar(ty) || self.address_taken.contains(name) {
                let slot = self.new_slot(name, ty, None, span);
                let addr = self.slot_addr(slot, ty, span);
                self.fb.emit(InstKind::Store { addr, value }, ty, span);
                param.slot = Some(slot);
                self.scopes.bind(
                    name,
                    Binding::Local {
                        storage: LocalStorage::Slot(slot),
                        ty,
                        decl: span,
                    },
                );
            } else {
                let var = self.fb.new_var(Some(name.clone()), ty);
                self.fb.def_var(var, value);
                self.scopes.bind(
                    name,
                    Binding::Local {
                        storage: LocalStorage::Ssa(var),
                        ty,
                        decl: span,
                    },
                );
            }
        }
        self.fb.func.params.push(param);
    }

    /// The run-time lengths of the VLA dimensions reachable from a (pointer) type.
    fn vla_dims_of(&self, ty: TypeId) -> Vec<crate::ir::Value> {
        let mut dims = Vec::new();
        let mut current = ty;
        loop {
            match self.program.types.get(current) {
                Type::Pointer { pointee, .. } => current = *pointee,
                Type::Array { elem, len } => {
                    if let ArrayLen::Variable(tag) = len {
                        if let Some(v) = self.vla_lengths.get(tag) {
                            dims.push(*v);
                        }
                    }
                    current = *elem;
                }
                _ => return dims,
            }
        }
    }

    /// Lowers queued VLA size expressions, in declaration order.
    pub fn evaluate_pending_vla(&mut self) -> LResult<()> {
        let pending = std::mem::take(&mut self.pending_vla);
        for (tag, expr) in pending {
            let value = self.rvalue(&expr)?;
            let long = self.program.types.long();
            let value = self.convert(value, long, expr.span.into());
            self.vla_lengths.insert(tag, value.value);
        }
        Ok(())
    }

    pub fn new_slot(
        &mut self,
        name: &str,
        ty: TypeId,
        vla_size: Option<crate::ir::Value>,
        span: Span,
    ) -> crate::ir::Slot {
        self.fb.func.slots.push(SlotData {
            name: name.to_string(),
            ty,
            vla_size,
            span,
            shared: false,
        });
        crate::ir::Slot(self.fb.func.slots.len() as u32 - 1)
    }

    pub fn slot_addr(&mut self, slot: crate::ir::Slot, ty: TypeId, span: Span) -> crate::ir::Value {
        let ptr = self.pointer_type(ty, false, false);
        let v = self.fb.emit(InstKind::SlotAddr(slot), ptr, span);
        let name = self.fb.func.slots[slot.index()].name.clone();
        self.fb.name_value(v, &format!("&{name}"));
        v
    }

    /// A declaration inside a function body.
    pub fn local_declaration(&mut self, decl: &Node<ast::Declaration>) -> LResult<()> {
        let base = self.base_type(&decl.node.specifiers, decl.span.into())?;
        // Size expressions of a typedef'd VLA are evaluated at the typedef.
        self.evaluate_pending_vla()?;
        for init in &decl.node.declarators {
            let declared = self.declarator(base.ty, &init.node.declarator)?;
            let Some(name) = declared.name.clone() else {
                self.evaluate_pending_vla()?;
                continue;
            };
            let span = declared.name_span;
            if base.is_typedef {
                self.evaluate_pending_vla()?;
                self.program.types.name_anonymous_record(declared.ty, &name);
                self.scopes.bind(&name, Binding::Typedef(declared.ty));
                continue;
            }
            if matches!(self.program.types.get(declared.ty), Type::Function { .. }) {
                self.scopes.bind(
                    &name,
                    Binding::Function {
                        name: name.clone(),
                        ty: declared.ty,
                    },
                );
                continue;
            }
            let ty = self.complete_array_from_init(declared.ty, init.node.initializer.as_ref());
            if base.is_extern {
                let existing = self.scopes.ordinary[0].get(&name).cloned();
                let binding = match existing {
                    Some(b @ Binding::Global { .. }) => b,
                    _ => {
                        let id = self.global_id(Global {
                            name: name.clone(),
                            ty,
                            is_static: false,
                            is_extern: true,
                            is_const: base.is_const,
                            is_volatile: base.is_volatile,
                            is_thread_local: base.is_thread_local,
                            local_to: None,
                            span,
                            init: None,
                            values_elided: false,
                            cuda: base.cuda.variable(&name),
                        });
                        Binding::Global { id, ty }
                    }
                };
                self.scopes.bind(&name, binding);
                continue;
            }
            if base.is_static {
                let id = self.global_id(Global {
                    name: name.clone(),
                    ty,
                    is_static: true,
                    is_extern: false,
                    is_const: base.is_const,
                    is_volatile: base.is_volatile,
                    is_thread_local: base.is_thread_local,
                    local_to: self.in_function.clone(),
                    span,
                    init: None,
                    values_elided: false,
                    cuda: base.cuda.variable(&name),
                });
                self.fb.func.local_statics.push(id);
                self.scopes.bind(&name, Binding::Global { id, ty });
                self.lower_global_initializer(id, init.node.initializer.as_ref());
                continue;
            }
            self.evaluate_pending_vla()?;
            self.fb.func.declarations.push(LocalDeclaration {
                name: name.clone(),
                ty,
                span,
                scope_end: self.scopes.end(),
            });
            // A `__shared__` scalar is one object the block's threads share, never a register.
            let in_memory = !self.program.types.is_scalar(ty)
                || self.address_taken.contains(&name)
                || base.cuda.shared;
            if in_memory {
                let vla_size = match self.program.types.size_of(ty) {
                    Some(_) => None,
                    None => Some(self.runtime_size_of(ty, span)?),
                };
                let slot = self.new_slot(&name, ty, vla_size, span);
                self.fb.func.slots[slot.index()].shared = base.cuda.shared;
                self.scopes.bind(
                    &name,
                    Binding::Local {
                        storage: LocalStorage::Slot(slot),
                        ty,
                        decl: span,
                    },
                );
                if let Some(initializer) = &init.node.initializer {
                    let addr = self.slot_addr(slot, ty, span);
                    self.initialize_memory(addr, ty, initializer, true)?;
                }
            } else {
                let var = self.fb.new_var(Some(name.clone()), ty);
                self.scopes.bind(
                    &name,
                    Binding::Local {
                        storage: LocalStorage::Ssa(var),
                        ty,
                        decl: span,
                    },
                );
                match &init.node.initializer {
                    Some(initializer) => {
                        let value = match &initializer.node {
                            ast::Initializer::Expression(e) => self.rvalue(e)?,
                            ast::Initializer::List(items) => match items.first() {
                                Some(item) => match &item.node.initializer.node {
                                    ast::Initializer::Expression(e) => self.rvalue(e)?,
                                    _ => {
                                        return err(
                                            item.span,
                                            "nested braces around a scalar initializer",
                                        )
                                    }
                                },
                                None => self.int_const(0, initializer.span.into()),
                            },
                        };
                        let value = self.convert(value, ty, initializer.span.into());
                        self.fb.def_var(var, value.value);
                    }
                    None => {
                        // Reads before the first write become `undef` through SSA construction.
                    }
                }
            }
        }
        Ok(())
    }
}

fn pointer_qualifiers(quals: &[Node<ast::PointerQualifier>]) -> (bool, bool) {
    let mut is_const = false;
    let mut restrict = false;
    for q in quals {
        if let ast::PointerQualifier::TypeQualifier(tq) = &q.node {
            match tq.node {
                ast::TypeQualifier::Const => is_const = true,
                ast::TypeQualifier::Restrict => restrict = true,
                _ => {}
            }
        }
    }
    (is_const, restrict)
}

/// The identifier a declarator declares, without building its type.
pub(crate) fn declarator_name(d: &Node<ast::Declarator>) -> Option<String> {
    match &d.node.kind.node {
        ast::DeclaratorKind::Identifier(id) => Some(id.node.name.clone()),
        ast::DeclaratorKind::Declarator(inner) => declarator_name(inner),
        ast::DeclaratorKind::Abstract => None,
    }
}

/// Length in bytes (without the terminator) of a possibly concatenated string literal.
pub(crate) fn string_literal_len(parts: &[String]) -> u64 {
    parts.iter().map(|p| unescaped_len(p)).sum()
}

fn unescaped_len(literal: &str) -> u64 {
    // lang-c keeps the quotes and any prefix (`"abc"`, `L"abc"`).
    let inner = literal.trim_start_matches(['L', 'u', 'U', '8']);
    let inner = inner
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(inner);
    let bytes = inner.as_bytes();
    let mut len = 0u64;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 1 < bytes.len() {
            i += 2;
            match bytes[i - 1] {
                b'x' => {
                    while i < bytes.len() && bytes[i].is_ascii_hexdigit() {
                        i += 1;
                    }
                }
                b'0'..=b'7' => {
                    let mut digits = 1;
                    while digits < 3 && i < bytes.len() && (b'0'..=b'7').contains(&bytes[i]) {
                        i += 1;
                        digits += 1;
                    }
                }
                _ => {}
            }
        } else {
            i += 1;
        }
        len += 1;
    }
    len
}
