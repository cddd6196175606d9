//! The program run with its arguments in its own directory, stopped at the timeout; the
//! log of its kernels' global accesses (`warpwise_dynamic_hooks.c`'s 40-byte records on
//! its original stdout) read while it runs and counted at once (`Tally`), so neither disk
//! nor memory grows with the number of accesses.

use super::{DynamicError, Request};
use advisor::check::dynamic::{Access, LaunchValues, SiteTally, Tally};
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

const RECORD: usize = 40;
const MAGIC: u64 = 0x3159_4e44_5757_5757;

/// What the log said.
#[derive(Debug, Default)]
pub struct Traced {
    /// The executable's load base.
    pub base: u64,
    /// Per site (its number): the PC and whether it writes.
    pub pcs: Vec<(u64, bool)>,
    pub tallies: Vec<SiteTally>,
    /// Per site, its executions in each launch.
    pub by_launch: Vec<BTreeMap<u64, SiteTally>>,
    /// Each launch's grid, block and integer arguments, by its number in the log.
    pub launches: HashMap<u64, LaunchValues>,
    pub events: u64,
    pub truncated: bool,
    pub exit_status: Option<i32>,
}

/// Runs `exe` with `args` in `cwd`, its output in `dir`.
pub fn run(
    exe: &Path,
    args: &[String],
    cwd: &Path,
    dir: &Path,
    request: &Request,
) -> Result<Traced, DynamicError> {
    let stderr_path = dir.join("stderr.txt");
    let stderr = std::fs::File::create(&stderr_path)
        .map_err(|e| DynamicError::Tool(format!("cannot write the program's output: {e}")))?;
    let mut child = Command::new(exe)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .env("WW_DYNAMIC_STDOUT", dir.join("stdout.txt"))
        .env("WW_DYNAMIC_MAX_EVENTS", request.max_events.to_string())
        .env_remove("WW_CPU_REPORT")
        .spawn()
        .map_err(|e| DynamicError::Tool(format!("cannot run the program: {e}")))?;
    // A signal that ends warpwise is passed on to the program (`frontend::files`).
    frontend::files::child_started(child.id());
    let log = child.stdout.take();
    let reader = std::thread::spawn(move || log.map(read).unwrap_or_default());
    let waited = frontend::files::wait_with_timeout(&mut child, request.timeout).map_err(|e| {
        DynamicError::Tool(match e {
            frontend::files::WaitError::Wait(e) => format!("waiting for the program: {e}"),
            frontend::files::WaitError::Reap(e) => format!("reaping the program: {e}"),
        })
    })?;
    let (status, timed_out) = (waited.status, waited.timed_out);
    frontend::files::child_ended(child.id());
    let mut traced = reader
        .join()
        .map_err(|_| DynamicError::Tool("reading the program's log failed".into()))?;
    if timed_out {
        return Err(DynamicError::TimedOut(request.timeout.as_secs()));
    }
    let said = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    use std::os::unix::process::ExitStatusExt;
    if let Some(signal) = status.signal() {
        return Err(DynamicError::Crashed(format!(
            "killed by signal {signal} ({}){}",
            signal_name(signal),
            last_line(&said)
        )));
    }
    if let Some(shim) = said
        .lines()
        .find_map(|l| l.strip_prefix("warpwise-cpu: error: "))
    {
        return Err(DynamicError::Crashed(shim.to_string()));
    }
    traced.exit_status = status.code().filter(|&c| c != 0);
    Ok(traced)
}

/// `: LINE`, the last line the program wrote to stderr, or nothing.
fn last_line(said: &str) -> String {
    said.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| format!(": {}", l.trim()))
        .unwrap_or_default()
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        _ => "a signal",
    }
}

fn word(r: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&r[at..at + 8]);
    u64::from_le_bytes(b)
}

/// Counts the records of `log` until it ends.
fn read(log: impl Read) -> Traced {
    let mut log = std::io::BufReader::with_capacity(1 << 20, log);
    let mut traced = Traced::default();
    let mut tally = Tally::new();
    let mut ids: HashMap<(u64, bool), u32> = HashMap::new();
    let mut r = [0u8; RECORD];
    while log.read_exact(&mut r).is_ok() {
        match r[39] {
            0 => {}
            1 if word(&r, 0) == MAGIC => {
                traced.base = word(&r, 8);
                continue;
            }
            2 => {
                traced.truncated = true;
                continue;
            }
            3 => {
                let unpack = |w: u64| [w & 0x1f_ffff, (w >> 21) & 0x1f_ffff, (w >> 42) & 0x1f_ffff];
                // A launch the shim refused has its number taken by the next: the last wins.
                traced.launches.insert(
                    word(&r, 16),
                    LaunchValues {
                        grid: unpack(word(&r, 0)),
                        block: unpack(word(&r, 8)),
                        args: vec![None; usize::try_from(word(&r, 24)).unwrap_or(0).min(256)],
                    },
                );
                continue;
            }
            4 => {
                let l = traced.launches.entry(word(&r, 16)).or_default();
                let i = usize::try_from(word(&r, 0)).unwrap_or(usize::MAX);
                if let Some(arg) = l.args.get_mut(i) {
                    *arg = (r[38] != 0).then_some(word(&r, 8) as i64);
                }
                continue;
            }
            _ => continue,
        }
        let (pc, write) = (word(&r, 0), r[38] != 0);
        let next = ids.len() as u32;
        let site = *ids.entry((pc, write)).or_insert_with(|| {
            traced.pcs.push((pc, write));
            next
        });
        tally.note(Access {
            site,
            launch: word(&r, 16),
            block: word(&r, 24),
            thread: u32::from_le_bytes([r[32], r[33], 0, 0]),
            block_threads: u32::from_le_bytes([r[34], r[35], 0, 0]),
            addr: word(&r, 8),
            bytes: u32::from(u16::from_le_bytes([r[36], r[37]])),
        });
    }
    traced.events = tally.events();
    (traced.tallies, traced.by_launch) = tally.finish_by_launch();
    traced
        .tallies
        .resize(traced.pcs.len(), SiteTally::default());
    traced.by_launch.resize(traced.pcs.len(), BTreeMap::new());
    traced
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record as `warpwise_dynamic_hooks.c` writes it.
    fn record(pc: u64, addr: u64, block: u64, thread: u16, kind: u8) -> Vec<u8> {
        let mut r = Vec::with_capacity(RECORD);
        for w in [pc, addr, 1, block] {
            r.extend_from_slice(&w.to_le_bytes());
        }
        r.extend_from_slice(&thread.to_le_bytes());
        r.extend_from_slice(&64u16.to_le_bytes()); // the block's threads
        r.extend_from_slice(&4u16.to_le_bytes());
        r.push(0);
        r.push(kind);
        r
    }

    #[test]
    fn the_log_is_read_into_sites_and_its_end_marker_noted() {
        let mut log = record(MAGIC, 0x5000, 0, 0, 1);
        for thread in 0..32u16 {
            log.extend(record(0x5123, 4096 + 4 * u64::from(thread), 0, thread, 0));
            log.extend(record(0x5200, 8192 + 128 * u64::from(thread), 0, thread, 0));
        }
        log.extend(record(0, 0, 0, 0, 2));
        let traced = read(&log[..]);
        assert_eq!(traced.base, 0x5000);
        assert!(traced.truncated);
        assert_eq!(traced.events, 64);
        assert_eq!(traced.pcs, [(0x5123, false), (0x5200, false)]);
        let full = |i: usize| {
            let s = traced.tallies[i].full;
            (s.warps, s.requests.unwrap().max, s.sectors.unwrap().max)
        };
        assert_eq!(full(0), (1, 1, 4));
        assert_eq!(full(1), (1, 32, 32));
    }

    #[test]
    fn a_launchs_grid_block_and_integer_arguments_are_read_and_its_accesses_kept_apart() {
        // Launch 1 of unit 0: grid (4, 2, 1), block (128, 1, 1), arguments a pointer and 7.
        let launch = |pc: u64, addr: u64, n: u64, write: u8, kind: u8| {
            let mut r = Vec::with_capacity(RECORD);
            for w in [pc, addr, 1, n] {
                r.extend_from_slice(&w.to_le_bytes());
            }
            r.extend_from_slice(&[0; 6]);
            r.push(write);
            r.push(kind);
            r
        };
        let mut log = record(MAGIC, 0x5000, 0, 0, 1);
        log.extend(launch(
            4 | 2 << 21 | 1 << 42,
            128 | 1 << 21 | 1 << 42,
            2,
            0,
            3,
        ));
        log.extend(launch(0, 0x7000, 0, 0, 4));
        log.extend(launch(1, 7, 0, 1, 4));
        for thread in 0..32u16 {
            log.extend(record(0x5123, 4096 + 4 * u64::from(thread), 0, thread, 0));
        }
        let traced = read(&log[..]);
        let l = &traced.launches[&1];
        assert_eq!((l.grid, l.block), ([4, 2, 1], [128, 1, 1]));
        assert_eq!(l.args, [None, Some(7)]);
        assert_eq!(traced.by_launch[0][&1].full.warps, 1);
    }
}
