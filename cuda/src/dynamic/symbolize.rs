//! Each PC of the run placed in the user's source: one call of `llvm-symbolizer` for all
//! of them (addresses relative to the executable's load base, minus one to land on the
//! call of the hook), its frames (inlining included) that are the user's code, innermost
//! first: neither the shim nor the recorder in the build directory, nor a system header.
//! The innermost is the access; the others are the calls of device functions inlined
//! there, which tell one call's instance of an access from another's.

use super::DynamicError;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A source place: the file, its line and column.
pub type Place = (PathBuf, u32, u32);

const SYMBOLIZERS: &[&str] = &["llvm-symbolizer-16", "llvm-symbolizer"];

/// The user's frames per PC, innermost first (none where no frame is the user's).
pub fn places(
    exe: &Path,
    base: u64,
    pcs: &[(u64, bool)],
    dir: &Path,
) -> Result<Vec<Vec<Place>>, DynamicError> {
    if pcs.is_empty() {
        return Ok(Vec::new());
    }
    let input: String = pcs
        .iter()
        .map(|(pc, _)| format!("0x{:x}\n", pc.wrapping_sub(base).wrapping_sub(1)))
        .collect();
    let mut last = String::new();
    for tool in SYMBOLIZERS {
        let child = Command::new(tool)
            .arg(format!("--obj={}", exe.display()))
            .arg("--functions=none")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn();
        let mut child = match child {
            Ok(c) => c,
            Err(e) => {
                last = format!("{tool}: {e}");
                continue;
            }
        };
        let mut stdin = child.stdin.take();
        let text = input.clone();
        // Written from a thread: the symbolizer answers as it reads.
        let writer = std::thread::spawn(move || {
            if let Some(s) = stdin.as_mut() {
                let _ = s.write_all(text.as_bytes());
            }
        });
        let out = child
            .wait_with_output()
            .map_err(|e| DynamicError::Tool(format!("{tool}: {e}")))?;
        let _ = writer.join();
        return Ok(parse(&String::from_utf8_lossy(&out.stdout), pcs.len(), dir));
    }
    Err(DynamicError::Tool(format!(
        "no symbolizer to place the accesses in the source (install llvm-symbolizer-16): {last}"
    )))
}

/// The symbolizer's answer, a block of `file:line:col` frames per address, innermost first,
/// blocks separated by an empty line.
fn parse(text: &str, count: usize, dir: &Path) -> Vec<Vec<Place>> {
    let mut out: Vec<Vec<Place>> = Vec::with_capacity(count);
    let mut current: Option<Vec<Place>> = None;
    for line in text.lines() {
        if line.trim().is_empty() {
            if let Some(c) = current.take() {
                out.push(c);
            }
            continue;
        }
        let frames = current.get_or_insert_with(Vec::new);
        let mut parts = line.rsplitn(3, ':');
        let (Some(col), Some(l), Some(file)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let (Ok(col), Ok(l)) = (col.trim().parse::<u32>(), l.parse::<u32>()) else {
            continue;
        };
        let path = Path::new(file);
        if l == 0 || file == "??" || path.starts_with(dir) || path.starts_with("/usr") {
            continue;
        }
        frames.push((advisor::check::dynamic::canonical(path), l, col));
    }
    if let Some(c) = current {
        out.push(c);
    }
    out.resize(count, Vec::new());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_innermost_frame_of_the_users_code_is_taken() {
        let text = "/tmp/b/shim/warpwise_cuda_cpu.h:540:9\n/nowhere/k.cu:12:7\n/nowhere/k.cu:30:3\n\n??:0:0\n\n/nowhere/k.cu:5:14\n\n";
        let got = parse(text, 3, Path::new("/tmp/b"));
        let k = |l, c| (PathBuf::from("/nowhere/k.cu"), l, c);
        assert_eq!(got, [vec![k(12, 7), k(30, 3)], vec![], vec![k(5, 14)]]);
    }
}
