//! This module defines semi-naive seeding inside a recursive group.
//!
//! A match a rule finds in pass k+1 but not in pass k uses at least one fact the group derived in pass k. So after
//! the group's first pass each rule runs once per *recursive atom* (a top-level triple pattern of the default
//! graph whose read may observe one of the group's writes), with a VALUES seed of the previous pass's new facts
//! matching that atom: the seed replaces the atom when it matches exactly as a scan would (variables and
//! constants, a constant predicate, no variable twice), otherwise it goes in front of the atom, which still does
//! the matching. The other atoms read the full overlay, so a match using new facts in two atoms is found twice and
//! deduplicated; splitting old and new facts per atom (nemo's All/New/Old variants) would need two overlays per
//! pass. A rule that reads its group anywhere else (a UNION branch, EXISTS, a subquery, a path, a named graph) or
//! whose body is not repeatable re-runs whole.
//!
//! ```text
//! reach(x,z) :- reach(x,y), edge(y,z).      pass k+1:  reach(x,z) :- Δreach(x,y), edge(y,z).
//! ```

use crate::ir::{Expr, GraphTerm, Op, PatternTerm, TriplePattern, VarId, VarSet};
use crate::store::{TermId, Triple, View};

use super::footprint::{Access, expr_reads, operand_reads};

/// How a rule of a recursive group runs after the group's first pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seeding {
    /// The whole body, every pass.
    Whole,
    /// Once per recursive atom (indices into the body's top-level operands), seeded by the last pass's facts.
    Atoms(Vec<usize>),
}

/// A body's top-level join operands and the filters around them.
fn top_level(body: &Op) -> (Vec<&Op>, Vec<&Expr>) {
    let mut filters = Vec::new();
    let mut op = body;
    while let Op::Filter { input, expr } = op {
        filters.push(expr);
        op = input;
    }
    let ops = match op {
        Op::Join(ops) => ops.iter().collect(),
        other => vec![other],
    };
    (ops, filters)
}

/// The variables `body` binds, in every solution, at the subject or predicate (`.0`) and at the predicate (`.1`)
/// of a triple pattern it joins at its top level: their values are subjects (or predicates) of facts, or of the
/// facts a seed put in that pattern's place, so a head that puts them at the same place needs no check of the
/// term's kind.
pub fn node_vars(body: &Op) -> (VarSet, VarSet) {
    let (mut nodes, mut predicates) = (VarSet::new(), VarSet::new());
    for op in top_level(body).0 {
        if let Op::Pattern(tp) = op {
            if let PatternTerm::Var(v) = tp.terms[0] {
                nodes.insert(v);
            }
            if let PatternTerm::Var(v) = tp.terms[1] {
                nodes.insert(v);
                predicates.insert(v);
            }
        }
    }
    (nodes, predicates)
}

/// What a triple of a pattern or a head puts at one place of a fact.
pub enum Place {
    /// This term.
    Const(TermId),
    /// This variable's value.
    Var(VarId),
    /// Anything (checked elsewhere).
    Free,
}

/// A triple of constants and variables (a body's pattern, a rule's head) matched against facts by place, each
/// match a row of a VALUES block over its variables: no binding list per fact, and one flat list of rows.
pub struct Columns {
    /// The variables, in the order they first occur.
    pub vars: Vec<VarId>,
    /// By place (subject, predicate, object): the constant there, the variable's column, or nothing.
    at: [Result<Option<TermId>, usize>; 3],
}

impl Columns {
    /// The columns of a triple's places; `None` if a place has no column shape (it gave `None`).
    pub fn new(places: impl IntoIterator<Item = Option<Place>>) -> Option<Self> {
        let mut vars: Vec<VarId> = Vec::new();
        let mut at = [Ok(None); 3];
        for (k, place) in places.into_iter().take(3).enumerate() {
            at[k] = match place? {
                Place::Const(c) => Ok(Some(c)),
                Place::Free => Ok(None),
                Place::Var(v) => Err(vars.iter().position(|x| *x == v).unwrap_or_else(|| {
                    vars.push(v);
                    vars.len() - 1
                })),
            };
        }
        Some(Self { vars, at })
    }

    /// Whether `fact` has the constants.
    fn fits(&self, fact: &Triple) -> bool {
        (self.at.iter().zip(fact)).all(|(at, v)| !matches!(at, Ok(Some(c)) if c != v))
    }

    /// Appends to `cells` the variables as `fact` binds them, if the triple matches it.
    pub fn push_row(&self, fact: Triple, cells: &mut Vec<Option<TermId>>) -> bool {
        if !self.fits(&fact) {
            return false;
        }
        let start = cells.len();
        cells.resize(start + self.vars.len(), None);
        for (at, value) in self.at.iter().zip(fact) {
            if let Err(col) = *at {
                match cells[start + col] {
                    Some(bound) if bound != value => {
                        cells.truncate(start);
                        return false;
                    }
                    _ => cells[start + col] = Some(value),
                }
            }
        }
        true
    }

    /// The VALUES block of the facts the triple matches: the constants are tested first (a fact they reject costs
    /// no row: most of a large delta, for a pattern with a constant predicate or class), and the list is sized
    /// before it fills.
    pub fn rows(
        self,
        facts: impl Iterator<Item = Triple> + Clone,
    ) -> (Vec<VarId>, crate::ir::ValueRows) {
        let width = self.vars.len();
        let fitting = facts.clone().filter(|f| self.fits(f)).count();
        let mut cells: Vec<Option<TermId>> = Vec::with_capacity(width * fitting);
        let n: usize = facts
            .map(|f| usize::from(self.push_row(f, &mut cells)))
            .sum();
        let rows = if width == 0 {
            crate::ir::ValueRows::empty_rows(n)
        } else {
            crate::ir::ValueRows::flat(width, cells)
        };
        (self.vars, rows)
    }
}

fn reads_group(reads: &[Access], group_writes: &[Access]) -> bool {
    reads
        .iter()
        .any(|r| group_writes.iter().any(|w| r.overlaps(w)))
}

/// How a rule with this body runs once its group iterates.
pub fn seeding(body: &Op, repeatable: bool, group_writes: &[Access]) -> Seeding {
    if !repeatable {
        return Seeding::Whole;
    }
    let (ops, filters) = top_level(body);
    if filters
        .iter()
        .any(|f| reads_group(&expr_reads(f), group_writes))
    {
        return Seeding::Whole;
    }
    let mut atoms = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let reads = operand_reads(&ops, i);
        if !reads_group(&reads, group_writes) {
            continue;
        }
        match op {
            Op::Pattern(tp) if tp.graph == GraphTerm::Default => atoms.push(i),
            _ => return Seeding::Whole,
        }
    }
    Seeding::Atoms(atoms)
}

/// Whether the seed's rows are exactly the atom's matches among the seed facts.
fn replaceable(tp: &TriplePattern) -> bool {
    let mut vars: Vec<VarId> = Vec::new();
    for t in &tp.terms {
        match t {
            PatternTerm::Var(v) => {
                if vars.contains(v) {
                    return false;
                }
                vars.push(*v);
            }
            PatternTerm::Const(_) => {}
            PatternTerm::Triple(_) => return false,
        }
    }
    matches!(tp.terms[1], PatternTerm::Const(_))
}

/// Whether a top-level triple pattern of the body other than the seeded `atom` has no match in `view` whatever
/// its variables are (say `?x owl:maxQualifiedCardinality ?n` over data without one): the seeded body then finds
/// nothing, and the seed (one row per new fact of the group) need not be built. A body is a join of its operands.
pub fn finds_nothing(body: &Op, atom: usize, view: &View<'_>) -> bool {
    let (ops, _) = top_level(body);
    ops.iter().enumerate().any(|(i, op)| {
        let Op::Pattern(tp) = op else {
            return false;
        };
        let graph = match tp.graph {
            GraphTerm::Default => TermId::DEFAULT_GRAPH,
            GraphTerm::Named(g) => g,
            GraphTerm::Var(_) => return false,
        };
        let pattern = tp.terms.clone().map(|t| match t {
            PatternTerm::Const(c) => Some(c),
            _ => None,
        });
        i != atom && view.count(graph, &pattern) == 0
    })
}

/// The body with its `atom`-th top-level operand seeded by `delta` (the group's new default-graph facts).
pub fn seeded(body: &Op, atom: usize, delta: &[Triple]) -> Op {
    let (ops, filters) = top_level(body);
    let Op::Pattern(tp) = ops[atom] else {
        unreachable!("a recursive atom is a triple pattern")
    };
    // The delta's facts are distinct and a row fixes its fact (constants at the other positions), so the rows
    // are distinct too: no dedup.
    let columns = Columns::new(tp.terms.iter().map(|t| match t {
        PatternTerm::Const(c) => Some(Place::Const(*c)),
        PatternTerm::Var(v) => Some(Place::Var(*v)),
        // A quoted triple pattern: matched by the pattern itself, kept beside the seed (not `replaceable`).
        PatternTerm::Triple(_) => Some(Place::Free),
    }))
    .expect("every place of a pattern has a column shape");
    let (vars, rows) = columns.rows(delta.iter().copied());
    let seed = Op::Values { vars, rows };
    let mut operands: Vec<Op> = ops.into_iter().cloned().collect();
    if replaceable(tp) {
        operands[atom] = seed;
    } else {
        operands.insert(0, seed);
    }
    let mut out = Op::join_all(operands);
    for f in filters.into_iter().rev() {
        out = Op::filter(out, f.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datalog::footprint::{Key, Scope};

    fn pat(s: u32, p: u32, o: u32) -> Op {
        Op::Pattern(TriplePattern {
            terms: [
                PatternTerm::Var(VarId(s)),
                PatternTerm::Const(TermId(p)),
                PatternTerm::Var(VarId(o)),
            ],
            graph: GraphTerm::Default,
        })
    }

    fn write(p: u32) -> Access {
        Access {
            scope: Scope::Default,
            key: Key::Predicate(TermId(p)),
            negated: false,
            aggregated: false,
        }
    }

    #[test]
    fn recursive_atoms_are_the_top_level_patterns_reading_the_group() {
        // reach(x,z) :- reach(x,y), edge(y,z).
        let body = Op::join(pat(0, 50, 1), pat(1, 60, 2));
        assert_eq!(seeding(&body, true, &[write(50)]), Seeding::Atoms(vec![0]));
        assert_eq!(seeding(&body, false, &[write(50)]), Seeding::Whole);
        let union = Op::join(Op::union(pat(0, 50, 1), pat(0, 70, 1)), pat(1, 60, 2));
        assert_eq!(seeding(&union, true, &[write(50)]), Seeding::Whole);
    }

    #[test]
    fn an_anchored_zero_or_more_path_reads_its_links_only_and_an_unanchored_one_reads_everything() {
        use crate::ir::PathExpr;
        let star = |s: PatternTerm, o: PatternTerm| Op::Path {
            subject: s,
            path: PathExpr::ZeroOrMore(Box::new(PathExpr::Link(TermId(80)))),
            object: o,
            graph: GraphTerm::Default,
        };
        let v = |i: u32| PatternTerm::Var(VarId(i));
        // cls-int2 as SPARQL expands it: ?c :int ?l . ?l :rest* ?m . ?m :first ?ci . ?y a ?c
        let body = Op::Join(vec![
            pat(0, 70, 1),
            star(v(1), v(2)),
            pat(2, 81, 3),
            pat(4, 50, 0),
        ]);
        // A change to the types (50) seeds the type atom; the path reads :rest (80) only.
        assert_eq!(seeding(&body, true, &[write(50)]), Seeding::Atoms(vec![3]));
        assert_eq!(seeding(&body, true, &[write(80)]), Seeding::Whole);
        // With both ends free the path's zero-length pairs range over every node: any write reaches it.
        let free = Op::Join(vec![star(v(5), v(6)), pat(4, 50, 0)]);
        assert_eq!(seeding(&free, true, &[write(50)]), Seeding::Whole);
        // A variable bound only as a predicate is no node: it does not anchor.
        let predicate = Op::Join(vec![
            Op::Pattern(TriplePattern {
                terms: [v(7), v(5), v(8)],
                graph: GraphTerm::Default,
            }),
            star(v(5), v(6)),
        ]);
        assert_eq!(seeding(&predicate, true, &[write(50)]), Seeding::Whole);
        // An end bound by a constant anchors it.
        let constant = Op::Join(vec![
            star(PatternTerm::Const(TermId(9)), v(6)),
            pat(4, 50, 0),
        ]);
        assert_eq!(
            seeding(&constant, true, &[write(50)]),
            Seeding::Atoms(vec![1])
        );
    }

    #[test]
    fn a_seeded_body_finds_nothing_when_another_atom_has_no_match_at_all() {
        use crate::store::{Overlay, QuadStore};
        // reach(x,z) :- reach(x,y), edge(y,z), over reach facts and no edge.
        let body = Op::join(pat(0, 50, 1), pat(1, 60, 2));
        let store = QuadStore::from_graphs(vec![(
            TermId::DEFAULT_GRAPH,
            vec![[TermId(7), TermId(50), TermId(8)]],
        )]);
        let overlay = Overlay::new();
        let view = View::new(&store, &overlay);
        assert!(finds_nothing(&body, 0, &view));
        assert!(!finds_nothing(&body, 1, &view));
        // An edge derived since: the seeded body may find something.
        let mut overlay = Overlay::new();
        overlay.add(
            TermId::DEFAULT_GRAPH,
            vec![[TermId(8), TermId(60), TermId(9)]],
        );
        assert!(!finds_nothing(&body, 0, &View::new(&store, &overlay)));
    }

    #[test]
    fn a_simple_atom_is_replaced_by_its_seed() {
        let body = Op::join(pat(0, 50, 1), pat(1, 60, 2));
        let delta = [
            [TermId(7), TermId(50), TermId(8)],
            [TermId(9), TermId(51), TermId(8)],
        ];
        let Op::Join(ops) = seeded(&body, 0, &delta) else {
            panic!("a join")
        };
        assert_eq!(
            ops[0],
            Op::Values {
                vars: vec![VarId(0), VarId(1)],
                rows: vec![vec![Some(TermId(7)), Some(TermId(8))]].into()
            }
        );
        assert_eq!(ops[1], pat(1, 60, 2));
    }
}
