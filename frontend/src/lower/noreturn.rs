//! Which declarations promise that a function never returns: C11's `_Noreturn` and GNU's
//! `__attribute__((noreturn))`, among the specifiers or after the declarator. The advisor
//! reads the names (`Program::noreturn`) to tell error paths (`die("...")`) from calls
//! that come back.

use lang_c::ast;
use lang_c::span::Node;

/// Whether `specifiers` or `declarator` mark the declared function as never returning.
pub fn declared(
    specifiers: &[Node<ast::DeclarationSpecifier>],
    declarator: &ast::Declarator,
) -> bool {
    let in_specifiers = specifiers.iter().any(|s| match &s.node {
        ast::DeclarationSpecifier::Function(f) => f.node == ast::FunctionSpecifier::Noreturn,
        ast::DeclarationSpecifier::Extension(exts) => exts.iter().any(is_noreturn),
        _ => false,
    });
    in_specifiers || declarator.extensions.iter().any(is_noreturn)
}

fn is_noreturn(e: &Node<ast::Extension>) -> bool {
    matches!(&e.node, ast::Extension::Attribute(a) if a.name.node.trim_matches('_') == "noreturn")
}
