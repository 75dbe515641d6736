//! Structure-aware generators of hostile input: SPARQL rules and JSON-LD rules built from their grammars (with
//! constructs rules reject, deep nesting, odd characters and long strings mixed in), data in every syntax
//! reasonctl reads, `--fact` patterns, and whole tiny positive programs; then, often, mutated byte by byte.
//! Shared by `tests/fuzz.rs` (a bounded run) and `benches/fuzz.rs` (a run for a given time).

use proptest::prelude::*;

const EX: &str = "http://example.org/";

/// Characters that stress positions and escapes: multi-byte, past U+FFFF, U+FFFD, a BOM, controls, quotes.
const ODD: &[&str] = &[
    "é", "€", "𐀀", "\u{FFFD}", "\u{FEFF}", "\u{0}", "\t", "\r", "\\", "\"", "'", "<<", ">>", "{|",
    "|}", "~", "#", "\n", "(", ")", "{", "}", "[", "]", "?", ":", "_:", "@", "^^",
];

fn pick<T: Clone + std::fmt::Debug + 'static>(items: &'static [T]) -> impl Strategy<Value = T> {
    proptest::sample::select(items)
}

/// A prefixed or full IRI of a small vocabulary (so patterns join and rules fire).
pub fn iri() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (0u8..4).prop_map(|i| format!("ex:p{i}")),
        2 => (0u8..6).prop_map(|i| format!("ex:n{i}")),
        1 => (0u8..4).prop_map(|i| format!("<{EX}p{i}>")),
        1 => Just("rdf:type".to_owned()),
        1 => Just("xsd:integer".to_owned()),
        1 => pick(ODD).prop_map(|c| format!("ex:x{c}")),
    ]
}

pub fn var() -> impl Strategy<Value = String> {
    pick(&["?a", "?b", "?c", "?d", "?e", "$a", "?a𐀀"]).prop_map(str::to_owned)
}

pub fn literal() -> impl Strategy<Value = String> {
    prop_oneof![
        (0i64..5).prop_map(|i| i.to_string()),
        Just("2.5".to_owned()),
        Just("1e300".to_owned()),
        Just("9223372036854775807".to_owned()),
        Just("\"x\"".to_owned()),
        Just("\"é\"@fr".to_owned()),
        Just("\"1\"^^xsd:integer".to_owned()),
        Just("true".to_owned()),
        (1usize..3000).prop_map(|n| format!("\"{}\"", "y".repeat(n))),
        pick(ODD).prop_map(|c| format!("\"{}\"", c.replace(['"', '\\', '\n', '\r'], "_"))),
    ]
}

/// A term of a triple pattern: mostly variables and IRIs, sometimes literals and (nested) triple terms.
pub fn term(depth: u32) -> BoxedStrategy<String> {
    let leaf = prop_oneof![4 => var(), 3 => iri(), 1 => literal()].boxed();
    if depth == 0 {
        return leaf;
    }
    prop_oneof![
        6 => leaf,
        1 => (term(depth - 1), iri(), term(depth - 1))
            .prop_map(|(s, p, o)| format!("<<( {s} {p} {o} )>>")),
    ]
    .boxed()
}

pub fn triple() -> impl Strategy<Value = String> {
    (term(2), prop_oneof![4 => iri(), 1 => var()], term(2))
        .prop_map(|(s, p, o)| format!("{s} {p} {o} ."))
}

/// A SPARQL expression, nested.
pub fn expr() -> BoxedStrategy<String> {
    let leaf = prop_oneof![var(), literal(), iri()];
    leaf.prop_recursive(5, 40, 4, |inner| {
        prop_oneof![
            (
                inner.clone(),
                pick(&["+", "-", "*", "/", "=", "!=", "<", ">=", "&&", "||"]),
                inner.clone()
            )
                .prop_map(|(a, op, b)| format!("({a} {op} {b})")),
            (
                pick(&[
                    "STR",
                    "STRLEN",
                    "UCASE",
                    "ABS",
                    "ROUND",
                    "isIRI",
                    "BOUND",
                    "DATATYPE",
                    "LANG",
                    "xsd:integer",
                    "xsd:double",
                    "xsd:string",
                    "ENCODE_FOR_URI",
                    "MD5",
                ]),
                inner.clone()
            )
                .prop_map(|(f, a)| format!("{f}({a})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("CONCAT({a}, {b})")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(a, b, c)| format!("IF({a}, {b}, {c})")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(a, b, c)| format!("TRIPLE({a}, {b}, {c})")),
            inner.clone().prop_map(|a| format!("!{a}")),
            (inner.clone(), proptest::collection::vec(literal(), 1..4))
                .prop_map(|(a, l)| format!("{a} IN ({})", l.join(", "))),
            triple().prop_map(|t| format!("EXISTS {{ {t} }}")),
        ]
    })
    .boxed()
}

/// A group graph pattern, nested: the constructs rules accept and some they reject.
pub fn group() -> BoxedStrategy<String> {
    let leaf = proptest::collection::vec(triple(), 1..4).prop_map(|t| t.join(" "));
    leaf.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            4 => (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a} {b}")),
            2 => (inner.clone(), expr()).prop_map(|(g, e)| format!("{g} FILTER({e})")),
            2 => (inner.clone(), expr(), var()).prop_map(|(g, e, v)| format!("{g} BIND({e} AS {v})")),
            1 => (inner.clone(), var(), proptest::collection::vec(literal(), 1..3))
                .prop_map(|(g, v, l)| format!("{g} VALUES {v} {{ {} }}", l.join(" "))),
            2 => (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{{ {a} }} UNION {{ {b} }}")),
            1 => (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a} OPTIONAL {{ {b} }}")),
            1 => (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a} MINUS {{ {b} }}")),
            2 => (inner.clone(), inner.clone())
                .prop_map(|(a, b)| format!("{a} FILTER NOT EXISTS {{ {b} }}")),
            1 => (inner.clone(), var(), var()).prop_map(|(g, k, x)| format!(
                "{{ SELECT {k} (COUNT({x}) AS ?n) WHERE {{ {g} }} GROUP BY {k} }}"
            )),
            1 => (var(), pick(&["ex:p0+", "ex:p1*", "^ex:p2", "(ex:p0|ex:p1)", "ex:p0/ex:p1", "!ex:p3", "ex:p0?"]), var())
                .prop_map(|(a, p, b)| format!("{a} {p} {b} .")),
            1 => inner.clone().prop_map(|g| format!("GRAPH ?g {{ {g} }}")),
        ]
    })
    .boxed()
}

const PROLOGUE: &str = "PREFIX ex: <http://example.org/>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\nPREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>\n";

/// One CONSTRUCT rule (heads sometimes with blank nodes, annotations or graphs).
pub fn sparql_rule() -> impl Strategy<Value = String> {
    let head = prop_oneof![
        6 => proptest::collection::vec(triple(), 1..3).prop_map(|t| t.join(" ")),
        1 => triple().prop_map(|t| format!("GRAPH ex:g {{ {t} }}")),
        1 => Just("?a ex:q [ ex:r ?b ] .".to_owned()),
        1 => Just("?a ex:q ?b {| ex:c 1 |} .".to_owned()),
        // Annotated heads: a named reifier, nested annotations, a blank node inside, two edges on one blank.
        1 => pick(&[
            "?a ex:q ?b ~ ?a {| ex:c ?b |} .",
            "?a ex:q ?b {| ex:c ?b {| ex:d 2 |} |} .",
            "?a ex:q ?b {| ex:c [ ex:d 1 ] |} .",
            "_:r rdf:reifies <<( ?a ex:q ?b )>>, <<( ?b ex:q ?a )>> .",
            "?a ex:q ?b ~ _:r {| ex:c 1 |} . ?b ex:q ?a ~ _:r .",
        ])
        .prop_map(str::to_owned),
    ];
    (head, group()).prop_map(|(h, b)| format!("CONSTRUCT {{ {h} }} WHERE {{ {b} }}"))
}

/// A rules file: one rule or several after `#@rule` lines, sometimes deeply nested, sometimes mutated.
pub fn sparql_rules_file() -> impl Strategy<Value = String> {
    let file = proptest::collection::vec(sparql_rule(), 1..4)
        .prop_map(|rules| {
            let mut text = PROLOGUE.to_owned();
            for (i, r) in rules.iter().enumerate() {
                text.push_str(&format!("#@rule r{i}\n{r}\n"));
            }
            text
        })
        .boxed();
    prop_oneof![
        6 => file.clone(),
        2 => (file, any::<Vec<Edit>>()).prop_map(|(t, edits)| mutate(&t, &edits)),
        1 => (1usize..3000, pick(&["(", "{ ", "<<( ?a ex:p ", "FILTER NOT EXISTS { ", "CONCAT("]))
            .prop_map(|(n, open)| format!("{PROLOGUE}CONSTRUCT {{ ?a ex:q ?b }} WHERE {{ ?a ex:p0 ?b FILTER({}1) }}", open.repeat(n))),
        1 => (1usize..5000, pick(&[" + 1", " && true", " || false"]))
            .prop_map(|(n, op)| format!("{PROLOGUE}CONSTRUCT {{ ?a ex:q ?b }} WHERE {{ ?a ex:p0 ?b FILTER(1{}) }}", op.repeat(n))),
    ]
}

/// An S-expression for a JSON-LD filter.
fn sexpr() -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        var(),
        (0i64..5).prop_map(|i| i.to_string()),
        Just("\\\"x\\\"".to_owned()),
        Just("ex:n1".to_owned()),
        Just("bareword".to_owned()),
        Just("nope:x".to_owned()),
    ];
    leaf.prop_recursive(4, 20, 3, |inner| {
        (
            pick(&[
                "and",
                "or",
                "not",
                "=",
                ">",
                "+",
                "strlen",
                "str",
                "bound",
                "unknownfn",
            ]),
            proptest::collection::vec(inner, 1..3),
        )
            .prop_map(|(f, args)| format!("({f} {})", args.join(" ")))
    })
    .boxed()
}

/// A JSON-LD rule (or an array of them), sometimes mutated.
pub fn jsonld_rules_file() -> impl Strategy<Value = String> {
    let node = (
        var(),
        pick(&["ex:p0", "ex:p1", "@type", "@reverse", "nope:p"]),
        var(),
    )
        .prop_map(|(s, p, o)| format!("{{\"@id\": \"{s}\", \"{p}\": \"{o}\"}}"))
        .boxed();
    let clause = prop_oneof![
        4 => node.clone(),
        2 => sexpr().prop_map(|e| format!("[\"filter\", \"{e}\"]")),
        1 => (var(), sexpr()).prop_map(|(v, e)| format!("[\"bind\", \"{v}\", \"{e}\"]")),
        1 => (node.clone(), node.clone()).prop_map(|(a, b)| format!("[\"union\", [{a}], [{b}]]")),
        1 => node.clone().prop_map(|a| format!("[\"not-exists\", [{a}]]")),
        1 => node.clone().prop_map(|a| format!("[\"optional\", {a}]")),
        1 => Just("[\"values\", {\"?a\": [\"ex:n1\", 2]}]".to_owned()),
    ];
    let insert = prop_oneof![
        4 => (var(), pick(&["ex:q", "ex:p0", "@type"]), var())
            .prop_map(|(s, p, o)| format!("{{\"@id\": \"{s}\", \"{p}\": {{\"@id\": \"{o}\"}}}}")),
        1 => Just("{\"@id\": \"_:n1\", \"ex:q\": \"?a\"}".to_owned()),
        1 => Just("{\"ex:q\": \"?a\"}".to_owned()),
        1 => Just("{\"@id\": \"?a\", \"ex:q\": {\"@value\": \"x\", \"@type\": \"xsd:integer\"}}".to_owned()),
        1 => pick(&[
            "{\"@id\": \"?a\", \"ex:q\": {\"@id\": \"?b\", \"@annotation\": {\"ex:c\": \"?a\"}}}",
            "{\"@id\": \"?a\", \"ex:q\": {\"@id\": \"?b\", \"@annotation\": [{\"@id\": \"?a\", \"ex:c\": 1}, {\"ex:d\": {\"@id\": \"?b\", \"@annotation\": {\"ex:e\": 2}}}]}}",
            "{\"@id\": \"?a\", \"ex:q\": {\"@value\": 3, \"@annotation\": {\"@graph\": \"ex:g\"}}}",
            "{\"@id\": \"?a\", \"@annotation\": {\"ex:c\": 1}}",
        ])
        .prop_map(str::to_owned),
    ];
    let rule = (proptest::collection::vec(clause, 1..4), insert, 0u8..4).prop_map(|(w, i, n)| {
        format!(
            "{{\"@context\": {{\"ex\": \"{EX}\", \"xsd\": \"http://www.w3.org/2001/XMLSchema#\"}}, \"@id\": \"ex:r{n}\", \"where\": [{}], \"insert\": {i}}}",
            w.join(", ")
        )
    });
    let file = proptest::collection::vec(rule, 1..3)
        .prop_map(|r| format!("[{}]", r.join(",\n")))
        .boxed();
    prop_oneof![
        5 => file.clone(),
        2 => (file, any::<Vec<Edit>>()).prop_map(|(t, edits)| mutate(&t, &edits)),
        1 => (1usize..2000).prop_map(|n| format!("{{\"where\": {}1{}, \"insert\": {{}}}}", "[".repeat(n), "]".repeat(n))),
        1 => (1usize..3000).prop_map(|n| format!(
            "{{\"@context\": {{\"ex\": \"{EX}\"}}, \"where\": [{{\"@id\": \"?a\", \"ex:p0\": \"?b\"}}, [\"filter\", \"{}true{}\"]], \"insert\": {{\"@id\": \"?a\", \"ex:q\": \"?b\"}}}}",
            "(not ".repeat(n), ")".repeat(n)
        )),
    ]
}

/// A ground N-Triples term of the vocabulary.
fn nt_term(depth: u32) -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        4 => (0u8..6).prop_map(|i| format!("<{EX}n{i}>")),
        1 => (0u8..3).prop_map(|i| format!("_:b{i}")),
        2 => pick(&[
            "\"x\"", "\"é\"@fr", "\"1\"^^<http://www.w3.org/2001/XMLSchema#integer>", "\"2.5\"^^<http://www.w3.org/2001/XMLSchema#decimal>",
            "\"1e300\"^^<http://www.w3.org/2001/XMLSchema#double>", "\"twelve\"^^<http://www.w3.org/2001/XMLSchema#integer>",
            "\"\\u00e9\\n\"", "\"𐀀\"",
        ]).prop_map(str::to_owned),
    ]
    .boxed();
    if depth == 0 {
        return leaf;
    }
    prop_oneof![
        6 => leaf,
        1 => ((0u8..6), (0u8..4), nt_term(depth - 1))
            .prop_map(|(s, p, o)| format!("<<( <{EX}n{s}> <{EX}p{p}> {o} )>>")),
    ]
    .boxed()
}

/// N-Quads statements (some in a named graph).
fn nquads() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec(
        (
            (0u8..6),
            (0u8..4),
            nt_term(2),
            prop_oneof![3 => Just(None), 1 => (0u8..2).prop_map(Some)],
        ),
        0..25,
    )
    .prop_map(|qs| {
        qs.into_iter()
            .map(|(s, p, o, g)| match g {
                None => format!("<{EX}n{s}> <{EX}p{p}> {o} ."),
                Some(g) => format!("<{EX}n{s}> <{EX}p{p}> {o} <{EX}g{g}> ."),
            })
            .collect()
    })
}

/// A data file: its extension and bytes, in one of the syntaxes, sometimes mutated or with a BOM, sometimes
/// deeply nested.
pub fn data_file() -> impl Strategy<Value = (String, Vec<u8>)> {
    let written = (
        nquads(),
        pick(&["nq", "nt", "trig", "ttl", "rdf", "jsonld"]),
    )
        .prop_map(|(lines, ext)| {
            let quads = lines.join("\n") + "\n";
            (ext.to_owned(), serialize(&quads, ext))
        })
        .boxed();
    prop_oneof![
        6 => written.clone(),
        3 => (written.clone(), any::<Vec<Edit>>()).prop_map(|((ext, bytes), edits)| {
            (ext, mutate(&String::from_utf8_lossy(&bytes), &edits).into_bytes())
        }),
        1 => written.prop_map(|(ext, mut bytes)| {
            bytes.splice(0..0, [0xEF, 0xBB, 0xBF]);
            (ext, bytes)
        }),
        1 => (1usize..6000, pick(&["ttl", "nt"])).prop_map(|(n, ext)| {
            let text = format!("<{EX}a> <{EX}p0> {}<{EX}b>{} .\n", format!("<<( <{EX}a> <{EX}p0> ").repeat(n), " )>>".repeat(n));
            (ext.to_owned(), text.into_bytes())
        }),
        1 => (1usize..3000).prop_map(|n| {
            let text = format!("{{\"@id\": \"{EX}a\", \"{EX}p0\": {}\"x\"{}}}", format!("{{\"{EX}p0\": ").repeat(n), "}".repeat(n));
            ("jsonld".to_owned(), text.into_bytes())
        }),
        1 => (1usize..3000).prop_map(|n| {
            let text = format!(
                "<?xml version=\"1.0\"?><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\" xmlns:ex=\"{EX}\">{}<rdf:Description rdf:about=\"{EX}x\"/>{}</rdf:RDF>",
                "<rdf:Description><ex:p0>".repeat(n), "</ex:p0></rdf:Description>".repeat(n)
            );
            ("rdf".to_owned(), text.into_bytes())
        }),
    ]
}

/// N-Quads text in the syntax `ext` (through oxrdfio's serializers; RDF/XML and the triple syntaxes keep what
/// they can hold).
fn serialize(nquads: &str, ext: &str) -> Vec<u8> {
    use oxrdfio::{RdfFormat, RdfParser, RdfSerializer};
    let format = match ext {
        "nt" => RdfFormat::NTriples,
        "ttl" => RdfFormat::Turtle,
        "trig" => RdfFormat::TriG,
        "rdf" => RdfFormat::RdfXml,
        "jsonld" => RdfFormat::JsonLd {
            profile: oxrdfio::JsonLdProfileSet::empty(),
        },
        _ => RdfFormat::NQuads,
    };
    let quads: Vec<oxrdf::Quad> = RdfParser::from_format(RdfFormat::NQuads)
        .for_slice(nquads.as_bytes())
        .filter_map(Result::ok)
        .filter(|q| format.supports_datasets() || q.graph_name.is_default_graph())
        .filter(|q| {
            ext != "rdf"
                || (!matches!(q.object, oxrdf::Term::Triple(_)) && !q.object.is_blank_node())
        })
        .collect();
    let mut writer = RdfSerializer::from_format(format)
        .with_prefix("ex", EX)
        .expect("prefix")
        .for_writer(Vec::new());
    for q in &quads {
        if writer.serialize_quad(q).is_err() {
            break;
        }
    }
    writer.finish().unwrap_or_default()
}

/// One edit of a text.
#[derive(Clone, Debug)]
pub enum Edit {
    /// Insert an odd string at a position (a fraction of the length).
    Insert(u16, usize),
    /// Delete a run.
    Delete(u16, u8),
    /// Repeat a run many times.
    Repeat(u16, u8, u16),
}

impl Arbitrary for Edit {
    type Parameters = ();
    type Strategy = BoxedStrategy<Edit>;
    fn arbitrary_with(_: ()) -> Self::Strategy {
        prop_oneof![
            (any::<u16>(), 0..ODD.len()).prop_map(|(at, i)| Edit::Insert(at, i)),
            (any::<u16>(), 1u8..20).prop_map(|(at, n)| Edit::Delete(at, n)),
            (any::<u16>(), 1u8..8, 2u16..400).prop_map(|(at, n, k)| Edit::Repeat(at, n, k)),
        ]
        .boxed()
    }
}

/// `text` with `edits` applied, at character boundaries (fractions of the length, so edits land everywhere).
pub fn mutate(text: &str, edits: &[Edit]) -> String {
    let mut t = text.to_owned();
    for e in edits.iter().take(4) {
        let at = |frac: u16, t: &str| {
            let mut i = t.len() * usize::from(frac) / usize::from(u16::MAX).max(1);
            while !t.is_char_boundary(i) {
                i -= 1;
            }
            i
        };
        match *e {
            Edit::Insert(f, i) => {
                let p = at(f, &t);
                t.insert_str(p, ODD[i]);
            }
            Edit::Delete(f, n) => {
                let p = at(f, &t);
                let end = t[p..]
                    .char_indices()
                    .nth(usize::from(n))
                    .map_or(t.len(), |(k, _)| p + k);
                t.replace_range(p..end, "");
            }
            Edit::Repeat(f, n, k) => {
                let p = at(f, &t);
                let end = t[p..]
                    .char_indices()
                    .nth(usize::from(n))
                    .map_or(t.len(), |(k, _)| p + k);
                let run = t[p..end].repeat(usize::from(k));
                t.insert_str(end, &run);
            }
        }
    }
    t
}

/// A `--fact` pattern: terms, variables, prefixed names, garbage.
pub fn fact() -> impl Strategy<Value = String> {
    let part = prop_oneof![
        3 => (0u8..6).prop_map(|i| format!("<{EX}n{i}>")),
        2 => (0u8..4).prop_map(|i| format!("ex:q{i}")),
        2 => var(),
        1 => literal(),
        1 => Just("_:b0".to_owned()),
        1 => pick(ODD).prop_map(str::to_owned),
    ];
    proptest::collection::vec(part, 0..6).prop_map(|p| p.join(" "))
}

/// A positive program over p0..p3 (joins, recursion, UNION, FILTER, BIND, paths, named-graph heads): range
/// restricted by construction, so it runs.
pub fn positive_program() -> impl Strategy<Value = String> {
    let atom = |a: &'static str, b: &'static str| {
        (0u8..4).prop_map(move |p| format!("?{a} ex:p{p} ?{b} ."))
    };
    let rule = prop_oneof![
        (atom("x", "y"), atom("y", "z"), 0u8..4).prop_map(|(a, b, h)| format!(
            "CONSTRUCT {{ ?x ex:p{h} ?z }} WHERE {{ {a} {b} FILTER(isIRI(?z)) }}"
        )),
        (atom("x", "y"), 0u8..4).prop_map(|(a, h)| format!(
            "CONSTRUCT {{ ?y ex:p{h} ?x }} WHERE {{ {a} FILTER(!isLiteral(?y)) }}"
        )),
        (atom("x", "y"), atom("x", "y"), 0u8..4).prop_map(|(a, b, h)| format!(
            "CONSTRUCT {{ ?x ex:p{h} ?y }} WHERE {{ {{ {a} }} UNION {{ {b} }} }}"
        )),
        (atom("x", "y"), 0u8..4).prop_map(|(a, h)| format!(
            "CONSTRUCT {{ ?x ex:p{h} ?k }} WHERE {{ {a} BIND(ex:n5 AS ?k) }}"
        )),
        (0u8..4, 0u8..4)
            .prop_map(|(p, h)| format!("CONSTRUCT {{ ?x ex:p{h} ?y }} WHERE {{ ?x ex:p{p}+ ?y }}")),
        (atom("x", "y"), 0u8..4).prop_map(|(a, h)| format!(
            "CONSTRUCT {{ GRAPH ex:g0 {{ ?x ex:p{h} ?y }} }} WHERE {{ {a} }}"
        )),
    ];
    proptest::collection::vec(rule, 1..5).prop_map(|rules| {
        let mut text = PROLOGUE.to_owned();
        for (i, r) in rules.iter().enumerate() {
            text.push_str(&format!("#@rule r{i}\n{r}\n"));
        }
        text
    })
}

/// N-Quads for a program: a graph over n0..n5 with p0..p3, and graph g0 present.
pub fn program_data() -> impl Strategy<Value = String> {
    nquads().prop_map(|lines| {
        let mut text = lines.join("\n");
        text.push_str(&format!("\n<{EX}n0> <{EX}p0> <{EX}n1> <{EX}g0> .\n"));
        text
    })
}
