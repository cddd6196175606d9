//! Integration tests of preprocessing, source mapping, pragma capture, parsing and diagnostics against the system C compiler.

use std::path::{Path, PathBuf};
use std::time::Instant;

use frontend::diagnostic::Diagnostic;
use frontend::parse::parse;
use frontend::preprocess::{
    inputs_from_compile_commands, preprocess, CompileFlags, Preprocessed, TranslationUnitInput,
};
use frontend::source_map::SourceMap;

/// A fresh directory per test, under cargo's scratch dir so nothing lands in the source tree.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("preprocess-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&p, text).unwrap();
    p
}

/// Preprocesses `main.c` (with `text`) in a scratch dir and parses it; panics with the
/// rendered diagnostic on failure.
fn check(name: &str, text: &str, flags: CompileFlags) -> (PathBuf, Preprocessed) {
    let dir = scratch(name);
    write(&dir, "main.c", text);
    let input = TranslationUnitInput {
        file: "main.c".into(),
        flags,
        working_dir: Some(dir.clone()),
        compiler: None,
    };
    let pre = preprocess(&input).unwrap_or_else(|d| panic!("{}", d.render(false)));
    parse(&pre).unwrap_or_else(|d| panic!("{}", d.render(false)));
    (dir, pre)
}

/// Like [`check`] but expects preprocessing or parsing to fail.
fn check_fails(name: &str, files: &[(&str, &str)]) -> Diagnostic {
    let dir = scratch(name);
    for (f, t) in files {
        write(&dir, f, t);
    }
    let input = TranslationUnitInput {
        file: "main.c".into(),
        working_dir: Some(dir),
        ..Default::default()
    };
    match preprocess(&input) {
        Err(d) => d,
        Ok(pre) => parse(&pre).expect_err("expected a diagnostic"),
    }
}

fn offset_of(pre: &Preprocessed, needle: &str) -> usize {
    pre.text
        .find(needle)
        .unwrap_or_else(|| panic!("`{needle}` not in preprocessed text:\n{}", pre.text))
}

/// (line, col) of `needle`'s first byte after mapping back.
fn check_column(pre: &Preprocessed, needle: &str, line: u32, col: u32) {
    let loc = pre.source_map.locate(offset_of(pre, needle));
    assert!(pre.source_map.is_main_file(loc.file));
    assert_eq!((loc.line, loc.col), (line, col), "location of `{needle}`");
}

#[test]
fn flags_reach_the_compiler() {
    let dir = scratch("flags-inc");
    write(&dir, "inc/defs.h", "typedef int myint;\n");
    write(&dir, "forced.h", "#define FORCED 1\n");
    let flags = CompileFlags {
        include_dirs: vec![dir.join("inc")],
        defines: vec![("SIZE".into(), Some("4".into())), ("GONE".into(), None)],
        undefines: vec!["GONE".into()],
        std: Some("c99".into()),
        forced_includes: vec![dir.join("forced.h")],
        extra: vec!["-DEXTRA=2".into()],
    };
    let src = "#include <defs.h>\n\
               #if __STDC_VERSION__ != 199901L\n#error not c99\n#endif\n\
               #ifdef GONE\n#error -U ignored\n#endif\n\
               myint x[SIZE + FORCED + EXTRA];\n";
    let (_, pre) = check("flags", src, flags);
    assert!(pre.text.contains("myint x[4 + 1 + 2];"), "{}", pre.text);
}

#[test]
fn compile_commands_both_forms() {
    let build = scratch("ccdb");
    write(
        &build,
        "src/a.c",
        "#include \"a.h\"\nint a = A_VAL + WIDTH;\n",
    );
    write(&build, "src/inc/a.h", "#define A_VAL 3\n");
    write(&build, "src/b.c", "int b = B_VAL;\n");
    write(&build, "src/c.cpp", "int c;\n");
    let json = r#"[
      {"directory": "src", "file": "a.c",
       "arguments": ["ccache", "cc", "-c", "-o", "a.o", "-Iinc", "-DWIDTH=8", "-MD", "-MF", "a.d", "-Wall", "-O2", "-fopenmp", "-std=gnu99", "a.c"]},
      {"directory": "src", "file": "b.c",
       "command": "cc -c -o b.o -D 'B_VAL=(1 + 2)' -U NDEBUG -include stdio.h b.c"},
      {"directory": "src", "file": "c.cpp", "command": "c++ -c c.cpp"}
    ]"#;
    write(&build, "compile_commands.json", json);
    let (inputs, notes) = inputs_from_compile_commands(&build).unwrap();
    assert_eq!(inputs.len(), 2, "C++ entry must be skipped: {inputs:?}");
    assert!(notes.is_empty(), "{notes:?}");

    let a = &inputs[0];
    assert_eq!(a.file, PathBuf::from("a.c"));
    assert_eq!(a.working_dir.as_deref(), Some(build.join("src").as_path()));
    assert_eq!(a.compiler.as_deref(), Some("cc"));
    assert_eq!(a.flags.include_dirs, vec![PathBuf::from("inc")]);
    assert_eq!(a.flags.defines, vec![("WIDTH".into(), Some("8".into()))]);
    assert_eq!(a.flags.std.as_deref(), Some("gnu99"));
    assert_eq!(a.flags.extra, vec!["-O2", "-fopenmp"]);

    let b = &inputs[1];
    assert_eq!(
        b.flags.defines,
        vec![("B_VAL".into(), Some("(1 + 2)".into()))]
    );
    assert_eq!(b.flags.undefines, vec!["NDEBUG".to_string()]);
    assert_eq!(b.flags.forced_includes, vec![PathBuf::from("stdio.h")]);

    for input in &inputs {
        let pre = preprocess(input).unwrap_or_else(|d| panic!("{}", d.render(false)));
        parse(&pre).unwrap_or_else(|d| panic!("{}", d.render(false)));
    }
    let pre = preprocess(a).unwrap();
    assert!(pre.text.contains("int a = 3 + 8;"));
    // -MD/-MF were dropped: nothing written next to the sources.
    assert!(!build.join("src/a.d").exists() && !build.join("src/a.o").exists());

    let missing = inputs_from_compile_commands(&build.join("nowhere")).unwrap_err();
    assert!(missing.message.contains("compile_commands.json"));
}

/// A hostile compile database: its compiler is a script next to it and its flags
/// load plugins. Neither may run; the unit is still preprocessed, by our own compiler, and
/// the user is told what was ignored.
#[cfg(unix)]
#[test]
fn compile_database_is_data_not_code() {
    use std::os::unix::fs::PermissionsExt;
    let build = tempfile::tempdir().unwrap();
    let build = build.path();
    let marker = build.join("pwned");
    write(build, "a.c", "int a = WIDTH;\n");
    let script = format!("#!/bin/sh\ntouch '{}'\nexec cc \"$@\"\n", marker.display());
    write(build, "cc", &script);
    std::fs::set_permissions(build.join("cc"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let json = r#"[
      {"directory": ".", "file": "a.c",
       "arguments": ["./cc", "-c", "-DWIDTH=8", "-fplugin=./evil.so", "-Xclang", "-load",
                     "-B.", "-specs=./evil.specs", "-Wp,-fplugin=./evil.so", "@opts.rsp",
                     "-fopenmp", "a.c"]}
    ]"#;
    write(build, "compile_commands.json", json);
    let (inputs, notes) = inputs_from_compile_commands(build).unwrap();
    assert_eq!(inputs.len(), 1);
    assert_eq!(
        inputs[0].compiler, None,
        "the database's own script must not run"
    );
    assert_eq!(inputs[0].flags.extra, vec!["-fopenmp"]);
    let said: String = notes.iter().map(|n| n.message.clone()).collect();
    for flag in [
        "-fplugin=./evil.so",
        "-Xclang -load",
        "-B.",
        "-specs=./evil.specs",
        "@opts.rsp",
    ] {
        assert!(said.contains(flag), "`{flag}` not reported: {said}");
    }
    assert!(said.contains("./cc"), "{said}");
    let pre = preprocess(&inputs[0]).unwrap_or_else(|d| panic!("{}", d.render(false)));
    assert!(pre.text.contains("int a = 8;"));
    assert!(!marker.exists(), "the database's compiler ran");
}

#[test]
fn missing_header_points_at_include() {
    let d = check_fails(
        "missing-header",
        &[("main.c", "int x;\n\n#include \"foo.h\"\nint y;\n")],
    );
    let p = d.primary.as_ref().expect("label");
    assert_eq!(
        (p.path.as_path(), p.line, p.col),
        (Path::new("main.c"), 3, 10)
    );
    assert_eq!(p.line_text.as_deref(), Some("#include \"foo.h\""));
    assert_eq!(p.end_col, Some(17));
    assert_eq!(
        d.to_string(),
        "main.c:3:10: error: foo.h: No such file or directory"
    );
    let rendered = d.render(false);
    eprintln!("{rendered}");
    assert!(rendered.contains(" --> main.c:3:10\n"), "{rendered}");
    assert!(rendered.contains("|          ^^^^^^^"), "{rendered}");

    // Also through an intermediate header: the label is in the header, with the include chain.
    let d = check_fails(
        "missing-nested",
        &[
            ("main.c", "#include \"mid.h\"\n"),
            ("mid.h", "\n#include <nope.h>\n"),
        ],
    );
    let p = d.primary.unwrap();
    assert_eq!(
        (p.path.as_path(), p.line, p.col),
        (Path::new("mid.h"), 2, 10)
    );
    assert!(
        d.notes.iter().any(|n| n.contains("main.c:1")),
        "{:?}",
        d.notes
    );
}

#[test]
fn missing_input_file() {
    let input = TranslationUnitInput::new("/definitely/not/here.c");
    let d = preprocess(&input).unwrap_err();
    assert!(d.message.contains("/definitely/not/here.c"), "{d}");
}

#[test]
fn omp_header_and_pragmas() {
    let src = "#include <omp.h>\n\
               #include <stdio.h>\n\
               #define PAR _Pragma(\"omp parallel for\")\n\
               int main(void) {\n\
               \x20 double t = omp_get_wtime();\n\
               \x20 omp_lock_t l; omp_init_lock(&l);\n\
               #pragma omp parallel for reduction(+:t)\n\
               \x20 for (int i = 0; i < 4; i++) t += omp_get_thread_num();\n\
               \x20 PAR\n\
               \x20 for (int i = 0; i < 4; i++) t += i;\n\
               \x20 printf(\"%f\\n\", t);\n\
               \x20 return 0;\n\
               }\n";
    for extra in [vec![], vec!["-fopenmp".to_string()]] {
        let flags = CompileFlags {
            extra,
            ..Default::default()
        };
        let (_, pre) = check("omp", src, flags);
        let map = &pre.source_map;
        let mine: Vec<_> = pre
            .pragmas
            .iter()
            .filter(|p| map.is_main_file(p.location.file))
            .collect();
        assert_eq!(mine.len(), 2, "{:?}", pre.pragmas);
        assert_eq!(mine[0].text, "omp parallel for reduction(+:t)");
        assert_eq!((mine[0].location.line, mine[0].location.col), (7, 1));
        assert_eq!(mine[1].text, "omp parallel for");
        assert_eq!((mine[1].location.line, mine[1].location.col), (9, 3));
        // Blanked, not deleted: lang-c never sees it, line structure is unchanged.
        assert!(!pre.text.contains("#pragma omp"));
        assert!(pre.text[mine[0].offset..].starts_with("   "));
        // Our omp.h is used and counts as a system header.
        let omp = map
            .files()
            .find(|&f| map.path(f).ends_with("omp.h"))
            .unwrap();
        assert!(map.is_system_header(omp));
        // From warpwise's own private directory, not a name in the shared temp directory.
        let dir = map.path(omp).parent().unwrap();
        assert!(dir
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("headers-"));
        assert!(
            !dir.starts_with(std::env::temp_dir())
                || dir.to_string_lossy().contains("warpwise-headers-")
        );
    }
}

#[test]
fn common_glibc_headers_parse() {
    let headers = [
        "stdio", "stdlib", "string", "math", "stdint", "stdbool", "complex", "time", "assert",
        "limits", "float", "sys/time", "unistd", "pthread",
    ];
    let src: String = headers
        .iter()
        .map(|h| format!("#include <{h}.h>\n"))
        .chain(std::iter::once(
            "int main(void) { return 0; }\n".to_string(),
        ))
        .collect();
    for (i, std) in [None, Some("c99"), Some("gnu11")].into_iter().enumerate() {
        let flags = CompileFlags {
            std: std.map(str::to_string),
            extra: vec!["-O2".into()],
            ..Default::default()
        };
        check(&format!("glibc{i}"), &src, flags);
    }

    // Timing of the common case, printed for `--nocapture`.
    let (dir, _) = check(
        "glibc-time",
        "#include <stdio.h>\n#include <stdlib.h>\n#include <math.h>\nint main(void){return 0;}\n",
        CompileFlags::default(),
    );
    let input = TranslationUnitInput {
        file: "main.c".into(),
        working_dir: Some(dir),
        ..Default::default()
    };
    let t0 = Instant::now();
    let pre = preprocess(&input).unwrap();
    let t1 = Instant::now();
    parse(&pre).unwrap();
    let t2 = Instant::now();
    let mut located = 0;
    for off in (0..pre.text.len()).step_by(8) {
        located += pre.source_map.locate(off).col as usize;
    }
    let t3 = Instant::now();
    eprintln!(
        "stdio+stdlib+math: preprocess {:?}, parse {:?}, {} bytes, {} locate calls {:?} ({located})",
        t1 - t0,
        t2 - t1,
        pre.text.len(),
        pre.text.len() / 8,
        t3 - t2
    );
}

#[test]
fn columns_survive_tabs_spaces_and_macros() {
    let src = "#define _PB_N N\n\
               void kernel(int N, double *A) {\n\
               \x20 int i;\n\
               \tfor (i = 0;   i <  _PB_N; i++)\n\
               \t\tA[i]   =  0;\n\
               }\n";
    let (_, pre) = check("columns", src, CompileFlags::default());
    check_column(&pre, "for (i", 4, 2);
    check_column(&pre, "i < N", 4, 16);
    check_column(&pre, "N; i++", 4, 21);
    check_column(&pre, "i++", 4, 28);
    check_column(&pre, "A[i]", 5, 3);
    check_column(&pre, "= 0;\n", 5, 10);
    // Whitespace maps to the next token.
    let before_for = offset_of(&pre, "for (i") - 1;
    assert_eq!(pre.source_map.locate(before_for).col, 2);
    assert_eq!(
        pre.source_map.line_text(pre.source_map.main_file(), 4),
        Some("\tfor (i = 0;   i <  _PB_N; i++)")
    );
}

#[test]
fn snippet_reads_as_written() {
    let src = "#define N 64\n\
               #define IDX(a, b) ((a) * N + (b))\n\
               struct M { float *data; };\n\
               void f(struct M *c, float *A, int i, int j) {\n\
               \x20   c->data[i*N+j] = A[IDX(i, j)];\n\
               \x20   c->data[i] =\n\
               \x20       2;\n\
               }\n";
    let (_, pre) = check("snippet", src, CompileFlags::default());
    let map = &pre.source_map;
    // gcc writes `i*64 +j` (a space to keep `64+j` from lexing as one pp-number).
    let s = offset_of(&pre, "c->data[i*64");
    let e = s + pre.text[s..].find("j]").unwrap() + 2;
    assert_eq!(map.snippet(s, e), "c->data[i*N+j]");
    let (loc, end_col) = map.locate_span(s, e).unwrap();
    assert_eq!((loc.line, loc.col, end_col), (5, 5, 19));

    let s = offset_of(&pre, "A[((i) * 64 + (j))]");
    let e = s + "A[((i) * 64 + (j))]".len();
    assert_eq!(map.snippet(s, e), "A[IDX(i, j)]");

    // Across lines: the preprocessed text, whitespace collapsed.
    let s = offset_of(&pre, "c->data[i] =");
    let e = offset_of(&pre, "2;") + 2;
    assert_eq!(map.snippet(s, e), "c->data[i] = 2;");
}

#[test]
fn a_piece_of_a_macro_expansion_reads_as_the_invocation() {
    // kissfft's shape: the expansion's brackets and comma align with the invocation's own,
    // so `(Fout[k]).r` alone would map onto `( Fout[ k ] ,t)`, and its `.r` onto `,`.
    let src = "typedef struct { float r, i; } cpx;\n\
               #define CHECK_OVERFLOW_OP(a, op, b)\n\
               #define C_ADDTO( res , a)\\\n    do { \\\n        CHECK_OVERFLOW_OP((res).r,+,(a).r)\\\n\
               \x20       (res).r += (a).r;  (res).i += (a).i;\\\n    }while(0)\n\
               void f(cpx *Fout, cpx t, int k) {\n\
               \x20   C_ADDTO( Fout[ k ] ,t);\n\
               }\n";
    let (_, pre) = check("macro_piece", src, CompileFlags::default());
    let map = &pre.source_map;
    let line = offset_of(&pre, "(Fout[ k ]).r");
    let second = line + pre.text[line..].find("(Fout[ k ]).i").unwrap();
    // Which tokens the alignment pairs is its own choice; every text shown is a whole
    // piece of the line: the invocation, or the macro's name.
    for s in [line, second] {
        for end in [s + "(Fout[ k ]).r".len(), s + "(Fout[ k ])".len()] {
            let shown = map.snippet(s, end);
            assert!(
                ["C_ADDTO( Fout[ k ] ,t)", "C_ADDTO"].contains(&shown.as_str()),
                "{shown:?}"
            );
        }
    }
    assert_eq!(
        map.snippet(second, second + "(Fout[ k ]).i".len()),
        "C_ADDTO( Fout[ k ] ,t)"
    );
}

#[test]
fn syntax_error_is_located() {
    let d = check_fails(
        "syntax",
        &[(
            "main.c",
            "#define N 10\nint f(int x) {\n  int y = x +* N;\n  return y\n}\n",
        )],
    );
    eprintln!("{}", d.render(false));
    let p = d.primary.as_ref().expect("label");
    assert_eq!((p.line, p.col), (5, 1), "{}", d.render(false));
    assert_eq!(p.line_text.as_deref(), Some("}"));
    assert!(d.message.contains("unexpected `}`"), "{}", d.message);
    assert!(d.notes.iter().any(|n| n.contains("`;`")), "{:?}", d.notes);
    // Never the whole source in the message.
    assert!(d.render(false).len() < 600, "{}", d.render(false));

    let d = check_fails(
        "syntax2",
        &[(
            "main.c",
            "int main(void) {\n\tint a = 1;\n\tint b = a a;\n}\n",
        )],
    );
    let p = d.primary.unwrap();
    assert_eq!((p.line, p.col, p.end_col), (3, 12, Some(13)));
}

#[test]
fn garbage_never_panics() {
    let dir = scratch("garbage");
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let full = "#include <stdio.h>\nint main(int argc, char **argv) {\n  for (int i = 0; i < argc; i++) { printf(\"%s\\n\", argv[i]); }\n  return 0;\n}\n";
    let mut cases: Vec<Vec<u8>> = (0..full.len())
        .step_by(7)
        .map(|n| full.as_bytes()[..n].to_vec())
        .collect();
    for len in [1usize, 10, 100, 1000] {
        cases.push((0..len).map(|_| next() as u8).collect());
        cases.push(
            (0..len)
                .map(|_| b"(){}[];,+-*/ \nintx=0\"'#"[next() as usize % 23])
                .collect(),
        );
    }
    cases.push(vec![b'('; 100_000]);
    cases.push(
        b"int a[] = {"
            .iter()
            .chain([b'{'; 5000].iter())
            .copied()
            .collect(),
    );
    for (i, bytes) in cases.iter().enumerate() {
        let name = format!("g{i}.c");
        std::fs::write(dir.join(&name), bytes).unwrap();
        let input = TranslationUnitInput {
            file: name.into(),
            working_dir: Some(dir.clone()),
            ..Default::default()
        };
        if let Ok(pre) = preprocess(&input) {
            if let Err(d) = parse(&pre) {
                let _ = d.render(true);
            }
        }
    }
    // A source map over arbitrary text answers every query without panicking.
    let map = SourceMap::new(
        "# 1 \"x\nfoo\n#line\n# 99999999999 \"a\"\n\u{e9}t\u{e9}\n".into(),
        None,
        &[],
    );
    for off in 0..map.text().len() + 3 {
        let _ = map.locate(off);
        let _ = map.snippet(off, off + 3);
        let _ = map.snippet(off + 3, off);
    }
}

#[test]
fn source_map_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<SourceMap>();
    assert_send_sync::<Preprocessed>();
    assert_send_sync::<Diagnostic>();
}

/// Every flag of the arity table, with a value that is itself a flag that runs code
/// (`-B.` makes gcc run `./cc1`), in every spelling (separate, joined, `--flag=`, after an
/// empty or output-flag value): the rebuilt command never holds a word gcc reads as
/// `-B`, a plugin, a wrapper or a file of options, and the preprocessor, run on each
/// distinct rebuilt command, never runs `./cc1`.
#[cfg(unix)]
#[test]
fn no_flag_carries_code_in_its_value() {
    use std::collections::BTreeSet;
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("flag-values");
    let marker = dir.join("pwned");
    write(
        &dir,
        "cc1",
        &format!("#!/bin/sh\ntouch '{}'\nexit 1\n", marker.display()),
    );
    std::fs::set_permissions(dir.join("cc1"), std::fs::Permissions::from_mode(0o755)).unwrap();
    write(&dir, "x.c", "int x;\n");
    let dangerous = [
        "-B",
        "-fplugin",
        "@",
        "-wrapper",
        "-specs",
        "--specs",
        "--config",
        "-Xclang",
        "-Xpreprocessor",
        "-Wp,",
        "--param",
        "-load",
        "-include-pch",
        "-save-temps",
    ];
    let mut commands: BTreeSet<Vec<String>> = BTreeSet::new();
    let flags: Vec<&str> = frontend::compile_args::flags_with_values().collect();
    assert!(flags.len() > 80, "the arity table: {}", flags.len());
    for flag in flags {
        let spellings: Vec<Vec<String>> = vec![
            vec![flag.into(), "-B.".into()],
            vec![flag.into(), "-B".into(), ".".into()],
            vec![flag.into(), "".into(), "-B.".into()],
            vec![flag.into(), "-MD".into(), "-B.".into()],
            vec![flag.into(), "-c".into(), "-B.".into()],
            vec![format!("{flag}-B.")],
            vec![format!("{flag}=-B.")],
            vec![flag.into(), "@evil.rsp".into()],
        ];
        for words in spellings {
            let (flags, _) = CompileFlags::from_args(&words);
            for compiler in ["gcc", "clang"] {
                let args = flags.to_args_for_compiler(compiler);
                for word in &args {
                    assert!(
                        !dangerous.iter().any(|d| word.starts_with(d)),
                        "{words:?} rebuilt for {compiler} as {args:?}"
                    );
                }
                // Rebuilt again from its own words, the command is the same: no value
                // stands where a flag is read, nor a flag where a value is.
                let (again, inputs) = CompileFlags::from_args(&args);
                assert!(
                    inputs.is_empty(),
                    "{words:?} -> {args:?} holds inputs {inputs:?}"
                );
                assert_eq!(again.to_args_for_compiler(compiler), args, "{words:?}");
                commands.insert(args);
            }
        }
    }
    for args in &commands {
        let (flags, _) = CompileFlags::from_args(args);
        let mut input = TranslationUnitInput::new(dir.join("x.c"));
        input.flags = flags;
        input.working_dir = Some(dir.clone());
        let _ = preprocess(&input);
        assert!(!marker.exists(), "`./cc1` ran for {args:?}");
    }
}
