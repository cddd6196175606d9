//! Where a translation unit's loops, memory accesses and returns are, as byte spans of the
//! preprocessed text: what the profiler needs to rewrite a program without knowing lang-c.
//!
//! The walk is syntactic. Whether an access really touches memory (an array element, a
//! global, an address-taken local) or is an SSA value or an array that decays to a pointer is
//! left to the caller, who checks the lowered IR's `Load`/`Store` at [`AccessSite::ir_span`].
//! Operands of `sizeof`, `_Alignof`, `typeof`, `offsetof` and `_Generic` are not evaluated, so
//! they are not walked.

// `Diagnostic` is large, but errors are the cold path and the project-wide error type is fixed.
#![allow(clippy::result_large_err)]

use crate::diagnostic::Diagnostic;
use crate::ir::Span;
use crate::preprocess::Preprocessed;
use lang_c::ast;
use lang_c::span::Node;
use std::collections::HashMap;

#[derive(Clone, Debug, Default)]
pub struct Sites {
    pub functions: Vec<FunctionSite>,
    pub loops: Vec<LoopSite>,
    pub accesses: Vec<AccessSite>,
    /// The items of every compound statement inside a function (statements and
    /// declarations), in text order: where a directive can stand on its own.
    pub block_items: Vec<Span>,
}

#[derive(Clone, Debug)]
pub struct FunctionSite {
    pub name: String,
    pub span: Span,
    /// The body's compound statement, braces included.
    pub body: Span,
    pub returns: Vec<Span>,
}

#[derive(Clone, Debug)]
pub struct LoopSite {
    pub keyword: Span,
    /// The whole statement (for `do`, up to and including the `;`).
    pub span: Span,
    pub body: Span,
    /// `for` initializer, condition and step; the `while` / `do` condition.
    pub header: Vec<Span>,
    pub parent: Option<usize>,
    pub function: usize,
    /// Scalar variables (locals in scope and globals) visible at the loop statement.
    pub visible: Vec<String>,
    /// Those of them declared at file scope (no local of the same name hides them).
    pub visible_globals: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessMode {
    Read,
    /// A plain assignment `L = R`; [`AccessSite::assign`] holds the whole expression.
    Write,
    /// Read-modify-write: `L op= R`, `++L`, `L--`.
    Update,
}

#[derive(Clone, Debug)]
pub struct AccessSite {
    /// The lvalue expression.
    pub span: Span,
    pub mode: AccessMode,
    /// For [`AccessMode::Write`]: the assignment expression and its right-hand side.
    pub assign: Option<(Span, Span)>,
    /// Where lowering puts the `Load` (reads) or `Store` (writes, updates) of this access.
    pub ir_span: Span,
    /// The named variable when the lvalue is a bare identifier.
    pub variable: Option<Variable>,
    /// The member name when the lvalue is `x.f` or `p->f` (bit-fields cannot be addressed).
    pub member: Option<String>,
    /// The array or object accessed: the base expression without its subscripts.
    pub base: Span,
    /// `+`, `*`, ... when the access is part of a reduction-shaped update of a variable.
    pub op: Option<char>,
    pub function: usize,
}

#[derive(Clone, Debug)]
pub struct Variable {
    pub name: String,
    /// Offset of the declaration for locals (parameters: the function's start).
    pub local_decl: Option<u32>,
    /// Not an array, function or `register` variable: its address may be taken.
    pub addressable_scalar: bool,
}

#[derive(Clone, Debug)]
struct VarInfo {
    decl: Option<u32>,
    addressable_scalar: bool,
}

/// Parses the preprocessed text and lists its sites.
pub fn access_sites(pre: &Preprocessed) -> Result<Sites, Diagnostic> {
    let unit = crate::parse::parse(pre)?;
    let mut walker = Walker::default();
    walker.scopes.push(HashMap::new());
    for item in &unit.0 {
        match &item.node {
            ast::ExternalDeclaration::Declaration(d) => walker.declaration(d, false),
            ast::ExternalDeclaration::FunctionDefinition(f) => walker.function(f),
            ast::ExternalDeclaration::StaticAssert(_) => {}
        }
    }
    Ok(walker.sites)
}

#[derive(Default)]
struct Walker {
    sites: Sites,
    scopes: Vec<HashMap<String, VarInfo>>,
    function: Option<usize>,
    loops: Vec<usize>,
    reduction_reads: HashMap<(u32, u32), char>,
}

fn span_of<T>(n: &Node<T>) -> Span {
    n.span.into()
}

fn declarator_name(d: &ast::Declarator) -> Option<&str> {
    match &d.kind.node {
        ast::DeclaratorKind::Identifier(id) => Some(&id.node.name),
        ast::DeclaratorKind::Declarator(inner) => declarator_name(&inner.node),
        ast::DeclaratorKind::Abstract => None,
    }
}

/// True for a plain object: no array or function part (pointers are fine).
fn declarator_is_scalar(d: &ast::Declarator) -> bool {
    let here = d.derived.iter().all(|dd| {
        matches!(
            dd.node,
            ast::DerivedDeclarator::Pointer(_) | ast::DerivedDeclarator::Block(_)
        )
    });
    let inner = match &d.kind.node {
        ast::DeclaratorKind::Declarator(inner) => declarator_is_scalar(&inner.node),
        _ => true,
    };
    // `int (*p)[4]` is a pointer even though an array part appears inside.
    let pointer_outside = d
        .derived
        .iter()
        .any(|dd| matches!(dd.node, ast::DerivedDeclarator::Pointer(_)));
    here && (inner || pointer_outside)
}

fn storage(specs: &[Node<ast::DeclarationSpecifier>]) -> Option<ast::StorageClassSpecifier> {
    specs.iter().find_map(|s| match &s.node {
        ast::DeclarationSpecifier::StorageClass(c) => Some(c.node.clone()),
        _ => None,
    })
}

fn reduction_op(op: &ast::BinaryOperator) -> Option<char> {
    use ast::BinaryOperator as B;
    Some(match op {
        B::Plus | B::AssignPlus => '+',
        B::Minus | B::AssignMinus => '-',
        B::Multiply | B::AssignMultiply => '*',
        B::BitwiseAnd | B::AssignBitwiseAnd => '&',
        B::BitwiseOr | B::AssignBitwiseOr => '|',
        B::BitwiseXor | B::AssignBitwiseXor => '^',
        _ => return None,
    })
}

fn ident_name(e: &Node<ast::Expression>) -> Option<&str> {
    match &e.node {
        ast::Expression::Identifier(id) => Some(&id.node.name),
        _ => None,
    }
}

impl Walker {
    fn lookup(&self, name: &str) -> Option<&VarInfo> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    fn declare(&mut self, name: &str, info: VarInfo) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name.to_string(), info);
        }
    }

    fn declaration(&mut self, d: &Node<ast::Declaration>, local: bool) {
        let class = storage(&d.node.specifiers);
        if matches!(class, Some(ast::StorageClassSpecifier::Typedef)) {
            // A typedef name hides a variable of the same name.
            for init in &d.node.declarators {
                if let Some(name) = declarator_name(&init.node.declarator.node) {
                    self.declare(
                        name,
                        VarInfo {
                            decl: None,
                            addressable_scalar: false,
                        },
                    );
                }
            }
            return;
        }
        let register = matches!(class, Some(ast::StorageClassSpecifier::Register));
        let is_static = matches!(
            class,
            Some(ast::StorageClassSpecifier::Static | ast::StorageClassSpecifier::Extern)
        );
        for init in &d.node.declarators {
            let declarator = &init.node.declarator.node;
            if let Some(name) = declarator_name(declarator) {
                let info = VarInfo {
                    decl: (local && !is_static).then_some(d.span.start as u32),
                    addressable_scalar: !register && declarator_is_scalar(declarator),
                };
                self.declare(name, info);
            }
            if local && !is_static {
                if let Some(i) = &init.node.initializer {
                    self.initializer(i);
                }
            }
        }
    }

    fn initializer(&mut self, i: &Node<ast::Initializer>) {
        match &i.node {
            ast::Initializer::Expression(e) => self.rvalue(e),
            ast::Initializer::List(items) => {
                for item in items {
                    self.initializer(&item.node.initializer);
                }
            }
        }
    }

    fn function(&mut self, f: &Node<ast::FunctionDefinition>) {
        let name = declarator_name(&f.node.declarator.node)
            .unwrap_or("")
            .to_string();
        let index = self.sites.functions.len();
        self.sites.functions.push(FunctionSite {
            name,
            span: span_of(f),
            body: span_of(&f.node.statement),
            returns: Vec::new(),
        });
        self.function = Some(index);
        self.scopes.push(HashMap::new());
        let start = f.span.start as u32;
        for derived in &f.node.declarator.node.derived {
            if let ast::DerivedDeclarator::Function(fd) = &derived.node {
                for p in &fd.node.parameters {
                    if let Some(d) = &p.node.declarator {
                        if let Some(name) = declarator_name(&d.node) {
                            let register = matches!(
                                storage(&p.node.specifiers),
                                Some(ast::StorageClassSpecifier::Register)
                            );
                            // Array parameters are pointers.
                            let info = VarInfo {
                                decl: Some(start),
                                addressable_scalar: !register,
                            };
                            self.declare(name, info);
                        }
                    }
                }
            }
        }
        self.statement(&f.node.statement);
        self.scopes.pop();
        self.function = None;
    }

    fn visible(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for scope in &self.scopes {
            for (name, info) in scope {
                if info.addressable_scalar {
                    names.push(name.clone());
                } else {
                    names.retain(|n| n != name);
                }
            }
        }
        names.sort();
        names.dedup();
        names
    }

    /// The scalars of the file scope (the first) that no inner scope declares again.
    fn visible_globals(&self) -> Vec<String> {
        let Some((file, inner)) = self.scopes.split_first() else {
            return Vec::new();
        };
        let mut names: Vec<String> = file
            .iter()
            .filter(|(name, info)| {
                info.addressable_scalar && !inner.iter().any(|scope| scope.contains_key(*name))
            })
            .map(|(name, _)| name.clone())
            .collect();
        names.sort();
        names
    }

    fn statement(&mut self, s: &Node<ast::Statement>) {
        use ast::Statement as S;
        match &s.node {
            S::Compound(items) => {
                self.scopes.push(HashMap::new());
                for item in items {
                    self.sites.block_items.push(span_of(item));
                    match &item.node {
                        ast::BlockItem::Declaration(d) => self.declaration(d, true),
                        ast::BlockItem::Statement(st) => self.statement(st),
                        ast::BlockItem::StaticAssert(_) => {}
                    }
                }
                self.scopes.pop();
            }
            S::Expression(Some(e)) => self.rvalue(e),
            S::If(i) => {
                self.rvalue(&i.node.condition);
                self.statement(&i.node.then_statement);
                if let Some(e) = &i.node.else_statement {
                    self.statement(e);
                }
            }
            S::Switch(sw) => {
                self.rvalue(&sw.node.expression);
                self.statement(&sw.node.statement);
            }
            S::Labeled(l) => self.statement(&l.node.statement),
            S::Return(value) => {
                if let Some(f) = self.function {
                    self.sites.functions[f].returns.push(span_of(s));
                }
                if let Some(e) = value {
                    self.rvalue(e);
                }
            }
            S::While(w) => {
                let header = vec![span_of(&w.node.expression)];
                self.in_loop(s, span_of(&w.node.statement), header, |me| {
                    me.rvalue(&w.node.expression);
                    me.statement(&w.node.statement);
                });
            }
            S::DoWhile(d) if crate::lower::consteval::runs_once(&d.node) => {
                self.statement(&d.node.statement);
            }
            S::DoWhile(d) => {
                let header = vec![span_of(&d.node.expression)];
                self.in_loop(s, span_of(&d.node.statement), header, |me| {
                    me.statement(&d.node.statement);
                    me.rvalue(&d.node.expression);
                });
            }
            S::For(f) => {
                let mut header = Vec::new();
                match &f.node.initializer.node {
                    ast::ForInitializer::Empty | ast::ForInitializer::StaticAssert(_) => {}
                    _ => header.push(span_of(&f.node.initializer)),
                }
                header.extend(f.node.condition.iter().map(|c| span_of(c)));
                header.extend(f.node.step.iter().map(|c| span_of(c)));
                // The loop variable of `for (int i = ...)` lives in a scope around the loop.
                self.scopes.push(HashMap::new());
                self.in_loop(s, span_of(&f.node.statement), header, |me| {
                    match &f.node.initializer.node {
                        ast::ForInitializer::Expression(e) => me.rvalue(e),
                        ast::ForInitializer::Declaration(d) => me.declaration(d, true),
                        _ => {}
                    }
                    if let Some(c) = &f.node.condition {
                        me.rvalue(c);
                    }
                    if let Some(c) = &f.node.step {
                        me.rvalue(c);
                    }
                    me.statement(&f.node.statement);
                });
                self.scopes.pop();
            }
            _ => {}
        }
    }

    fn in_loop(
        &mut self,
        s: &Node<ast::Statement>,
        body: Span,
        header: Vec<Span>,
        walk: impl FnOnce(&mut Self),
    ) {
        let Some(function) = self.function else {
            return;
        };
        let keyword_len = match &s.node {
            ast::Statement::While(_) => 5,
            ast::Statement::For(_) => 3,
            _ => 2,
        };
        let start = s.span.start;
        let index = self.sites.loops.len();
        self.sites.loops.push(LoopSite {
            keyword: Span::new(start, start + keyword_len),
            span: span_of(s),
            body,
            header,
            parent: self.loops.last().copied(),
            function,
            visible: self.visible(),
            visible_globals: self.visible_globals(),
        });
        self.loops.push(index);
        walk(self);
        self.loops.pop();
    }

    fn variable(&self, name: &str) -> Variable {
        let info = self.lookup(name);
        Variable {
            name: name.to_string(),
            local_decl: info.and_then(|i| i.decl),
            addressable_scalar: !matches!(info, Some(i) if !i.addressable_scalar),
        }
    }

    fn push_access(
        &mut self,
        e: &Node<ast::Expression>,
        mode: AccessMode,
        ir_span: Span,
        assign: Option<(Span, Span)>,
        op: Option<char>,
    ) {
        let Some(function) = self.function else {
            return;
        };
        let (variable, member, base) = match &e.node {
            ast::Expression::Identifier(id) => {
                (Some(self.variable(&id.node.name)), None, span_of(e))
            }
            ast::Expression::Member(m) => {
                (None, Some(m.node.identifier.node.name.clone()), span_of(e))
            }
            _ => (None, None, base_of(e)),
        };
        let op = op.or_else(|| {
            let s = span_of(e);
            self.reduction_reads.get(&(s.start, s.end)).copied()
        });
        self.sites.accesses.push(AccessSite {
            span: span_of(e),
            mode,
            assign,
            ir_span,
            variable,
            member,
            base,
            op,
            function,
        });
    }

    /// An expression whose value is used.
    fn rvalue(&mut self, e: &Node<ast::Expression>) {
        use ast::Expression as E;
        match &e.node {
            E::Identifier(_) => self.push_access(e, AccessMode::Read, span_of(e), None, None),
            E::Member(_) | E::UnaryOperator(_) | E::BinaryOperator(_) if is_lvalue_shape(e) => {
                self.push_access(e, AccessMode::Read, span_of(e), None, None);
                self.place_parts(e);
            }
            E::UnaryOperator(u) => {
                use ast::UnaryOperator as U;
                match u.node.operator.node {
                    U::Address => self.place_parts(&u.node.operand),
                    U::PreIncrement | U::PreDecrement | U::PostIncrement | U::PostDecrement => {
                        self.push_access(
                            &u.node.operand,
                            AccessMode::Update,
                            span_of(e),
                            None,
                            Some('+'),
                        );
                        self.place_parts(&u.node.operand);
                    }
                    _ => self.rvalue(&u.node.operand),
                }
            }
            E::BinaryOperator(b) => {
                use ast::BinaryOperator as B;
                let op = &b.node.operator.node;
                if matches!(op, B::Assign) {
                    let mut red = None;
                    if let (Some(name), E::BinaryOperator(r)) =
                        (ident_name(&b.node.lhs), &b.node.rhs.node)
                    {
                        if let Some(rop) = reduction_op(&r.node.operator.node) {
                            let uses = |x: &Node<ast::Expression>| ident_name(x) == Some(name);
                            let operand = if uses(&r.node.lhs) {
                                Some(&r.node.lhs)
                            } else if uses(&r.node.rhs) && rop != '-' {
                                Some(&r.node.rhs)
                            } else {
                                None
                            };
                            if let Some(x) = operand {
                                let s = span_of(x);
                                self.reduction_reads.insert((s.start, s.end), rop);
                                red = Some(rop);
                            }
                        }
                    }
                    self.push_access(
                        &b.node.lhs,
                        AccessMode::Write,
                        span_of(&b.node.lhs),
                        Some((span_of(e), span_of(&b.node.rhs))),
                        red,
                    );
                    self.place_parts(&b.node.lhs);
                    self.rvalue(&b.node.rhs);
                } else if is_compound_assign(op) {
                    self.push_access(
                        &b.node.lhs,
                        AccessMode::Update,
                        span_of(&b.node.lhs),
                        None,
                        reduction_op(op),
                    );
                    self.place_parts(&b.node.lhs);
                    self.rvalue(&b.node.rhs);
                } else {
                    self.rvalue(&b.node.lhs);
                    self.rvalue(&b.node.rhs);
                }
            }
            E::Call(c) => {
                self.rvalue(&c.node.callee);
                for a in &c.node.arguments {
                    self.rvalue(a);
                }
            }
            E::Cast(c) => self.rvalue(&c.node.expression),
            E::Conditional(c) => {
                self.rvalue(&c.node.condition);
                self.rvalue(&c.node.then_expression);
                self.rvalue(&c.node.else_expression);
            }
            E::Comma(items) => {
                for i in items.iter() {
                    self.rvalue(i);
                }
            }
            E::CompoundLiteral(c) => {
                for item in &c.node.initializer_list {
                    self.initializer(&item.node.initializer);
                }
            }
            E::Statement(s) => self.statement(s),
            // Unevaluated operands, constants, and GNU/C11 forms left alone.
            _ => {}
        }
    }

    /// The evaluated parts of an lvalue designator, not the designated object itself.
    fn place_parts(&mut self, e: &Node<ast::Expression>) {
        use ast::Expression as E;
        match &e.node {
            E::Member(m) => match m.node.operator.node {
                ast::MemberOperator::Direct => self.place_parts(&m.node.expression),
                ast::MemberOperator::Indirect => self.rvalue(&m.node.expression),
            },
            E::BinaryOperator(b) if matches!(b.node.operator.node, ast::BinaryOperator::Index) => {
                self.rvalue(&b.node.lhs);
                self.rvalue(&b.node.rhs);
            }
            E::UnaryOperator(u)
                if matches!(u.node.operator.node, ast::UnaryOperator::Indirection) =>
            {
                self.rvalue(&u.node.operand)
            }
            E::Identifier(_) => {}
            _ => self.rvalue(e),
        }
    }
}

fn is_lvalue_shape(e: &Node<ast::Expression>) -> bool {
    use ast::Expression as E;
    match &e.node {
        E::Member(_) => true,
        E::UnaryOperator(u) => matches!(u.node.operator.node, ast::UnaryOperator::Indirection),
        E::BinaryOperator(b) => matches!(b.node.operator.node, ast::BinaryOperator::Index),
        _ => false,
    }
}

fn is_compound_assign(op: &ast::BinaryOperator) -> bool {
    use ast::BinaryOperator as B;
    matches!(
        op,
        B::AssignMultiply
            | B::AssignDivide
            | B::AssignModulo
            | B::AssignPlus
            | B::AssignMinus
            | B::AssignShiftLeft
            | B::AssignShiftRight
            | B::AssignBitwiseAnd
            | B::AssignBitwiseXor
            | B::AssignBitwiseOr
    )
}

/// `A` for `A[i][j]`, `p` for `*p` and `p[i]`, `c->data` for `c->data[k]`.
fn base_of(e: &Node<ast::Expression>) -> Span {
    use ast::Expression as E;
    match &e.node {
        E::BinaryOperator(b) if matches!(b.node.operator.node, ast::BinaryOperator::Index) => {
            base_of(&b.node.lhs)
        }
        E::UnaryOperator(u) if matches!(u.node.operator.node, ast::UnaryOperator::Indirection) => {
            base_of(&u.node.operand)
        }
        E::BinaryOperator(b) if matches!(b.node.operator.node, ast::BinaryOperator::Plus) => {
            base_of(&b.node.lhs)
        }
        _ => span_of(e),
    }
}
