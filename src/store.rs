//! This module defines the [`Store`]: the term dictionary plus the asserted quads, and the layers built on them.

pub mod dictionary;
pub mod load;
pub mod overlay;
pub mod quads;
pub mod term;

pub use dictionary::{Dictionary, TermSource};
pub use overlay::{Overlay, Scan, View};
pub use quads::{Pattern, Perm, QuadStore, TripleIndex};
pub use term::{Direction, Iri, LiteralKind, Quad, TermId, TermRef, Triple, well_known};

/// A loaded dataset: every term interned once, the quads indexed per graph, and the prefixes the inputs declared.
#[derive(Debug, Default)]
pub struct Store {
    /// The term dictionary.
    pub dict: Dictionary,
    /// The asserted quads.
    pub quads: QuadStore,
    /// Prefixes declared by the inputs (name, IRI), first declaration of a name wins; writers reuse them.
    pub prefixes: Vec<(String, String)>,
    /// In a cluster process that loaded its share of the data: the named graphs that hold facts in the other
    /// processes' shares (a rule head may write into them). Empty otherwise.
    pub graphs_elsewhere: Vec<TermId>,
}

impl Store {
    /// Approximate heap bytes held by the dictionary and the indexes.
    pub fn heap_bytes(&self) -> usize {
        self.dict.heap_bytes() + self.quads.heap_bytes()
    }
}
