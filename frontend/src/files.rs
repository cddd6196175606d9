//! Safe file-system access for every command: private directories for what warpwise keeps
//! between runs, output files written without following symlinks, and the check that an
//! output never lands on an input.
//!
//! The rules: nothing is reused by name from a shared directory such as `/tmp`
//! (another local user could plant it); files warpwise reuses between runs live in a
//! per-user cache directory that is checked to be owned by the user and closed to others;
//! an output replaces what is at its path (a symlink included) instead of writing through
//! it, except a FIFO, a character device (`/dev/null`) or a link to the standard output
//! or error, which are written into; and an output that resolves to one of the command's
//! inputs is refused.

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

/// Whether `path`, a file warpwise keeps in a [`user_cache_dir`], may be reused: a regular
/// file (a symlink is not), not empty, owned by us and written by no one else.
#[cfg(unix)]
pub fn is_private_file(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    let me = effective_uid();
    meta.file_type().is_file()
        && meta.len() > 0
        && me.is_ok_and(|me| meta.uid() == me)
        && meta.mode() & 0o022 == 0
}

#[cfg(not(unix))]
pub fn is_private_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file() && m.len() > 0)
}

/// The most bytes warpwise reads from one input document (a report, a profile, a compile
/// database): far above any real one (a 77,000-loop report is about 60 MB), and a bound
/// on the memory a file such as `/dev/zero` or a runaway generator can take.
pub const MAX_INPUT_BYTES: u64 = 1 << 30;

/// Reads `path` as text, refusing more than [`MAX_INPUT_BYTES`] (an `InvalidData` error that
/// says so) instead of reading until memory runs out. Bytes that are not UTF-8 are an
/// `InvalidData` error too, as with `std::fs::read_to_string`.
pub fn read_input_text(path: &Path) -> std::io::Result<String> {
    read_text_capped(path, MAX_INPUT_BYTES)
}

/// [`read_input_text`] with the cap given.
pub fn read_text_capped(path: &Path, cap: u64) -> std::io::Result<String> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "larger than {} MiB, more than warpwise reads from one input",
                cap >> 20
            ),
        ));
    }
    String::from_utf8(bytes)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"))
}

/// A fresh directory in the temp directory with a random name, created with mode 0700 (the
/// `tempfile` default is 0777 less the umask) and removed when the guard is dropped.
pub fn private_tempdir(prefix: &str) -> std::io::Result<tempfile::TempDir> {
    // Before the directory exists, so a signal never finds it unguarded.
    if let Some(install) = CLEANUP_ON_SIGNAL.get() {
        CLEANUP_INSTALLED.call_once(*install);
    }
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

/// What installs the signal handling that calls [`remove_private_tempdirs`], set by the
/// binary and run by the first [`private_tempdir`]: a run that makes no such directory
/// (`analyze`) starts no signal thread (its start was about 1% of a small file's time).
static CLEANUP_ON_SIGNAL: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();
static CLEANUP_INSTALLED: std::sync::Once = std::sync::Once::new();

/// Sets what [`private_tempdir`] runs, once, before it makes its first directory: the
/// binary's handler of terminating signals. The first setting stays.
pub fn install_cleanup_on_signal_before_first_tempdir(install: fn()) {
    let _ = CLEANUP_ON_SIGNAL.set(install);
}

/// Every directory [`private_tempdir`] made in this process, for
/// [`remove_private_tempdirs`]: a guard's `Drop` does not run when a signal ends the
/// process.
static LIVE_TEMPDIRS: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Removes the private temporary directories this process made that still exist (called
/// by the binary when SIGINT, SIGTERM or SIGHUP ends it, and when it exits).
pub fn remove_private_tempdirs() {
    let dirs = match LIVE_TEMPDIRS.lock() {
        Ok(mut live) => std::mem::take(&mut *live),
        Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
    };
    for dir in dirs {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The user's programs this process runs now (`profile`, `validate`), for
/// [`forward_signal_to_children`].
static LIVE_CHILDREN: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

/// Notes that the child process `pid` runs the user's program, until [`child_ended`].
pub fn child_started(pid: u32) {
    let mut live = LIVE_CHILDREN.lock().unwrap_or_else(|p| p.into_inner());
    live.push(pid);
}

/// Notes that the child process `pid` has been waited for.
pub fn child_ended(pid: u32) {
    let mut live = LIVE_CHILDREN.lock().unwrap_or_else(|p| p.into_inner());
    live.retain(|p| *p != pid);
}

/// How a waited-for child ended: its status, and whether the timeout killed it.
#[derive(Debug)]
pub struct Waited {
    pub status: std::process::ExitStatus,
    pub timed_out: bool,
}

/// Why a child could not be waited for: polling it, or reaping it once killed.
#[derive(Debug)]
pub enum WaitError {
    Wait(std::io::Error),
    Reap(std::io::Error),
}

/// Waits for `child`, killing it once `timeout` has passed (the user's program may loop
/// forever); polls, so the caller's threads (a log reader) go on meanwhile.
pub fn wait_with_timeout(
    child: &mut std::process::Child,
    timeout: std::time::Duration,
) -> Result<Waited, WaitError> {
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().map_err(WaitError::Wait)? {
            return Ok(Waited {
                status,
                timed_out: false,
            });
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let status = child.wait().map_err(WaitError::Reap)?;
            return Ok(Waited {
                status,
                timed_out: true,
            });
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// Sends `signal` to every child process of [`child_started`] that has not ended, and
/// gives each up to `grace` to end (the profiler runtime writes its profile on SIGTERM):
/// a terminated `warpwise profile` must not leave the program running and writing later.
/// `kill(1)` sends it: the standard library sends only SIGKILL, and the crate forbids
/// `unsafe`.
pub fn forward_signal_to_children(signal: i32, grace: std::time::Duration) {
    let pids = LIVE_CHILDREN
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    for pid in &pids {
        let _ = std::process::Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(pid.to_string())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    }
    let start = std::time::Instant::now();
    for pid in &pids {
        while start.elapsed() < grace && process_runs(*pid) {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// Whether `pid` exists and has not ended (an ended child that nobody waited for yet is a
/// zombie, `Z` in `/proc/PID/stat`).
fn process_runs(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name, which is in parentheses and may hold any byte.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
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
    if meta.uid() != effective_uid()? {
        return refuse("belongs to another user");
    }
    if meta.mode() & 0o022 != 0 {
        return refuse("can be written by other users");
    }
    Ok(())
}

/// Our effective uid, without `unsafe`: the owner of a file we just created.
#[cfg(unix)]
fn effective_uid() -> std::io::Result<u32> {
    use std::os::unix::fs::MetadataExt;
    Ok(tempfile::tempfile()?.metadata()?.uid())
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
///
/// Two kinds of path are written in place instead, because replacing them would break
/// them: a FIFO or character device (`-o /dev/null`, a named pipe; renaming over
/// `/dev/null` as root would leave an ordinary file there for every other program), and a
/// link to this process's own standard output or error (`/dev/stdout`, `/dev/fd/2`).
/// A block device, a socket or anything else that is not a file is refused.
///
/// The data are not forced to disk before the rename (as compilers do not force their
/// objects): a report is made again in a second, and the sync was a tenth of a small
/// file's run. What is dear to remake goes through [`write_output_synced`].
pub fn write_output(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_replacing(path, bytes, false)
}

/// [`write_output`], with the data on disk before the rename: for a profile, which holds
/// runs of the user's program that may have taken hours.
pub fn write_output_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_replacing(path, bytes, true)
}

fn write_replacing(path: &Path, bytes: &[u8], sync: bool) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => return Err(std::io::Error::other("is a directory")),
        Ok(meta) if meta.is_symlink() => {
            if let Some(stream) = standard_stream(path) {
                return stream.write(bytes);
            }
        }
        Ok(meta) if !meta.is_file() => return write_in_place(path, &meta, bytes),
        _ => {}
    }
    let mut staged = Staged::beside(path)?;
    staged.write_all(bytes)?;
    staged.commit(sync)
}

/// Output being written in place of `path` a piece at a time: the bytes go to a fresh
/// temporary file in `path`'s directory, which [`Staged::commit`] renames over `path`.
/// Dropped without a commit (a run that failed midway), the temporary file is removed and
/// `path` stays as it was.
#[derive(Debug)]
pub struct Staged {
    tmp: tempfile::NamedTempFile,
    path: PathBuf,
}

/// A [`Staged`] file for `path` where [`write_output`] would write through a temporary
/// file (`path` is absent, a file or a link to replace); `None` where it writes in place
/// (a FIFO, a device, a link to stdout or stderr): the caller gathers the bytes and hands
/// them to [`write_output`]. A directory is the same error as there.
pub fn stage_output(path: &Path) -> std::io::Result<Option<Staged>> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => Err(std::io::Error::other("is a directory")),
        Ok(meta) if meta.is_symlink() && standard_stream(path).is_some() => Ok(None),
        Ok(meta) if !meta.is_symlink() && !meta.is_file() => Ok(None),
        _ => Staged::beside(path).map(Some),
    }
}

impl Staged {
    fn beside(path: &Path) -> std::io::Result<Staged> {
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
        Ok(Staged {
            tmp: builder.tempfile_in(dir)?,
            path: path.to_path_buf(),
        })
    }

    /// Renames the file written over the path it stands in for (`sync`: with the data on
    /// disk first).
    pub fn commit(self, sync: bool) -> std::io::Result<()> {
        if sync {
            self.tmp.as_file().sync_all()?;
        }
        self.tmp.persist(&self.path).map_err(|e| e.error)?;
        Ok(())
    }
}

impl Write for Staged {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.tmp.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.tmp.flush()
    }
}

/// Writes into the FIFO or character device `found` at `path`, opened without creating or
/// truncating anything. The opened file must be the one `found` describes: a symlink
/// swapped in between the check and the open is refused before a byte is written.
#[cfg(unix)]
fn write_in_place(path: &Path, found: &std::fs::Metadata, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let kind = found.file_type();
    if !(kind.is_fifo() || kind.is_char_device()) {
        return Err(std::io::Error::other(
            "is neither a file, a FIFO nor a character device",
        ));
    }
    let mut file = std::fs::OpenOptions::new().write(true).open(path)?;
    let opened = file.metadata()?;
    if (opened.dev(), opened.ino()) != (found.dev(), found.ino()) {
        return Err(std::io::Error::other("was replaced while being opened"));
    }
    file.write_all(bytes)?;
    file.flush()
}

#[cfg(not(unix))]
fn write_in_place(_: &Path, _: &std::fs::Metadata, _: &[u8]) -> std::io::Result<()> {
    Err(std::io::Error::other("is not a file"))
}

/// This process's standard output or error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StandardStream {
    Output,
    Error,
}

impl StandardStream {
    fn write(self, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            StandardStream::Output => {
                let mut out = std::io::stdout().lock();
                out.write_all(bytes)?;
                out.flush()
            }
            StandardStream::Error => std::io::stderr().lock().write_all(bytes),
        }
    }
}

/// The standard stream the symlink `path` leads to, through at most eight links, if it
/// names descriptor 1 or 2 in `/proc/self/fd` (which `/dev/stdout` and `/dev/fd/N` are
/// links into). Any other link, a descriptor above 2 included, is not followed: the
/// caller replaces it.
fn standard_stream(path: &Path) -> Option<StandardStream> {
    let own = std::fs::canonicalize("/proc/self/fd").ok()?;
    let mut link = path.to_path_buf();
    for _ in 0..8 {
        let parent = link.parent().filter(|p| !p.as_os_str().is_empty());
        if let (Some(parent), Some(name)) = (parent, link.file_name()) {
            if std::fs::canonicalize(parent).is_ok_and(|p| p == own) {
                return match name.to_str() {
                    Some("1") => Some(StandardStream::Output),
                    Some("2") => Some(StandardStream::Error),
                    _ => None,
                };
            }
        }
        let target = std::fs::read_link(&link).ok()?;
        link = match link.parent() {
            Some(parent) if target.is_relative() => parent.join(target),
            _ => target,
        };
    }
    None
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

    #[cfg(unix)]
    #[test]
    fn an_output_onto_a_fifo_is_written_into_it_not_renamed_over_it() {
        use std::io::Read;
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let mut text = String::new();
                std::fs::File::open(fifo)
                    .unwrap()
                    .read_to_string(&mut text)
                    .unwrap();
                text
            })
        };
        write_output(&fifo, b"report").unwrap();
        // Checked before joining: a reader still waiting on a replaced FIFO never returns.
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(kind.is_fifo(), "the FIFO was replaced by {kind:?}");
        assert_eq!(reader.join().unwrap(), "report");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn an_output_onto_dev_null_leaves_the_device_there() {
        use std::os::unix::fs::FileTypeExt;
        let null = Path::new("/dev/null");
        let before = std::fs::symlink_metadata(null).unwrap().file_type();
        write_output(null, b"report").unwrap();
        let after = std::fs::symlink_metadata(null).unwrap().file_type();
        assert_eq!(before.is_char_device(), after.is_char_device());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn links_to_the_standard_streams_are_told_from_other_links() {
        assert_eq!(
            standard_stream(Path::new("/dev/stdout")),
            Some(StandardStream::Output)
        );
        assert_eq!(
            standard_stream(Path::new("/proc/self/fd/2")),
            Some(StandardStream::Error)
        );
        let dir = tempfile::tempdir().unwrap();
        let planted = dir.path().join("report.yaml");
        std::os::unix::fs::symlink("/proc/self/fd/0", &planted).unwrap();
        assert_eq!(standard_stream(&planted), None);
        let elsewhere = dir.path().join("other.yaml");
        std::os::unix::fs::symlink(dir.path().join("victim"), &elsewhere).unwrap();
        assert_eq!(standard_stream(&elsewhere), None);
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
