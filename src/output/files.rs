//! This module defines atomic file writes and the reversible file names of named graphs in `--out-dir`.

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Writes a file through a temporary name in the same directory, renamed into place only when `write` succeeded,
/// so a failed or interrupted run never leaves a half-written file.
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".reasonctl-").suffix(".tmp");
    #[cfg(unix)]
    {
        // An output file gets the usual permissions (0666 less the umask), not a temporary file's 0600.
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    let mut temp = builder.tempfile_in(dir)?;
    {
        let mut out = BufWriter::with_capacity(1 << 16, temp.as_file_mut());
        write(&mut out)?;
        out.flush()?;
    }
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Creates a directory (and its parents) if it does not exist.
pub fn ensure_dir(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)
}

/// The longest file-name stem a graph IRI is written as before it is shortened.
const MAX_STEM: usize = 200;

/// The file-name stem of a graph: `default` for the default graph, otherwise the IRI percent-encoded so that
/// only `A-Z a-z 0-9 - _ .` remain (a leading `.` is encoded too). Decoding the stem gives the IRI back, and
/// no IRI encodes to `default` (an absolute IRI has a `:`, which is encoded). A stem longer than 200 bytes is cut
/// and ends in `~` and a hash of the whole IRI; the `graphs.tsv` index names every file's graph in full.
pub fn graph_file_stem(graph_iri: Option<&str>) -> String {
    let Some(iri) = graph_iri else {
        return "default".to_owned();
    };
    let mut stem = String::with_capacity(iri.len() * 2);
    for (i, b) in iri.bytes().enumerate() {
        match b {
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
