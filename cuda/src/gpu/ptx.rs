//! Kernel signatures read from PTX text, so a launch checks its arguments before the driver reads them.
//!
//! `cuLaunchKernel` reads one argument per kernel parameter, at the parameter's size,
//! through the pointers it is given; it cannot know how many were passed. Reading the
//! `.entry` line of the PTX that is loaded tells us, without a GPU.

use super::error::PtxError;

/// One parameter of a PTX `.entry`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtxParam {
    /// The PTX name, e.g. `vec_add_param_0`.
    pub name: String,
    /// Its size in bytes: 8 for a pointer, 4 for an `int` or `float`, `N` for `.b8 x[N]`.
    pub bytes: usize,
}

/// The names of the kernels (`.entry` directives) in `ptx`, in order.
pub fn entries(ptx: &str) -> Vec<String> {
    entry_headers(ptx)
        .map(|(name, _)| name.to_string())
        .collect()
}

/// The parameters of kernel `kernel` in `ptx`.
pub fn entry_params(ptx: &str, kernel: &str) -> Result<Vec<PtxParam>, PtxError> {
    let Some((_, params)) = entry_headers(ptx).find(|(name, _)| *name == kernel) else {
        let found = entries(ptx);
        let kernel = kernel.to_string();
        return Err(if found.is_empty() {
            PtxError::NoEntries { kernel }
        } else {
            PtxError::NoSuchKernel { kernel, found }
        });
    };
    let params = params?;
    params
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(parse_param)
        .collect()
}

/// Each `.entry NAME ( PARAMS )`: the name and the text between the parentheses (empty
/// when the kernel has no parameter list), or an error for an unterminated list.
fn entry_headers(ptx: &str) -> impl Iterator<Item = (&str, Result<String, PtxError>)> {
    let mut rest = ptx;
    std::iter::from_fn(move || loop {
        let at = find_directive(rest, ".entry")?;
        let after = &rest[at + ".entry".len()..];
        rest = after;
        let after = after.trim_start();
        let name_end = after
            .find(|c: char| c.is_whitespace() || c == '(' || c == '{')
            .unwrap_or(after.len());
        let name = &after[..name_end];
        if name.is_empty() {
            continue;
        }
        let tail = after[name_end..].trim_start();
        let params = match tail.strip_prefix('(') {
            None => Ok(String::new()),
            Some(list) => match list.find(')') {
                Some(close) => Ok(strip_comments(&list[..close])),
                None => Err(PtxError::UnclosedParams {
                    kernel: name.to_string(),
                }),
            },
        };
        return Some((name, params));
    })
}

/// The byte offset of `directive` as a whole token (not inside `.entry_x` or a comment).
fn find_directive(text: &str, directive: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = text[from..].find(directive) {
        let at = from + found;
        let end = at + directive.len();
        let before_ok = at == 0 || text[..at].ends_with(|c: char| c.is_whitespace());
        let after_ok = text[end..].starts_with(|c: char| c.is_whitespace() || c == '(');
        let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
        let in_comment = text[line_start..at].contains("//");
        if before_ok && after_ok && !in_comment {
            return Some(at);
        }
        from = end;
    }
    None
}

fn strip_comments(text: &str) -> String {
    text.lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `.param .u64 .ptr .global .align 4 k_param_0`, `.param .f32 k_param_1`,
/// `.param .align 8 .b8 k_param_2[16]`.
fn parse_param(text: &str) -> Result<PtxParam, PtxError> {
    let bad = || PtxError::BadParam {
        text: text.to_string(),
    };
    let mut tokens = text.split_whitespace().peekable();
    if tokens.next() != Some(".param") {
        return Err(bad());
    }
    let mut element = None;
    let mut name = None;
    while let Some(token) = tokens.next() {
        if token == ".align" {
            tokens.next();
        } else if let Some(size) = scalar_size(token) {
            element = Some(size);
        } else if token.starts_with('.') {
            // State space and pointer annotations: .ptr .global .const .local .shared
        } else {
            name = Some(token);
        }
    }
    let (Some(element), Some(name)) = (element, name) else {
        return Err(bad());
    };
    let (name, count) = match name.split_once('[') {
        None => (name, 1),
        Some((base, count)) => {
            let count = count
                .trim_end_matches(']')
                .parse::<usize>()
                .map_err(|_| bad())?;
            (base, count)
        }
    };
    Ok(PtxParam {
        name: name.to_string(),
        bytes: element * count,
    })
}

fn scalar_size(token: &str) -> Option<usize> {
    let bits = token
        .strip_prefix(".b")
        .or_else(|| token.strip_prefix(".u"))
        .or_else(|| token.strip_prefix(".s"))
        .or_else(|| token.strip_prefix(".f"))?;
    match bits {
        "8" => Some(1),
        "16" => Some(2),
        "32" => Some(4),
        "64" => Some(8),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // What NVRTC 12.9 emits for
    // extern "C" __global__ void vec_add(const float*, const float*, float*, int).
    const PTX: &str = "//\n// Generated by NVIDIA NVVM Compiler\n.version 8.8\n.target sm_52\n.address_size 64\n\n\t// .globl\tvec_add\n\n.visible .entry vec_add(\n\t.param .u64 .ptr .global .align 4 vec_add_param_0,\n\t.param .u64 .ptr .global .align 4 vec_add_param_1,\n\t.param .u64 .ptr .global .align 4 vec_add_param_2,\n\t.param .u32 vec_add_param_3\n)\n{\n\tret;\n}\n.visible .entry empty()\n{\n\tret;\n}\n.visible .entry by_value(\n\t.param .align 8 .b8 by_value_param_0[24],\n\t.param .f64 by_value_param_1\n)\n{\n\tret;\n}\n";

    #[test]
    fn reads_pointer_and_scalar_parameters() {
        let params = entry_params(PTX, "vec_add").unwrap();
        let bytes: Vec<usize> = params.iter().map(|p| p.bytes).collect();
        assert_eq!(bytes, [8, 8, 8, 4]);
        assert_eq!(params[3].name, "vec_add_param_3");
    }

    #[test]
    fn reads_empty_and_aggregate_parameter_lists() {
        assert_eq!(entry_params(PTX, "empty").unwrap(), []);
        let bytes: Vec<usize> = entry_params(PTX, "by_value")
            .unwrap()
            .iter()
            .map(|p| p.bytes)
            .collect();
        assert_eq!(bytes, [24, 8]);
    }

    #[test]
    fn lists_entries_and_names_them_when_one_is_missing() {
        assert_eq!(entries(PTX), ["vec_add", "empty", "by_value"]);
        let err = entry_params(PTX, "vecAdd").unwrap_err().to_string();
        assert!(err.contains("vec_add, empty, by_value"), "{err}");
    }

    #[test]
    fn ignores_entry_in_comments_and_longer_directives() {
        let ptx = "// .entry fake(\n.entry_like x\n.visible .entry real(\n\t.param .u32 real_param_0 // int n\n)\n{ ret; }";
        assert_eq!(entries(ptx), ["real"]);
        assert_eq!(entry_params(ptx, "real").unwrap()[0].bytes, 4);
    }
}
