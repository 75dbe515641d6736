//! This module defines [`Rule`]: an id, where it came from, a body lowered to the query algebra, and heads.

use std::path::PathBuf;

use crate::ir::lower::TemplateTerm;
use crate::ir::{Op, VarSet, VarTable};
use crate::store::TermId;

/// The rule language.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Language {
    /// `CONSTRUCT { … } WHERE { … }`.
    Sparql,
    /// `{"@context", "where", "insert"}`.
    JsonLd,
    /// SHACL 1.2 Rules' compact syntax: `RULE { head } WHERE { body }`, `IF { body } THEN { head }`, `DATA { … }`.
    Srl,
}

/// Where a rule's text came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A rules file; `offset` is the byte offset of the rule's section in it (0 for a one-rule file).
    File {
        /// The file.
        path: PathBuf,
        /// Start of the rule's own text in the file.
        offset: usize,
        /// How many bytes at the start of the rule's text are the file's prologue (the file's first bytes) rather
        /// than its own section: a rule-text offset `p` is file offset `p` below it, `offset + p - prologue` above.
        prologue: usize,
    },
    /// A rule of a rules file in SHACL 1.2 Rules' RDF syntax, translated to SRL (the rule's text is the
    /// translation, not a slice of the file).
    Translated {
        /// The file.
        path: PathBuf,
        /// The rule's node (its IRI, or its id when it is a blank node).
        node: String,
    },
    /// An `f:rule` value in the data (or a rule of a rule set in SHACL 1.2 Rules' RDF syntax stored there).
    Stored {
        /// The subject carrying it.
        subject: String,
        /// The graph it was found in (`None`: the default graph).
        graph: Option<String>,
    },
}

/// One head: a template triple, in the default graph or a named graph.
#[derive(Clone, Debug, PartialEq)]
pub struct Head {
    /// Subject, predicate, object.
    pub terms: [TemplateTerm; 3],
    /// The named graph the facts go to (`None`: the default graph).
    pub graph: Option<TermId>,
}

/// A validated rule, ready to run.
#[derive(Clone, Debug)]
pub struct Rule {
    /// The id (unique in the program).
    pub id: String,
    /// Where it came from.
    pub origin: Origin,
    /// The language it was written in.
    pub language: Language,
    /// The text as written (the prologue included for a rule of a multi-rule file).
    pub text: String,
    /// The body.
    pub body: Op,
    /// The body's variables.
    pub vars: VarTable,
    /// The heads.
    pub heads: Vec<Head>,
}

impl Rule {
    /// The variables the heads read, when the facts a body solution makes depend on them alone; `None` when a
    /// head makes a blank node, a new one per solution (then every solution counts).
    pub fn head_vars(&self) -> Option<VarSet> {
        fn collect(t: &TemplateTerm, out: &mut VarSet) -> Option<()> {
            match t {
                TemplateTerm::Const(_) => Some(()),
                TemplateTerm::Var(v) => {
                    out.insert(*v);
                    Some(())
                }
                TemplateTerm::Blank(_) => None,
                TemplateTerm::Triple(parts) => parts.iter().try_for_each(|p| collect(p, out)),
                TemplateTerm::Reifier(minted) => {
                    minted.edge.iter().try_for_each(|p| collect(p, out))
                }
            }
        }
        let mut out = VarSet::new();
        for head in &self.heads {
            head.terms.iter().try_for_each(|t| collect(t, &mut out))?;
        }
        Some(out)
    }
}
