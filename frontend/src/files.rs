//! Safe file-system access for every command: private directories for what warpwise keeps
//! between runs, output files written without following symlinks, and the check that an
//! output never lands on an input.
//!
//! The rules (issue 15): nothing is reused by name from a shared directory such as `/tmp`
//! (another local user could plant it); files warpwise reuses between runs live in a
//! per-user cache directory that is checked to be owned by the user and closed to others;
//! an output replaces what is at its path (a symlink included) instead of writing through
//! it; and an output that resolves to one of the command's inputs is refused.

use std::io::Write;
use std::path::{Path, PathBuf};

/// `$XDG_CACHE_HOME/warpwise/SUB` (else `$HOME/.cache/warpwise/SUB`), created with mode 0700.
/// Fails when no absolute cache home is set, or when the directory (or `warpwise` above
/// it) is a symlink, belongs to another user or can be written by group or others.
pub fn user_cache_dir(sub: &str) -> std::io::Result<PathBuf> {
    let home = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|h| h.join(".cache"))
        })
        .ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "neither XDG_CACHE_HOME nor HOME is an absolute path",
            )
        })?;
    std::fs::create_dir_all(&home)?;
    let ours = home.join("warpwise");
    let dir = ours.join(sub);
    create_private_dir(&ours)?;
    create_private_dir(&dir)?;
    Ok(dir)
}

/// A fresh directory in the temp directory with a random name, created with mode 0700 (the
/// `tempfile` default is 0777 less the umask) and removed when the guard is dropped.
pub fn private_tempdir(prefix: &str) -> std::io::Result<tempfile::TempDir> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(prefix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    let dir = builder.tempdir()?;
    if let Ok(mut live) = LIVE_TEMPDIRS.lock() {
        // Directories already removed by their guard are forgotten here.
        live.retain(|d| d.exists());
        live.push(dir.path().to_path_buf());
    }
    Ok(dir)
}

/// Every directory [`private_tempdir`] made in this process, for
/// [`remove_private_tempdirs`]: a guard's `Drop` does not run when a signal ends the
/// process.
static LIVE_TEMPDIRS: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Removes the private temporary directories this process made that still exist (called
/// by the binary when SIGINT, SIGTERM or SIGHUP ends it).
pub fn remove_private_tempdirs() {
    let dirs = match LIVE_TEMPDIRS.lock() {
        Ok(mut live) => std::mem::take(&mut *live),
        Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
    };
    for dir in dirs {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Creates `dir` with mode 0700 unless it exists, then checks it is private to us.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    match builder.create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    check_private(dir)
}

#[cfg(unix)]
fn check_private(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(dir)?;
    let refuse = |why: &str| {
        Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("`{}` {why}", dir.display()),
        ))
    };
    if !meta.file_type().is_dir() {
        return refuse("is not a directory (a symlink is refused)");
    }
    // Our effective uid, without `unsafe`: the owner of a file we just created.
    let me = tempfile::tempfile()?.metadata()?.uid();
    if meta.uid() != me {
        return refuse("belongs to another user");
    }
    if meta.mode() & 0o022 != 0 {
        return refuse("can be written by other users");
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_private(dir: &Path) -> std::io::Result<()> {
    if std::fs::symlink_metadata(dir)?.file_type().is_dir() {
        Ok(())
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("`{}` is not a directory", dir.display()),
        ))
    }
}

/// Writes `bytes` to `path` through a fresh temporary file in the same directory, renamed
/// over `path`: a symlink at `path` is replaced, never written through, and a reader never
/// sees half a file. A directory at `path` is an error.
pub fn write_output(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        return Err(std::io::Error::other("is a directory"));
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut builder = tempfile::Builder::new();
    builder.prefix(".warpwise-").suffix(".tmp");
    // An ordinary user file (0666 less the umask, which the kernel applies at creation),
    // not tempfile's private 0600.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The input `output` would overwrite, if any: same file (device and inode, following
/// symlinks) as one of `inputs`.
pub fn clobbered_input<'a>(output: &Path, inputs: &'a [PathBuf]) -> Option<&'a PathBuf> {
    let out = std::fs::metadata(output).ok()?;
    inputs
        .iter()
        .find(|input| std::fs::metadata(input).is_ok_and(|meta| same_file(&out, &meta)))
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    a.len() == b.len() && a.modified().ok() == b.modified().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_replaces_a_symlink_instead_of_writing_through_it() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let out = dir.path().join("report.yaml");
        #[cfg(unix)]
        std::os::unix::fs::symlink(&victim, &out).unwrap();
        write_output(&out, b"report").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "report");
        assert!(!std::fs::symlink_metadata(&out).unwrap().is_symlink());
    }

    #[test]
    fn an_output_onto_an_input_is_found_through_other_spellings() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("a.c");
        std::fs::write(&input, "int x;").unwrap();
        let other = dir.path().join("b.c");
        std::fs::write(&other, "int y;").unwrap();
        let inputs = vec![input.clone()];
        let spelled = dir.path().join(".").join("a.c");
        assert_eq!(clobbered_input(&spelled, &inputs), Some(&input));
        assert_eq!(clobbered_input(&other, &inputs), None);
        assert_eq!(clobbered_input(&dir.path().join("new.yaml"), &inputs), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_cache_dir_open_to_others_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("shared");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = create_private_dir(&dir).unwrap_err();
        assert!(err.to_string().contains("written by other users"), "{err}");
        let link = home.path().join("link");
        std::os::unix::fs::symlink(home.path(), &link).unwrap();
        let err = create_private_dir(&link).unwrap_err();
        assert!(err.to_string().contains("symlink"), "{err}");
        let temp = private_tempdir("warpwise-test-").unwrap();
        let mode = std::fs::metadata(temp.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let fresh = home.path().join("fresh");
        create_private_dir(&fresh).unwrap();
        let mode = std::fs::metadata(&fresh).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }
}
