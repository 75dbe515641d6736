//! A generator of synthetic N-Triples shaped like LUBM's university data: typed people, courses and publications,
//! IRIs sharing per-department namespaces, and a realistic share of unique literals (names, e-mails, phone numbers).
//! Deterministic: the same size gives the same file.

use std::io::{self, Write};

/// xorshift64*: a small deterministic generator (the data only needs to look varied).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

const UB: &str = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#";
const TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";

struct Writer<W: Write> {
    out: W,
    triples: u64,
}

impl<W: Write> Writer<W> {
    fn iri(&mut self, s: &str, p: &str, o: &str) -> io::Result<()> {
        self.triples += 1;
        writeln!(self.out, "<{s}> <{UB}{p}> <{o}> .")
    }

    fn ty(&mut self, s: &str, class: &str) -> io::Result<()> {
        self.triples += 1;
        writeln!(self.out, "<{s}> <{TYPE}> <{UB}{class}> .")
    }

    fn lit(&mut self, s: &str, p: &str, o: &str) -> io::Result<()> {
        self.triples += 1;
        writeln!(self.out, "<{s}> <{UB}{p}> \"{o}\" .")
    }
}

/// Writes at least `target` triples (stopping at a department boundary) and returns how many were written.
pub fn generate(target: u64, out: impl Write) -> io::Result<u64> {
    let mut w = Writer { out, triples: 0 };
    let mut rng = Rng::new(0x5eed);
    let mut university = 0u64;
    while w.triples < target {
        let uni = format!("http://www.University{university}.edu");
        w.ty(&uni, "University")?;
        w.lit(&uni, "name", &format!("University{university}"))?;
        for d in 0..15 + rng.below(10) {
            if w.triples >= target {
                break;
            }
            let ns = format!("http://www.Department{d}.University{university}.edu/");
            let dept = ns.trim_end_matches('/').to_owned();
            w.ty(&dept, "Department")?;
            w.iri(&dept, "subOrganizationOf", &uni)?;
            let mut faculty = Vec::new();
            for (class, count) in [
                ("FullProfessor", 7 + rng.below(4)),
                ("AssociateProfessor", 10 + rng.below(5)),
                ("AssistantProfessor", 8 + rng.below(4)),
                ("Lecturer", 5 + rng.below(3)),
            ] {
                for i in 0..count {
                    let who = format!("{ns}{class}{i}");
                    w.ty(&who, class)?;
                    w.iri(&who, "worksFor", &dept)?;
                    w.lit(&who, "name", &format!("{class}{i}"))?;
                    w.lit(
                        &who,
                        "emailAddress",
                        &format!("{class}{i}@Department{d}.University{university}.edu"),
                    )?;
                    w.lit(
                        &who,
                        "telephone",
                        &format!("xxx-xxx-{:04}", rng.below(10_000)),
                    )?;
                    for degree in [
                        "undergraduateDegreeFrom",
                        "mastersDegreeFrom",
                        "doctoralDegreeFrom",
                    ] {
                        w.iri(
                            &who,
                            degree,
                            &format!("http://www.University{}.edu", rng.below(1000)),
                        )?;
                    }
                    for c in 0..1 + rng.below(2) {
                        let course = format!("{ns}Course{}", faculty.len() * 2 + c as usize);
                        w.ty(&course, "Course")?;
                        w.lit(
                            &course,
                            "name",
                            &format!("Course{}", faculty.len() * 2 + c as usize),
                        )?;
                        w.iri(&who, "teacherOf", &course)?;
                    }
                    for p in 0..5 + rng.below(10) {
                        let publication = format!("{who}/Publication{p}");
                        w.ty(&publication, "Publication")?;
                        w.lit(&publication, "name", &format!("Publication{p}"))?;
                        w.iri(&publication, "publicationAuthor", &who)?;
                    }
                    faculty.push(who);
                }
            }
            let courses = (faculty.len() * 2) as u64;
            for i in 0..faculty.len() as u64 * (8 + rng.below(6)) {
                let who = format!("{ns}UndergraduateStudent{i}");
                w.ty(&who, "UndergraduateStudent")?;
                w.iri(&who, "memberOf", &dept)?;
                w.lit(&who, "name", &format!("UndergraduateStudent{i}"))?;
                w.lit(
                    &who,
                    "emailAddress",
                    &format!("UndergraduateStudent{i}@Department{d}.University{university}.edu"),
                )?;
                w.lit(
                    &who,
                    "telephone",
                    &format!("xxx-xxx-{:04}", rng.below(10_000)),
                )?;
                for _ in 0..2 + rng.below(3) {
                    w.iri(
                        &who,
                        "takesCourse",
                        &format!("{ns}Course{}", rng.below(courses)),
                    )?;
                }
                if rng.below(5) == 0 {
                    w.iri(
                        &who,
                        "advisor",
                        &faculty[rng.below(faculty.len() as u64) as usize],
                    )?;
                }
            }
            for i in 0..faculty.len() as u64 * (3 + rng.below(2)) {
                let who = format!("{ns}GraduateStudent{i}");
                w.ty(&who, "GraduateStudent")?;
                w.iri(&who, "memberOf", &dept)?;
                w.lit(&who, "name", &format!("GraduateStudent{i}"))?;
                w.lit(
                    &who,
                    "emailAddress",
                    &format!("GraduateStudent{i}@Department{d}.University{university}.edu"),
                )?;
                w.iri(
                    &who,
                    "undergraduateDegreeFrom",
                    &format!("http://www.University{}.edu", rng.below(1000)),
                )?;
                w.iri(
                    &who,
                    "advisor",
                    &faculty[rng.below(faculty.len() as u64) as usize],
                )?;
                for _ in 0..1 + rng.below(3) {
                    w.iri(
                        &who,
                        "takesCourse",
                        &format!("{ns}Course{}", rng.below(courses)),
                    )?;
                }
            }
        }
        university += 1;
    }
    w.out.flush()?;
    Ok(w.triples)
}
