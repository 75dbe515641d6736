//! This module defines [`Terms`]: the store's dictionary, read-only and shared, extended by the terms one
//! execution computes (BIND results, CONCAT strings, fresh blank nodes).

use crate::store::{Dictionary, LiteralKind, TermId, TermRef, TermSource, Triple};

/// The dictionary plus an execution's own terms; a term already in the dictionary always keeps its id there,
/// so id equality stays term equality.
pub struct Terms<'a> {
    main: &'a Dictionary,
    local: Dictionary,
}

impl<'a> Terms<'a> {
    /// No computed terms yet.
    pub fn new(main: &'a Dictionary) -> Self {
        Self {
            main,
            local: Dictionary::extending(main),
        }
    }

    /// The computed terms `local` (a dictionary [`Dictionary::extending`] `main`) over `main` again: an
    /// execution's terms carried from one evaluation to the next ([`Terms::into_local`]).
    pub fn resume(main: &'a Dictionary, local: Dictionary) -> Self {
        debug_assert_eq!(
            local.base(),
            main.end(),
            "local terms extend the main dictionary"
        );
        Self { main, local }
    }

    /// The computed terms, to [`Terms::resume`] later.
    pub fn into_local(self) -> Dictionary {
        self.local
    }

    /// The shared dictionary.
    pub fn main(&self) -> &'a Dictionary {
        self.main
    }

    /// The computed terms (ids from the main dictionary's end).
    pub fn local(&self) -> &Dictionary {
        &self.local
    }

    /// Whether `id` was computed by this execution.
    pub fn is_local(&self, id: TermId) -> bool {
        id >= self.local.base()
    }

    /// An IRI's id.
    pub fn iri(&mut self, iri: &str) -> TermId {
        match self.main.lookup_iri(iri) {
            Some(id) => id,
            None => self.local.intern_iri(iri),
        }
    }

    /// Room for `terms` more computed terms of about `bytes` bytes (see [`Dictionary::reserve`]).
    pub fn reserve(&mut self, terms: usize, bytes: usize) {
        self.local.reserve(terms, bytes);
    }

    /// A literal's id.
    pub fn literal(&mut self, lexical: &str, kind: LiteralKind<'_>) -> TermId {
        match self.main.lookup_literal(lexical, kind) {
            Some(id) => id,
            None => self.local.intern_literal(lexical, kind),
        }
    }

    /// A triple term's id.
    pub fn triple(&mut self, t: Triple) -> TermId {
        match self.main.lookup_triple(t) {
            Some(id) => id,
            None => self.local.intern_triple(t),
        }
    }

    /// The ids of IRIs `ns` + `local(i)`, for `i < n`, looked up and hashed in parallel (see
    /// [`Dictionary::intern_iris_in`]).
    pub fn iris_in(
        &mut self,
        ns: &str,
        n: usize,
        local: impl Fn(usize, &mut Vec<u8>) + Sync,
    ) -> Vec<TermId> {
        self.local.intern_iris_in(self.main, ns, n, local)
    }

    /// The ids of triple terms, looked up and hashed in parallel (see [`Dictionary::intern_triples`]).
    pub fn triples(&mut self, n: usize, triple: impl Fn(usize) -> Triple + Sync) -> Vec<TermId> {
        self.local.intern_triples(self.main, n, triple)
    }

    /// A blank node no other term is.
    pub fn fresh_blank(&mut self) -> TermId {
        self.local.new_blank_node()
    }
}

impl TermSource for Terms<'_> {
    fn term(&self, id: TermId) -> TermRef<'_> {
        if id < self.local.base() {
            self.main.get(id)
        } else {
            self.local.get(id)
        }
    }

    fn end(&self) -> TermId {
        self.local.end()
    }

    fn has_raw_iris(&self) -> bool {
        self.main.has_raw_iris()
    }
}
