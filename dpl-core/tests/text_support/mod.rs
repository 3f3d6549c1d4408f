//! Shared by the text, verifier and interpreter tests: the saxpy function in its printed
//! form ([`SAXPY`]) and a generator of random, well-scoped IR functions for property tests. Every use is in scope and every lambda lists exactly its free
//! variables as captures (in first-use order); types are random, so the functions are not
//! meant to type-check.

#![allow(dead_code)]

use dpl_core::ir::*;

/// `a * x + y` as one `map`, exactly as the printer writes it.
pub const SAXPY: &str = "\
fn saxpy(%1 a: f32, %2 x: [f32], %3 y: [f32]) -> [f32] {
  declare %0 unit: ()
  %6 t: [f32] = map(|%4 xi: f32, %5 yi: f32| [%1] {
    %7: f32 = mul %1, %4
    %8: f32 = add %7, %5
    %8
  }, %2, %3)
  %6
}
";

/// The deterministic generator, so that a proptest seed determines the whole function.
pub use dpl_testkit::SplitMix64 as Rng;

const NAMES: [&str; 12] = [
    "x",
    "acc",
    "",
    "t0",
    "a b",
    "ü",
    "quote\"d",
    "fn",
    "_",
    "line\nbreak",
    "if",
    "x_1",
];

pub struct Gen {
    pub rng: Rng,
    pub f: Function,
    /// Variables in scope, innermost last.
    scope: Vec<VarId>,
    /// Open lambdas: (first scope index belonging to the lambda, captures so far).
    frames: Vec<(usize, Vec<VarId>)>,
    depth: usize,
}

impl Gen {
    pub fn ty(&mut self, depth: usize) -> Type {
        match self.rng.below(if depth > 2 { 2 } else { 4 }) {
            0 => Type::Infer,
            1 => Type::Scalar(Scalar::ALL[self.rng.below(Scalar::ALL.len())]),
            2 => Type::seq(self.ty(depth + 1)),
            _ => {
                let n = self.rng.below(3);
                Type::Tuple((0..n).map(|_| self.ty(depth + 1)).collect())
            }
        }
    }

    fn fresh(&mut self) -> VarId {
        let name = NAMES[self.rng.below(NAMES.len())];
        let ty = self.ty(0);
        self.f.new_var(name, ty, Span(self.rng.below(100) as u32))
    }

    /// A variable in scope, recorded as a capture of every open lambda it is free in.
    fn pick(&mut self) -> VarId {
        let i = self.rng.below(self.scope.len());
        let v = self.scope[i];
        for (start, caps) in &mut self.frames {
            if i < *start && !caps.contains(&v) {
                caps.push(v);
            }
        }
        v
    }

    fn picks(&mut self, n: usize) -> Vec<VarId> {
        (0..n).map(|_| self.pick()).collect()
    }

    fn block(&mut self) -> Block {
        let mark = self.scope.len();
        let n = match self.depth {
            0 => 2 + self.rng.below(12),
            1 | 2 => self.rng.below(5),
            _ => self.rng.below(2),
        };
        let mut stmts = Vec::new();
        for _ in 0..n {
            let expr = self.expr();
            let var = self.fresh();
            stmts.push(Stmt {
                var,
                expr,
                span: Span(self.rng.below(100) as u32),
            });
            self.scope.push(var);
        }
        let result = self.pick();
        self.scope.truncate(mark);
        Block { stmts, result }
    }

    fn lambda(&mut self, params: usize) -> Lambda {
        let mark = self.scope.len();
        self.frames.push((mark, Vec::new()));
        let params: Vec<VarId> = (0..params).map(|_| self.fresh()).collect();
        self.scope.extend(&params);
        self.depth += 1;
        let body = self.block();
        self.depth -= 1;
        self.scope.truncate(mark);
        let (_, captures) = self.frames.pop().unwrap();
        Lambda {
            params,
            captures,
            body,
        }
    }

    fn origin(&mut self) -> Origin {
        if self.rng.chance(30) {
            Origin::Index
        } else {
            Origin::Prim(Prim::ALL[self.rng.below(Prim::ALL.len())])
        }
    }

    fn constant(&mut self) -> Const {
        match self.rng.below(6) {
            0 => Const::Bool(self.rng.chance(50)),
            1 => Const::Int(self.rng.u64() as i64 as i128),
            2 => Const::Int(
                ((self.rng.u64() as i128) << 64 | self.rng.u64() as i128) - (1i128 << 100),
            ),
            3 => Const::Float(
                [
                    0.0,
                    -0.0,
                    1.5,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                    1e-300,
                    0.1,
                ][self.rng.below(7)],
            ),
            _ => {
                let x = f64::from_bits(self.rng.u64());
                Const::Float(if x.is_nan() { 2.5 } else { x })
            }
        }
    }

    fn expr(&mut self) -> Expr {
        let nested = self.depth < 3;
        match self.rng.below(if nested { 16 } else { 12 }) {
            0 => Expr::Const(self.constant()),
            1 => Expr::Var(self.pick()),
            2 => Expr::Unary(
                if self.rng.chance(50) {
                    UnOp::Neg
                } else {
                    UnOp::Not
                },
                self.pick(),
            ),
            3 => {
                let op = BinOp::ALL[self.rng.below(BinOp::ALL.len())];
                Expr::Binary(op, self.pick(), self.pick())
            }
            4 => Expr::Cast(self.pick(), Scalar::ALL[self.rng.below(Scalar::ALL.len())]),
            5 => {
                let n = self.rng.below(4);
                Expr::Tuple(self.picks(n))
            }
            6 => Expr::Field(self.pick(), self.rng.below(3) as u32),
            7 => {
                let checked = if self.rng.chance(30) {
                    None
                } else {
                    Some(self.origin())
                };
                Expr::Index {
                    seq: self.pick(),
                    index: self.pick(),
                    checked,
                }
            }
            8 => Expr::Len(self.pick()),
            9 => {
                let m = MathFn::ALL[self.rng.below(MathFn::ALL.len())];
                Expr::Math(m, self.picks(m.arity()))
            }
            10 => {
                let origin = self.origin();
                Expr::Assert(match self.rng.below(4) {
                    0 => Assertion::EqLen {
                        origin,
                        a: self.pick(),
                        b: self.pick(),
                    },
                    1 => Assertion::IndicesInRange {
                        origin,
                        idx: self.pick(),
                        len: self.pick(),
                    },
                    2 => Assertion::InBounds {
                        origin,
                        index: self.pick(),
                        len: self.pick(),
                    },
                    _ => Assertion::NonEmpty {
                        origin,
                        len: self.pick(),
                    },
                })
            }
            11 => Expr::Var(self.pick()),
            12 => {
                let c = self.pick();
                self.depth += 1;
                let t = self.block();
                let e = self.block();
                self.depth -= 1;
                Expr::If(c, t, e)
            }
            13 | 14 => self.prim(),
            _ => self.soac(),
        }
    }

    fn prim(&mut self) -> Expr {
        let prim = Prim::ALL[self.rng.below(Prim::ALL.len())];
        let (lambdas, args): (Vec<usize>, usize) = match prim {
            Prim::Map => {
                let n = 1 + self.rng.below(3);
                (vec![n], n)
            }
            Prim::Zip | Prim::Gather | Prim::Permute | Prim::Replicate | Prim::SortByKey => {
                (vec![], 2)
            }
            Prim::Unzip
            | Prim::Sum
            | Prim::Min
            | Prim::Max
            | Prim::Indices
            | Prim::Range
            | Prim::Len
            | Prim::Sort => (vec![], 1),
            Prim::Scatter => (vec![], 3),
            Prim::ScatterReduce => (vec![2], 3),
            Prim::Reduce | Prim::ExclusiveScan => (vec![2], 2),
            Prim::Scan => (vec![2], 1),
            Prim::Any | Prim::All | Prim::Count => {
                (if self.rng.chance(50) { vec![1] } else { vec![] }, 1)
            }
            Prim::Filter => (vec![1], 1),
        };
        let args = self.picks(args);
        let lambdas = lambdas.into_iter().map(|n| self.lambda(n)).collect();
        Expr::Prim {
            prim,
            lambdas,
            args,
        }
    }

    fn soac(&mut self) -> Expr {
        let len = self.pick();
        let elem = self.lambda(1);
        let kind = match self.rng.below(10) {
            0 => SoacKind::Map,
            1 => SoacKind::Reduce {
                op: self.lambda(2),
                init: if self.rng.chance(50) {
                    Some(self.pick())
                } else {
                    None
                },
            },
            2 => SoacKind::Scan { op: self.lambda(2) },
            3 => SoacKind::ExclusiveScan {
                op: self.lambda(2),
                init: self.pick(),
            },
            4 => SoacKind::Filter {
                pred: self.lambda(1),
            },
            5 => SoacKind::Scatter { dst: self.pick() },
            6 => SoacKind::ScatterReduce {
                op: self.lambda(2),
                dst: self.pick(),
            },
            7 => SoacKind::Permute,
            8 => SoacKind::Sort,
            _ => SoacKind::SortByKey,
        };
        Expr::Soac(Box::new(Soac { kind, len, elem }))
    }
}

/// A random well-scoped function determined by `seed`.
pub fn random_function(seed: u64) -> Function {
    let mut rng = Rng::new(seed);
    let name = ["f", "saxpy", "with space", ""][rng.below(4)];
    let mut g = Gen {
        rng,
        f: Function::new(name, Type::Infer),
        scope: Vec::new(),
        frames: Vec::new(),
        depth: 0,
    };
    g.f.ret = g.ty(0);
    let nparams = g.rng.below(4);
    for _ in 0..nparams {
        let p = g.fresh();
        g.f.params.push(p);
        g.scope.push(p);
    }
    if g.scope.is_empty() {
        // A constant to have something in scope.
        let v = g.fresh();
        g.f.body.stmts.push(Stmt {
            var: v,
            expr: Expr::Const(Const::Int(7)),
            span: Span::NONE,
        });
        g.scope.push(v);
    }
    // Unused variables, left in the arena.
    for _ in 0..g.rng.below(3) {
        g.fresh();
    }
    let body = g.block();
    g.f.body.stmts.extend(body.stmts);
    g.f.body.result = body.result;
    g.f
}
