//! This module defines a saved materialization (a state): a folder holding a manifest — what went in: each
//! input file's hash, the program's, the options that change results — and a snapshot ([`mod@format`]) of the
//! dictionary, the asserted and derived quads and the program's rules, followed by the deltas of the runs that
//! maintained it since (what each changed). It is written beside the folder and swapped into place whole (a
//! delta's folder hard-links the files it keeps), and opened without the data or the rule files.

pub mod format;

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use miette::Diagnostic;
use serde_json::{Value, json};
use sha2::Digest;
use thiserror::Error;

use crate::control;
use crate::rules::Language;
use crate::rules::source::RuleText;
use crate::store::load::dump::LineTable;
use crate::store::{Overlay, Store};

/// The manifest's file name.
pub const MANIFEST: &str = "manifest.json";
/// The snapshot's file name.
pub const SNAPSHOT: &str = "snapshot.bin";
/// The line tables' file name.
pub const LINES: &str = "lines.bin";
/// The state format a manifest says. Format 4: the snapshot and deltas are [`format::VERSION`] 3 (each graph's
/// triples in SPO order only); format 3 listed the inputs' BLAKE3 hashes, format 2 their SHA-256 hashes (both
/// still read in a format-4 manifest's place would misread the snapshot, so states of formats 2 and 3 are refused
/// by this number, with the command that builds them again). An older reasonctl refuses a format-4 state so.
pub const MANIFEST_VERSION: u32 = 4;

/// The most deltas a state keeps before a save writes a whole snapshot again.
const MAX_DELTAS: usize = 32;

/// A file of a state as its manifest lists it: name, length, CRC-32.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileRef {
    /// The name inside the folder.
    pub file: String,
    /// Its length.
    pub bytes: u64,
    /// Its CRC-32.
    pub crc32: u32,
}

impl FileRef {
    fn written<W>(file: String, w: &format::Written<W>) -> Self {
        Self {
            file,
            bytes: w.bytes,
            crc32: w.crc32,
        }
    }

    fn to_json(&self) -> Value {
        json!({"file": self.file, "bytes": self.bytes, "crc32": self.crc32})
    }

    fn from_json(v: Fields) -> Result<Self, String> {
        let file = v.str("file")?;
        // A name inside the folder, nothing else.
        if file.is_empty() || file.contains(['/', '\\']) || file.starts_with('.') {
            return Err(v.wrong("file", "a file name inside the state folder"));
        }
        Ok(Self {
            file,
            bytes: v.u64("bytes")?,
            crc32: u32::try_from(v.u64("crc32")?)
                .map_err(|_| v.wrong("crc32", "a CRC-32 (below 2^32)"))?,
        })
    }
}

/// The files a state was opened from (its snapshot, then its deltas): a delta saved later applies to them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Files(Vec<FileRef>);

/// Why a state could not be written, opened or used.
#[derive(Debug, Error, Diagnostic)]
pub enum StateError {
    /// The folder holds no state.
    #[error("{dir} holds no reasonctl state (no {MANIFEST})")]
    #[diagnostic(
        code(reasonctl::state::missing),
        help("make one with `reasonctl materialize DATA… --rules RULES --state {dir}`")
    )]
    Missing {
        /// The folder.
        dir: String,
    },
    /// A state in a format this build does not read.
    #[error(
        "{dir} is a state in format {found} (written by reasonctl {by}); this reasonctl reads format {reads}"
    )]
    #[diagnostic(
        code(reasonctl::state::version),
        help(
            "remove the folder and build it again: `rm -r {dir} && reasonctl materialize DATA… --rules RULES --state {dir}`"
        )
    )]
    Version {
        /// The folder.
        dir: String,
        /// Its format.
        found: u64,
        /// The reasonctl that wrote it.
        by: String,
        /// The format this build reads.
        reads: u32,
    },
    /// A damaged state.
    #[error("the state in {dir} is damaged: {what}; nothing was changed")]
    #[diagnostic(
        code(reasonctl::state::corrupt),
        help(
            "remove the folder and build it again: `rm -r {dir} && reasonctl materialize DATA… --rules RULES --state {dir}`"
        )
    )]
    Corrupt {
        /// The folder.
        dir: String,
        /// What is wrong.
        what: String,
    },
    /// A folder that is not a state, which `--state` will not replace.
    #[error("{dir} exists and is not a reasonctl state; it was left as it is")]
    #[diagnostic(
        code(reasonctl::state::not_a_state),
        help("name a new folder (it is created), or a folder a previous --state run wrote")
    )]
    NotAState {
        /// The folder.
        dir: String,
    },
    /// Writing failed.
    #[error("cannot write the state {dir}: {reason}")]
    #[diagnostic(
        code(reasonctl::state::write),
        help(
            "check that the folder's parent is writable and has room; the previous state is intact"
        )
    )]
    Write {
        /// The folder.
        dir: String,
        /// The system's reason.
        reason: String,
    },
    /// Another run holds the state (it is updating it).
    #[error("another reasonctl run is updating the state {dir}; nothing was changed")]
    #[diagnostic(
        code(reasonctl::state::busy),
        help(
            "wait for that run to finish, then run this again (a change applied now would be lost when it saves)"
        )
    )]
    Busy {
        /// The folder.
        dir: String,
    },
    /// The inputs given differ from those the state was made from.
    #[error("the state {dir} was made from other inputs: {differs}")]
    #[diagnostic(
        code(reasonctl::state::mismatch),
        help(
            "pass --refresh to bring the state up to date first, or leave out DATA and --rules to answer from the state as it is"
        )
    )]
    Mismatch {
        /// The folder.
        dir: String,
        /// What differs.
        differs: String,
    },
    /// `--refresh` with no data files, on a state that differs from the inputs given.
    #[error("the state {dir} cannot be refreshed without its data: {differs}")]
    #[diagnostic(
        code(reasonctl::state::refresh_needs_data),
        help(
            "give the data files with --refresh (the state is derived again from them), or leave out --refresh and the inputs that differ to answer from the state as it is"
        )
    )]
    RefreshWithoutData {
        /// The folder.
        dir: String,
        /// What differs.
        differs: String,
    },
    /// `--add` / `--remove` on a state whose rules or options are not those given.
    #[error("--add / --remove cannot change the state {dir}: {differs}")]
    #[diagnostic(
        code(reasonctl::state::change_mismatch),
        help(
            "a change set is applied under the state's own rules and options: leave out --rules and the options that differ, or run materialize with the full DATA to derive the state again from scratch"
        )
    )]
    ChangeMismatch {
        /// The folder.
        dir: String,
        /// What differs.
        differs: String,
    },
}

/// A change set applied to a state since it was made from its inputs: `--add FILE` or `--remove FILE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// Added (`--add`) or removed (`--remove`).
    pub added: bool,
    /// The file.
    pub input: Input,
}

/// One input file as the state saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    /// The path as given.
    pub path: String,
    /// Its length.
    pub bytes: u64,
    /// Its content hash: BLAKE3 (256 bits, hex), a tree hash whose SIMD lanes read a 200 MB dump in a tenth of
    /// SHA-256's time (the hash of a nightly dump is a pass over all of it).
    pub hash: String,
    /// The absolute path it was read at (what a relative IRI in it resolves against, without `--base`); `None`
    /// in a manifest written before it was recorded.
    pub absolute: Option<String>,
}

impl Input {
    /// Reads and hashes a file.
    pub fn of(path: &Path) -> io::Result<Self> {
        let mut file = std::fs::File::open(path)?;
        let mut blake3 = blake3::Hasher::new();
        let mut buf = vec![0u8; 1 << 20];
        let mut bytes = 0u64;
        loop {
            let n = file.read(&mut buf)?;
            if n == 0 {
                break;
            }
            bytes += n as u64;
            blake3.update(&buf[..n]);
        }
        let hash = blake3.finalize().to_hex().to_string();
        Ok(Self {
            path: path.display().to_string(),
            bytes,
            hash,
            absolute: std::path::absolute(path)
                .ok()
                .map(|a| a.display().to_string()),
        })
    }

    fn to_json(&self) -> Value {
        json!({"path": self.path, "bytes": self.bytes, "blake3": self.hash})
    }

    fn from_json(v: Fields) -> Result<Self, String> {
        Ok(Self {
            path: v.str("path")?,
            bytes: v.u64("bytes")?,
            hash: v.str("blake3")?,
            absolute: v.optional_str("absolute")?,
        })
    }
}

/// The options that change what a run derives.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResultOptions {
    /// `--owl2rl`.
    pub owl2rl: bool,
    /// `--reasoning-time`.
    pub reasoning_time: Option<String>,
    /// `--rules-graph`.
    pub rules_graph: Option<String>,
    /// `--base`.
    pub base: Option<String>,
    /// `--lenient`.
    pub lenient: bool,
    /// `--data-format`.
    pub data_format: Option<String>,
    /// `--schedule`.
    pub schedule: String,
}

impl ResultOptions {
    fn to_json(&self) -> Value {
        json!({
            "owl2rl": self.owl2rl,
            "reasoning_time": self.reasoning_time,
            "rules_graph": self.rules_graph,
            "base": self.base,
            "lenient": self.lenient,
            "data_format": self.data_format,
            "schedule": self.schedule,
        })
    }

    fn from_json(v: Fields) -> Result<Self, String> {
        Ok(Self {
            owl2rl: v.bool("owl2rl")?,
            reasoning_time: v.optional_str("reasoning_time")?,
            rules_graph: v.optional_str("rules_graph")?,
            base: v.optional_str("base")?,
            lenient: v.bool("lenient")?,
            data_format: v.optional_str("data_format")?,
            schedule: v.str("schedule")?,
        })
    }

    /// The differences from `other`, named as the flags that set them.
    pub fn differences(&self, other: &ResultOptions) -> Vec<String> {
        let mut out = Vec::new();
        let mut differ = |flag: &str, a: String, b: String| {
            if a != b {
                out.push(format!("{flag} is {b} here and was {a} for the state"));
            }
        };
        let show = |o: &Option<String>| o.clone().unwrap_or_else(|| "not given".to_owned());
        differ(
            "--owl2rl",
            self.owl2rl.to_string(),
            other.owl2rl.to_string(),
        );
        differ(
            "--reasoning-time",
            show(&self.reasoning_time),
            show(&other.reasoning_time),
        );
        differ(
            "--rules-graph",
            show(&self.rules_graph),
            show(&other.rules_graph),
        );
        differ("--base", show(&self.base), show(&other.base));
        differ(
            "--lenient",
            self.lenient.to_string(),
            other.lenient.to_string(),
        );
        differ(
            "--data-format",
            show(&self.data_format),
            show(&other.data_format),
        );
        differ("--schedule", self.schedule.clone(), other.schedule.clone());
        out
    }
}

/// What a state says about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// The reasonctl version that wrote it.
    pub reasonctl: String,
    /// The data files, in order.
    pub inputs: Vec<Input>,
    /// The change sets applied since, in order.
    pub changes: Vec<Change>,
    /// The rule ids of the user's program, in order.
    pub rules: Vec<String>,
    /// A hash of the user's rules (ids, languages, texts).
    pub program_sha256: String,
    /// The result-changing options.
    pub options: ResultOptions,
    /// Terms in the dictionary.
    pub terms: u64,
    /// Asserted quads.
    pub asserted: u64,
    /// Derived quads.
    pub derived: u64,
    /// The file of the data files' line tables, when the state has them (as read; a save writes its own).
    pub lines: Option<FileRef>,
}

impl Manifest {
    fn to_json(&self, files: &[FileRef], lines: Option<&FileRef>) -> Value {
        json!({
            "format": "reasonctl-state",
            "format_version": MANIFEST_VERSION,
            "reasonctl": self.reasonctl,
            "inputs": self.inputs.iter().map(|i| {
                let mut v = i.to_json();
                v["absolute"] = json!(i.absolute);
                v
            }).collect::<Vec<_>>(),
            "changes": self.changes.iter().map(|c| {
                let mut v = c.input.to_json();
                v["kind"] = json!(if c.added { "add" } else { "remove" });
                v
            }).collect::<Vec<_>>(),
            "rules": self.rules,
            "program_sha256": self.program_sha256,
            "options": self.options.to_json(),
            "counts": {"terms": self.terms, "asserted": self.asserted, "derived": self.derived},
            "snapshot": files[0].to_json(),
            "deltas": files[1..].iter().map(FileRef::to_json).collect::<Vec<_>>(),
            "lines": lines.map(FileRef::to_json),
        })
    }

    fn from_json(v: Fields) -> Result<(Self, Files), String> {
        let inputs = (v.array("inputs")?.into_iter())
            .map(Input::from_json)
            .collect::<Result<Vec<_>, _>>()?;
        // A manifest without changes (written before they existed) has none.
        let changes = match v.0.get("changes") {
            None => Vec::new(),
            Some(_) => (v.array("changes")?.into_iter())
                .map(|c| {
                    Ok(Change {
                        added: match c.str("kind")?.as_str() {
                            "add" => true,
                            "remove" => false,
                            _ => return Err(c.wrong("kind", "\"add\" or \"remove\"")),
                        },
                        input: Input::from_json(c)?,
                    })
                })
                .collect::<Result<Vec<_>, String>>()?,
        };
        let counts = v.object("counts")?;
        let mut files = vec![FileRef::from_json(v.object("snapshot")?)?];
        if v.0.get("deltas").is_some() {
            for d in v.array("deltas")? {
                files.push(FileRef::from_json(d)?);
            }
        }
        Ok((
            Self {
                reasonctl: v.str("reasonctl")?,
                inputs,
                changes,
                rules: (v.array("rules")?.into_iter())
                    .map(|r| {
                        (r.0.as_str().map(str::to_owned)).ok_or_else(|| {
                            format!("`{}` is not a string", r.1.trim_end_matches('.'))
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?,
                program_sha256: v.str("program_sha256")?,
                options: ResultOptions::from_json(v.object("options")?)?,
                terms: counts.u64("terms")?,
                asserted: counts.u64("asserted")?,
                derived: counts.u64("derived")?,
                lines: match v.0.get("lines") {
                    None | Some(Value::Null) => None,
                    Some(_) => Some(FileRef::from_json(v.object("lines")?)?),
                },
            },
            Files(files),
        ))
    }
}

/// A hash of rule texts: ids, languages and texts, in order.
pub fn program_hash(texts: &[RuleText]) -> String {
    let mut h = sha2::Sha256::new();
    for t in texts {
        h.update(t.id.as_bytes());
        let language = match t.language {
            Language::Sparql => 0,
            Language::JsonLd => 1,
            Language::Srl => 2,
        };
        h.update([0, language, 0]);
        h.update(t.text.as_bytes());
        h.update([0]);
    }
    hex(&h.finalize())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `dir` holds a state (a manifest that says so).
fn is_state(dir: &Path) -> bool {
    read_text(&dir.join(MANIFEST))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .is_some_and(|v| v.get("format").and_then(Value::as_str) == Some("reasonctl-state"))
}

/// Whether a state may be written into `dir`: it is not there yet, or is a state, or an empty folder (checked
/// before a run, so that a folder that is not a state is refused before anything is derived or written, and
/// again when saving).
pub fn replaceable(dir: &Path) -> Result<(), StateError> {
    if dir.exists() && !(dir.is_dir() && (is_state(dir) || is_empty_dir(dir))) {
        return Err(StateError::NotAState {
            dir: dir.display().to_string(),
        });
    }
    Ok(())
}

/// Writes a state into `dir`: a new folder beside it, written and flushed, then swapped into place, so the
/// previous state stays whole and readable until the new one is. A folder that is not a state is not replaced.
/// With `delta` (what this run changed in the state opened from `Files`), the new folder keeps the previous
/// files (hard links) and adds the delta, unless the state changed since it was opened, the deltas would
/// outweigh half the snapshot or number more than `MAX_DELTAS`, or the file system cannot link: then the
/// whole snapshot is written. The data files' line tables, when given, are written whole. Whether a delta was
/// written.
pub fn save(
    dir: &Path,
    manifest: &Manifest,
    store: &Store,
    overlay: &Overlay,
    rules: &[RuleText],
    delta: Option<(&format::Delta, &Files)>,
    lines: Option<LinesAhead>,
) -> Result<bool, StateError> {
    let name = dir.display().to_string();
    let failed = |e: io::Error| StateError::Write {
        dir: name.clone(),
        reason: e.to_string(),
    };
    replaceable(dir)?;
    let exists = dir.exists();
    let (parent, base) = beside(dir);
    // Folders a killed run left beside the state are not states: they go.
    let stale = format!(".{base}.reasonctl-");
    if let Ok(entries) = std::fs::read_dir(&parent) {
        for e in entries.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n.starts_with(&stale) && (n.ends_with(".new") || n.ends_with(".old")) {
                let _ = std::fs::remove_dir_all(e.path());
            }
            // Line tables written ahead by a killed run (this run's own are in hand, not in the folder).
            if n.starts_with(&stale)
                && n.ends_with(LINES_AHEAD)
                && lines
                    .as_ref()
                    .is_none_or(|l| l.path.as_deref() != Some(&e.path()))
            {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    // The delta, if it applies to the state as it is and keeps the state compact.
    let delta = delta.and_then(|(d, opened)| {
        let now = read_manifest(dir).ok().map(|(_, files)| files);
        if now.as_ref() != Some(opened) || opened.0.len() > MAX_DELTAS {
            return None;
        }
        let encoded = format::encode_delta(d);
        let deltas: u64 = opened.0[1..].iter().map(|f| f.bytes).sum();
        (2 * (deltas + encoded.bytes) <= opened.0[0].bytes).then_some((encoded, opened))
    });
    let new = parent.join(format!(".{base}.reasonctl-{}.new", std::process::id()));
    let created = control::create_temporary(&new, || {
        if new.exists() {
            std::fs::remove_dir_all(&new)?;
        }
        std::fs::create_dir(&new)
    });
    let written = (|| -> io::Result<bool> {
        created?;
        let linked = delta.and_then(|(encoded, opened)| {
            let kept = opened
                .0
                .iter()
                .all(|f| std::fs::hard_link(dir.join(&f.file), new.join(&f.file)).is_ok());
            kept.then_some((encoded, opened))
        });
        let files = match linked {
            Some((encoded, opened)) => {
                let file = format!("delta-{:04}.bin", opened.0.len());
                write_synced(&new.join(&file), &encoded.out)?;
                let mut files = opened.0.clone();
                files.push(FileRef::written(file, &encoded));
                files
            }
            None => {
                // Links made before one failed go with the whole snapshot written instead.
                for e in std::fs::read_dir(&new)?.flatten() {
                    std::fs::remove_file(e.path())?;
                }
                let file = std::fs::File::create(new.join(SNAPSHOT))?;
                let written = format::write(file, store, overlay, rules)?;
                written.out.sync_all()?;
                vec![FileRef::written(SNAPSHOT.to_owned(), &written)]
            }
        };
        let lines = match lines {
            Some(ahead) => Some(ahead.move_into(&new)?),
            None => None,
        };
        let text = serde_json::to_string_pretty(&manifest.to_json(&files, lines.as_ref()))
            .map_err(io::Error::other)?;
        write_synced(&new.join(MANIFEST), text.as_bytes())?;
        sync_dir(&new)?;
        Ok(files.len() > 1)
    })();
    control::release_temporary(&new, || -> io::Result<bool> {
        let as_delta = match written {
            Ok(d) => d,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&new);
                return Err(e);
            }
        };
        let placed = if exists {
            swap(&new, dir)
        } else {
            std::fs::rename(&new, dir)
        };
        // Swapped, `new` holds the previous state; not placed, the new one, which goes too.
        let _ = std::fs::remove_dir_all(&new);
        placed?;
        sync_dir(&parent)?;
        Ok(as_delta)
    })
    .map_err(failed)
}

/// The end of the name of line tables written ahead, beside a state.
const LINES_AHEAD: &str = ".lines";

/// A state's line tables written ahead to a file beside it, as soon as the data is read (a cache, see
/// [`open_lines`]: not synced), so that the run does not hold them in memory until it saves the state; removed
/// unless [`save`] moves them into the new state.
#[derive(Debug)]
pub struct LinesAhead {
    /// The file, until it is moved into a state.
    path: Option<PathBuf>,
    written: FileRef,
}

impl LinesAhead {
    /// Writes the line tables of a state's data files (in the files' order; `None`: a file without one) beside
    /// the state `dir`; nothing when no file has one.
    pub fn write(dir: &Path, tables: &[Option<LineTable>]) -> Result<Option<Self>, StateError> {
        if tables.iter().all(Option::is_none) {
            return Ok(None);
        }
        let (parent, base) = beside(dir);
        let path = parent.join(format!(
            ".{base}.reasonctl-{}{LINES_AHEAD}",
            std::process::id()
        ));
        let failed = |e: io::Error| StateError::Write {
            dir: dir.display().to_string(),
            reason: e.to_string(),
        };
        let file =
            control::create_temporary(&path, || std::fs::File::create(&path)).map_err(failed)?;
        match format::write_lines(file, tables) {
            Ok(w) => Ok(Some(Self {
                path: Some(path),
                written: FileRef::written(LINES.to_owned(), &w),
            })),
            Err(e) => {
                discard(&path);
                Err(failed(e))
            }
        }
    }

    /// Moves the file into the folder `new` under its name in a state; its reference there.
    fn move_into(mut self, new: &Path) -> io::Result<FileRef> {
        let path = self.path.take().expect("not moved yet");
        let moved = control::release_temporary(&path, || {
            std::fs::rename(&path, new.join(&self.written.file))
        });
        if moved.is_err() {
            discard(&path);
        }
        moved.map(|()| self.written.clone())
    }
}

impl Drop for LinesAhead {
    fn drop(&mut self) {
        if let Some(path) = self.path.take() {
            discard(&path);
        }
    }
}

/// Removes a temporary file and forgets it.
fn discard(path: &Path) {
    control::release_temporary(path, || {
        let _ = std::fs::remove_file(path);
    });
}

fn is_empty_dir(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut e| e.next().is_none())
}

fn write_synced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = std::fs::File::create(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    // A directory's entries reach the disk when it is synced (Unix); elsewhere opening it may not work.
    match std::fs::File::open(dir) {
        Ok(f) => f.sync_all().or(Ok(())),
        Err(_) => Ok(()),
    }
}

/// Exchanges two folders in one step (Linux `renameat2(RENAME_EXCHANGE)`); elsewhere two renames, with the old
/// folder kept aside until the new one is in place.
fn swap(new: &Path, dir: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        let c =
            |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(io::Error::other);
        let (a, b) = (c(new)?, c(dir)?);
        // SAFETY: two NUL-terminated paths, relative to the working directory.
        let r = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                a.as_ptr(),
                libc::AT_FDCWD,
                b.as_ptr(),
                libc::RENAME_EXCHANGE,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINVAL) && e.raw_os_error() != Some(libc::ENOSYS) {
            return Err(e);
        }
    }
    let aside = new.with_extension("old");
    std::fs::rename(dir, &aside)?;
    std::fs::rename(new, dir)?;
    std::fs::rename(&aside, new)
}

/// A state's manifest, checked (a state, in this build's format), with the files it lists.
fn read_manifest(dir: &Path) -> Result<(Manifest, Files), StateError> {
    let name = dir.display().to_string();
    let corrupt = |what: String| StateError::Corrupt {
        dir: name.clone(),
        what,
    };
    let text =
        read_text(&dir.join(MANIFEST)).map_err(|_| StateError::Missing { dir: name.clone() })?;
    let v: Value = serde_json::from_str(&text).map_err(|e| corrupt(format!("{MANIFEST}: {e}")))?;
    if v.get("format").and_then(Value::as_str) != Some("reasonctl-state") {
        return Err(StateError::Missing { dir: name });
    }
    let found = v.get("format_version").and_then(Value::as_u64).unwrap_or(0);
    if found != u64::from(MANIFEST_VERSION) {
        return Err(StateError::Version {
            dir: name.clone(),
            found,
            by: v
                .get("reasonctl")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_owned(),
            reads: MANIFEST_VERSION,
        });
    }
    Manifest::from_json(Fields::top(&v)).map_err(|e| corrupt(format!("{MANIFEST}: {e}")))
}

/// A JSON object of a manifest, with where it is (`counts.`), to name a field that is missing or wrong.
#[derive(Clone)]
struct Fields<'a>(&'a Value, String);

impl<'a> Fields<'a> {
    fn top(v: &'a Value) -> Self {
        Self(v, String::new())
    }

    /// "`where.key` is missing or not …".
    fn wrong(&self, key: &str, what: &str) -> String {
        format!("`{}{key}` is missing or not {what}", self.1)
    }

    /// The value at `key` as `read` takes it, or what it should have been (`what`).
    fn typed<T>(
        &self,
        key: &str,
        what: &str,
        read: impl FnOnce(&'a Value) -> Option<T>,
    ) -> Result<T, String> {
        self.0
            .get(key)
            .and_then(read)
            .ok_or_else(|| self.wrong(key, what))
    }

    fn str(&self, key: &str) -> Result<String, String> {
        self.typed(key, "a string", |v| v.as_str().map(str::to_owned))
    }

    /// A string, or nothing (absent or null).
    fn optional_str(&self, key: &str) -> Result<Option<String>, String> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(_) => self.str(key).map(Some),
        }
    }

    fn u64(&self, key: &str) -> Result<u64, String> {
        self.typed(key, "a count (a whole number, 0 or more)", Value::as_u64)
    }

    fn bool(&self, key: &str) -> Result<bool, String> {
        self.typed(key, "true or false", Value::as_bool)
    }

    fn object(&self, key: &str) -> Result<Fields<'a>, String> {
        let v = self.typed(key, "an object", |v| v.is_object().then_some(v))?;
        Ok(Fields(v, format!("{}{key}.", self.1)))
    }

    /// A list of objects or strings (each named by its place, `inputs[2].`).
    fn array(&self, key: &str) -> Result<Vec<Fields<'a>>, String> {
        let list = self.typed(key, "a list", Value::as_array)?;
        list.iter()
            .enumerate()
            .map(|(i, v)| {
                let at = format!("{}{key}[{i}]", self.1);
                if v.is_object() || v.is_string() {
                    Ok(Fields(v, format!("{at}.")))
                } else {
                    Err(format!("`{at}` is not an object"))
                }
            })
            .collect()
    }
}

/// The folder a state folder is in, and its name (`state` when the path names none): the files written beside
/// it (a new state, a lock) are named after it there.
fn beside(dir: &Path) -> (PathBuf, String) {
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    let base = dir
        .file_name()
        .map_or_else(|| "state".into(), |n| n.to_string_lossy().into_owned());
    (parent, base)
}

/// A run's exclusive hold on a state it may write, from before it reads the state until it has saved it; let
/// go when dropped (or when the process ends, however it ends).
#[derive(Debug)]
pub struct Lock {
    file: std::fs::File,
    path: PathBuf,
}

impl Drop for Lock {
    // The lock file goes while it is still held: a run that opened it meanwhile finds, once it holds it, that the
    // name leads to it no longer, and takes the lock afresh ([`lock`]). A run stopped by a signal or a budget
    // removes it with its temporaries; one killed outright leaves the file, which the next run takes and removes.
    fn drop(&mut self) {
        control::release_temporary(&self.path, || {
            if names(&self.path, &self.file) {
                let _ = std::fs::remove_file(&self.path);
            }
        });
    }
}

/// Whether `path` (not followed if a link) names the file `file` has open.
fn names(path: &Path, file: &std::fs::File) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::symlink_metadata(path), file.metadata()) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        path.is_file()
    }
}

/// How often [`lock`] takes a lock file afresh when the one it held was removed by the run it waited on.
const LOCK_TRIES: usize = 16;

/// Takes the hold on the state `dir` (which need not exist yet): an advisory lock (`flock`, on Unix) on
/// `.NAME.reasonctl.lock` beside it, an empty file that the run holding it removes when it lets go. Two runs
/// that would each replace the state (each from the state as it was) would lose one's change; the second is
/// refused instead, not made to wait.
pub fn lock(dir: &Path) -> Result<Lock, StateError> {
    let name = dir.display().to_string();
    // `.`, `..`, `a/..` name no file: the folder they are (one lock, beside it, whatever the spelling).
    let named;
    let dir = match dir.file_name() {
        Some(_) => dir,
        None => {
            named = dir.canonicalize().unwrap_or_else(|_| dir.to_owned());
            &named
        }
    };
    let failed = |e: io::Error| StateError::Write {
        dir: name.clone(),
        reason: format!("cannot lock it: {e}"),
    };
    let (parent, base) = beside(dir);
    let path = parent.join(format!(".{base}.reasonctl.lock"));
    let mut options = std::fs::OpenOptions::new();
    options.create(true).write(true).truncate(false);
    // Never through a symbolic link, and never blocked opening a FIFO put in the lock file's place.
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    for _ in 0..LOCK_TRIES {
        let file = options.open(&path).map_err(failed)?;
        if !file.metadata().map_err(failed)?.is_file() {
            return Err(failed(io::Error::other(format!(
                "{} is not a regular file",
                path.display()
            ))));
        }
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: `flock` on a descriptor this function owns, open for the call.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
                let e = io::Error::last_os_error();
                return Err(if e.kind() == io::ErrorKind::WouldBlock {
                    StateError::Busy { dir: name }
                } else {
                    failed(e)
                });
            }
        }
        // Held: unless the run that held it before removed the file after this one opened it (then it is a
        // file no other run can find, and the lock is taken again on the name).
        if names(&path, &file) {
            // Recorded as a temporary, so that a run stopped by a signal or a budget (whose `Drop`s do not run)
            // removes it as well.
            let _ = control::create_temporary(&path, || Ok(()));
            return Ok(Lock { file, path });
        }
    }
    Err(StateError::Busy { dir: name })
}

/// A state's manifest alone (what it was made from), without reading its snapshot.
pub fn open_manifest(dir: &Path) -> Result<Manifest, StateError> {
    read_manifest(dir).map(|(m, _)| m)
}

/// The line tables of a state's data files (the manifest's `lines`), for a dictionary of `terms` terms. They
/// are a cache, written without waiting for the disk: `None` when the state has none, or when the file is
/// missing, or differs from its length and CRC-32 (the data is then read whole, as without them).
pub fn open_lines(
    dir: &Path,
    manifest: &Manifest,
    terms: crate::store::TermId,
) -> Option<Vec<Option<LineTable>>> {
    let f = manifest.lines.as_ref()?;
    let file = open_regular(&dir.join(&f.file)).ok()?;
    let len = file.metadata().ok()?.len();
    if len != f.bytes {
        return None;
    }
    let (tables, bytes, crc32) = format::stream_lines(file, len, terms).ok()?;
    if bytes != f.bytes || crc32 != f.crc32 {
        return None;
    }
    tables.ok()
}

/// A state's file opened for reading, if it is a regular file (looked at before opening: a FIFO put in its
/// place would block the open).
fn open_regular(path: &Path) -> io::Result<std::fs::File> {
    if !std::fs::metadata(path)?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    std::fs::File::open(path)
}

/// A state's text file, if it is a regular file.
fn read_text(path: &Path) -> io::Result<String> {
    let mut text = String::new();
    io::Read::read_to_string(&mut open_regular(path)?, &mut text)?;
    Ok(text)
}

/// The CRC-32 of a file's bytes, computed by pieces in parallel and combined (the same value as one pass).
fn crc32(bytes: &[u8]) -> u32 {
    use rayon::prelude::*;
    bytes
        .par_chunks(1 << 22)
        .map(|piece| {
            let mut h = crc32fast::Hasher::new();
            h.update(piece);
            h
        })
        .reduce(crc32fast::Hasher::new, |mut a, b| {
            a.combine(&b);
            a
        })
        .finalize()
}

/// Opens a state: its manifest, its snapshot and deltas, each checked (format, length, CRC-32) before what it
/// decodes to is used; the files it was opened from. The snapshot is decoded as it is read (never held whole);
/// the deltas, small, are read whole. `orders` says which POS and OSP orders are built now, in parallel; the
/// others are built on first use.
pub fn open(
    dir: &Path,
    orders: format::Orders,
) -> Result<(Manifest, format::Snapshot, Files), StateError> {
    let name = dir.display().to_string();
    let corrupt = |what: String| StateError::Corrupt {
        dir: name.clone(),
        what,
    };
    let (manifest, files) = read_manifest(dir)?;
    let damaged_length = |file: &str, bytes: u64, expected: u64| {
        corrupt(format!(
            "{file} holds {bytes} bytes, the manifest says {expected}"
        ))
    };
    let (first, rest) = files
        .0
        .split_first()
        .ok_or_else(|| corrupt(format!("{MANIFEST} lists no snapshot")))?;
    let unreadable = |file: &str, e: io::Error| corrupt(format!("{file}: {e}"));
    let file = open_regular(&dir.join(&first.file)).map_err(|e| unreadable(&first.file, e))?;
    let len = file
        .metadata()
        .map_err(|e| unreadable(&first.file, e))?
        .len();
    if len != first.bytes {
        return Err(damaged_length(&first.file, len, first.bytes));
    }
    let streamed = format::stream(file, len).map_err(|e| unreadable(&first.file, e))?;
    if streamed.bytes != first.bytes {
        return Err(damaged_length(&first.file, streamed.bytes, first.bytes));
    }
    if streamed.crc32 != first.crc32 {
        return Err(corrupt(format!(
            "{} does not match its checksum",
            first.file
        )));
    }
    let mut deltas: Vec<Vec<u8>> = Vec::with_capacity(rest.len());
    for f in rest {
        let mut bytes = Vec::new();
        open_regular(&dir.join(&f.file))
            .and_then(|mut file| io::Read::read_to_end(&mut file, &mut bytes))
            .map_err(|e| unreadable(&f.file, e))?;
        if bytes.len() as u64 != f.bytes {
            return Err(damaged_length(&f.file, bytes.len() as u64, f.bytes));
        }
        if crc32(&bytes) != f.crc32 {
            return Err(corrupt(format!("{} does not match its checksum", f.file)));
        }
        deltas.push(bytes);
    }
    let decoded = streamed.decode(&deltas, orders).map_err(|e| corrupt(e.0))?;
    Ok((manifest, decoded, files))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::load::{DataFormat, Loader, NoProgress};

    #[test]
    fn a_lock_is_refused_while_held_and_its_file_goes_when_let_go_even_if_another_run_opened_it() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("st");
        let file = tmp.path().join(".st.reasonctl.lock");
        let held = lock(&dir).unwrap();
        assert!(file.is_file());
        assert!(matches!(lock(&dir), Err(StateError::Busy { .. })));
        // A run that opened the file while it was held holds, once it is let go, a file the name no longer leads
        // to: a lock taken now is on a new file, and that run's file is not it.
        let waiting = std::fs::File::open(&file).unwrap();
        drop(held);
        assert!(!file.exists());
        assert!(!names(&file, &waiting));
        let again = lock(&dir).unwrap();
        assert!(names(&file, &again.file) && !names(&file, &waiting));
        drop(again);
        assert!(!file.exists());
    }

    /// A store of one triple of IRIs (no dictionary entry names another by id).
    pub(super) fn store() -> Store {
        let mut loader = Loader::new();
        loader
            .load_reader(
                "t",
                "<http://e/a> <http://e/p> <http://e/b> .\n".as_bytes(),
                DataFormat::NTriples,
                None,
                &NoProgress,
            )
            .unwrap();
        loader.finish()
    }

    fn manifest() -> Manifest {
        Manifest {
            reasonctl: "test".to_owned(),
            inputs: vec![Input {
                path: "d.nt".to_owned(),
                bytes: 3,
                hash: "ab".to_owned(),
                absolute: Some("/data/d.nt".to_owned()),
            }],
            changes: vec![Change {
                added: false,
                input: Input {
                    path: "minus.nt".to_owned(),
                    bytes: 5,
                    hash: "cd".to_owned(),
                    absolute: None,
                },
            }],
            rules: vec!["r".to_owned()],
            program_sha256: program_hash(&[]),
            options: ResultOptions {
                schedule: "staged".to_owned(),
                ..ResultOptions::default()
            },
            terms: 1,
            asserted: 1,
            derived: 0,
            lines: None,
        }
    }

    #[test]
    fn a_saved_state_opens_to_its_manifest_and_snapshot_and_replaces_the_previous_one() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("state");
        save(
            &dir,
            &manifest(),
            &store(),
            &Overlay::new(),
            &[],
            None,
            None,
        )
        .unwrap();
        let (m, snap, _) = open(&dir, format::Orders::All).unwrap();
        assert_eq!(m, manifest());
        assert_eq!(snap.store.quads.len(), 1);
        // Opened with the asserted orders left to first use: the same facts, the orders built when read.
        let (_, lazy, _) = open(&dir, format::Orders::Lookups).unwrap();
        let index = |s: &format::Snapshot| s.store.quads.graphs().next().unwrap().1.clone();
        let (eager, lazy) = (index(&snap), index(&lazy));
        assert!(eager.has_orders());
        assert_eq!(lazy.triples(), eager.triples());
        for perm in [crate::store::Perm::Pos, crate::store::Perm::Osp] {
            assert_eq!(lazy.permutation(perm), eager.permutation(perm));
        }
        let mut second = manifest();
        second.derived = 7;
        save(&dir, &second, &store(), &Overlay::new(), &[], None, None).unwrap();
        assert_eq!(open(&dir, format::Orders::All).unwrap().0.derived, 7);
        // Nothing is left beside it.
        let names: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("state")]);
    }

    #[test]
    fn a_file_is_hashed_with_blake3_written_under_its_key_and_read_back() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("d.nt");
        std::fs::write(&path, "<a> <b> <c> .\n").unwrap();
        let b = Input::of(&path).unwrap();
        assert_eq!(
            b.hash,
            blake3::hash(b"<a> <b> <c> .\n").to_hex().to_string()
        );
        assert_eq!(b.to_json()["blake3"], b.hash.as_str());
        assert_eq!(
            Input::from_json(Fields::top(&b.to_json())).unwrap().hash,
            b.hash
        );
    }

    #[test]
    fn a_folder_that_is_not_a_state_is_not_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("keep.txt"), "mine").unwrap();
        let e = save(
            tmp.path(),
            &manifest(),
            &store(),
            &Overlay::new(),
            &[],
            None,
            None,
        )
        .unwrap_err();
        assert!(matches!(e, StateError::NotAState { .. }), "{e}");
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("keep.txt")).unwrap(),
            "mine"
        );
    }

    #[test]
    fn a_damaged_or_other_format_state_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("state");
        save(
            &dir,
            &manifest(),
            &store(),
            &Overlay::new(),
            &[],
            None,
            None,
        )
        .unwrap();
        let snapshot = dir.join(SNAPSHOT);
        let mut bytes = std::fs::read(&snapshot).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&snapshot, &bytes).unwrap();
        assert!(matches!(
            open(&dir, format::Orders::All),
            Err(StateError::Corrupt { .. })
        ));
        std::fs::write(&snapshot, &bytes[..10]).unwrap();
        assert!(matches!(
            open(&dir, format::Orders::All),
            Err(StateError::Corrupt { .. })
        ));
        let m = std::fs::read_to_string(dir.join(MANIFEST)).unwrap();
        std::fs::write(
            dir.join(MANIFEST),
            m.replace(
                &format!("\"format_version\": {MANIFEST_VERSION}"),
                "\"format_version\": 99",
            ),
        )
        .unwrap();
        assert!(matches!(
            open(&dir, format::Orders::All),
            Err(StateError::Version { found: 99, .. })
        ));
        // An older state (format 3 stored each graph's POS and OSP permutations in its snapshot) is refused by
        // its number too, not misread.
        let m = std::fs::read_to_string(dir.join(MANIFEST)).unwrap();
        std::fs::write(
            dir.join(MANIFEST),
            m.replace("\"format_version\": 99", "\"format_version\": 3"),
        )
        .unwrap();
        assert!(matches!(
            open(&dir, format::Orders::All),
            Err(StateError::Version { found: 3, .. })
        ));
        assert!(matches!(
            open(tmp.path(), format::Orders::All),
            Err(StateError::Missing { .. })
        ));
    }

    /// The quads of a snapshot, asserted and derived, as sorted text.
    fn facts(snap: &format::Snapshot) -> Vec<String> {
        let d = &snap.store.dict;
        use crate::store::TermSource;
        let show = |g: crate::store::TermId, t: &[crate::store::TermId; 3]| {
            format!(
                "{} {} {} {}",
                d.display(t[0]),
                d.display(t[1]),
                d.display(t[2]),
                d.display(g)
            )
        };
        let mut out: Vec<String> = snap
            .store
            .quads
            .graphs()
            .flat_map(|(g, i)| i.triples().iter().map(move |t| format!("A {}", show(g, t))))
            .chain(snap.overlay.graph_ids().flat_map(|g| {
                snap.overlay
                    .runs_of(g)
                    .flatten()
                    .map(move |t| format!("D {}", show(g, t)))
                    .collect::<Vec<_>>()
            }))
            .collect();
        out.sort();
        out
    }

    #[test]
    fn a_delta_saved_after_the_snapshot_opens_to_the_changed_state_and_damage_to_it_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("state");
        // A big enough snapshot for a small delta to be kept as one.
        let mut text = String::from("PREFIX : <http://e/>\n");
        for i in 0..200 {
            text.push_str(&format!(":n{i} :p :n{} .\n", i + 1));
        }
        let mut loader = Loader::new();
        loader
            .load_reader("t", text.as_bytes(), DataFormat::Turtle, None, &NoProgress)
            .unwrap();
        let mut store = loader.finish();
        let p = store.dict.lookup_iri("http://e/p").unwrap();
        let n = |store: &mut Store, i: u32| store.dict.intern_iri(&format!("http://e/n{i}"));
        let mut overlay = Overlay::new();
        let (n0, n1, n2) = (n(&mut store, 0), n(&mut store, 1), n(&mut store, 2));
        overlay.add(crate::store::TermId::DEFAULT_GRAPH, vec![[n0, p, n2]]);
        save(&dir, &manifest(), &store, &overlay, &[], None, None).unwrap();
        let (_, opened, files) = open(&dir, format::Orders::All).unwrap();
        let counts = opened.store.dict.counts();
        // The change: a fact with a new term asserted, one asserted fact and the derived one gone, one derived.
        let mut changed = opened.store;
        let q = changed.dict.intern_iri("http://other.example/q");
        let g = changed.dict.intern_iri("http://e/g");
        let dg = crate::store::TermId::DEFAULT_GRAPH;
        let delta = format::Delta {
            dict: changed.dict.tail_since(counts),
            prefixes: vec![("e".to_owned(), "http://e/".to_owned())],
            asserted: (vec![[dg, n0, p, n1]], vec![[g, n1, q, n2]]),
            derived: (vec![[dg, n0, p, n2]], vec![[dg, n2, q, n0]]),
        };
        // What the state holds after the change, written whole.
        let mut graphs: Vec<(crate::store::TermId, Vec<crate::store::Triple>)> = changed
            .quads
            .graphs()
            .map(|(g, i)| {
                (
                    g,
                    i.triples()
                        .iter()
                        .copied()
                        .filter(|t| *t != [n0, p, n1])
                        .collect(),
                )
            })
            .collect();
        graphs.push((g, vec![[n1, q, n2]]));
        changed.quads = crate::store::QuadStore::from_graphs(graphs);
        changed.prefixes = delta.prefixes.clone();
        let mut after = Overlay::new();
        after.add(dg, vec![[n2, q, n0]]);
        let kept = save(
            &dir,
            &manifest(),
            &changed,
            &after,
            &[],
            Some((&delta, &files)),
            None,
        )
        .unwrap();
        assert!(kept, "saved whole, not as a delta");
        assert!(dir.join("delta-0001.bin").is_file());
        let (_, back, files) = open(&dir, format::Orders::All).unwrap();
        assert_eq!(files.0.len(), 2);
        let whole = tmp.path().join("whole");
        save(&whole, &manifest(), &changed, &after, &[], None, None).unwrap();
        let (_, expected, _) = open(&whole, format::Orders::All).unwrap();
        assert_eq!(facts(&back), facts(&expected));
        assert_eq!(back.store.prefixes, expected.store.prefixes);
        assert_eq!(back.store.dict.to_parts(), changed.dict.to_parts());
        // A delta that no longer applies to the state on disk is not kept: the state is written whole.
        let stale = save(
            &dir,
            &manifest(),
            &changed,
            &after,
            &[],
            Some((&delta, &files)),
            None,
        )
        .unwrap();
        assert!(stale);
        let again = save(
            &dir,
            &manifest(),
            &changed,
            &after,
            &[],
            Some((&delta, &Files(vec![]))),
            None,
        )
        .unwrap();
        assert!(!again, "a delta over other files was kept");
        assert!(!dir.join("delta-0001.bin").exists());
        // Damage to a delta is refused, not misread.
        save(&dir, &manifest(), &store, &overlay, &[], None, None).unwrap();
        let (_, _, files) = open(&dir, format::Orders::All).unwrap();
        save(
            &dir,
            &manifest(),
            &changed,
            &after,
            &[],
            Some((&delta, &files)),
            None,
        )
        .unwrap();
        let path = dir.join("delta-0001.bin");
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert!(matches!(
            open(&dir, format::Orders::All),
            Err(StateError::Corrupt { .. })
        ));
    }

    #[test]
    fn crc32_by_pieces_equals_one_pass_across_piece_boundaries() {
        let bytes: Vec<u8> = (0..3 * (1u32 << 22) + 5)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for n in [0, 1, 1 << 22, (1 << 22) + 1, bytes.len()] {
            assert_eq!(
                crc32(&bytes[..n]),
                crc32fast::hash(&bytes[..n]),
                "{n} bytes"
            );
        }
    }
}
