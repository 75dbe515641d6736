//! This module defines the dataflow engine's cluster: the processes' TCP connections, opened with a handshake
//! that checks every process loaded the same data and rules, and handed to timely's own networking.
//!
//! ```text
//! process i:  listen on address i;  connect to every process j < i;  accept every process j > i
//! each link:  both ends send  "rctl-df1" · i · P · workers · SHA-256(DATA files' names and sizes, load options)
//!             and read the other's; any difference ends the run on both ends, naming what differs
//! then:       the processes exchange their shares' terms (`input`), and compare the shared dictionary and the
//!             program (`agree`) before the run
//! ```
//!
//! Timely's `Config::Cluster` would connect as well, but it retries forever, prints its progress on standard
//! output (where the facts go) and cannot check that the processes agree; so the links are made here, under the
//! deadline, and timely gets the connected sockets (`initialize_networking_from_sockets`).

use std::cell::Cell;
use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, Once};
use std::time::{Duration, Instant};

use sha2::Digest;

use super::DataflowError;
use crate::datalog::Program;

/// `--processes P --process I --hosts FILE`: this process's index and every process's `host:port`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    /// This process's index; process 0 gathers the derived facts and writes the output.
    pub process: usize,
    /// Every process's address, in process order.
    pub addresses: Vec<String>,
    /// Each process writes its own share of the facts (`--out-dir DIR`: into `DIR/process-I`); otherwise process
    /// 0 gathers and writes them all.
    pub shares: bool,
    /// The options every process must be given alike besides the data's (what the output holds, the budget on
    /// facts), as text the handshake compares.
    pub agreed: String,
}

/// How long a process waits for the others to come up when no `--timeout` bounds it sooner.
pub const WAIT: Duration = Duration::from_secs(60);

const MAGIC: &[u8; 8] = b"rctl-df1";

/// What each end of a link says about itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Hello {
    process: u64,
    processes: u64,
    workers: u64,
    fingerprint: [u8; 32],
}

impl Hello {
    fn bytes(&self) -> [u8; 64] {
        let mut b = [0u8; 64];
        b[..8].copy_from_slice(MAGIC);
        b[8..16].copy_from_slice(&self.process.to_le_bytes());
        b[16..24].copy_from_slice(&self.processes.to_le_bytes());
        b[24..32].copy_from_slice(&self.workers.to_le_bytes());
        b[32..].copy_from_slice(&self.fingerprint);
        b
    }

    /// `None`: not a reasonctl dataflow process on the other end.
    fn parse(b: &[u8; 64]) -> Option<Hello> {
        let u = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        (&b[..8] == MAGIC).then(|| Hello {
            process: u(8),
            processes: u(16),
            workers: u(24),
            fingerprint: b[32..].try_into().expect("32 bytes"),
        })
    }

    /// What differs between this process's hello and `other`'s, said for the user.
    fn differs(&self, other: &Hello) -> Option<String> {
        if other.processes != self.processes {
            return Some(format!(
                "it was started with --processes {}, this one with --processes {}",
                other.processes, self.processes
            ));
        }
        if other.workers != self.workers {
            return Some(format!(
                "it runs {} workers, this one {} (every process needs the same --workers)",
                other.workers, self.workers
            ));
        }
        (other.fingerprint != self.fingerprint).then(|| {
            "it was given other data files (other names or sizes), reads them or writes its output otherwise, \
             or is another version of reasonctl (every process needs the same DATA, --format, --base, \
             --lenient, --out-dir or not, --include-asserted and --max-facts, and the same reasonctl)"
                .to_owned()
        })
    }
}

/// Over links made while loading shares: checks that every process compiled the same program over the same
/// dictionary (the shares' handshake compared only the data files and load options).
pub(super) fn agree(
    links: &[Option<TcpStream>],
    me: usize,
    program: &Program,
    dict: &crate::store::Dictionary,
) -> Result<(), DataflowError> {
    let mut h = sha2::Sha256::new();
    let d = dict.to_parts();
    for bytes in [&d.terms, &d.namespaces] {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    h.update(d.blank_nodes.to_le_bytes());
    h.update(format!("{:?}", program.rules).as_bytes());
    let mine: [u8; 32] = h.finalize().into();
    let theirs = exchange(links, me, (&mine, "the programs they compiled"))?;
    for (j, theirs) in theirs.iter().enumerate() {
        if j != me && theirs[..] != mine[..] {
            return Err(DataflowError::Mismatch {
                process: j,
                what: "it compiled another rule program (every process needs the same --rules, \
                       --rules-graph, --base and --reasoning-time)"
                    .to_owned(),
            });
        }
    }
    Ok(())
}

/// The links of process `cluster.process` to every other, in process order (`None` at its own place), each
/// checked by the handshake; an error by `deadline`.
pub(super) fn connect(
    cluster: &Cluster,
    workers: usize,
    fingerprint: [u8; 32],
    deadline: Instant,
) -> Result<Vec<Option<TcpStream>>, DataflowError> {
    let me = cluster.process;
    let mine = Hello {
        process: me as u64,
        processes: cluster.addresses.len() as u64,
        workers: workers as u64,
        fingerprint,
    };
    let address = &cluster.addresses[me];
    let listener = TcpListener::bind(address.as_str())
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
        .map_err(|e| DataflowError::Bind {
            address: address.clone(),
            reason: e.to_string(),
        })?;
    let mut links: Vec<Option<TcpStream>> = (0..cluster.addresses.len()).map(|_| None).collect();
    // Every lower process: connected to (it listens already, or soon).
    for (j, address) in cluster.addresses.iter().enumerate().take(me) {
        let stream = loop {
            match dial(address) {
                Ok(s) => break s,
                Err(_) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(50))
                }
                Err(e) => {
                    return Err(DataflowError::Unreachable {
                        process: j,
                        address: address.clone(),
                        reason: e.to_string(),
                    });
                }
            }
        };
        let theirs =
            greet(&stream, &mine, true, deadline).map_err(|e| DataflowError::Unreachable {
                process: j,
                address: address.clone(),
                reason: e.to_string(),
            })?;
        match theirs {
            Some(h) if h.process == j as u64 => check(&mine, &h)?,
            _ => {
                return Err(DataflowError::Unreachable {
                    process: j,
                    address: address.clone(),
                    reason: "the process listening there is not reasonctl's process of that index"
                        .to_owned(),
                });
            }
        }
        links[j] = Some(stream);
    }
    // Every higher process: accepted, in whatever order they come.
    while let Some(missing) = (me + 1..links.len()).find(|&j| links[j].is_none()) {
        match listener.accept() {
            Ok((stream, _)) => {
                // A connection that does not say who it is (or is not a reasonctl process) is dropped.
                let Ok(Some(h)) = greet(&stream, &mine, false, deadline) else {
                    continue;
                };
                let j = h.process as usize;
                if j <= me || j >= links.len() || links[j].is_some() {
                    continue;
                }
                check(&mine, &h)?;
                links[j] = Some(stream);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err(DataflowError::Unreachable {
                        process: missing,
                        address: cluster.addresses[missing].clone(),
                        reason: "it did not connect in time".to_owned(),
                    });
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => {
                return Err(DataflowError::Bind {
                    address: address.clone(),
                    reason: e.to_string(),
                });
            }
        }
    }
    // Timely's threads read and write blocking, without time limits.
    for s in links.iter().flatten() {
        let _ = s.set_read_timeout(None);
        let _ = s.set_write_timeout(None);
        let _ = s.set_nodelay(true);
    }
    Ok(links)
}

/// A cluster whose processes connected while loading (each reads its share of the data, see
/// [`crate::store::load::share`]): the links, kept for the run, and what the shares hold.
pub(super) struct Joined {
    /// The links, as [`connect`] made them.
    pub(super) links: Vec<Option<TcpStream>>,
    /// Asserted facts the other processes' shares hold.
    pub(super) elsewhere: u64,
    /// Asserted facts all shares hold.
    pub(super) everywhere: u64,
    /// Bytes this process sent the others while loading (its share's terms).
    pub(super) sent: u64,
}

/// The cluster that connected while loading, until the run takes it.
static JOINED: Mutex<Option<Joined>> = Mutex::new(None);

/// Keeps the links made while loading for the run.
pub(super) fn keep_joined(joined: Joined) {
    *JOINED.lock().unwrap_or_else(|e| e.into_inner()) = Some(joined);
}

/// The links made while loading, if any.
pub(super) fn take_joined() -> Option<Joined> {
    JOINED.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// Sends `mine` to every other process over `links` and receives theirs: what each process sent, in process
/// order (`mine` at its own place). Each link is written on a thread of its own while this one reads, so two
/// processes sending each other more than a socket buffers do not wait on each other.
/// `what` says what is exchanged, for the error when a process goes away. A link that fails shuts every link
/// down before this returns, so no process is left writing to one that stopped reading.
pub(super) fn exchange(
    links: &[Option<TcpStream>],
    me: usize,
    (mine, what): (&[u8], &str),
) -> Result<Vec<Vec<u8>>, DataflowError> {
    let lost = |j: usize, e: io::Error| DataflowError::Lost {
        reason: format!("process {j} went away while the processes exchanged {what} ({e})"),
    };
    let shut = || {
        for link in links.iter().flatten() {
            let _ = link.shutdown(std::net::Shutdown::Both);
        }
    };
    std::thread::scope(|scope| {
        let mut writers = Vec::new();
        for (j, link) in links.iter().enumerate() {
            let Some(link) = link else { continue };
            let mut out = link.try_clone().map_err(|e| lost(j, e))?;
            writers.push((
                j,
                scope.spawn(move || -> io::Result<()> {
                    out.write_all(&(mine.len() as u64).to_le_bytes())?;
                    out.write_all(mine)?;
                    out.flush()
                }),
            ));
        }
        let read = || -> Result<Vec<Vec<u8>>, DataflowError> {
            let mut got = Vec::with_capacity(links.len());
            for (j, link) in links.iter().enumerate() {
                let Some(link) = link else {
                    got.push(if j == me { mine.to_vec() } else { Vec::new() });
                    continue;
                };
                let mut input = link;
                let mut len = [0u8; 8];
                input.read_exact(&mut len).map_err(|e| lost(j, e))?;
                let len = u64::from_le_bytes(len);
                let mut bytes = Vec::new();
                (&mut input)
                    .take(len)
                    .read_to_end(&mut bytes)
                    .map_err(|e| lost(j, e))?;
                if bytes.len() as u64 != len {
                    return Err(lost(j, io::ErrorKind::UnexpectedEof.into()));
                }
                got.push(bytes);
            }
            Ok(got)
        };
        let got = read().inspect_err(|_| shut())?;
        for (j, writer) in writers {
            match writer.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(lost(j, e)),
                Err(_) => return Err(lost(j, io::Error::other("the sending thread failed"))),
            }
        }
        Ok(got)
    })
}

/// A link to another process that counts the bytes this process sends on it.
pub(super) struct Counted {
    stream: TcpStream,
    sent: Arc<AtomicU64>,
}

impl Counted {
    pub(super) fn new(stream: TcpStream, sent: Arc<AtomicU64>) -> Self {
        Counted { stream, sent }
    }
}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.stream.read(buf)
    }
}

impl Write for Counted {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.stream.write(buf)?;
        self.sent.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.stream.flush()
    }
}

impl timely::communication::allocator::zero_copy::stream::Stream for Counted {
    fn try_clone(&self) -> io::Result<Self> {
        Ok(Counted {
            stream: self.stream.try_clone()?,
            sent: self.sent.clone(),
        })
    }

    fn set_nonblocking(&self, nonblocking: bool) -> io::Result<()> {
        self.stream.set_nonblocking(nonblocking)
    }

    fn shutdown(&self, how: std::net::Shutdown) -> io::Result<()> {
        self.stream.shutdown(how)
    }
}

/// A connection to `address` (its first resolved address that answers).
fn dial(address: &str) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, "the address does not resolve");
    for a in address.to_socket_addrs()? {
        match TcpStream::connect_timeout(&a, Duration::from_secs(1)) {
            Ok(s) => return Ok(s),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// Both hellos over `stream` (the dialling end writes first); `None` when the other end is not a reasonctl
/// dataflow process.
fn greet(
    stream: &TcpStream,
    mine: &Hello,
    dialled: bool,
    deadline: Instant,
) -> io::Result<Option<Hello>> {
    stream.set_nonblocking(false)?;
    let left = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_secs(1));
    stream.set_read_timeout(Some(left))?;
    stream.set_write_timeout(Some(left))?;
    let mut s = stream;
    if dialled {
        s.write_all(&mine.bytes())?;
    }
    let mut b = [0u8; 64];
    s.read_exact(&mut b)?;
    if !dialled {
        s.write_all(&mine.bytes())?;
    }
    Ok(Hello::parse(&b))
}

fn check(mine: &Hello, theirs: &Hello) -> Result<(), DataflowError> {
    match mine.differs(theirs) {
        None => Ok(()),
        Some(what) => Err(DataflowError::Mismatch {
            process: theirs.process as usize,
            what,
        }),
    }
}

/// The first panic of a timely thread (a worker, or a link's reader or writer when the other end went away),
/// kept instead of printed: the run ends with it as a [`DataflowError`].
static FIRST_PANIC: Mutex<Option<String>> = Mutex::new(None);

thread_local! {
    /// Set while this thread ends a failed run (timely's guards panic again when dropped).
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Set when a link's reader or writer stopped (its peer went away, or the link broke).
static LINK_LOST: AtomicBool = AtomicBool::new(false);

/// Keeps the panics of timely's threads (and of a thread ending a failed run) out of standard error; the first
/// one's message is what [`take_panic`] returns. Installed once; other threads' panics go to the hook before.
///
/// A link's thread that panics is held in the hook, never unwound: unwinding it would poison the queues the
/// workers read, and a worker unwinding from that poison panics again in a queue's drop, which aborts the
/// process (timely's cascade). Held, it leaves the workers unpoisoned; they see [`link_lost`] and stop, and the
/// run ends with [`DataflowError::Lost`] (the held threads end with the process, see [`UnlessLost`]).
pub(super) fn keep_worker_panics() {
    static HOOK: Once = Once::new();
    LINK_LOST.store(false, Ordering::SeqCst);
    HOOK.call_once(|| {
        let before = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let thread = std::thread::current();
            let name = thread.name().unwrap_or_default();
            let timely = name.starts_with("timely:");
            if timely || QUIET.with(Cell::get) {
                let text = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a worker stopped".to_owned());
                {
                    let mut first = FIRST_PANIC.lock().unwrap_or_else(|e| e.into_inner());
                    if first.is_none() {
                        *first = Some(text);
                    }
                }
                if name.starts_with("timely:send-") || name.starts_with("timely:recv-") {
                    LINK_LOST.store(true, Ordering::SeqCst);
                    loop {
                        std::thread::park();
                    }
                }
            } else {
                before(info);
            }
        }));
    });
}

/// Whether a link's thread stopped in this run: the workers leave their loop.
pub(super) fn link_lost() -> bool {
    LINK_LOST.load(Ordering::SeqCst)
}

/// The links' guard, dropped (its threads joined) unless a link was lost: a lost link's thread is held in the
/// panic hook and would never join, so the guard is forgotten and the thread ends with the process.
pub(super) struct UnlessLost<G>(pub Option<G>);

impl<G> Drop for UnlessLost<G> {
    fn drop(&mut self) {
        if link_lost() {
            std::mem::forget(self.0.take());
        }
    }
}

/// The end of one worker's closure, counted for the thread that waits on the workers ([`Ended::wait`]). In a
/// cluster, a worker whose run stopped early (out of time, a link lost, a panic) is held
/// there instead of returning: a worker that returns drops its links' queues, and timely then closes each link
/// with its clean-shutdown message, which the other processes read as "no more data" and wait on forever. Held,
/// the links close with the process, unannounced, and every other process sees them lost
/// ([`DataflowError::Lost`]).
pub(super) struct Ending {
    ended: Arc<Ended>,
    /// A cluster's worker: held when its run stops early.
    cluster: bool,
    /// Set when the worker left its loop before the run's end.
    pub early: bool,
}

/// How many of a process's workers have ended (held ones included), and how many of those are held.
#[derive(Default)]
pub(super) struct Ended {
    count: Mutex<(usize, usize)>,
    changed: Condvar,
}

impl Ended {
    /// The guard one worker's closure holds.
    pub(super) fn ending(self: &Arc<Self>, cluster: bool) -> Ending {
        Ending {
            ended: self.clone(),
            cluster,
            early: false,
        }
    }

    /// Waits until `workers` workers have ended or are held, or until a worker thread ended without reaching
    /// its guard (timely failed before the closure ran; joining reports it): `finished` counts the worker threads
    /// that are done. Whether any is held (then the workers' guards must be forgotten, not joined: a held thread
    /// never ends, and ends with the process).
    pub(super) fn wait(&self, workers: usize, finished: impl Fn() -> usize) -> bool {
        let mut count = self.count.lock().unwrap_or_else(|e| e.into_inner());
        // Every thread that ended through its guard and is not held finishes; one more finished never had one.
        while count.0 < workers && finished() <= count.0 - count.1 {
            count = (self.changed)
                .wait_timeout(count, Duration::from_millis(100))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        count.1 > 0
    }
}

impl Drop for Ending {
    fn drop(&mut self) {
        let hold = self.cluster && (self.early || std::thread::panicking());
        {
            let mut count = self.ended.count.lock().unwrap_or_else(|e| e.into_inner());
            count.0 += 1;
            count.1 += usize::from(hold);
        }
        self.ended.changed.notify_all();
        if hold {
            loop {
                std::thread::park();
            }
        }
    }
}

/// The first kept panic's message, cleared.
pub(super) fn take_panic() -> Option<String> {
    FIRST_PANIC.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// Runs `f` with this thread's panics kept (not printed), catching them.
pub(super) fn quietly<T>(f: impl FnOnce() -> T) -> std::thread::Result<T> {
    QUIET.with(|q| q.set(true));
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    QUIET.with(|q| q.set(false));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hello(process: u64, workers: u64, fingerprint: u8) -> Hello {
        Hello {
            process,
            processes: 2,
            workers,
            fingerprint: [fingerprint; 32],
        }
    }

    #[test]
    fn a_hello_reads_back_as_written_and_anything_else_is_not_a_hello() {
        let h = hello(1, 2, 7);
        assert_eq!(Hello::parse(&h.bytes()), Some(h));
        let mut other = h.bytes();
        other[0] = b'x';
        assert_eq!(Hello::parse(&other), None);
    }

    #[test]
    fn processes_with_other_workers_or_other_data_are_told_apart() {
        let me = hello(0, 2, 7);
        assert_eq!(me.differs(&hello(1, 2, 7)), None);
        assert!(me.differs(&hello(1, 1, 7)).unwrap().contains("--workers"));
        assert!(me.differs(&hello(1, 2, 8)).unwrap().contains("same DATA"));
    }

    #[test]
    fn a_process_nobody_answers_for_is_named_after_the_deadline() {
        // A free port nobody listens on: bound, then closed.
        let free = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let me = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let cluster = Cluster {
            process: 1,
            addresses: vec![free.to_string(), me.to_string()],
            shares: false,
            agreed: String::new(),
        };
        let started = Instant::now();
        let err = connect(&cluster, 1, [0; 32], started + Duration::from_millis(300)).unwrap_err();
        assert!(
            matches!(err, DataflowError::Unreachable { process: 0, .. }),
            "{err:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
