//! This module defines the loader: RDF files (or stdin) parsed by oxrdfio and interned into a [`Store`].
//!
//! Each source keeps its own blank-node scope, so `_:b` in two files are two nodes. Blank nodes are numbered in
//! order of first appearance, which makes ids (and therefore output) the same from run to run even though the
//! parser names anonymous nodes (`[]`, annotation reifiers) at random.

use std::cell::RefCell;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::mpsc;

use hashbrown::{HashMap, HashSet};
use miette::{Diagnostic, SourceSpan};

use crate::excerpt::Excerpt;
use oxrdfio::{JsonLdProfileSet, RdfFormat, RdfParseError, RdfParser};
use thiserror::Error;

mod chunks;
mod compressed;
pub mod dump;
pub mod guard;
mod lines;
pub mod share;

use super::term::{TermId, Triple};
use super::{Dictionary, Quad, QuadStore, Store};

/// An input of the loader.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DataSource {
    /// A file.
    File(PathBuf),
    /// Standard input (`-` on the command line).
    Stdin,
}

impl DataSource {
    /// `-` is stdin, anything else a path.
    pub fn from_arg(arg: &str) -> Self {
        if arg == "-" {
            DataSource::Stdin
        } else {
            DataSource::File(PathBuf::from(arg))
        }
    }

    /// The name diagnostics use.
    pub fn name(&self) -> String {
        match self {
            DataSource::File(p) => p.display().to_string(),
            DataSource::Stdin => "<stdin>".to_owned(),
        }
    }
}

/// An RDF syntax the loader reads.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DataFormat {
    /// Turtle (`.ttl`), RDF 1.2.
    Turtle,
    /// TriG (`.trig`), RDF 1.2.
    Trig,
    /// N-Triples (`.nt`), RDF 1.2.
    #[value(name = "ntriples")]
    NTriples,
    /// N-Quads (`.nq`), RDF 1.2.
    #[value(name = "nquads")]
    NQuads,
    /// RDF/XML (`.rdf`, `.owl`, `.xml`).
    #[value(name = "rdfxml")]
    RdfXml,
    /// JSON-LD (`.jsonld`).
    #[value(name = "jsonld")]
    JsonLd,
}

impl DataFormat {
    /// The format a file extension names, if any.
    pub fn from_extension(ext: &str) -> Option<Self> {
        Some(match ext.to_ascii_lowercase().as_str() {
            "ttl" | "turtle" => DataFormat::Turtle,
            "trig" => DataFormat::Trig,
            "nt" => DataFormat::NTriples,
            "nq" => DataFormat::NQuads,
            "rdf" | "owl" | "xml" => DataFormat::RdfXml,
            "jsonld" => DataFormat::JsonLd,
            _ => return None,
        })
    }

    /// The format of a path, from its extension (the one before a compression extension: `dump.nt.gz` is
    /// N-Triples).
    pub fn from_path(path: &Path) -> Option<Self> {
        crate::codec::split_path(path)
            .0
            .extension()
            .and_then(|e| e.to_str())
            .and_then(Self::from_extension)
    }

    fn rdf_format(self) -> RdfFormat {
        match self {
            DataFormat::Turtle => RdfFormat::Turtle,
            DataFormat::Trig => RdfFormat::TriG,
            DataFormat::NTriples => RdfFormat::NTriples,
            DataFormat::NQuads => RdfFormat::NQuads,
            DataFormat::RdfXml => RdfFormat::RdfXml,
            DataFormat::JsonLd => RdfFormat::JsonLd {
                profile: JsonLdProfileSet::empty(),
            },
        }
    }
}

/// The extensions the loader recognises, for messages.
pub const KNOWN_EXTENSIONS: &str = ".ttl .trig .nt .nq .rdf .owl .xml .jsonld";

/// How sources are read.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// The base IRI relative IRIs resolve against; `None`: each file's own `file://` IRI (stdin: none).
    pub base: Option<String>,
    /// The syntax of every source; `None`: from each file's extension.
    pub format: Option<DataFormat>,
    /// Skip the parsers' IRI and language-tag validation (oxttl's and oxrdfio's lenient mode).
    pub lenient: bool,
}

/// Where loading reports its progress (bytes read); the application draws it, the library never prints.
pub trait LoadProgress: Sync {
    /// A source starts; `len` is its size when known.
    fn begin(&self, name: &str, len: Option<u64>);
    /// `bytes` more were read.
    fn advance(&self, bytes: u64);
    /// The source is done.
    fn end(&self);
}

/// Progress that goes nowhere.
pub struct NoProgress;

impl LoadProgress for NoProgress {
    fn begin(&self, _: &str, _: Option<u64>) {}
    fn advance(&self, _: u64) {}
    fn end(&self) {}
}

/// Why loading failed.
#[derive(Debug, Error, Diagnostic)]
pub enum LoadError {
    /// A data file does not exist.
    #[error("data file {path} does not exist")]
    #[diagnostic(
        code(reasonctl::load::missing_file),
        help("check the path; pass `-` to read standard input")
    )]
    Missing {
        /// The path as given.
        path: PathBuf,
    },
    /// A data file could not be read.
    #[error("cannot read data file {path}: {source}")]
    #[diagnostic(
        code(reasonctl::load::unreadable),
        help("check that the path is a readable file, not a directory")
    )]
    Unreadable {
        /// The path as given.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// The parser thread of a data file could not be started (the process's address space or thread limit).
    #[error("cannot start the thread that parses {path}: {source}")]
    #[diagnostic(
        code(reasonctl::load::thread),
        help(
            "each parser thread reserves a 256 MiB stack: raise the address-space limit (`ulimit -v`) or the process limit (`ulimit -u`), or run with fewer --threads"
        )
    )]
    Thread {
        /// The path as given.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// A data file's extension names no known RDF syntax.
    #[error("cannot tell the RDF syntax of {path} from its extension")]
    #[diagnostic(
        code(reasonctl::load::unknown_format),
        help(
            "rename it to one of {KNOWN_EXTENSIONS} (then .gz, .bz2, .xz or .zst when compressed), or pass --data-format turtle|trig|ntriples|nquads|rdfxml|jsonld"
        )
    )]
    UnknownFormat {
        /// The path as given.
        path: PathBuf,
    },
    /// A syntax error in a data file.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Syntax(Box<SyntaxError>),
    /// Compressed data that does not decompress.
    #[error("{file}: {corrupt}")]
    #[diagnostic(
        code(reasonctl::load::compressed),
        help(
            "the file is damaged or was cut short (an interrupted download or copy?): fetch or copy it again; `{tool} -t {file}` checks it"
        )
    )]
    Compressed {
        /// The source name.
        file: String,
        /// What failed, and where.
        corrupt: String,
        /// The codec's command-line tool.
        tool: &'static str,
    },
    /// A syntax error the parser could not place (JSON-LD's errors about values).
    #[error("{file}: {message}")]
    #[diagnostic(
        code(reasonctl::load::syntax_unplaced),
        help("fix the {format} syntax; if the file is in another syntax, pass --data-format")
    )]
    SyntaxUnplaced {
        /// The source name.
        file: String,
        /// The parser's message.
        message: String,
        /// The syntax that was expected.
        format: &'static str,
    },
    /// The base IRI is not an absolute IRI.
    #[error("the base IRI {iri:?} is invalid: {message}")]
    #[diagnostic(
        code(reasonctl::load::bad_base),
        help("pass an absolute IRI to --base, such as http://example.org/")
    )]
    BadBase {
        /// The IRI as given.
        iri: String,
        /// Why it was refused.
        message: String,
    },
    /// Data nested deeper than the parsers may recurse.
    #[error("{file}:{line}:{column}: {what} nest deeper than {limit} levels")]
    #[diagnostic(
        code(reasonctl::load::too_deep),
        help(
            "the parsers recurse once per level: no real dataset nests this deep; flatten the data (name nested nodes, reify through identifiers)"
        )
    )]
    TooDeep {
        /// The source name.
        file: String,
        /// 1-based line.
        line: u64,
        /// 1-based column.
        column: u64,
        /// What nests.
        what: &'static str,
        /// The limit.
        limit: u64,
    },
    /// RDF/XML entities that expand (nested in each other, or referenced over and over) far past the file.
    #[error("{file}:{line}:{column}: XML entities expand past {limit} bytes at `{entity}`")]
    #[diagnostic(
        code(reasonctl::load::entity_expansion),
        help(
            "the RDF/XML parser expands every entity in memory, and nested entities multiply (the \"billion laughs\" pattern); entities may expand to 16 MiB plus 8 bytes per byte of the file: write the text out instead of nesting entities"
        )
    )]
    EntityExpansion {
        /// The source name.
        file: String,
        /// 1-based line.
        line: u64,
        /// 1-based column.
        column: u64,
        /// The entity declared or referenced where the allowance ran out.
        entity: String,
        /// The allowance there, in bytes.
        limit: u64,
    },
    /// More distinct terms than 32-bit ids can number.
    #[error("{file}: more than {limit} distinct terms")]
    #[diagnostic(
        code(reasonctl::load::too_many_terms),
        help("split the dataset; reasonctl numbers terms with 32-bit ids")
    )]
    TooManyTerms {
        /// The source name.
        file: String,
        /// The limit.
        limit: u64,
    },
}

/// A syntax error at a known place, with the offending line.
#[derive(Debug, Error, Diagnostic)]
#[error("{file}:{line}:{column}: {message}")]
#[diagnostic(
    code(reasonctl::load::syntax),
    help(
        "fix the {format} syntax at {file}:{line}:{column}; if the file is in another syntax, pass --data-format"
    )
)]
pub struct SyntaxError {
    /// The source name.
    pub file: String,
    /// 1-based line.
    pub line: u64,
    /// 1-based column (in characters).
    pub column: u64,
    /// The parser's message.
    pub message: String,
    /// The syntax that was expected.
    pub format: &'static str,
    /// The offending line.
    #[source_code]
    pub snippet: Option<Excerpt>,
    /// The error's position.
    #[label("here")]
    pub span: Option<SourceSpan>,
}

/// Dictionary size past which the loader stops before ids overflow.
const TERM_LIMIT: usize = (u32::MAX - (1 << 16)) as usize;

/// Loads every source, in order, into one store.
pub fn load(
    sources: &[DataSource],
    options: &LoadOptions,
    progress: &dyn LoadProgress,
) -> Result<Store, LoadError> {
    load_into(Dictionary::new(), sources, options, progress)
}

/// Appends the `declared` (prefix, namespace) pairs whose prefix `prefixes` lacks: the first declaration of a
/// name wins, across files. A set of the names held, so that a document of many prefixes costs one lookup each
/// (a scan of the list was quadratic).
pub fn add_prefixes(
    prefixes: &mut Vec<(String, String)>,
    declared: impl IntoIterator<Item = (String, String)>,
) {
    let mut held: HashSet<String> = prefixes.iter().map(|(p, _)| p.clone()).collect();
    for (prefix, iri) in declared {
        if held.insert(prefix.clone()) {
            prefixes.push((prefix, iri));
        }
    }
}

/// The terms of `local` (the dictionary a change set was read into, apart from a state's) interned into `dict`
/// in `local`'s order, so they are numbered as reading the change set into `dict` numbers them; each blank node
/// is a new one. The id in `dict` of each of `local`'s terms.
pub fn import(
    dict: &mut Dictionary,
    local: &Dictionary,
    name: &str,
) -> Result<Vec<TermId>, LoadError> {
    let ids = chunks::merge_terms(dict, name, local, &mut |dict, _| dict.new_blank_node())?;
    // The IRIs it brought, read with --lenient, may need escaping on output.
    dict.take_raw_iris_of(local);
    Ok(ids)
}

/// [`load`] into an existing dictionary (a saved state's).
pub fn load_into(
    dict: Dictionary,
    sources: &[DataSource],
    options: &LoadOptions,
    progress: &dyn LoadProgress,
) -> Result<Store, LoadError> {
    let mut loader = Loader::with_dictionary(dict);
    for source in sources {
        loader.load_source(source, options, progress)?;
    }
    Ok(loader.finish())
}

/// Accumulates sources into a dictionary and per-graph triple lists; [`Loader::finish`] indexes them.
#[derive(Default)]
pub struct Loader {
    /// Where quads of a source's default graph go (`None`: the default graph).
    target: Option<TermId>,
    dict: Dictionary,
    graph_slots: HashMap<TermId, usize>,
    graphs: Vec<(TermId, Vec<Triple>)>,
    prefixes: Vec<(String, String)>,
    /// Whether the parsers skip IRI and language-tag validation ([`LoadOptions::lenient`] of the source being
    /// loaded; [`Loader::load_reader`] alone: off).
    lenient: bool,
    /// Whether some source was read leniently: its IRIs may need escaping on output
    /// ([`Dictionary::note_raw_iris`], at [`Loader::finish`]).
    read_leniently: bool,
    /// Distinct terms [`Loader::load_reader`] stops past (`None`: as many as 32-bit ids number).
    term_limit: Option<usize>,
    /// Whether each source's line table is kept ([`Loader::keep_lines`]).
    keep_lines: bool,
    /// The line table of the file being loaded, when it has one.
    table: Option<dump::LineTable>,
    /// The line table of each source loaded, when kept and the source has one.
    tables: Vec<Option<dump::LineTable>>,
    /// While a share's range of a file loads ([`Loader::load_piece`]): the label of each blank node it met, by
    /// the node's number.
    labels: Option<Vec<(u32, Box<str>)>>,
    /// What the blocks of a compressed file's share loaded cover of its decompressed text (see
    /// [`Loader::load_piece`]).
    covered: Option<(u64, u64, bool)>,
}

impl Loader {
    /// An empty loader.
    pub fn new() -> Self {
        Self::default()
    }

    /// A loader that interns into `dict` (a saved state's), so the facts it loads share ids with the facts
    /// already numbered there.
    pub fn with_dictionary(dict: Dictionary) -> Self {
        Self {
            dict,
            ..Self::default()
        }
    }

    /// Stops [`Loader::load_reader`] past `n` distinct terms, as it stops past what 32-bit ids number (for
    /// embedders with a smaller budget, and for tests).
    pub fn limit_terms(&mut self, n: usize) {
        self.term_limit = Some(n.min(TERM_LIMIT));
    }

    /// Sends the default-graph quads of the sources loaded next into the named graph `iri` (`None`: back to
    /// the default graph), as a SPARQL dataset's `FROM NAMED` file does.
    pub fn set_target_graph(&mut self, iri: Option<&str>) {
        self.target = iri.map(|i| self.dict.intern_iri(i));
    }

    /// Keeps the line table ([`dump::LineTable`]) of each N-Triples or N-Quads file loaded from now on, for a
    /// state to compare the next version of the file with.
    pub fn keep_lines(&mut self) {
        self.keep_lines = true;
    }

    /// The line table of each source loaded since [`Loader::keep_lines`], in order: an N-Triples or N-Quads
    /// file's lines, another syntax's facts (their positions for hashes); `None` for stdin, and for an N-Triples
    /// or N-Quads file with a line stating two statements or read sequentially.
    pub fn take_line_tables(&mut self) -> Vec<Option<dump::LineTable>> {
        std::mem::take(&mut self.tables)
    }

    /// Parses one source.
    pub fn load_source(
        &mut self,
        source: &DataSource,
        options: &LoadOptions,
        progress: &dyn LoadProgress,
    ) -> Result<(), LoadError> {
        self.lenient = options.lenient;
        self.read_leniently |= options.lenient;
        self.table = None;
        // A file of another syntax gets a table of the facts it stated (see [`Loader::facts_since`]).
        let facts_table = self.keep_lines
            && matches!(source, DataSource::File(path)
                if !matches!(options.format.or_else(|| DataFormat::from_path(path)),
                    Some(DataFormat::NTriples | DataFormat::NQuads)));
        let before: Vec<usize> = if facts_table {
            self.graphs.iter().map(|(_, t)| t.len()).collect()
        } else {
            Vec::new()
        };
        let result = self.load_one(source, options, progress);
        self.lenient = false;
        if self.keep_lines {
            if facts_table && result.is_ok() {
                self.table = Some(self.facts_since(&before));
            }
            self.tables.push(self.table.take());
        }
        result
    }

    /// The facts loaded since the graphs held `before` triples each, as a table whose "hashes" are their
    /// positions: a file that is not N-Triples or N-Quads cannot be compared line by line, but a state that
    /// knows the facts it stated needs not read it again while its content hash is unchanged (and keeps its
    /// blank nodes, which a second read would make anew).
    fn facts_since(&self, before: &[usize]) -> dump::LineTable {
        let quads: Vec<Quad> = (self.graphs.iter().enumerate())
            .flat_map(|(i, (g, triples))| {
                let from = before.get(i).copied().unwrap_or(0);
                triples[from..].iter().map(move |&[s, p, o]| [*g, s, p, o])
            })
            .collect();
        let positions = (0..quads.len() as u128).collect();
        dump::LineTable::from_parts(positions, quads).expect("positions are sorted")
    }

    fn load_one(
        &mut self,
        source: &DataSource,
        options: &LoadOptions,
        progress: &dyn LoadProgress,
    ) -> Result<(), LoadError> {
        match source {
            DataSource::Stdin => {
                let format = options.format.unwrap_or(DataFormat::NQuads);
                progress.begin("<stdin>", None);
                // A compressed stream is told by its first bytes.
                let mut stdin = io::stdin();
                let head = read_head(&mut stdin).map_err(|e| io_error("<stdin>", e))?;
                let whole = io::Cursor::new(head.clone()).chain(stdin);
                let base = options.base.as_deref();
                let result = match crate::codec::Codec::sniff(&head) {
                    Some(codec) => {
                        self.load_reader("<stdin>", codec.decoder(whole), format, base, progress)
                    }
                    None => self.load_reader("<stdin>", whole, format, base, progress),
                };
                progress.end();
                result
            }
            DataSource::File(path) => {
                let format = match options.format.or_else(|| DataFormat::from_path(path)) {
                    Some(f) => f,
                    None => return Err(LoadError::UnknownFormat { path: path.clone() }),
                };
                let mut file = open(path)?;
                let metadata = file.metadata().ok();
                let len = metadata.as_ref().map(|m| m.len());
                // Only a regular file can be split (a pipe has no length and cannot seek).
                let regular = metadata.as_ref().is_some_and(|m| m.is_file());
                // Compressed: told by its first bytes (a regular file's), else by its extension.
                let unreadable = |e| io_error(&path.display().to_string(), e);
                let codec = if regular {
                    head_codec(&mut file).map_err(unreadable)?
                } else {
                    None
                };
                if let Some(codec) = codec.or_else(|| crate::codec::Codec::of_path(path)) {
                    drop(file);
                    return self.load_compressed(path, format, codec, options, progress);
                }
                if let (DataFormat::NTriples | DataFormat::NQuads, Some(len), true) =
                    (format, len, regular)
                {
                    let name = path.display().to_string();
                    let unreadable = |source| LoadError::Unreadable {
                        path: path.clone(),
                        source,
                    };
                    let ranges = chunks::ranges(
                        &mut file,
                        len,
                        rayon::current_num_threads(),
                        chunks::MIN_CHUNK,
                    )
                    .map_err(unreadable)?;
                    progress.begin(&name, Some(len));
                    let result = self.load_ranges(path, &name, format, &ranges, progress);
                    progress.end();
                    if result? {
                        return Ok(());
                    }
                    file.seek(io::SeekFrom::Start(0)).map_err(unreadable)?;
                }
                let base = match &options.base {
                    Some(b) => b.clone(),
                    None => file_iri(path),
                };
                let name = path.display().to_string();
                progress.begin(&name, len);
                let result = self.load_reader(
                    &name,
                    BufReader::with_capacity(1 << 16, file),
                    format,
                    Some(&base),
                    progress,
                );
                progress.end();
                result.map_err(|e| match e {
                    LoadError::Unreadable { source, .. } => LoadError::Unreadable {
                        path: path.clone(),
                        source,
                    },
                    other => other,
                })
            }
        }
    }

    /// Loads a compressed file: N-Triples and N-Quads decompressed on one thread and parsed on the others,
    /// other syntaxes (and a file whose lines oxttl refuses, for its error's place) parsed as they decompress.
    fn load_compressed(
        &mut self,
        path: &Path,
        format: DataFormat,
        codec: crate::codec::Codec,
        options: &LoadOptions,
        progress: &dyn LoadProgress,
    ) -> Result<(), LoadError> {
        let name = path.display().to_string();
        if matches!(format, DataFormat::NTriples | DataFormat::NQuads)
            && self.load_compressed_lines(
                path,
                &name,
                (format, codec),
                (compressed::BLOCK, None),
                progress,
            )?
        {
            return Ok(());
        }
        let file = open(path)?;
        let base = match &options.base {
            Some(b) => b.clone(),
            None => file_iri(path),
        };
        progress.begin(&name, None);
        let result = self.load_reader(&name, codec.decoder(file), format, Some(&base), progress);
        progress.end();
        result
    }

    /// Parses one reader in one syntax; `name` is what diagnostics call it.
    ///
    /// Parsing runs on its own thread and hands batches of quads to this one, which interns them: on two cores
    /// the load then costs about the parse alone.
    pub fn load_reader(
        &mut self,
        name: &str,
        reader: impl Read + Send,
        format: DataFormat,
        base: Option<&str>,
        progress: &dyn LoadProgress,
    ) -> Result<(), LoadError> {
        let bad_base = |base: &str, e: oxiri::IriParseError| LoadError::BadBase {
            iri: base.to_owned(),
            message: e.to_string(),
        };
        let parser = if format == DataFormat::RdfXml {
            let mut parser = oxrdfxml::RdfXmlParser::new();
            if self.lenient {
                parser = parser.lenient();
            }
            if let Some(base) = base {
                parser = parser.with_base_iri(base).map_err(|e| bad_base(base, e))?;
            }
            Syntax::Xml(parser)
        } else {
            let mut parser = RdfParser::from_format(format.rdf_format());
            if self.lenient {
                parser = parser.lenient();
            }
            if let Some(base) = base {
                parser = parser.with_base_iri(base).map_err(|e| bad_base(base, e))?;
            }
            Syntax::Any(parser)
        };
        let reader = skip_bom(reader).map_err(|e| io_error(name, e))?;
        // An empty file (white space only) is an empty dataset in every syntax, JSON-LD's included (whose parser
        // wants a value).
        let Some(reader) = unless_blank(reader).map_err(|e| io_error(name, e))? else {
            return Ok(());
        };
        let (tx, rx) = mpsc::sync_channel::<Parsed>(8);
        std::thread::scope(|scope| {
            // The parsers recurse once per nested term (oxjsonld per JSON level, oxrdfio per triple term): the
            // parser thread gets the command thread's stack, and the nesting guard bounds the depth.
            let spawned = std::thread::Builder::new()
                .stack_size(crate::STACK)
                .spawn_scoped(scope, move || {
                    parse_batches(parser, reader, name, format, progress, tx)
                });
            let parser = match spawned {
                Ok(handle) => handle,
                Err(e) => {
                    return Err(LoadError::Thread {
                        path: name.into(),
                        source: e,
                    });
                }
            };
            // The parser thread is joined, not detached: a dropped handle detaches it, and a detach racing the
            // thread's own exit crashed inside pthread_detach (SIGSEGV) about once in 150 runs of the W3C RDF
            // suite. `rx` goes first, so that a parser blocked on a full channel sees it closed and ends.
            let merged = self.merge_parsed(rx, name);
            if let Err(panic) = parser.join() {
                std::panic::resume_unwind(panic);
            }
            merged
        })
    }

    /// Interns the batches the parser thread of `name` sends, until it is done or one fails.
    fn merge_parsed(&mut self, rx: mpsc::Receiver<Parsed>, name: &str) -> Result<(), LoadError> {
        let mut blank = super::dictionary::blank_scope();
        let mut last_graph: Option<(oxrdf::GraphName, usize)> = None;
        for message in rx {
            let batch = match message {
                Parsed::Quads(batch) => batch,
                Parsed::Failed(e) => return Err(e),
                Parsed::Prefixes(prefixes) => {
                    add_prefixes(&mut self.prefixes, prefixes);
                    continue;
                }
            };
            let limit = self.term_limit.unwrap_or(TERM_LIMIT);
            if self.dict.len() > limit {
                return Err(LoadError::TooManyTerms {
                    file: name.to_owned(),
                    limit: limit as u64,
                });
            }
            for quad in batch {
                let slot = match &last_graph {
                    Some((g, slot)) if *g == quad.graph_name => *slot,
                    _ => {
                        let id = match quad.graph_name.as_ref() {
                            oxrdf::GraphNameRef::DefaultGraph => {
                                self.target.unwrap_or(TermId::DEFAULT_GRAPH)
                            }
                            oxrdf::GraphNameRef::NamedNode(n) => self.dict.intern_iri(n.as_str()),
                            oxrdf::GraphNameRef::BlankNode(b) => blank(&mut self.dict, b.as_str()),
                        };
                        let slot = self.graph_slot(id);
                        last_graph = Some((quad.graph_name.clone(), slot));
                        slot
                    }
                };
                let s = self
                    .dict
                    .intern_term(quad.subject.as_ref().into(), &mut blank);
                let p = self.dict.intern_iri(quad.predicate.as_str());
                let o = self.dict.intern_term(quad.object.as_ref(), &mut blank);
                self.graphs[slot].1.push([s, p, o]);
            }
        }
        Ok(())
    }

    fn graph_slot(&mut self, graph: TermId) -> usize {
        let graphs = &mut self.graphs;
        *self.graph_slots.entry(graph).or_insert_with(|| {
            graphs.push((graph, Vec::new()));
            graphs.len() - 1
        })
    }

    /// Indexes everything loaded.
    pub fn finish(self) -> Store {
        let mut dict = self.dict;
        if self.read_leniently {
            dict.note_raw_iris();
        }
        Store {
            dict,
            quads: QuadStore::from_graphs(self.graphs),
            prefixes: self.prefixes,
            graphs_elsewhere: Vec::new(),
        }
    }
}

/// The UTF-8 byte-order mark some editors write first.
pub(crate) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// `reader` without a leading byte-order mark (which no RDF syntax allows, and editors on some systems write).
fn skip_bom<R: Read>(mut reader: R) -> io::Result<impl Read> {
    let mut head = [0u8; 3];
    let mut n = 0;
    while n < head.len() {
        match reader.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let keep = if head[..n] == *BOM { 0 } else { n };
    Ok(io::Cursor::new(head).take(keep as u64).chain(reader))
}

/// `reader`, unless all it holds is white space (looked at in its first 8 KiB).
fn unless_blank<R: Read>(mut reader: R) -> io::Result<Option<impl Read>> {
    let mut head = vec![0u8; 8 << 10];
    let mut n = 0;
    while n < head.len() {
        match reader.read(&mut head[n..]) {
            Ok(0) => {
                if head[..n].iter().all(u8::is_ascii_whitespace) {
                    return Ok(None);
                }
                break;
            }
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    head.truncate(n);
    Ok(Some(io::Cursor::new(head).chain(reader)))
}

/// What the parsing thread hands over.
enum Parsed {
    /// The next quads, in document order.
    Quads(Vec<oxrdf::Quad>),
    /// The prefixes the document declared (sent once, at the end).
    Prefixes(Vec<(String, String)>),
    /// Parsing stopped.
    Failed(LoadError),
}

/// Quads per batch handed from the parsing thread to the interning one.
const BATCH: usize = 4096;

/// A parser for a syntax: oxrdfio's, or for RDF/XML oxrdfxml's own, which says how far it read when it fails.
enum Syntax {
    Any(RdfParser),
    Xml(oxrdfxml::RdfXmlParser),
}

/// [`Syntax`] reading a source.
enum Parsing<R: Read> {
    Any(Box<oxrdfio::ReaderQuadParser<R>>),
    Xml(Box<oxrdfxml::ReaderRdfXmlParser<R>>),
}

impl<R: Read> Parsing<R> {
    fn new(syntax: Syntax, reader: R) -> Self {
        match syntax {
            Syntax::Any(p) => Self::Any(Box::new(p.for_reader(reader))),
            Syntax::Xml(p) => Self::Xml(Box::new(p.for_reader(reader))),
        }
    }

    /// The byte offset the parser has read to, where it says (RDF/XML).
    fn offset(&self) -> Option<u64> {
        match self {
            Self::Any(_) => None,
            Self::Xml(p) => Some(p.buffer_position()),
        }
    }

    fn prefixes(&self) -> Vec<(String, String)> {
        let owned = |(p, i): (&str, &str)| (p.to_owned(), i.to_owned());
        match self {
            Self::Any(p) => p.prefixes().map(owned).collect(),
            Self::Xml(p) => p.prefixes().map(owned).collect(),
        }
    }
}

impl<R: Read> Iterator for Parsing<R> {
    type Item = Result<oxrdf::Quad, RdfParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Self::Any(p) => p.next(),
            // RDF/XML has triples only: the default graph's.
            Self::Xml(p) => Some(
                p.next()?
                    .map(|t| t.in_graph(oxrdf::GraphName::DefaultGraph))
                    .map_err(RdfParseError::from),
            ),
        }
    }
}

/// The parsing thread: reads `reader`, sends batches, then the prefixes, or the error that stopped it. Returns
/// early when the receiver has gone (the interning side failed).
fn parse_batches(
    parser: Syntax,
    reader: impl Read,
    name: &str,
    format: DataFormat,
    progress: &dyn LoadProgress,
    tx: mpsc::SyncSender<Parsed>,
) {
    let kept = Rc::new(RefCell::new(Kept::default()));
    let tail = Tail {
        inner: Counted {
            inner: reader,
            progress,
            pending: 0,
        },
        kept: Rc::clone(&kept),
    };
    let family = match format {
        DataFormat::Turtle | DataFormat::Trig | DataFormat::NTriples | DataFormat::NQuads => {
            guard::Family::Turtle
        }
        DataFormat::RdfXml => guard::Family::Xml,
        DataFormat::JsonLd => guard::Family::Json,
    };
    // N-Triples and N-Quads: `VERSION` lines blanked for oxttl, which reads the directive in Turtle only.
    let tail: Box<dyn Read + '_> = match format {
        DataFormat::NTriples | DataFormat::NQuads => Box::new(lines::VersionLines::new(tail)),
        _ => Box::new(tail),
    };
    let mut quads = Parsing::new(parser, guard::Guard::new(tail, family));
    let mut batch = Vec::with_capacity(BATCH);
    while let Some(next) = quads.next() {
        match next {
            Ok(q) => batch.push(q),
            Err(e) => {
                let error = match e {
                    RdfParseError::Io(e) => match guard::too_deep(&e) {
                        Some(deep) => match &deep.what {
                            guard::Why::Nesting(what) => LoadError::TooDeep {
                                file: name.to_owned(),
                                line: deep.line,
                                column: deep.column,
                                what,
                                limit: deep.limit,
                            },
                            guard::Why::Entities(entity) => LoadError::EntityExpansion {
                                file: name.to_owned(),
                                line: deep.line,
                                column: deep.column,
                                entity: entity.clone(),
                                limit: deep.limit,
                            },
                            guard::Why::Unclosed(open) => {
                                LoadError::Syntax(Box::new(SyntaxError {
                                    file: name.to_owned(),
                                    line: deep.line,
                                    column: deep.column,
                                    message: format!(
                                        "the document ends with {open} element(s) still open: the file is cut short (close them, or fetch the file again)"
                                    ),
                                    format: format_name(format),
                                    snippet: None,
                                    span: None,
                                }))
                            }
                            guard::Why::InvalidUtf8 => LoadError::Syntax(Box::new(SyntaxError {
                                file: name.to_owned(),
                                line: deep.line,
                                column: deep.column,
                                message:
                                    "invalid UTF-8 in a comment (the whole file must be UTF-8)"
                                        .to_owned(),
                                format: format_name(format),
                                snippet: None,
                                span: None,
                            })),
                        },
                        None => io_error(name, e),
                    },
                    RdfParseError::Syntax(e) => {
                        let kept = kept.borrow();
                        let location = e
                            .location()
                            .or_else(|| quads.offset().and_then(|at| kept.place(at)));
                        syntax_error(name, format, &e.to_string(), location, &kept)
                    }
                };
                let _ = tx.send(Parsed::Quads(batch));
                let _ = tx.send(Parsed::Failed(error));
                return;
            }
        }
        if batch.len() == BATCH
            && tx
                .send(Parsed::Quads(std::mem::replace(
                    &mut batch,
                    Vec::with_capacity(BATCH),
                )))
                .is_err()
        {
            return;
        }
    }
    let prefixes = quads.prefixes();
    if tx.send(Parsed::Quads(batch)).is_ok() {
        let _ = tx.send(Parsed::Prefixes(prefixes));
    }
}

fn open(path: &Path) -> Result<File, LoadError> {
    match File::open(path) {
        Ok(f) if f.metadata().is_ok_and(|m| m.is_dir()) => Err(LoadError::Unreadable {
            path: path.to_owned(),
            source: io::Error::new(io::ErrorKind::IsADirectory, "it is a directory"),
        }),
        Ok(f) => Ok(f),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(LoadError::Missing {
            path: path.to_owned(),
        }),
        Err(e) => Err(LoadError::Unreadable {
            path: path.to_owned(),
            source: e,
        }),
    }
}

/// The error of a failed read of the source `name`: a [`LoadError::Compressed`] when the compressed data was at
/// fault, else [`LoadError::Unreadable`].
fn io_error(name: &str, e: io::Error) -> LoadError {
    match crate::codec::corrupt(&e) {
        Some(c) => LoadError::Compressed {
            file: name.to_owned(),
            corrupt: c.to_string(),
            tool: c.codec.name(),
        },
        None => LoadError::Unreadable {
            path: PathBuf::from(name),
            source: e,
        },
    }
}

/// Up to the first 6 bytes of a reader (enough to tell every codec by its magic number).
fn read_head(reader: &mut impl Read) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(6);
    reader.take(6).read_to_end(&mut head)?;
    Ok(head)
}

/// The codec whose magic number starts a regular file, which is left at its start.
fn head_codec(file: &mut File) -> io::Result<Option<crate::codec::Codec>> {
    let head = read_head(file)?;
    file.seek(io::SeekFrom::Start(0))?;
    Ok(crate::codec::Codec::sniff(&head))
}

/// The `file://` IRI of a path, made absolute, with the characters an IRI path cannot hold percent-encoded.
pub fn file_iri(path: &Path) -> String {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let text = absolute.to_string_lossy().replace('\\', "/");
    let mut iri = String::from("file://");
    if !text.starts_with('/') {
        iri.push('/');
    }
    for c in text.chars() {
        match c {
            'A'..='Z'
            | 'a'..='z'
            | '0'..='9'
            | '-'
            | '.'
            | '_'
            | '~'
            | '/'
            | ':'
            | '@'
            | '!'
            | '$'
            | '&'
            | '\''
            | '('
            | ')'
            | '*'
            | '+'
            | ','
            | ';'
            | '=' => iri.push(c),
            c if !c.is_ascii() && !c.is_control() => iri.push(c),
            c => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    iri.push_str(&format!("%{b:02X}"));
                }
            }
        }
    }
    iri
}

/// The error `message` at `location` (`None`: the parser did not say where) of the source `name`, quoting the
/// line from `tail` when it still holds it.
fn syntax_error(
    name: &str,
    format: DataFormat,
    message: &str,
    location: Option<std::ops::Range<oxrdfio::TextPosition>>,
    tail: &Kept,
) -> LoadError {
    let json_ld = format == DataFormat::JsonLd;
    let format = format_name(format);
    // oxjsonld's words for a context it would have to fetch: what reasonctl does instead, and the fix.
    let message = if message.contains("LoadDocumentCallback") {
        "the @context names a document to load (a remote or relative context, or @import); reasonctl loads no \
         document but the data: put the context's content inline, as a JSON object"
    } else {
        message
    };
    let Some(location) = location else {
        return LoadError::SyntaxUnplaced {
            file: name.to_owned(),
            message: message.to_owned(),
            format,
        };
    };
    let offset = location.start.offset;
    let len = location.end.offset.saturating_sub(offset).max(1);
    let snippet = tail.window(name, offset, location.start.line);
    let span = snippet.as_ref().map(|w| {
        let r = w.clip(offset as usize..(offset + len) as usize);
        SourceSpan::new(r.start.into(), r.len())
    });
    // oxjsonld counts columns in bytes; the kept bytes give them in characters, as the other parsers count.
    let column = if json_ld {
        tail.place(offset)
            .map_or(location.start.column, |p| p.start.column)
    } else {
        location.start.column
    };
    LoadError::Syntax(Box::new(SyntaxError {
        file: name.to_owned(),
        line: location.start.line + 1,
        column: column + 1,
        message: short_message(message),
        format,
        snippet,
        span,
    }))
}

/// The parser's message without its own position prefix (we print `file:line:col` ourselves).
fn short_message(message: &str) -> String {
    // oxttl writes "Parser error at line L column C: message" or "… between … and …: message".
    match message.split_once(": ") {
        Some((head, rest)) if head.contains("line") && head.contains("column") => rest.to_owned(),
        _ => message.to_owned(),
    }
}

fn format_name(format: DataFormat) -> &'static str {
    match format {
        DataFormat::Turtle => "Turtle",
        DataFormat::Trig => "TriG",
        DataFormat::NTriples => "N-Triples",
        DataFormat::NQuads => "N-Quads",
        DataFormat::RdfXml => "RDF/XML",
        DataFormat::JsonLd => "JSON-LD",
    }
}

/// A reader that reports bytes to a [`LoadProgress`], in steps of at least 1 MiB.
struct Counted<'p, R> {
    inner: R,
    progress: &'p dyn LoadProgress,
    pending: u64,
}

impl<R> Counted<'_, R> {
    fn flush_progress(&mut self) {
        if self.pending > 0 {
            self.progress.advance(self.pending);
            self.pending = 0;
        }
    }
}

impl<R> Drop for Counted<'_, R> {
    fn drop(&mut self) {
        self.flush_progress();
    }
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pending += n as u64;
        if self.pending >= 1 << 20 {
            self.flush_progress();
        }
        Ok(n)
    }
}

/// A reader that remembers the last bytes it passed on, so a syntax error can quote its line.
struct Tail<R> {
    inner: R,
    kept: Rc<RefCell<Kept>>,
}

/// The last bytes a [`Tail`] passed on.
#[derive(Default)]
struct Kept {
    kept: Vec<u8>,
    /// Offset of `kept[0]` in the whole input.
    start: u64,
    /// Line ends (`\n`) in all the bytes passed on.
    newlines: u64,
}

const TAIL_KEEP: usize = 1 << 16;

impl Kept {
    fn push(&mut self, bytes: &[u8]) {
        self.newlines += memchr::memchr_iter(b'\n', bytes).count() as u64;
        let n = bytes.len();
        if self.kept.len() + n > 2 * TAIL_KEEP {
            let drop = (self.kept.len() + n)
                .saturating_sub(TAIL_KEEP)
                .min(self.kept.len());
            self.kept.drain(..drop);
            self.start += drop as u64;
        }
        let skip = n.saturating_sub(2 * TAIL_KEEP);
        self.start += skip as u64;
        self.kept.extend_from_slice(&bytes[skip..]);
    }

    /// The position of byte `offset` (an empty range there), if the kept bytes still hold it and its line's
    /// start: its line from the line ends passed on and those after it, its column in characters from the
    /// line's start.
    fn place(&self, offset: u64) -> Option<std::ops::Range<oxrdfio::TextPosition>> {
        let at = usize::try_from(offset.checked_sub(self.start)?).ok()?;
        let (before, after) = (self.kept.get(..at)?, &self.kept[at..]);
        let line = self.newlines - memchr::memchr_iter(b'\n', after).count() as u64;
        let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
        if line_start == 0 && self.start > 0 {
            return None; // the line begins before the kept bytes: its column is not known
        }
        let column = String::from_utf8_lossy(&before[line_start..])
            .chars()
            .count() as u64;
        let here = oxrdfio::TextPosition {
            line,
            column,
            offset,
        };
        Some(here..here)
    }

    /// The line holding `offset` (cut to about 160 characters around it), if the kept bytes still hold it.
    fn window(&self, name: &str, offset: u64, line: u64) -> Option<Excerpt> {
        let end_all = self.start + self.kept.len() as u64;
        if offset < self.start || offset > end_all {
            return None;
        }
        let at = (offset - self.start) as usize;
        // A line ends at LF, CR LF or a lone CR (classic Mac), as the parsers count lines.
        let line_start = self.kept[..at]
            .iter()
            .rposition(|&b| b == b'\n' || b == b'\r')
            .map_or(0, |i| i + 1);
        if line_start == 0 && self.start > 0 {
            return None; // the line begins before the kept bytes
        }
        let line_end = self.kept[at..]
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
            .map_or(self.kept.len(), |i| at + i);
        let mut from = line_start.max(at.saturating_sub(80));
        let mut to = line_end.min(at + 80).max(at);
        while from > line_start && !is_char_boundary(&self.kept, from) {
            from -= 1;
        }
        while to < line_end && !is_char_boundary(&self.kept, to) {
            to += 1;
        }
        let text = String::from_utf8_lossy(&self.kept[from..to]).into_owned();
        let column = String::from_utf8_lossy(&self.kept[line_start..from])
            .chars()
            .count();
        Some(Excerpt::part(
            name,
            text,
            (self.start as usize) + from,
            line as usize,
            column,
        ))
    }
}

fn is_char_boundary(bytes: &[u8], i: usize) -> bool {
    bytes.get(i).is_none_or(|&b| (b as i8) >= -0x40)
}

impl<R: Read> Read for Tail<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.kept.borrow_mut().push(&buf[..n]);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_bytes_place_an_offset_by_line_and_character_column_after_the_window_has_moved_on() {
        let mut kept = Kept::default();
        // 40,000 lines of 10 bytes (4 windows' worth), then "ab\u{e9}cd" on line 40,001 (0-based 40,000).
        for _ in 0..400 {
            kept.push(&b"123456789\n".repeat(100));
        }
        let at = kept.start + kept.kept.len() as u64;
        kept.push("ab\u{e9}cd\nnext\n".as_bytes());
        // 'c' is byte 4 of its line, character 3.
        let place = kept.place(at + 4).expect("kept");
        assert_eq!((place.start.line, place.start.column), (40_000, 3));
        let first = kept.place(at).expect("kept");
        assert_eq!((first.start.line, first.start.column), (40_000, 0));
        // An offset the window no longer holds is not placed, nor one whose line began before it.
        assert!(kept.place(10).is_none());
        let mut long = Kept::default();
        long.push(&[b'x'; 3 * TAIL_KEEP]);
        let end = long.start + long.kept.len() as u64;
        assert!(long.place(end - 1).is_none());
    }
    use crate::store::TermRef;

    fn load_str(text: &str, format: DataFormat) -> Result<Store, LoadError> {
        let mut loader = Loader::new();
        loader.load_reader(
            "test",
            text.as_bytes(),
            format,
            Some("http://example.org/base/"),
            &NoProgress,
        )?;
        Ok(loader.finish())
    }

    fn code(e: &LoadError) -> String {
        miette::Diagnostic::code(e)
            .map(|c| c.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn a_parser_thread_that_cannot_start_names_the_file_and_the_limits_to_raise() {
        // What a failed spawn of the parser thread reports (the spawn itself needs a process near its
        // address-space limit; `tests/hostile.rs` runs one under `ulimit -v` for the heap bound).
        let e = LoadError::Thread {
            path: "dump.nt".into(),
            source: io::Error::from(io::ErrorKind::WouldBlock),
        };
        assert_eq!(code(&e), "reasonctl::load::thread");
        assert!(
            e.to_string()
                .starts_with("cannot start the thread that parses dump.nt: ")
        );
        let help = miette::Diagnostic::help(&e).unwrap().to_string();
        assert!(
            help.contains("ulimit -v") && help.contains("--threads"),
            "{help}"
        );
    }

    #[test]
    fn a_bad_base_and_too_many_terms_fail_with_their_codes() {
        let mut loader = Loader::new();
        let e = loader
            .load_reader(
                "t",
                "".as_bytes(),
                DataFormat::Turtle,
                Some("not an iri"),
                &NoProgress,
            )
            .unwrap_err();
        assert_eq!(code(&e), "reasonctl::load::bad_base");
        let mut loader = Loader::new();
        loader.limit_terms(10);
        let text: String = (0..10_000)
            .map(|i| format!("<http://e/s{i}> <http://e/p> <http://e/o{i}> .\n"))
            .collect();
        let e = loader
            .load_reader(
                "t",
                text.as_bytes(),
                DataFormat::NTriples,
                None,
                &NoProgress,
            )
            .unwrap_err();
        assert_eq!(code(&e), "reasonctl::load::too_many_terms");
        assert!(e.to_string().contains("more than 10 distinct terms"), "{e}");
    }

    #[test]
    fn the_first_declaration_of_a_prefix_name_is_kept_across_files_and_each_name_once() {
        let mut loader = Loader::new();
        let first: String = (0..2000)
            .map(|i| format!("@prefix p{i}: <http://e/{i}/> .\n"))
            .chain(["@prefix p0: <http://e/again/> .\n".to_owned()])
            .collect();
        for (name, text) in [
            ("a", first.as_str()),
            (
                "b",
                "@prefix p1: <http://e/other/> .\n@prefix z: <http://e/z/> .\n",
            ),
        ] {
            loader
                .load_reader(name, text.as_bytes(), DataFormat::Turtle, None, &NoProgress)
                .unwrap();
        }
        let prefixes = loader.finish().prefixes;
        assert_eq!(prefixes.len(), 2001);
        // Within a file the parser's last declaration of a name is its own; across files the first file's stays.
        assert_eq!(prefixes.iter().filter(|(p, _)| p == "p0").count(), 1);
        assert!(prefixes.contains(&("p1".to_owned(), "http://e/1/".to_owned())));
        assert_eq!(
            prefixes.last(),
            Some(&("z".to_owned(), "http://e/z/".to_owned()))
        );
    }

    #[test]
    fn annotations_become_three_triples_with_a_reifier() {
        let store = load_str(
            "PREFIX : <http://example.org/>\n:a :knows :b ~ :r {| :confidence 0.9 |} .\n",
            DataFormat::Turtle,
        )
        .unwrap();
        let g = store.quads.graph(TermId::DEFAULT_GRAPH).unwrap();
        assert_eq!(g.len(), 3);
        let reifies = crate::store::well_known::RDF_REIFIES;
        let keys = g.range(&[None, Some(reifies), None]);
        assert_eq!(keys.len(), 1);
        let object = keys.get(0)[2];
        assert!(matches!(store.dict.get(object), TermRef::Triple(_)));
    }

    #[test]
    fn blank_node_labels_are_scoped_per_source() {
        let mut loader = Loader::new();
        for _ in 0..2 {
            loader
                .load_reader(
                    "x",
                    "_:b <http://e/p> \"v\" .\n".as_bytes(),
                    DataFormat::NTriples,
                    None,
                    &NoProgress,
                )
                .unwrap();
        }
        let store = loader.finish();
        assert_eq!(store.quads.len(), 2);
    }

    #[test]
    fn relative_iris_resolve_against_the_base() {
        let store = load_str("<a> <p> <#c> .", DataFormat::Turtle).unwrap();
        assert!(store.dict.lookup_iri("http://example.org/base/a").is_some());
        assert!(
            store
                .dict
                .lookup_iri("http://example.org/base/#c")
                .is_some()
        );
    }

    #[test]
    fn a_syntax_error_reports_line_column_and_the_offending_line() {
        let err = load_str(
            "<http://e/a> <http://e/p> <http://e/o> .\n<http://e/a> <http://e/p> oops .\n",
            DataFormat::Turtle,
        )
        .unwrap_err();
        let LoadError::Syntax(e) = &err else {
            panic!("{err:?}")
        };
        assert_eq!((e.line, e.column), (2, 27));
        assert_eq!(
            e.snippet.as_ref().unwrap().text(),
            "<http://e/a> <http://e/p> oops ."
        );
    }

    #[test]
    fn file_iris_are_absolute_and_escaped() {
        let iri = file_iri(Path::new("/tmp/a b/c#d.ttl"));
        assert_eq!(iri, "file:///tmp/a%20b/c%23d.ttl");
    }
}
