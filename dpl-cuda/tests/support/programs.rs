//! The IR programs of the tests, read from `tests/programs/<group>/<name>.ir` (the text
//! form at the Prim level, `$name` variables: see [`super::ir`]); `tests/programs/README.md`
//! says what each group holds. `tests/golden.rs` snapshots the PTX and plan of each.

use std::path::PathBuf;
use std::sync::OnceLock;

use dpl_core::ir::Type;

/// The groups, in the order [`all`] lists them.
pub const GROUPS: [&str; 3] = ["combinators", "forms", "rows"];

/// A test program.
pub struct Program {
    /// Its folder under `tests/programs`.
    pub group: &'static str,
    /// Its file name without `.ir`.
    pub name: String,
    /// Its text.
    pub text: String,
}

impl Program {
    /// True when a parameter or the result holds sequences of sequences (the programs
    /// also compiled with a warp and a block per element).
    pub fn nested(&self) -> bool {
        fn holds_seq(t: &Type) -> bool {
            match t {
                Type::Seq(_) => true,
                Type::Tuple(ts) => ts.iter().any(holds_seq),
                _ => false,
            }
        }
        fn nested(t: &Type) -> bool {
            match t {
                Type::Seq(e) => holds_seq(e),
                Type::Tuple(ts) => ts.iter().any(nested),
                _ => false,
            }
        }
        let f = super::ir(&self.text);
        nested(&f.ret) || f.params.iter().any(|&p| nested(&f.vars[p].ty))
    }
}

/// Every program: the groups in [`GROUPS`] order, each sorted by name.
pub fn all() -> &'static [Program] {
    static ALL: OnceLock<Vec<Program>> = OnceLock::new();
    ALL.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
        let mut all = Vec::new();
        for group in GROUPS {
            let dir = root.join(group);
            let entries =
                std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
            let mut programs: Vec<Program> = entries
                .map(|e| e.expect("a directory entry").path())
                .filter(|p| p.extension().is_some_and(|x| x == "ir"))
                .map(|path| Program {
                    group,
                    name: path
                        .file_stem()
                        .and_then(|s| s.to_str())
                        .expect("a UTF-8 file name")
                        .to_string(),
                    text: std::fs::read_to_string(&path)
                        .unwrap_or_else(|e| panic!("{}: {e}", path.display())),
                })
                .collect();
            programs.sort_by(|a, b| a.name.cmp(&b.name));
            all.extend(programs);
        }
        for (i, p) in all.iter().enumerate() {
            assert!(
                all[..i].iter().all(|q| q.name != p.name),
                "two programs named {}",
                p.name
            );
        }
        all
    })
}

/// The programs of `group` (one of [`GROUPS`]).
pub fn group(group: &str) -> impl Iterator<Item = &'static Program> {
    assert!(GROUPS.contains(&group), "no group {group}");
    all().iter().filter(move |p| p.group == group)
}

/// The text of the program named `name`.
pub fn source(name: &str) -> &'static str {
    match all().iter().find(|p| p.name == name) {
        Some(p) => &p.text,
        None => panic!("no program {name} in tests/programs"),
    }
}
