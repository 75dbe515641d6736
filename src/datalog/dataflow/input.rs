//! This module defines how a cluster's processes load the data: each reads its share, and all build the same
//! dictionary from every share's terms.
//!
//! ```text
//! process i:  connect (the handshake compares the DATA files' names and sizes, and the load options)
//!             load its share (store::load::share::pieces)
//!             send its share's dictionary, cut-file blank labels, prefixes and stored rules to every process;
//!             receive theirs
//!             intern every share's terms in process order (share::unite): the same dictionary everywhere
//!             renumber its own facts into it; keep the links for the run
//! ```

use std::time::{Duration, Instant};

use miette::Diagnostic;
use sha2::Digest;
use thiserror::Error;

use super::{Cluster, DataflowError, cluster};
use crate::store::load::share::{self, Share};
use crate::store::load::{DataSource, LoadError, LoadOptions, LoadProgress};
use crate::store::{QuadStore, Store, TermId, Triple};

/// What a process that could not read its share sends the others instead of it, before its error.
const FAILED: &[u8] = b"rctl-no1";

/// Why a cluster process could not load its share.
#[derive(Debug, Error, Diagnostic)]
pub enum ShareError {
    /// Its share of the data could not be read.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Load(#[from] LoadError),
    /// The cluster could not be joined, or a process went away.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Cluster(#[from] DataflowError),
}

/// What the processes must agree on before they cut the data into shares: the sources (names and sizes, which
/// decide the cuts), how they are read, reasonctl's version (which cuts them), and the options that shape the
/// run ([`Cluster::agreed`]).
fn sources_fingerprint(sources: &[DataSource], options: &LoadOptions, c: &Cluster) -> [u8; 32] {
    let processes = c.addresses.len();
    let mut h = sha2::Sha256::new();
    // The version too: another build may cut the files (or decompress them) otherwise.
    h.update(b"shares-1 ");
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.update((processes as u64).to_le_bytes());
    for source in sources {
        let (name, size) = match source {
            DataSource::Stdin => ("-".to_owned(), 0),
            DataSource::File(path) => (
                path.display().to_string(),
                std::fs::metadata(path).map_or(u64::MAX, |m| m.len()),
            ),
        };
        h.update((name.len() as u64).to_le_bytes());
        h.update(name.as_bytes());
        h.update(size.to_le_bytes());
    }
    h.update(
        format!(
            "{:?} {:?} {}",
            options.format, options.base, options.lenient
        )
        .as_bytes(),
    );
    h.update(c.agreed.as_bytes());
    h.finalize().into()
}

/// Connects to the cluster under `deadline` (or the wait for the others, if sooner); a deadline that passes
/// while waiting is the time budget's error.
pub(super) fn connect(
    c: &Cluster,
    workers: usize,
    fingerprint: [u8; 32],
    deadline: Option<Instant>,
    timeout: Option<Duration>,
) -> Result<Vec<Option<std::net::TcpStream>>, DataflowError> {
    let wait = Instant::now() + cluster::WAIT;
    cluster::connect(
        c,
        workers,
        fingerprint,
        deadline.map_or(wait, |d| d.min(wait)),
    )
    .map_err(|e| match e {
        DataflowError::Unreachable { .. } if deadline.is_some_and(|d| Instant::now() >= d) => {
            DataflowError::Timeout {
                seconds: timeout.map_or(0.0, |t| t.as_secs_f64()),
            }
        }
        e => e,
    })
}

/// Loads this process's share of `sources` into a store whose dictionary every process of `c` builds alike
/// (its facts: the share's, and every share's stored rules), and keeps the cluster's links for the run
/// ([`super::materialize`] takes them).
pub fn load_share(
    sources: &[DataSource],
    options: &LoadOptions,
    c: &Cluster,
    workers: usize,
    (deadline, timeout): (Option<Instant>, Option<Duration>),
    progress: &dyn LoadProgress,
) -> Result<Store, ShareError> {
    let processes = c.addresses.len();
    let me = c.process;
    let links = connect(
        c,
        workers,
        sources_fingerprint(sources, options, c),
        deadline,
        timeout,
    )?;
    let loaded = share::load(sources, options, (processes, me), progress)
        .map_err(ShareError::from)
        .and_then(|(store, share)| {
            // A rule set in SHACL 1.2 Rules' RDF syntax spans many facts (lists, nested nodes) that a cut may
            // split between processes: a cluster does not read one from the data.
            let (mut texts, mut errors) = (Vec::new(), Vec::new());
            crate::rules::srl::rdf::from_store(&store, None, &mut texts, &mut errors);
            match texts.first() {
                Some(t) => Err(DataflowError::RuleSetInData { id: t.id.clone() }.into()),
                None if !errors.is_empty() => Err(DataflowError::RuleSetInData {
                    id: "(a rule set that does not translate)".to_owned(),
                }
                .into()),
                None => Ok((store, share)),
            }
        });
    let (store, mine) = match loaded {
        Ok(loaded) => loaded,
        Err(e) => {
            // The others hear why this process stops (they end with `PeerInput`), not just that it went away.
            let mut said = FAILED.to_vec();
            said.extend(e.to_string().as_bytes());
            let _ = cluster::exchange(&links, me, (&said, "their shares' terms"));
            return Err(e);
        }
    };
    let encoded = mine.encode();
    let received = cluster::exchange(&links, me, (&encoded, "their shares' terms"))?;
    let sent = (8 + encoded.len() as u64) * links.iter().flatten().count() as u64;
    drop(encoded);
    let mut shares = Vec::with_capacity(processes);
    for (j, bytes) in received.into_iter().enumerate() {
        if j == me {
            shares.push(Share::default());
            continue;
        }
        if let Some(message) = bytes.strip_prefix(FAILED) {
            return Err(DataflowError::PeerInput {
                process: j,
                message: String::from_utf8_lossy(message).into_owned(),
            }
            .into());
        }
        let Some(share) = Share::decode(&bytes) else {
            return Err(DataflowError::Lost {
                reason: format!("process {j} sent its share's terms garbled"),
            }
            .into());
        };
        shares.push(share);
    }
    let elsewhere = (shares.iter()).fold(0u64, |n, s| n.saturating_add(s.facts));
    let everywhere = elsewhere.saturating_add(mine.facts);
    shares[me] = mine;
    // Every file cut between processes read whole and once (the processes cut alike only from the same files).
    if let Err((process, what)) = share::tiled(&shares) {
        return Err(DataflowError::Mismatch {
            process,
            what: format!(
                "it cut the data otherwise: {what} (every process needs the same copy of every DATA file)"
            ),
        }
        .into());
    }
    let Some(united) = share::unite(&shares, me)? else {
        return Err(DataflowError::Lost {
            reason: "a process sent a damaged dictionary".to_owned(),
        }
        .into());
    };
    drop(shares);
    let ids = &united.ids;
    let id = |t: TermId| ids[t.index()];
    let mut graphs: Vec<(TermId, Vec<Triple>)> = (store.quads.graphs())
        .map(|(g, index)| {
            let triples = index.triples().iter().map(|t| t.map(id)).collect();
            (id(g), triples)
        })
        .collect();
    // The other shares' stored rules: every process compiles the same program.
    for [g, s, p, o] in united.rules {
        match graphs.iter_mut().find(|(h, _)| *h == g) {
            Some((_, triples)) => triples.push([s, p, o]),
            None => graphs.push((g, vec![[s, p, o]])),
        }
    }
    drop(store);
    cluster::keep_joined(cluster::Joined {
        links,
        elsewhere,
        everywhere,
        sent,
    });
    Ok(Store {
        dict: united.dict,
        quads: QuadStore::from_graphs(graphs),
        prefixes: united.prefixes,
        graphs_elsewhere: united.graphs,
    })
}
