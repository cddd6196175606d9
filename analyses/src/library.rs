//! What the C library's functions do to a program's memory, as far as the analyses rely on
//! it: which write none (and the signs of their results), which write only through the
//! pointers they are given.

use symbolic::SignSet;

/// C library functions known not to write program memory, with the sign of their result
/// when it is known regardless of the arguments.
pub fn pure_library_function(name: &str) -> Option<SignSet> {
    let name = name.trim_end_matches(['f', 'l']);
    Some(match name {
        "sqrt" | "fabs" | "exp" | "exp2" | "cosh" | "hypot" | "abs" | "labs" | "llabs"
        | "strlen" => SignSet::NON_NEG,
        "sin" | "cos" | "tan" | "asin" | "acos" | "atan" | "atan2" | "sinh" | "tanh" | "log"
        | "log2" | "log10" | "log1p" | "expm1" | "pow" | "floor" | "ceil" | "round" | "trunc"
        | "fmod" | "fmin" | "fmax" | "cbrt" | "rint" | "nearbyint" | "copysign" | "erf"
        | "erfc" | "lround" | "lrint" | "fdim" | "fma" | "min" | "max" => SignSet::TOP,
        _ => return None,
    })
}

/// C library functions that write no memory but what their arguments point to (and their
/// own state): a global whose address the function keeps to itself is out of their reach.
/// Any other function the program calls without defining it may be one of the program's
/// own, defined in a file not analysed, and write any global.
pub fn writes_only_through_arguments(name: &str) -> bool {
    matches!(
        name,
        "malloc"
            | "calloc"
            | "realloc"
            | "free"
            | "printf"
            | "fprintf"
            | "sprintf"
            | "snprintf"
            | "puts"
            | "fputs"
            | "putchar"
            | "fputc"
            | "fwrite"
            | "fflush"
            | "memcpy"
            | "memmove"
            | "memset"
            | "strcpy"
            | "strncpy"
            | "strcmp"
            | "strncmp"
    )
}
