//! Compressed data and output (issue 19): gzip, bzip2, xz and zstd data files load as the plain file loads (by
//! extension and by magic bytes, standard input included); `-o out.nq.gz` and `--out-dir … --compress zst` write
//! compressed output that decompresses to the plain output; damaged or cut-short input is a
//! `reasonctl::load::compressed` error naming the file and the byte, exit 2.

use std::fs;
use std::io::{Read, Write};
use std::path::Path;
use std::process::Output;
use std::time::Duration;

use assert_cmd::Command;
use reasonctl::codec::Codec;

const CODECS: [Codec; 4] = [Codec::Gzip, Codec::Bzip2, Codec::Xz, Codec::Zstd];

const RULES: &str = "PREFIX ex: <http://example.org/>\n\
#@rule base\nCONSTRUCT { ?x ex:reach ?y } WHERE { ?x ex:p ?y }\n\
#@rule step\nCONSTRUCT { ?x ex:reach ?z } WHERE { ?x ex:reach ?y . ?y ex:p ?z }\n";

/// `n` short chains (two ex:p facts each) in N-Triples, with a comment and a literal now and then.
fn chain(n: usize) -> String {
    let mut text = String::from("# short chains\n");
    for i in 0..n {
        text.push_str(&format!(
            "<http://example.org/n{i}> <http://example.org/p> <http://example.org/m{i}> .\n\
             <http://example.org/m{i}> <http://example.org/p> <http://example.org/k{i}> .\n"
        ));
        if i % 50 == 0 {
            text.push_str(&format!(
                "<http://example.org/n{i}> <http://example.org/label> \"n\\u00e9{i}\"@fr .\n"
            ));
        }
    }
    text
}

fn compress(codec: Codec, bytes: &[u8]) -> Vec<u8> {
    let mut e = codec.encoder(Vec::new()).unwrap();
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn decompress(codec: Codec, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    codec.decoder(bytes).read_to_end(&mut out).unwrap();
    out
}

fn reasonctl(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("reasonctl").expect("binary");
    cmd.timeout(Duration::from_secs(60)).current_dir(dir);
    cmd
}

fn run(dir: &Path, args: &[&str]) -> Output {
    reasonctl(dir).args(args).output().unwrap()
}

fn ok(out: Output) -> Vec<u8> {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn folder(text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("rules.rq"), RULES).unwrap();
    fs::write(dir.path().join("data.nt"), text).unwrap();
    dir
}

#[test]
fn compressed_data_loads_as_the_plain_file_by_extension_and_by_magic_bytes() {
    let text = chain(3_000);
    let dir = folder(&text);
    let d = dir.path();
    let args = |data: &str| -> Vec<String> {
        [
            "materialize",
            data,
            "--rules",
            "rules.rq",
            "--format",
            "nquads",
        ]
        .map(str::to_owned)
        .to_vec()
    };
    let plain = ok(run(
        d,
        &args("data.nt")
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    ));
    assert!(!plain.is_empty());
    for codec in CODECS {
        let name = format!("data.nt.{}", codec.extension());
        fs::write(d.join(&name), compress(codec, text.as_bytes())).unwrap();
        let got = ok(run(
            d,
            &args(&name).iter().map(String::as_str).collect::<Vec<_>>(),
        ));
        assert!(
            got == plain,
            "{codec:?}: the output differs from the plain file's"
        );
    }
    // By magic bytes alone: a gzip file named .nt, and a compressed stream on standard input.
    fs::write(d.join("hidden.nt"), compress(Codec::Gzip, text.as_bytes())).unwrap();
    let got = ok(run(
        d,
        &args("hidden.nt")
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    ));
    assert!(got == plain, "gzip bytes in a .nt file");
    let got = ok(reasonctl(d)
        .args([
            "materialize",
            "-",
            "--data-format",
            "ntriples",
            "--rules",
            "rules.rq",
            "--format",
            "nquads",
        ])
        .write_stdin(compress(Codec::Zstd, text.as_bytes()))
        .output()
        .unwrap());
    assert!(got == plain, "zstd on standard input");
    // Turtle, compressed, read as it decompresses.
    let turtle = "@prefix ex: <http://example.org/> .\nex:a ex:p ex:b . ex:b ex:p ex:c .\n";
    fs::write(d.join("t.ttl"), turtle).unwrap();
    fs::write(d.join("t.ttl.xz"), compress(Codec::Xz, turtle.as_bytes())).unwrap();
    let ttl = |f: &str| {
        ok(run(
            d,
            &[
                "materialize",
                f,
                "--rules",
                "rules.rq",
                "--format",
                "nquads",
            ],
        ))
    };
    assert_eq!(ttl("t.ttl.xz"), ttl("t.ttl"));
}

#[test]
fn compressed_output_decompresses_to_the_plain_output() {
    let dir = folder(&chain(500));
    let d = dir.path();
    let plain = ok(run(
        d,
        &[
            "materialize",
            "data.nt",
            "--rules",
            "rules.rq",
            "--format",
            "nquads",
        ],
    ));
    for codec in CODECS {
        let out = format!("out.nq.{}", codec.extension());
        ok(run(
            d,
            &["materialize", "data.nt", "--rules", "rules.rq", "-o", &out],
        ));
        let bytes = fs::read(d.join(&out)).unwrap();
        assert_eq!(Codec::sniff(&bytes), Some(codec), "{out}");
        assert!(decompress(codec, &bytes) == plain, "{out}");
    }
    // One compressed file per graph.
    ok(run(
        d,
        &[
            "materialize",
            "data.nt",
            "--rules",
            "rules.rq",
            "--out-dir",
            "graphs",
            "--format",
            "nquads",
            "--compress",
            "zst",
        ],
    ));
    let bytes = fs::read(d.join("graphs/default.nq.zst")).unwrap();
    assert!(decompress(Codec::Zstd, &bytes) == plain);
    let index = fs::read_to_string(d.join("graphs/graphs.tsv")).unwrap();
    assert!(index.contains("default.nq.zst\t"), "{index}");
    // Compressed standard output.
    let out = ok(run(
        d,
        &[
            "materialize",
            "data.nt",
            "--rules",
            "rules.rq",
            "--format",
            "nquads",
            "--compress",
            "gz",
        ],
    ));
    assert!(decompress(Codec::Gzip, &out) == plain);
}

/// `materialize FILE --rules rules.rq` in `dir`, which must exit 2 naming the file: its standard error.
fn fails(dir: &Path, file: &str) -> String {
    let out = run(dir, &["materialize", file, "--rules", "rules.rq"]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{file}: {err}");
    assert!(err.contains(file), "{file}: {err}");
    err
}

#[test]
fn cut_short_or_damaged_compressed_data_is_an_error_with_the_file_and_byte() {
    let text = chain(3_000);
    let dir = folder(&text);
    let d = dir.path();
    for codec in CODECS {
        let bytes = compress(codec, text.as_bytes());
        let cut = format!("cut.nt.{}", codec.extension());
        fs::write(d.join(&cut), &bytes[..bytes.len() * 2 / 3]).unwrap();
        let mut damaged = bytes.clone();
        let middle = damaged.len() / 2;
        for b in &mut damaged[middle..middle + 32] {
            *b ^= 0x5a;
        }
        let bad = format!("bad.ttl.{}", codec.extension());
        fs::write(d.join(&bad), &damaged).unwrap();
        let err = fails(d, &cut);
        assert!(err.contains("reasonctl::load::compressed"), "{cut}: {err}");
        assert!(err.contains("by byte"), "{cut}: {err}");
        assert!(err.contains(codec.name()), "{cut}: {err}");
        // Damage inside a stream may decompress to text that does not parse before the codec's checksum says
        // so: either way the load stops, naming the file.
        let err = fails(d, &bad);
        assert!(
            err.contains("reasonctl::load::compressed") || err.contains("reasonctl::load::syntax"),
            "{bad}: {err}"
        );
    }
    // A syntax error inside a compressed file is placed in the decompressed text.
    let broken = format!("{}<http://example.org/x> oops .\n", chain(2));
    let line = broken.lines().count();
    fs::write(
        d.join("broken.nt.gz"),
        compress(Codec::Gzip, broken.as_bytes()),
    )
    .unwrap();
    let out = run(d, &["materialize", "broken.nt.gz", "--rules", "rules.rq"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("broken.nt.gz:{line}:24")), "{err}");
}
