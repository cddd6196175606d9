//! A compiler command line split into (flag, value) pairs with gcc's and clang's arity
//! table, so that a flag's value is never read as a flag of its own and no flag is read
//! as the value of another.
//!
//! The words of a compile database are data from whoever wrote it. Filtering them one word
//! at a time lets a kept flag and its value fall out of step: `-isystem -MD -iquote
//! -fplugin=x.so` loses `-MD` (an output flag) and gcc then reads `-iquote` as the include
//! directory and `-fplugin=x.so` as a flag. Here each word is first assigned its role
//! (flag, value of a flag, input), the policy decides on whole pairs, and the command is
//! rebuilt from the kept pairs only, each in a form no compiler reads two ways.

/// One word, or two, of a command line after splitting by arity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Word<'a> {
    /// A flag, with its value for flags that take one (`-I dir`, `-Idir`, `--param=x`).
    /// `value` is `None` for a flag that takes none, and for one whose value is missing
    /// at the end of the line (`missing` then says so).
    Flag {
        name: &'a str,
        value: Option<&'a str>,
        missing: bool,
        /// The value was part of the flag's word (`-Idir`, `--param=x`).
        joined: bool,
    },
    /// A word that is not an option: an input file.
    Input(&'a str),
}

/// Flags whose value is always the next word (gcc and clang spell them only that way, or
/// the joined spelling is a different flag). Matched exactly.
const SEPARATE: &[&str] = &[
    "-Xclang",
    "-Xpreprocessor",
    "-Xassembler",
    "-Xlinker",
    "-Xcuda-ptxas",
    "-Xcuda-fatbinary",
    "-Xopenmp-target",
    "-Xarch_host",
    "-Xarch_device",
    "-mllvm",
    "-wrapper",
    "-specs",
    "--specs",
    "--param",
    "--config",
    "-load",
    "-include-pch",
    "-isystem-after",
    "-cxx-isystem",
    "-ivfsoverlay",
    "-working-directory",
    "-target",
    "-arch",
    "-aux-info",
    "-dependency-file",
    "-dependency-dot",
    "-MJ",
    "-serialize-diagnostics",
    "-resource-dir",
    "-gcc-toolchain",
    "-main-file-name",
    "-e",
    "-T",
    "-u",
    "-z",
    "-A",
    "-G",
    "-Tbss",
    "-Tdata",
    "-Ttext",
    "--sysroot",
    "--output",
    "--language",
    "--include",
    "--include-directory",
    "--include-directory-after",
    "--include-prefix",
    "--include-with-prefix",
    "--include-with-prefix-after",
    "--include-with-prefix-before",
    "--define-macro",
    "--undefine-macro",
    "--imacros",
    "--assert",
    "--dependencies",
    "--for-linker",
    "--force-link",
    "--prefix",
    "--library-directory",
    "--target",
];

/// Flags whose value is the next word when the flag stands alone, and the rest of the word
/// otherwise (`-I dir` and `-Idir`). The longest matching prefix wins (`-iwithprefixbefore`
/// over `-iwithprefix`), after an exact match in [`SEPARATE`] (`-include-pch` is not
/// `-include` with the value `-pch`).
const JOINED_OR_SEPARATE: &[&str] = &[
    "-D",
    "-U",
    "-I",
    "-L",
    "-l",
    "-o",
    "-x",
    "-B",
    "-F",
    "-MF",
    "-MT",
    "-MQ",
    "-include",
    "-imacros",
    "-isystem",
    "-iquote",
    "-idirafter",
    "-iprefix",
    "-iwithprefix",
    "-iwithprefixbefore",
    "-isysroot",
    "-imultilib",
    "-iframework",
];

/// Every flag the arity table knows to take a value, each once: the flags a hostile value
/// may ride on (the safety tests try each of them).
pub fn flags_with_values() -> impl Iterator<Item = &'static str> {
    let joined = JOINED_OR_SEPARATE.iter().filter(|f| !SEPARATE.contains(f));
    SEPARATE.iter().chain(joined).copied()
}

/// Splits `words` (the arguments after the compiler) into flags with their values and inputs.
pub fn split<S: AsRef<str>>(words: &[S]) -> Vec<Word<'_>> {
    let mut out = Vec::with_capacity(words.len());
    let mut it = words.iter().map(AsRef::as_ref);
    while let Some(word) = it.next() {
        if !word.starts_with('-') || word == "-" {
            // `-` is standard input; `@file` is classified as a flag by the policy (a
            // response file), everything else is an input.
            if word.starts_with('@') {
                out.push(Word::Flag {
                    name: word,
                    value: None,
                    missing: false,
                    joined: false,
                });
            } else {
                out.push(Word::Input(word));
            }
            continue;
        }
        let separate = SEPARATE.contains(&word) || JOINED_OR_SEPARATE.contains(&word);
        if separate {
            let value = it.next();
            out.push(Word::Flag {
                name: word,
                value,
                missing: value.is_none(),
                joined: false,
            });
            continue;
        }
        if word.starts_with("--") {
            // `--sysroot=dir`, `--param=x`: a long flag with its value after `=`.
            if let Some((name, value)) = word.split_once('=') {
                if SEPARATE.contains(&name) {
                    out.push(Word::Flag {
                        name,
                        value: Some(value),
                        missing: false,
                        joined: true,
                    });
                    continue;
                }
            }
            out.push(Word::Flag {
                name: word,
                value: None,
                missing: false,
                joined: false,
            });
            continue;
        }
        let joined = JOINED_OR_SEPARATE
            .iter()
            .filter(|p| word.starts_with(**p))
            .max_by_key(|p| p.len());
        match joined {
            Some(prefix) => out.push(Word::Flag {
                name: prefix,
                value: Some(&word[prefix.len()..]),
                missing: false,
                joined: true,
            }),
            None => out.push(Word::Flag {
                name: word,
                value: None,
                missing: false,
                joined: false,
            }),
        }
    }
    out
}

/// A path as a compiler argument that no compiler reads as an option or a response file:
/// one starting with `-` or `@` gets `./` in front (the same file).
pub fn safe_path(path: &str) -> String {
    if path.starts_with('-') || path.starts_with('@') {
        format!("./{path}")
    } else {
        path.to_string()
    }
}

/// [`safe_path`] for a [`std::path::Path`]: the path itself where it is safe as it is.
pub fn safe_path_buf(path: &std::path::Path) -> std::path::PathBuf {
    match path.to_str() {
        Some(s) if s.starts_with('-') || s.starts_with('@') => std::path::Path::new(".").join(path),
        None if path
            .as_os_str()
            .as_encoded_bytes()
            .first()
            .is_some_and(|b| *b == b'-' || *b == b'@') =>
        {
            std::path::Path::new(".").join(path)
        }
        _ => path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flag<'a>(name: &'a str, value: Option<&'a str>) -> Word<'a> {
        Word::Flag {
            name,
            value,
            missing: false,
            joined: false,
        }
    }

    fn joined<'a>(name: &'a str, value: &'a str) -> Word<'a> {
        Word::Flag {
            name,
            value: Some(value),
            missing: false,
            joined: true,
        }
    }

    fn check(words: &[&str], expected: &[Word<'_>]) {
        assert_eq!(split(words), expected, "{words:?}");
    }

    #[test]
    fn a_value_is_never_a_flag() {
        check(
            &[
                "-isystem",
                "-MD",
                "-iquote",
                "-fplugin=./evil.so",
                "-c",
                "x.c",
            ],
            &[
                flag("-isystem", Some("-MD")),
                flag("-iquote", Some("-fplugin=./evil.so")),
                flag("-c", None),
                Word::Input("x.c"),
            ],
        );
        check(
            &["-include-pch", "-fplugin=./evil.so"],
            &[flag("-include-pch", Some("-fplugin=./evil.so"))],
        );
        check(&["-D", ""], &[flag("-D", Some(""))]);
    }

    #[test]
    fn joined_values_take_the_longest_prefix() {
        check(
            &[
                "-Iinc",
                "-DX=1",
                "-iwithprefixbeforefoo",
                "-isystem/usr/x",
                "-lm",
            ],
            &[
                joined("-I", "inc"),
                joined("-D", "X=1"),
                joined("-iwithprefixbefore", "foo"),
                joined("-isystem", "/usr/x"),
                joined("-l", "m"),
            ],
        );
        check(
            &["--sysroot=/s", "--param=x=1", "-std=c99", "-O2"],
            &[
                joined("--sysroot", "/s"),
                joined("--param", "x=1"),
                flag("-std=c99", None),
                flag("-O2", None),
            ],
        );
    }

    #[test]
    fn a_missing_value_is_marked() {
        assert_eq!(
            split(&["-I"]),
            vec![Word::Flag {
                name: "-I",
                value: None,
                missing: true,
                joined: false,
            }]
        );
    }

    #[test]
    fn paths_never_read_as_options() {
        assert_eq!(safe_path("@evil.rsp"), "./@evil.rsp");
        assert_eq!(safe_path("-x.c"), "./-x.c");
        assert_eq!(safe_path("src/a.c"), "src/a.c");
        assert_eq!(
            safe_path_buf(std::path::Path::new("@n.c")),
            std::path::PathBuf::from("./@n.c")
        );
    }
}
