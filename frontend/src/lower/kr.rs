//! Old-style (K&R) function definitions: `float squash(x) float x; { ... }`.
//!
//! The parameters are the identifier list; their types come from the declaration list
//! between `)` and `{`, and a parameter the list does not declare is `int` (C89 3.7.1).
//! Callers of a definition without a prototype pass each argument after the default
//! argument promotions, so the function receives the *promoted* type (`double` for a
//! `float`, `int` for a `char` or `short`) and converts it to the declared type on entry,
//! as a C compiler does. The definition's function type lists the promoted types, so calls
//! after it convert their arguments to them: where the program is defined this is the same
//! value the promotions give; where C leaves it undefined (an `int` passed for a `double`)
//! the analyses see the value the programmer meant instead of garbage.

use std::collections::HashMap;

use super::expr::Operand;
use super::{err, LResult, Lowerer};
use crate::ir::{InstKind, Span};
use crate::types::{FloatKind, Type, TypeId};
use lang_c::ast;
use lang_c::span::Node;

impl<'a> Lowerer<'a> {
    /// Emits and binds the parameters of a K&R definition; returns the function's type.
    pub(super) fn lower_kr_parameters(
        &mut self,
        names: &[Node<ast::Identifier>],
        declarations: &[Node<ast::Declaration>],
        ret: TypeId,
    ) -> LResult<TypeId> {
        let declared = self.kr_declared_types(names, declarations)?;
        let mut passed_types = Vec::with_capacity(names.len());
        for (index, id) in names.iter().enumerate() {
            let name = &id.node.name;
            let span: Span = id.span.into();
            let ty = match declared.get(name.as_str()) {
                Some(&ty) => ty,
                None => self.program.types.int(),
            };
            let passed = self.promoted_argument_type(ty);
            let param = self.fb.emit(InstKind::Param(index as u32), passed, span);
            let local = self.convert(
                Operand {
                    value: param,
                    ty: passed,
                },
                ty,
                span,
            );
            self.bind_parameter(Some(name.clone()), param, passed, (local.value, ty), span);
            passed_types.push(passed);
        }
        Ok(self.program.types.intern(Type::Function {
            ret,
            params: passed_types,
            variadic: false,
        }))
    }

    /// The adjusted type of each parameter the declaration list declares.
    fn kr_declared_types(
        &mut self,
        names: &[Node<ast::Identifier>],
        declarations: &[Node<ast::Declaration>],
    ) -> LResult<HashMap<String, TypeId>> {
        let mut types = HashMap::new();
        for decl in declarations {
            let base = self.base_type(&decl.node.specifiers, decl.span.into())?;
            for init in &decl.node.declarators {
                let declared = self.declarator(base.ty, &init.node.declarator)?;
                let Some(name) = declared.name else {
                    continue;
                };
                let Some(id) = names.iter().find(|n| n.node.name == name) else {
                    return err(
                        declared.name_span,
                        format!("`{name}` is declared before the body but is not a parameter"),
                    );
                };
                if let Some(init) = &init.node.initializer {
                    return err(init.span, format!("parameter `{name}` has an initializer"));
                }
                let ty = self.adjust_parameter(declared.ty, base.is_const, declared.restrict);
                types.insert(id.node.name.clone(), ty);
            }
        }
        Ok(types)
    }

    /// The type an argument has after the default argument promotions (C99 6.5.2.2p6).
    fn promoted_argument_type(&mut self, ty: TypeId) -> TypeId {
        if self.program.types.get(ty) == &Type::Float(FloatKind::Float) {
            self.program.types.double()
        } else {
            self.program.types.promote(ty)
        }
    }
}
