//! A generator of LUBM-shaped data (the Lehigh University Benchmark's published structure, as its UBA generator
//! produces it): universities of 15–25 departments, each with its professors, lecturers, courses, students,
//! publications and research groups, the IRIs and literals written as UBA writes them. Deterministic from a seed.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// xorshift64*: small and deterministic.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
}

const UB: &str = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#";
const TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";

struct Out<W: Write> {
    w: W,
    triples: u64,
}

impl<W: Write> Out<W> {
    fn ty(&mut self, s: &str, class: &str) -> io::Result<()> {
        self.triples += 1;
        writeln!(self.w, "<{s}> <{TYPE}> <{UB}{class}> .")
    }

    fn rel(&mut self, s: &str, p: &str, o: &str) -> io::Result<()> {
        self.triples += 1;
        writeln!(self.w, "<{s}> <{UB}{p}> <{o}> .")
    }

    fn lit(&mut self, s: &str, p: &str, o: &str) -> io::Result<()> {
        self.triples += 1;
        writeln!(self.w, "<{s}> <{UB}{p}> \"{o}\" .")
    }
}

fn university(u: u64) -> String {
    format!("http://www.University{u}.edu")
}

/// Writes LUBM(`universities`) and returns the number of triples.
pub fn generate(universities: u64, seed: u64, w: impl Write) -> io::Result<u64> {
    let mut rng = Rng::new(seed);
    let mut out = Out { w, triples: 0 };
    for u in 0..universities {
        let uni = university(u);
        out.ty(&uni, "University")?;
        out.lit(&uni, "name", &format!("University{u}"))?;
        for d in 0..rng.range(15, 25) {
            let dept = format!("http://www.Department{d}.University{u}.edu");
            let email_domain = format!("Department{d}.University{u}.edu");
            out.ty(&dept, "Department")?;
            out.lit(&dept, "name", &format!("Department{d}"))?;
            out.rel(&dept, "subOrganizationOf", &uni)?;
            let mut professors = Vec::new();
            let mut faculty = Vec::new();
            let mut courses = Vec::new();
            let mut grad_courses = Vec::new();
            let mut publications: Vec<String> = Vec::new();
            for (class, lo, hi, pubs) in [
                ("FullProfessor", 7, 10, (15, 20)),
                ("AssociateProfessor", 10, 14, (10, 18)),
                ("AssistantProfessor", 8, 11, (5, 10)),
                ("Lecturer", 5, 7, (0, 5)),
            ] {
                for i in 0..rng.range(lo, hi) {
                    let who = format!("{dept}/{class}{i}");
                    out.ty(&who, class)?;
                    out.lit(&who, "name", &format!("{class}{i}"))?;
                    out.lit(&who, "emailAddress", &format!("{class}{i}@{email_domain}"))?;
                    out.lit(&who, "telephone", "xxx-xxx-xxxx")?;
                    if class != "Lecturer" {
                        out.lit(
                            &who,
                            "researchInterest",
                            &format!("Research{}", rng.range(0, 29)),
                        )?;
                    }
                    for degree in [
                        "undergraduateDegreeFrom",
                        "mastersDegreeFrom",
                        "doctoralDegreeFrom",
                    ] {
                        out.rel(
                            &who,
                            degree,
                            &university(rng.range(0, universities.max(1) - 1)),
                        )?;
                    }
                    out.rel(&who, "worksFor", &dept)?;
                    if class == "FullProfessor" && i == 0 {
                        out.rel(&who, "headOf", &dept)?;
                    }
                    for _ in 0..rng.range(1, 2) {
                        let c = format!("{dept}/Course{}", courses.len());
                        out.ty(&c, "Course")?;
                        out.lit(&c, "name", &format!("Course{}", courses.len()))?;
                        out.rel(&who, "teacherOf", &c)?;
                        courses.push(c);
                    }
                    for _ in 0..rng.range(1, 2) {
                        let c = format!("{dept}/GraduateCourse{}", grad_courses.len());
                        out.ty(&c, "GraduateCourse")?;
                        out.lit(&c, "name", &format!("GraduateCourse{}", grad_courses.len()))?;
                        out.rel(&who, "teacherOf", &c)?;
                        grad_courses.push(c);
                    }
                    for k in 0..rng.range(pubs.0, pubs.1) {
                        let p = format!("{who}/Publication{k}");
                        out.ty(&p, "Publication")?;
                        out.lit(&p, "name", &format!("Publication{k}"))?;
                        out.rel(&p, "publicationAuthor", &who)?;
                        publications.push(p);
                    }
                    if class != "Lecturer" {
                        professors.push(who.clone());
                    }
                    faculty.push(who);
                }
            }
            let pick =
                |rng: &mut Rng, v: &[String]| v[rng.range(0, v.len() as u64 - 1) as usize].clone();
            for i in 0..faculty.len() as u64 * rng.range(8, 14) {
                let who = format!("{dept}/UndergraduateStudent{i}");
                out.ty(&who, "UndergraduateStudent")?;
                out.lit(&who, "name", &format!("UndergraduateStudent{i}"))?;
                out.lit(
                    &who,
                    "emailAddress",
                    &format!("UndergraduateStudent{i}@{email_domain}"),
                )?;
                out.lit(&who, "telephone", "xxx-xxx-xxxx")?;
                out.rel(&who, "memberOf", &dept)?;
                for _ in 0..rng.range(2, 4) {
                    let c = pick(&mut rng, &courses);
                    out.rel(&who, "takesCourse", &c)?;
                }
                if rng.range(0, 4) == 0 {
                    let a = pick(&mut rng, &professors);
                    out.rel(&who, "advisor", &a)?;
                }
            }
            for i in 0..faculty.len() as u64 * rng.range(3, 4) {
                let who = format!("{dept}/GraduateStudent{i}");
                out.ty(&who, "GraduateStudent")?;
                out.lit(&who, "name", &format!("GraduateStudent{i}"))?;
                out.lit(
                    &who,
                    "emailAddress",
                    &format!("GraduateStudent{i}@{email_domain}"),
                )?;
                out.lit(&who, "telephone", "xxx-xxx-xxxx")?;
                out.rel(&who, "memberOf", &dept)?;
                out.rel(
                    &who,
                    "undergraduateDegreeFrom",
                    &university(rng.range(0, universities.max(1) - 1)),
                )?;
                for _ in 0..rng.range(1, 3) {
                    let c = pick(&mut rng, &grad_courses);
                    out.rel(&who, "takesCourse", &c)?;
                }
                let a = pick(&mut rng, &professors);
                out.rel(&who, "advisor", &a)?;
                if rng.range(0, 4) == 0 {
                    let c = pick(&mut rng, &courses);
                    out.rel(&who, "teachingAssistantOf", &c)?;
                }
                if !publications.is_empty() && rng.range(0, 2) == 0 {
                    let p = pick(&mut rng, &publications);
                    out.rel(&p, "publicationAuthor", &who)?;
                }
            }
            for g in 0..rng.range(10, 20) {
                let group = format!("{dept}/ResearchGroup{g}");
                out.ty(&group, "ResearchGroup")?;
                out.rel(&group, "subOrganizationOf", &dept)?;
            }
        }
    }
    out.w.flush()?;
    Ok(out.triples)
}

/// Where the benches keep generated data (`benches/data`, ignored by git).
pub fn data_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/data");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// LUBM(`universities`) as N-Triples (seed 42), generated once into [`data_dir`].
pub fn cached(universities: u64) -> PathBuf {
    let path = data_dir().join(format!("lubm-{universities}.nt"));
    if !path.exists() {
        let tmp = path.with_extension("nt.partial");
        let n = generate(
            universities,
            42,
            BufWriter::new(File::create(&tmp).unwrap()),
        )
        .unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        eprintln!("generated {} ({n} triples)", path.display());
    }
    path
}
