//! This module defines the compression codecs of data and output files — gzip, bzip2, xz and zstd — told by a
//! file's extension or a stream's first bytes; decoders that say how far into the compressed input a failure
//! is; and encoders that are finished explicitly, so that a cut-short output is never renamed into place.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A compression codec.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Codec {
    /// gzip (`.gz`), concatenated members included.
    #[value(name = "gz")]
    Gzip,
    /// bzip2 (`.bz2`), concatenated streams included.
    #[value(name = "bz2")]
    Bzip2,
    /// xz (`.xz`), concatenated streams included.
    #[value(name = "xz")]
    Xz,
    /// Zstandard (`.zst`), concatenated frames included.
    #[value(name = "zst")]
    Zstd,
}

impl Codec {
    /// The codec a file extension names.
    pub fn from_extension(ext: &str) -> Option<Self> {
        Some(match ext.to_ascii_lowercase().as_str() {
            "gz" | "gzip" => Codec::Gzip,
            "bz2" => Codec::Bzip2,
            "xz" => Codec::Xz,
            "zst" | "zstd" => Codec::Zstd,
            _ => return None,
        })
    }

    /// The codec of a path, from its last extension.
    pub fn of_path(path: &Path) -> Option<Self> {
        path.extension()
            .and_then(|e| e.to_str())
            .and_then(Self::from_extension)
    }

    /// The codec whose magic number starts `head` (at least 6 bytes tell every codec apart).
    pub fn sniff(head: &[u8]) -> Option<Self> {
        if head.starts_with(&[0x1f, 0x8b]) {
            Some(Codec::Gzip)
        } else if head.starts_with(b"BZh") {
            Some(Codec::Bzip2)
        } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
            Some(Codec::Xz)
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Some(Codec::Zstd)
        } else {
            None
        }
    }

    /// The extension its files carry, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Codec::Gzip => "gz",
            Codec::Bzip2 => "bz2",
            Codec::Xz => "xz",
            Codec::Zstd => "zst",
        }
    }

    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Codec::Gzip => "gzip",
            Codec::Bzip2 => "bzip2",
            Codec::Xz => "xz",
            Codec::Zstd => "zstd",
        }
    }

    /// A reader of what `reader` holds compressed; the failures it reads are [`Corrupt`] errors.
    pub fn decoder<'a>(self, reader: impl Read + Send + 'a) -> Decoder<'a> {
        let offset = Arc::new(AtomicU64::new(0));
        let counted = Offset {
            inner: reader,
            read: Arc::clone(&offset),
        };
        let inner: Box<dyn Read + Send + 'a> = match self {
            Codec::Gzip => Box::new(flate2::read::MultiGzDecoder::new(counted)),
            Codec::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(counted)),
            Codec::Xz => Box::new(liblzma::read::XzDecoder::new_multi_decoder(counted)),
            Codec::Zstd => match zstd::stream::read::Decoder::new(counted) {
                Ok(d) => Box::new(d),
                Err(e) => Box::new(Failed(Some(e))),
            },
        };
        Decoder {
            codec: self,
            inner,
            offset,
            out: 0,
        }
    }

    /// A writer that compresses into `out`; [`Encoder::finish`] writes the end of the stream.
    pub fn encoder<W: Write>(self, out: W) -> io::Result<Encoder<W>> {
        Ok(match self {
            Codec::Gzip => Encoder::Gzip(flate2::write::GzEncoder::new(
                out,
                flate2::Compression::default(),
            )),
            Codec::Bzip2 => Encoder::Bzip2(bzip2::write::BzEncoder::new(
                out,
                bzip2::Compression::default(),
            )),
            Codec::Xz => Encoder::Xz(liblzma::write::XzEncoder::new(out, 6)),
            Codec::Zstd => Encoder::Zstd(zstd::stream::write::Encoder::new(out, 3)?),
        })
    }
}

/// Calls `write` with `out`, through `codec`'s encoder when there is one (buffered, and finished: a stream cut
/// short is an error).
pub fn write_through(
    codec: Option<Codec>,
    out: &mut dyn Write,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    match codec {
        None => write(out),
        Some(codec) => {
            let mut e = codec.encoder(io::BufWriter::with_capacity(1 << 16, out))?;
            write(&mut e)?;
            e.finish()?.flush()
        }
    }
}

/// `path` without its codec's extension (`dump.nt.gz` → `dump.nt`), and the codec; the path itself and `None`
/// when it names none.
pub fn split_path(path: &Path) -> (PathBuf, Option<Codec>) {
    match Codec::of_path(path) {
        Some(codec) => (path.with_extension(""), Some(codec)),
        None => (path.to_owned(), None),
    }
}

/// A failure inside compressed input: the codec, how far into the compressed bytes it was found (at most this
/// many bytes had been read), how many bytes had been decompressed, and the codec's reason.
#[derive(Debug)]
pub struct Corrupt {
    /// The codec.
    pub codec: Codec,
    /// Compressed bytes read when it was found.
    pub offset: u64,
    /// Bytes decompressed before it.
    pub decompressed: u64,
    /// The codec's message.
    pub reason: String,
}

impl std::fmt::Display for Corrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} data corrupt or cut short by byte {} (after {} bytes decompressed): {}",
            self.codec.name(),
            self.offset,
            self.decompressed,
            self.reason
        )
    }
}

impl std::error::Error for Corrupt {}

/// The [`Corrupt`] failure an I/O error carries, if it does.
pub fn corrupt(e: &io::Error) -> Option<&Corrupt> {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<Corrupt>())
}

/// A decompressing reader.
pub struct Decoder<'a> {
    codec: Codec,
    inner: Box<dyn Read + Send + 'a>,
    offset: Arc<AtomicU64>,
    out: u64,
}

impl Decoder<'_> {
    /// How many compressed bytes it has read so far, as it reads on (for a share of a compressed file: which
    /// blocks of lines a process takes, by where in the compressed file each starts).
    pub fn compressed_read(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.offset)
    }
}

impl Read for Decoder<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.inner.read(buf) {
            Ok(n) => {
                self.out += n as u64;
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            // A failure of the file itself (not of its contents) is the file's.
            Err(e) if e.get_ref().is_some_and(|i| i.is::<Source>()) => {
                let inner = e.into_inner().expect("checked");
                let Source(e) = *inner.downcast::<Source>().expect("checked");
                Err(e)
            }
            Err(e) => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                Corrupt {
                    codec: self.codec,
                    offset: self.offset.load(Ordering::Relaxed),
                    decompressed: self.out,
                    reason: e.to_string(),
                },
            )),
        }
    }
}

/// An error of the compressed source's own reads, passed through the codec untouched.
#[derive(Debug)]
struct Source(io::Error);

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Source {}

/// Counts the compressed bytes read.
struct Offset<R> {
    inner: R,
    read: Arc<AtomicU64>,
}

impl<R: Read> Read for Offset<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.inner.read(buf) {
            Ok(n) => {
                self.read.fetch_add(n as u64, Ordering::Relaxed);
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => Err(io::Error::new(e.kind(), Source(e))),
        }
    }
}

/// A decoder that could not start: its error, once.
struct Failed(Option<io::Error>);

impl Read for Failed {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        match self.0.take() {
            Some(e) => Err(e),
            None => Ok(0),
        }
    }
}

/// A compressing writer.
pub enum Encoder<W: Write> {
    /// gzip.
    Gzip(flate2::write::GzEncoder<W>),
    /// bzip2.
    Bzip2(bzip2::write::BzEncoder<W>),
    /// xz.
    Xz(liblzma::write::XzEncoder<W>),
    /// Zstandard.
    Zstd(zstd::stream::write::Encoder<'static, W>),
}

impl<W: Write> Encoder<W> {
    /// Writes the end of the compressed stream; the writer it wrote to.
    pub fn finish(self) -> io::Result<W> {
        match self {
            Encoder::Gzip(e) => e.finish(),
            Encoder::Bzip2(e) => e.finish(),
            Encoder::Xz(e) => e.finish(),
            Encoder::Zstd(e) => e.finish(),
        }
    }
}

impl<W: Write> Write for Encoder<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Encoder::Gzip(e) => e.write(buf),
            Encoder::Bzip2(e) => e.write(buf),
            Encoder::Xz(e) => e.write(buf),
            Encoder::Zstd(e) => e.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Encoder::Gzip(e) => e.flush(),
            Encoder::Bzip2(e) => e.flush(),
            Encoder::Xz(e) => e.flush(),
            Encoder::Zstd(e) => e.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CODECS: [Codec; 4] = [Codec::Gzip, Codec::Bzip2, Codec::Xz, Codec::Zstd];

    fn compressed(codec: Codec, text: &[u8]) -> Vec<u8> {
        let mut e = codec.encoder(Vec::new()).unwrap();
        e.write_all(text).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn every_codec_round_trips_and_is_known_by_its_magic_and_extension() {
        let text = b"<http://e/a> <http://e/p> <http://e/b> .\n".repeat(1000);
        for codec in CODECS {
            let bytes = compressed(codec, &text);
            assert_eq!(Codec::sniff(&bytes), Some(codec));
            assert_eq!(Codec::from_extension(codec.extension()), Some(codec));
            let mut back = Vec::new();
            codec.decoder(&bytes[..]).read_to_end(&mut back).unwrap();
            assert_eq!(back, text, "{codec:?}");
            // Two streams one after the other read as their texts one after the other.
            let mut twice = bytes.clone();
            twice.extend_from_slice(&bytes);
            let mut back = Vec::new();
            codec.decoder(&twice[..]).read_to_end(&mut back).unwrap();
            assert_eq!(back.len(), 2 * text.len(), "{codec:?}");
        }
        assert_eq!(Codec::sniff(b"<http://e"), None);
        assert_eq!(
            split_path(Path::new("d/dump.nt.gz")),
            (PathBuf::from("d/dump.nt"), Some(Codec::Gzip))
        );
        assert_eq!(split_path(Path::new("dump.nt")).1, None);
    }

    #[test]
    fn cut_short_or_damaged_input_is_a_corrupt_error_with_its_offset() {
        let text: Vec<u8> = (0..30_000u32)
            .flat_map(|i| format!("<http://e/{i}> <http://e/p> \"{}\" .\n", i * 7).into_bytes())
            .collect();
        for codec in CODECS {
            let bytes = compressed(codec, &text);
            let cut = &bytes[..bytes.len() / 2];
            let mut back = Vec::new();
            let e = codec.decoder(cut).read_to_end(&mut back).unwrap_err();
            let c = corrupt(&e).unwrap_or_else(|| panic!("{codec:?}: {e}"));
            assert_eq!(c.codec, codec);
            assert!(c.offset <= cut.len() as u64, "{codec:?}: {c}");
            let mut damaged = bytes.clone();
            let middle = damaged.len() / 2;
            for b in &mut damaged[middle..middle + 64] {
                *b ^= 0x5a;
            }
            let mut back = Vec::new();
            let e = codec
                .decoder(&damaged[..])
                .read_to_end(&mut back)
                .unwrap_err();
            assert!(corrupt(&e).is_some(), "{codec:?}: {e}");
        }
    }
}
