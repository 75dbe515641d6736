//! This module defines what bounds a command in every phase, including the phases that cannot check a limit
//! themselves (a parser expanding an entity, a sort, a write): the heap the process uses, counted at the global
//! allocator; a stop that the binary carries out (message, exit code) when a hard limit is passed or a signal
//! arrives; the phase the command is in, for that message; and the temporary files a stopped command removes.
//!
//! The library never exits: [`stop`] calls the hook the binary installed with [`install`], and returns when
//! there is none (a library user, a test), leaving the phases' own checks to act.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// Bytes a thread allocates (or frees) before its count is added to the shared one: the shared count is exact
/// to within this much per thread, and allocating threads do not contend on it.
const SLACK: isize = 256 << 10;

static HEAP: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);
static COUNTING: AtomicBool = AtomicBool::new(false);
static STOPPING: AtomicBool = AtomicBool::new(false);
static PHASE: AtomicU8 = AtomicU8::new(Phase::Start as u8);
static HOOK: OnceLock<fn(Stop) -> !> = OnceLock::new();

thread_local! {
    /// This thread's bytes not yet added to [`HEAP`].
    static PENDING: Cell<isize> = const { Cell::new(0) };
    /// Set while this thread must not be stopped by the allocator (it holds the temporaries' lock).
    static HOLD: Cell<bool> = const { Cell::new(false) };
}

/// The global allocator `A`, counting the bytes it hands out: install it as `#[global_allocator]`.
pub struct Counting<A>(pub A);

// SAFETY: every call is forwarded to `A` unchanged; counting touches only atomics and const-initialised
// thread-locals without destructors (no allocation, no re-entry).
unsafe impl<A: GlobalAlloc> GlobalAlloc for Counting<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        // SAFETY: forwarded with the caller's guarantees.
        refused(unsafe { self.0.alloc(layout) })
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        // SAFETY: forwarded with the caller's guarantees.
        refused(unsafe { self.0.alloc_zeroed(layout) })
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { self.0.dealloc(ptr, layout) };
        count(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        // SAFETY: forwarded with the caller's guarantees.
        refused(unsafe { self.0.realloc(ptr, layout, new_size) })
    }
}

/// An allocation the system refused (null) below the heap limit: the address space is used up another way
/// (stacks, fragments, an `ulimit -v`). The command stops with a report (exit 3), as at the limit, where the
/// standard library would abort (exit 134); while another thread stops the command, this one waits for the
/// exit. Only a thread that must not be stopped (or a process without the stop installed) gets the null back.
/// (A fallible allocation, `try_reserve`, would stop the command too: the project makes none.)
fn refused(ptr: *mut u8) -> *mut u8 {
    if ptr.is_null() && !HOLD.try_with(Cell::get).unwrap_or(true) {
        stop(Stop::Memory);
    }
    ptr
}

/// Counts an allocation (`delta > 0`, before it is made) or a release; past the limit, stops the command
/// before the allocation is made.
fn count(delta: isize) {
    let flush = PENDING
        .try_with(|p| {
            let v = p.get() + delta;
            if v.abs() < SLACK {
                p.set(v);
                None
            } else {
                p.set(0);
                Some(v)
            }
        })
        .unwrap_or(Some(delta));
    let Some(v) = flush else { return };
    if !COUNTING.load(Ordering::Relaxed) {
        COUNTING.store(true, Ordering::Relaxed);
    }
    let now = HEAP.fetch_add(v, Ordering::Relaxed) + v;
    if v > 0 {
        let now = now.max(0) as usize;
        PEAK.fetch_max(now, Ordering::Relaxed);
        if now > LIMIT.load(Ordering::Relaxed)
            && !STOPPING.load(Ordering::Relaxed)
            && !HOLD.try_with(Cell::get).unwrap_or(true)
        {
            stop(Stop::Memory);
        }
    }
}

/// Whether the counting allocator is installed (it has counted something): [`heap`] is then the real heap.
pub fn counting() -> bool {
    COUNTING.load(Ordering::Relaxed)
}

/// The bytes the process has allocated and not freed (to within 256 KiB per thread); 0 without [`Counting`].
pub fn heap() -> usize {
    HEAP.load(Ordering::Relaxed).max(0) as usize
}

/// The most [`heap`] has been.
pub fn peak() -> usize {
    PEAK.load(Ordering::Relaxed)
}

/// The heap limit: an allocation that would take [`heap`] past it stops the command ([`Stop::Memory`]);
/// `None` removes it.
pub fn set_heap_limit(limit: Option<usize>) {
    LIMIT.store(limit.unwrap_or(usize::MAX), Ordering::Relaxed);
}

/// The heap limit set (`None`: none).
pub fn heap_limit() -> Option<usize> {
    Some(LIMIT.load(Ordering::Relaxed)).filter(|&l| l != usize::MAX)
}

/// The heap the machine lets the process have, in bytes, for a heap limit when none is given: RAM and swap
/// (`/proc/meminfo`), or the process's memory cgroup limit (v2 `memory.max`, v1 `memory.limit_in_bytes`, the
/// least of its and its ancestors') where that is below the RAM (then without swap), less a margin for what is not heap (the binary, stacks, the
/// allocator's own pages: a sixteenth, at least 64 MiB), and under an address-space limit at most half of what
/// it leaves (see `address_space_room`). Past it the kernel would kill the process (or an
/// allocation fail and abort it); stopped there instead, the command ends with a report, as at `--max-memory`.
/// `None` where the machine does not say.
pub fn machine_memory() -> Option<usize> {
    let read = |path: &std::path::Path| std::fs::read_to_string(path).ok();
    let meminfo = read(std::path::Path::new("/proc/meminfo"))?;
    let cgroups = read(std::path::Path::new("/proc/self/cgroup")).unwrap_or_default();
    let bound = cgroup_bound(&cgroups, |p| read(p));
    let machine = heap_bound(&meminfo, bound);
    match (machine, address_space_room()) {
        (Some(m), Some(a)) => Some(m.min(a)),
        (m, a) => m.or(a),
    }
}

/// Half the address space an address-space limit (`ulimit -v`, `RLIMIT_AS`) leaves past what the process maps
/// already (`VmSize`: the binary, and the stacks of the threads started so far): the heap can take no more than
/// about half of the virtual memory it costs (the allocator reserves ahead, a growing vector is copied into one
/// twice its size, a thread started later maps its whole stack). Past the limit an allocation fails, which
/// aborts the process; stopped at the bound, the command ends with a report. `None` without a limit.
#[cfg(unix)]
fn address_space_room() -> Option<usize> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given, and nothing else.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } != 0
        || limit.rlim_cur == libc::RLIM_INFINITY
    {
        return None;
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let mapped = vm_size(&status).unwrap_or(0);
    usize::try_from(limit.rlim_cur.saturating_sub(mapped) / 2).ok()
}

#[cfg(not(unix))]
fn address_space_room() -> Option<usize> {
    None
}

/// The virtual memory the process maps, in bytes, from the text of `/proc/self/status` (`VmSize:  123 kB`).
fn vm_size(status: &str) -> Option<u64> {
    kib_field(status, "VmSize:")?.checked_mul(1024)
}

/// The value of a `Key:  123 kB` line of a `/proc` file (`/proc/meminfo`, `/proc/self/status`), in KiB.
fn kib_field(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    line[key.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// The least memory bound of the cgroups `/proc/self/cgroup` lists (v2, and v1's memory controller), reading
/// each limit file with `read`: the process's group's and its ancestors'.
fn cgroup_bound(cgroups: &str, read: impl Fn(&std::path::Path) -> Option<String>) -> Option<u64> {
    let mut bound: Option<u64> = None;
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (root, file) = if controllers.is_empty() {
            ("/sys/fs/cgroup", "memory.max")
        } else if controllers.split(',').any(|c| c == "memory") {
            ("/sys/fs/cgroup/memory", "memory.limit_in_bytes")
        } else {
            continue;
        };
        let mut dir = std::path::Path::new(root).join(path.trim_start_matches('/'));
        loop {
            // "max" (v2) or a number; v1 writes no bound as a number past any machine's memory.
            if let Some(limit) = read(&dir.join(file)).and_then(|t| t.trim().parse::<u64>().ok()) {
                bound = Some(bound.map_or(limit, |b| b.min(limit)));
            }
            if dir == std::path::Path::new(root) || !dir.pop() {
                break;
            }
        }
    }
    bound
}

/// [`machine_memory`] from the text of `/proc/meminfo` and the cgroups' bound.
fn heap_bound(meminfo: &str, cgroup: Option<u64>) -> Option<usize> {
    let ram = kib_field(meminfo, "MemTotal:")?.checked_mul(1024)?;
    let swap = kib_field(meminfo, "SwapTotal:")
        .unwrap_or(0)
        .saturating_mul(1024);
    // A cgroup bound below the RAM is the process's whole allowance: the host's swap is not the group's (its own
    // swap limit is often none at all), so none is counted.
    let total = match cgroup {
        Some(limit) if limit < ram => limit,
        _ => ram.saturating_add(swap),
    };
    let margin = (total / 16).max(64 << 20);
    usize::try_from(total.saturating_sub(margin)).ok()
}

/// Why a command was stopped from outside its phases' own checks.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// An allocation would have passed `--max-memory`.
    Memory,
    /// The command ran past `--timeout` (and its grace).
    Time,
    /// A signal (SIGINT, SIGTERM, SIGHUP) arrived: its number.
    Signal(i32),
}

/// The phase a command is in (for the message of a stop).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    /// Before loading.
    Start,
    /// Reading the data.
    Load,
    /// Reading and checking the rules.
    Rules,
    /// Running the rules.
    Reason,
    /// Running a query.
    Query,
    /// Explaining facts.
    Explain,
    /// Writing the output.
    Output,
    /// Opening a state.
    Open,
    /// Saving a state (the output is written).
    Save,
}

impl Phase {
    /// What the command was doing, as a message says it (`while loading the data`).
    pub fn doing(self) -> &'static str {
        match self {
            Phase::Start => "while starting",
            Phase::Load => "while loading the data",
            Phase::Rules => "while reading the rules",
            Phase::Reason => "while reasoning",
            Phase::Query => "while running the query",
            Phase::Explain => "while explaining",
            Phase::Output => "while writing the output",
            Phase::Open => "while opening the state",
            Phase::Save => "while saving the state",
        }
    }
}

/// Records the phase the command is entering.
pub fn enter(phase: Phase) {
    PHASE.store(phase as u8, Ordering::Relaxed);
}

/// The phase the command is in.
pub fn phase() -> Phase {
    match PHASE.load(Ordering::Relaxed) {
        x if x == Phase::Load as u8 => Phase::Load,
        x if x == Phase::Rules as u8 => Phase::Rules,
        x if x == Phase::Reason as u8 => Phase::Reason,
        x if x == Phase::Query as u8 => Phase::Query,
        x if x == Phase::Explain as u8 => Phase::Explain,
        x if x == Phase::Output as u8 => Phase::Output,
        x if x == Phase::Open as u8 => Phase::Open,
        x if x == Phase::Save as u8 => Phase::Save,
        _ => Phase::Start,
    }
}

/// Installs the binary's stop: it removes the temporaries, reports, and exits. Once per process.
pub fn install(hook: fn(Stop) -> !) {
    let _ = HOOK.set(hook);
}

/// Stops the command through the installed hook (never returning), once: a second stop waits for the first to
/// end the process. Without a hook, returns.
pub fn stop(reason: Stop) {
    let Some(hook) = HOOK.get() else { return };
    if STOPPING.swap(true, Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
    hook(reason)
}

/// The grace a phase that cannot check the time gets past the deadline before the command is stopped: a quarter
/// second, plus a twentieth of the timeout.
pub fn grace(timeout: Duration) -> Duration {
    Duration::from_millis(250) + timeout / 20
}

/// `start + timeout`, or `None` when that lies past what an [`Instant`] can hold (no deadline, in effect).
pub fn deadline(start: Instant, timeout: Duration) -> Option<Instant> {
    start.checked_add(timeout)
}

/// Temporary files (and folders) being written: a stop removes them.
static TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn temporaries() -> MutexGuard<'static, Vec<PathBuf>> {
    TEMPORARIES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Records a temporary file (or folder) and creates it with `create`, both under the lock a stop takes: a stop
/// either comes after, and removes what was created, or before, and then nothing is created (an `Interrupted`
/// error instead). Recording first and creating outside the lock left a window where a stop removed nothing and
/// the file was created just after, and outlived the process.
pub fn create_temporary<R>(
    path: &Path,
    create: impl FnOnce() -> std::io::Result<R>,
) -> std::io::Result<R> {
    let _hold = Held::new();
    let mut list = temporaries();
    if STOPPING.load(Ordering::SeqCst) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::Interrupted,
            "the command is stopping",
        ));
    }
    list.push(path.to_owned());
    let created = create();
    if created.is_err() {
        list.retain(|p| p != path);
    }
    created
}

/// Runs `f` (a rename of the temporary into place, or its removal), then forgets the temporary, all under the
/// lock a stop takes: a stop either removes the temporary before `f` or finds it gone.
pub fn release_temporary<R>(path: &Path, f: impl FnOnce() -> R) -> R {
    release_temporaries(&[path.to_owned()], f)
}

/// [`release_temporary`] for several temporaries at once: `f` (their renames into place) runs under one hold of
/// the lock a stop takes, so a stop comes before all of it (and removes them all) or after.
pub fn release_temporaries<R>(paths: &[PathBuf], f: impl FnOnce() -> R) -> R {
    let _hold = Held::new();
    let mut list = temporaries();
    let result = f();
    list.retain(|p| !paths.contains(p));
    result
}

/// Removes every temporary file still recorded (waiting up to a second for a rename in progress); how many.
pub fn discard_temporaries() -> usize {
    let started = Instant::now();
    loop {
        match TEMPORARIES.try_lock() {
            Ok(mut list) => {
                let n = list.len();
                list.drain(..).for_each(remove);
                return n;
            }
            Err(std::sync::TryLockError::Poisoned(e)) => {
                let mut list = e.into_inner();
                let n = list.len();
                list.drain(..).for_each(remove);
                return n;
            }
            Err(std::sync::TryLockError::WouldBlock)
                if started.elapsed() < Duration::from_secs(1) =>
            {
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(std::sync::TryLockError::WouldBlock) => return 0,
        }
    }
}

/// Removes a temporary file, or a temporary folder with what it holds.
fn remove(path: PathBuf) {
    if path.is_dir() {
        let _ = std::fs::remove_dir_all(path);
    } else {
        let _ = std::fs::remove_file(path);
    }
}

/// While alive, the allocator does not stop this thread (it holds the temporaries' lock, which a stop takes).
struct Held {
    was: bool,
}

impl Held {
    fn new() -> Self {
        let was = HOLD.try_with(|h| h.replace(true)).unwrap_or(false);
        Self { was }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let was = self.was;
        let _ = HOLD.try_with(|h| h.set(was));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MEMINFO: &str =
        "MemTotal:       16777216 kB\nMemFree:        1000 kB\nSwapTotal:    1048576 kB\n";

    #[test]
    fn the_mapped_size_is_read_from_the_vmsize_line_in_bytes() {
        let status = "Name:\treasonctl\nVmPeak:\t  900 kB\nVmSize:\t  812344 kB\nVmRSS:\t 1 kB\n";
        assert_eq!(vm_size(status), Some(812_344 * 1024));
        assert_eq!(vm_size("Name:\treasonctl\n"), None);
    }

    #[test]
    fn the_heap_bound_is_ram_and_swap_or_the_cgroups_least_less_a_margin() {
        let (gib, mib) = (1u64 << 30, 1u64 << 20);
        let less_margin = |total: u64| (total - (total / 16).max(64 * mib)) as usize;
        assert_eq!(heap_bound(MEMINFO, None), Some(less_margin(17 * gib)));
        // A cgroup below the RAM: its bound, without the host's swap.
        assert_eq!(heap_bound(MEMINFO, Some(gib)), Some(less_margin(gib)));
        assert_eq!(
            heap_bound(MEMINFO, Some(u64::MAX)),
            Some(less_margin(17 * gib))
        );
        assert_eq!(heap_bound("nothing useful\n", None), None);
        // v2 and v1 lines; the least bound of a group and its ancestors; "max" is none.
        let files = |p: &std::path::Path| -> Option<String> {
            match p.to_str()? {
                "/sys/fs/cgroup/a/b/memory.max" => Some("max\n".into()),
                "/sys/fs/cgroup/a/memory.max" => Some("3000000000\n".into()),
                "/sys/fs/cgroup/memory/x/memory.limit_in_bytes" => Some("2000000000\n".into()),
                "/sys/fs/cgroup/memory/memory.limit_in_bytes" => {
                    Some("9223372036854771712\n".into())
                }
                _ => None,
            }
        };
        assert_eq!(cgroup_bound("0::/a/b\n", files), Some(3_000_000_000));
        assert_eq!(
            cgroup_bound("4:memory:/x\n0::/a/b\n", files),
            Some(2_000_000_000)
        );
        assert_eq!(cgroup_bound("1:cpu:/x\n0::/\n", files), None);
    }

    #[test]
    fn a_deadline_past_what_an_instant_holds_is_none() {
        let now = Instant::now();
        assert_eq!(deadline(now, Duration::MAX), None);
        assert_eq!(
            deadline(now, Duration::from_secs(3)),
            Some(now + Duration::from_secs(3))
        );
    }

    #[test]
    fn the_grace_grows_with_the_timeout() {
        assert_eq!(grace(Duration::from_secs(2)), Duration::from_millis(350));
        assert_eq!(grace(Duration::from_secs(100)), Duration::from_millis(5250));
    }

    #[test]
    fn a_released_temporary_is_not_discarded() {
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join("kept");
        let dropped = dir.path().join("dropped");
        for p in [&kept, &dropped] {
            create_temporary(p, || std::fs::write(p, "x")).unwrap();
        }
        release_temporary(&kept, || ());
        assert!(discard_temporaries() >= 1);
        assert!(kept.exists());
        assert!(!dropped.exists());
    }

    #[test]
    fn without_a_hook_a_stop_returns() {
        stop(Stop::Time);
        assert!(!STOPPING.load(Ordering::SeqCst));
    }
}
