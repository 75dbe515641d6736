//! This module defines atomic file writes and the reversible file names of named graphs in `--out-dir`.

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::control;

/// Writes a file so that a failed or interrupted run never leaves it half-written: a regular file (or a path
/// that does not exist yet) through a temporary name in the same directory, renamed into place only when `write`
/// succeeded; a symbolic link the same way at the file it points to (the link stays); a character device, FIFO
/// or socket (`/dev/null`, `/dev/stdout`, a named pipe) directly, since renaming over one would replace it.
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    match stage(path, write)? {
        Some(staged) => commit(vec![staged]),
        None => Ok(()),
    }
}

/// Writes `path` as [`write_atomically`] does, but leaves a regular file's new content beside it, for [`commit`]
/// to put in place with others; a device, a FIFO or one of the process's descriptors is written at once
/// (`None`).
pub fn stage(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<Option<Staged>> {
    let target = match resolve_links(path)? {
        Resolved::Path(p) => p,
        Resolved::Descriptor(fd) => {
            // The process's own descriptor, its open file shared (offset, append mode): what a shell redirected
            // there gets the output where it would have from standard output.
            let file = duplicate(fd)?;
            let mut out = BufWriter::with_capacity(1 << 16, file);
            write(&mut out)?;
            return out.flush().map(|()| None);
        }
    };
    match fs::metadata(&target) {
        Ok(meta) if meta.is_dir() => {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "it is a directory",
            ));
        }
        Ok(meta) if !meta.is_file() => {
            let file = fs::OpenOptions::new().write(true).open(&target)?;
            let mut out = BufWriter::with_capacity(1 << 16, file);
            write(&mut out)?;
            return out.flush().map(|()| None);
        }
        _ => {}
    }
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    let (temp, file) = create_temporary(&dir)?;
    let written = (|| {
        let mut out = BufWriter::with_capacity(1 << 16, file);
        write(&mut out)?;
        out.flush()
    })();
    match written {
        Ok(()) => Ok(Some(Staged { temp, target })),
        Err(e) => control::release_temporary(&temp, || {
            let _ = fs::remove_file(&temp);
            Err(e)
        }),
    }
}

/// A file written beside its target (a temporary a stop removes), for [`commit`] to rename into place.
#[derive(Debug)]
pub struct Staged {
    temp: PathBuf,
    target: PathBuf,
}

/// Removes staged files that will not be put in place (a later file of the same output failed).
pub fn discard(staged: Vec<Staged>) {
    let temps: Vec<PathBuf> = staged.into_iter().map(|s| s.temp).collect();
    control::release_temporaries(&temps, || {
        for t in &temps {
            let _ = fs::remove_file(t);
        }
    });
}

/// Renames staged files into place, all under one hold of the lock a stop takes: a stop before removes them all,
/// and one after finds them all in place. A rename that fails removes the temporaries not renamed yet.
pub fn commit(staged: Vec<Staged>) -> io::Result<()> {
    let temps: Vec<PathBuf> = staged.iter().map(|s| s.temp.clone()).collect();
    control::release_temporaries(&temps, || {
        let mut result = Ok(());
        for s in &staged {
            if result.is_ok() {
                result = fs::rename(&s.temp, &s.target);
            }
            if result.is_err() {
                let _ = fs::remove_file(&s.temp);
            }
        }
        result
    })
}

/// What a path finally names.
enum Resolved {
    /// A file (or a path that does not exist yet).
    Path(PathBuf),
    /// One of the process's open descriptors: `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`
    /// (whose links are the kernel's, not paths: `pipe:[N]`, or a file the shell opened).
    Descriptor(i32),
}

/// The descriptors above 2 the process had when it started (noted by [`note_inherited_descriptors`]): those a
/// shell passed (`3> file`, `>(gzip …)` as `/dev/fd/63`), not those reasonctl opened itself (a signal pipe, a
/// state's lock), which a path must never reach.
static INHERITED: std::sync::OnceLock<Vec<i32>> = std::sync::OnceLock::new();

/// Notes the descriptors the process was started with; call first thing in `main`, before anything is opened.
pub fn note_inherited_descriptors() {
    let _ = INHERITED.get_or_init(|| {
        let mut fds: Vec<i32> = fs::read_dir("/proc/self/fd")
            .or_else(|_| fs::read_dir("/dev/fd"))
            .map(|entries| {
                entries
                    .flatten()
                    .filter_map(|e| e.file_name().to_str()?.parse().ok())
                    .filter(|&fd| fd > 2)
                    .collect()
            })
            .unwrap_or_default();
        // The listing's own descriptor was open while it was read: it is closed now.
        #[cfg(unix)]
        fds.retain(|&fd| unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1);
        fds
    });
}

/// Whether a descriptor may be written through a path: 0–2, or one the process was started with.
fn writable_descriptor(fd: i32) -> bool {
    (0..=2).contains(&fd) || INHERITED.get().is_some_and(|fds| fds.contains(&fd))
}

/// The descriptor a path names, if it is one of the process's own.
fn descriptor(path: &Path) -> Option<i32> {
    let text = path.to_str()?;
    match text {
        "/dev/stdin" => return Some(0),
        "/dev/stdout" => return Some(1),
        "/dev/stderr" => return Some(2),
        _ => {}
    }
    let n = [
        "/dev/fd/",
        "/proc/self/fd/",
        &format!("/proc/{}/fd/", std::process::id()),
    ]
    .iter()
    .find_map(|p| text.strip_prefix(p))?;
    n.parse().ok()
}

/// A new handle on the process's open descriptor `fd` (the same open file).
#[cfg(unix)]
fn duplicate(fd: i32) -> io::Result<fs::File> {
    use std::os::fd::BorrowedFd;
    // SAFETY: `fd` is checked open (`fcntl(F_GETFD)`) before it is borrowed, for the clone only.
    if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
        return Err(io::Error::last_os_error());
    }
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    Ok(fs::File::from(borrowed.try_clone_to_owned()?))
}

#[cfg(not(unix))]
fn duplicate(_fd: i32) -> io::Result<fs::File> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "descriptor paths exist on Unix only",
    ))
}

/// The file a path finally names: symbolic links followed (relative ones against their own directory), at most
/// 40 of them, as the kernel does; a dangling link names the path it points to; a path (or link) to one of the
/// process's descriptors names that descriptor.
fn resolve_links(path: &Path) -> io::Result<Resolved> {
    let mut path = path.to_owned();
    for _ in 0..40 {
        if let Some(fd) = descriptor(&path) {
            if !writable_descriptor(fd) {
                // As a shell's `>&N` of a descriptor it did not pass.
                return Err(io::Error::from_raw_os_error(libc::EBADF));
            }
            return Ok(Resolved::Descriptor(fd));
        }
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let to = fs::read_link(&path)?;
                path = match path.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(Resolved::Path(path)),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        "too many levels of symbolic links",
    ))
}

/// A new temporary file in `dir` (recorded as it is created, so a stop removes it), with the usual permissions of an output
/// file (0666 less the umask, not a temporary file's 0600).
fn create_temporary(dir: &Path) -> io::Result<(PathBuf, fs::File)> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    loop {
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let temp = dir.join(format!(".reasonctl-{}-{n}.tmp", std::process::id()));
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o666);
        }
        match control::create_temporary(&temp, || options.open(&temp)) {
            Ok(file) => return Ok((temp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
}

/// Creates a directory (and its parents) if it does not exist.
pub fn ensure_dir(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)
}

/// The longest file-name stem a graph IRI is written as before it is shortened.
const MAX_STEM: usize = 200;

/// The file-name stem of a graph: `default` for the default graph, otherwise the IRI percent-encoded so that
/// only `A-Z a-z 0-9 - _ .` remain (a leading `.` is encoded too). Decoding the stem gives the IRI back, and
/// no IRI encodes to `default`: an absolute IRI has a `:`, which is encoded, and the relative IRI `default`
/// (`--lenient` keeps relative IRIs) has its first letter encoded, `%64efault` (so has `Default`, for file
/// systems that ignore case). A stem longer than 200 bytes is cut
/// and ends in `~` and a hash of the whole IRI; the `graphs.tsv` index names every file's graph in full.
pub fn graph_file_stem(graph_iri: Option<&str>) -> String {
    let Some(iri) = graph_iri else {
        return "default".to_owned();
    };
    let mut stem = String::with_capacity(iri.len() * 2);
    let clashes = iri.eq_ignore_ascii_case("default");
    for (i, b) in iri.bytes().enumerate() {
        match b {
            _ if clashes && i == 0 => stem.push_str(&format!("%{b:02X}")),
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' => stem.push(b as char),
            b'.' if i > 0 => stem.push('.'),
            _ => stem.push_str(&format!("%{b:02X}")),
        }
    }
    if stem.len() > MAX_STEM {
        // The stem is ASCII; do not cut inside a `%XX` escape.
        let mut cut = MAX_STEM - 18;
        let bytes = stem.as_bytes();
        if bytes[cut - 1] == b'%' {
            cut -= 1;
        } else if bytes[cut - 2] == b'%' {
            cut -= 2;
        }
        stem.truncate(cut);
        stem.push_str(&format!("~{:016x}", fnv1a(iri.as_bytes())));
    }
    stem
}

/// Decodes a stem made by [`graph_file_stem`] (not a shortened one) back into its IRI; `None` for `default`.
pub fn graph_iri_of_stem(stem: &str) -> Option<String> {
    if stem == "default" {
        return None;
    }
    let bytes = stem.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// FNV-1a, 64 bits: a stable hash for shortened file names (the same IRI gives the same name on every platform).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn stems_are_safe_file_names() {
        assert_eq!(graph_file_stem(None), "default");
        assert_eq!(
            graph_file_stem(Some("http://example.org/g/1")),
            "http%3A%2F%2Fexample.org%2Fg%2F1"
        );
        assert_eq!(graph_file_stem(Some("..")), "%2E.");
    }

    #[test]
    fn the_relative_graph_iri_default_is_not_the_default_graphs_file() {
        for iri in ["default", "Default"] {
            let stem = graph_file_stem(Some(iri));
            assert!(!stem.eq_ignore_ascii_case("default"), "{stem}");
            assert_eq!(graph_iri_of_stem(&stem).as_deref(), Some(iri));
        }
        assert_eq!(graph_file_stem(Some("default")), "%64efault");
        assert_eq!(graph_file_stem(Some("defaults")), "defaults");
    }

    #[test]
    fn long_iris_are_shortened_with_a_hash() {
        let long = format!("http://example.org/{}", "x".repeat(500));
        let stem = graph_file_stem(Some(&long));
        assert!(stem.len() <= MAX_STEM);
        assert_ne!(stem, graph_file_stem(Some(&format!("{long}y"))));
    }

    proptest! {
        #[test]
        fn stems_decode_back_to_their_iri(iri in "[a-z]{1,5}:[ -~é/#%]{0,40}") {
            let stem = graph_file_stem(Some(&iri));
            prop_assert!(stem.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.%".contains(&b)));
            prop_assert_eq!(graph_iri_of_stem(&stem), Some(iri));
        }
    }
}
