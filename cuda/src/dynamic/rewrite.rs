//! Each launch `k<<<g, b[, s[, st]]>>>(args)` of a file made the shim's call
//! `ww_cpu_launch(k, dim3(g), dim3(b), s, args)` (the stream is dropped: the shim runs
//! launches in order), at the places the frontend found the launches. The text after a
//! launch keeps its lines (a launch over several lines is padded with newlines), and a
//! `#line` directive first names the user's file, so the compiler's messages and the debug
//! information point at the user's lines.

use frontend::launch_syntax::{launch_at, launch_starts, offset_of, without_comments};

/// `text` with the launches whose kernels are named at `(line, col)` rewritten, under
/// `#line 1 "shown"`; the places where no launch could be read are returned too. Launches
/// the frontend did not place (in a declaration it refused) are found by lexing.
pub fn rewrite(text: &str, places: &[(u32, u32)], shown: &str) -> (String, Vec<(u32, u32)>) {
    let mut found = Vec::new();
    let mut missed = Vec::new();
    for &(line, col) in places {
        match offset_of(text, line, col).and_then(|at| launch_at(text, at)) {
            Some(l) => found.push(l),
            None => missed.push((line, col)),
        }
    }
    found.extend(
        launch_starts(text)
            .into_iter()
            .filter_map(|at| launch_at(text, at)),
    );
    let blank = without_comments(text);
    found.sort_by_key(|l| l.kernel.0);
    found.dedup_by_key(|l| l.kernel.0);
    let mut out = format!("#line 1 \"{}\"\n", escaped(shown));
    let mut from = 0;
    for l in &found {
        if l.kernel.0 < from {
            continue; // a launch inside another's arguments is left to the compiler
        }
        out.push_str(&text[from..l.kernel.0]);
        // From the text with comments blanked: a `//` comment among the arguments would
        // swallow the closing parenthesis.
        let part = |(a, b): (usize, usize)| &blank[a..b];
        let config: Vec<&str> = l.config.iter().map(|&r| part(r)).collect();
        let grid = config.first().copied().unwrap_or("1");
        let block = config.get(1).copied().unwrap_or("1");
        let shared = config.get(2).copied().unwrap_or("0");
        out.push_str(&format!(
            "ww_cpu_launch({}, dim3({grid}), dim3({block}), (size_t)({shared})",
            part(l.kernel)
        ));
        let args = part(l.args);
        if !args.trim().is_empty() {
            out.push_str(", ");
            out.push_str(args);
        }
        out.push(')');
        // The lines the launch spanned, so that the lines after it stay where they were.
        let spanned = text[l.kernel.0..l.end].matches('\n').count();
        let written = config
            .iter()
            .map(|c| c.matches('\n').count())
            .sum::<usize>()
            + args.matches('\n').count();
        out.push_str(&"\n".repeat(spanned.saturating_sub(written)));
        from = l.end;
    }
    out.push_str(&text[from..]);
    (dynamic_shared(&out), missed)
}

/// `text` with each `extern __shared__` array (`extern __shared__ unsigned sm[];`) made a
/// pointer to the shim's dynamic shared memory (`unsigned *const sm = ww_dyn_smem();`): on
/// the GPU every such array starts at the launch's dynamic shared memory, which the shim's
/// `ww_smem` is (sized by the launch's third argument). `warpwise_dynamic.h` makes
/// `__shared__` `static` (one object per block), which `extern` cannot take; an assembler
/// name on the declaration would do, but GCC drops it inside a template. A declaration of
/// another form is left to the compiler.
fn dynamic_shared(text: &str) -> String {
    let blank = without_comments(text);
    let bytes = blank.as_bytes();
    let word = |i: usize| {
        bytes
            .get(i)
            .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_')
    };
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    let mut at = 0;
    while let Some(found) = blank[at..].find("extern") {
        let start = at + found;
        at = start + "extern".len();
        let rest = &blank[at..];
        let shared = at + (rest.len() - rest.trim_start().len());
        let after = shared + "__shared__".len();
        if (start > 0 && word(start - 1))
            || !blank[shared..].starts_with("__shared__")
            || word(after)
        {
            continue;
        }
        let Some(end) = blank[after..].find(';').map(|e| after + e) else {
            break;
        };
        let declarator = blank[after..end].trim_end();
        let Some(head) = declarator.strip_suffix("[]").map(str::trim_end) else {
            continue;
        };
        let name_len = head
            .bytes()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
            .count();
        if name_len == 0 || head.len() == name_len {
            continue;
        }
        let (ty, name) = head.split_at(head.len() - name_len);
        out.push_str(&text[from..start]);
        out.push_str(&format!("{} *const {name} = ww_dyn_smem()", ty.trim()));
        // The lines the declaration spanned, so that the lines after it stay.
        out.push_str(&"\n".repeat(text[start..end].matches('\n').count()));
        from = end;
        at = end;
    }
    out.push_str(&text[from..]);
    out
}

/// A path as a C string literal's contents.
fn escaped(path: &str) -> String {
    path.replace('\\', "\\\\").replace('"', "\\\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launches_become_shim_calls_and_lines_stay() {
        let text = "int main() {\n  k<<<g, dim3(16, 16)>>>(a, // in\n    b);\n  j<<<1, 32, 64, s>>>();\n  return 0;\n}\n";
        let (out, missed) = rewrite(text, &[(2, 3), (4, 3), (5, 3)], "/p/m.cu");
        assert_eq!(missed, [(5, 3)]);
        assert_eq!(
            out,
            "#line 1 \"/p/m.cu\"\nint main() {\n  ww_cpu_launch(k, dim3(g), dim3(dim3(16, 16)), (size_t)(0), a,      \n    b);\n  \
             ww_cpu_launch(j, dim3(1), dim3(32), (size_t)(64));\n  return 0;\n}\n"
        );
    }

    #[test]
    fn an_extern_shared_array_is_the_shims_dynamic_shared_memory() {
        let text = "__global__ void k() {\n  extern __shared__ unsigned int sm[]; // extern __shared__ x;\n  my_extern __shared__ int a;\n}\n";
        let (out, _) = rewrite(text, &[], "/p/k.cu");
        assert_eq!(
            out,
            "#line 1 \"/p/k.cu\"\n__global__ void k() {\n  unsigned int *const sm = ww_dyn_smem(); // extern __shared__ x;\n  my_extern __shared__ int a;\n}\n"
        );
    }
}
