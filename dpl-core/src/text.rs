//! The text form of the IR: a printer and a parser that round-trip.
//!
//! `parse(&print(f))` gives back `f` exactly, except that spans are not printed and the
//! parser sets every span to [`Span::NONE`] (compare with [`without_spans`]). Variables keep
//! their handles: a variable is written `%12` where it is used and `%12 name: type` where it
//! is defined (a function or lambda parameter, or a statement), so the parser can rebuild
//! the arena with the same indices. Variables of the arena that have no definition (such as
//! the `unit` variable [`Function::new`] creates, or variables a pass stopped using) are
//! listed on a `declare` line at the top of the body; the arena must be dense, so the parser
//! rejects a text that leaves an index undeclared.
//!
//! ```text
//! fn saxpy(%1 a: f32, %2 x: [f32], %3 y: [f32]) -> [f32] {
//!   declare %0 unit: ()
//!   %6 t: [f32] = map(|%4 xi: f32, %5 yi: f32| [%1] {
//!     %7: f32 = mul %1, %4
//!     %8: f32 = add %7, %5
//!     %8
//!   }, %2, %3)
//!   %6
//! }
//! ```
//!
//! A block is a list of statements `%N name: type = expr` followed by the variable holding
//! its value; statements are separated by new lines or `;` (white space is not significant).
//! Names that are not plain identifiers, and the empty name, are written as Rust string
//! literals or left out (`%7: f32`). Expressions, one form per [`Expr`] variant:
//!
//! | form | expression |
//! |---|---|
//! | `const 3`, `const -1.5`, `const true` | [`Expr::Const`] (floats always show `.` or an exponent) |
//! | `%3` | [`Expr::Var`] |
//! | `neg %3`, `not %3` | [`Expr::Unary`] |
//! | `add %1, %2` (`sub mul div rem and or xor shl shr eq ne lt le gt ge`) | [`Expr::Binary`] |
//! | `cast %3 as f32` | [`Expr::Cast`] |
//! | `tuple(%1, %2)` | [`Expr::Tuple`] |
//! | `%3.1` | [`Expr::Field`] |
//! | `if %c { .. } else { .. }` | [`Expr::If`] |
//! | `index(gather) %s[%i]`, `index(unchecked) %s[%i]` | [`Expr::Index`] |
//! | `len %3` | [`Expr::Len`] |
//! | `sqrt %3`, `min %1, %2`, `mul_add %1, %2, %3` | [`Expr::Math`] |
//! | `reduce(\|%4 a: f32, %5 b: f32\| [] { .. }, %2, %3)` | [`Expr::Prim`]: lambdas, then data arguments |
//! | `soac reduce(%n, \|%4 i: usize\| [%2] { .. }, op: \|..\| [] { .. }, init: %7)` | [`Expr::Soac`] |
//! | `assert(map) eq_len %1, %2` (`indices_in_range`, `in_bounds`, `non_empty`) | [`Expr::Assert`] |
//! | `loop(%4 i: usize = %1, %5 s: f32 = %2) while { .. } do { .. }` | [`Expr::Loop`]: the variables with their initial values, the condition, the body |
//!
//! A lambda is `|params| [captures] { body }`. A primitive is told from the math function
//! or the `len` expression of the same name by its parenthesis: `min(%3)` is the reduction,
//! `min %1, %2` the scalar function.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use crate::ir::*;

/// A syntax error in the text form, with the 1-based position where it was found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct ParseError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// What was expected or what is wrong.
    pub message: String,
}

impl fmt::Display for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&print(self))
    }
}

/// A copy of `f` with every span (of variables and statements) set to [`Span::NONE`]: what
/// [`parse`] gives back for [`print()`]ed text.
pub fn without_spans(f: &Function) -> Function {
    let mut g = f.clone();
    for (_, v) in g.vars.iter_mut() {
        v.span = Span::NONE;
    }
    crate::captures::visit_blocks_mut(&mut g.body, &mut |b| {
        b.stmts.iter_mut().for_each(|s| s.span = Span::NONE)
    });
    g
}

// ---------------------------------------------------------------------------------------
// Printing

/// The text form of `f` (see the [module docs](self)). Works on any function, valid or not;
/// handles outside the arena are printed as uses, which [`parse`] then rejects.
pub fn print(f: &Function) -> String {
    let mut p = Printer {
        f,
        out: String::new(),
    };
    p.function();
    p.out
}

struct Printer<'a> {
    f: &'a Function,
    out: String,
}

fn is_ident(s: &str) -> bool {
    let mut cs = s.chars();
    matches!(cs.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && cs.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn unop_name(op: UnOp) -> &'static str {
    match op {
        UnOp::Neg => "neg",
        UnOp::Not => "not",
    }
}

/// Every definition site of `f`: function and lambda parameters and statement variables.
fn defined_vars(f: &Function) -> Vec<VarId> {
    fn lambda(l: &Lambda, out: &mut Vec<VarId>) {
        out.extend(&l.params);
        block(&l.body, out);
    }
    fn block(b: &Block, out: &mut Vec<VarId>) {
        for s in &b.stmts {
            out.push(s.var);
            match &s.expr {
                Expr::If(_, t, e) => {
                    block(t, out);
                    block(e, out);
                }
                Expr::Loop(l) => {
                    out.extend(&l.params);
                    block(&l.cond, out);
                    block(&l.body, out);
                }
                e => e.for_each_lambda(&mut |l| lambda(l, out)),
            }
        }
    }
    let mut out = f.params.clone();
    block(&f.body, &mut out);
    out
}

impl Printer<'_> {
    fn name(&mut self, name: &str) {
        if is_ident(name) {
            self.out.push_str(name);
        } else {
            write!(self.out, "{name:?}").unwrap();
        }
    }

    fn use_var(&mut self, v: VarId) {
        write!(self.out, "%{}", v.index()).unwrap();
    }

    fn vars(&mut self, vs: &[VarId]) {
        for (i, v) in vs.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.use_var(*v);
        }
    }

    fn def_var(&mut self, v: VarId) {
        self.use_var(v);
        if v.index() >= self.f.vars.len() {
            // Not in the arena: print as a bare use so that `parse` reports it.
            self.out.push_str(": _");
            return;
        }
        let var = &self.f.vars[v];
        if !var.name.is_empty() {
            self.out.push(' ');
            self.name(&var.name);
        }
        write!(self.out, ": {}", var.ty).unwrap();
    }

    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out.push_str("  ");
        }
    }

    fn function(&mut self) {
        let f = self.f;
        self.out.push_str("fn ");
        self.name(&f.name);
        self.out.push('(');
        for (i, p) in f.params.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.def_var(*p);
        }
        writeln!(self.out, ") -> {} {{", f.ret).unwrap();
        let mut defined = vec![false; f.vars.len()];
        for v in defined_vars(f) {
            if let Some(d) = defined.get_mut(v.index()) {
                *d = true;
            }
        }
        let undefined: Vec<VarId> = (0..f.vars.len())
            .filter(|&i| !defined[i])
            .map(VarId::new)
            .collect();
        if !undefined.is_empty() {
            self.out.push_str("  declare ");
            for (i, v) in undefined.into_iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                self.def_var(v);
            }
            self.out.push('\n');
        }
        self.block_lines(&f.body, 1);
        self.out.push_str("}\n");
    }

    /// The statements and result of `b`, one per line at `depth`.
    fn block_lines(&mut self, b: &Block, depth: usize) {
        for s in &b.stmts {
            self.indent(depth);
            self.def_var(s.var);
            self.out.push_str(" = ");
            self.expr(&s.expr, depth);
            self.out.push('\n');
        }
        self.indent(depth);
        self.use_var(b.result);
        self.out.push('\n');
    }

    /// `{`, the block's lines one level deeper, `}` at `depth`.
    fn block(&mut self, b: &Block, depth: usize) {
        self.out.push_str("{\n");
        self.block_lines(b, depth + 1);
        self.indent(depth);
        self.out.push('}');
    }

    fn lambda(&mut self, l: &Lambda, depth: usize) {
        self.out.push('|');
        for (i, p) in l.params.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.def_var(*p);
        }
        self.out.push_str("| [");
        self.vars(&l.captures);
        self.out.push_str("] ");
        self.block(&l.body, depth);
    }

    fn expr(&mut self, e: &Expr, depth: usize) {
        match e {
            Expr::Const(c) => match c {
                Const::Bool(b) => write!(self.out, "const {b}").unwrap(),
                Const::Int(i) => write!(self.out, "const {i}").unwrap(),
                Const::Float(x) => write!(self.out, "const {x:?}").unwrap(),
            },
            Expr::Var(v) => self.use_var(*v),
            Expr::Unary(op, v) => {
                write!(self.out, "{} ", unop_name(*op)).unwrap();
                self.use_var(*v);
            }
            Expr::Binary(op, a, b) => {
                write!(self.out, "{} ", op.name()).unwrap();
                self.vars(&[*a, *b]);
            }
            Expr::Cast(v, s) => {
                self.out.push_str("cast ");
                self.use_var(*v);
                write!(self.out, " as {s}").unwrap();
            }
            Expr::Tuple(vs) => {
                self.out.push_str("tuple(");
                self.vars(vs);
                self.out.push(')');
            }
            Expr::Field(v, n) => {
                self.use_var(*v);
                write!(self.out, ".{n}").unwrap();
            }
            Expr::If(c, t, f) => {
                self.out.push_str("if ");
                self.use_var(*c);
                self.out.push(' ');
                self.block(t, depth);
                self.out.push_str(" else ");
                self.block(f, depth);
            }
            Expr::Loop(l) => {
                self.out.push_str("loop(");
                for (i, (&p, &init)) in l.params.iter().zip(&l.inits).enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.def_var(p);
                    self.out.push_str(" = ");
                    self.use_var(init);
                }
                // A malformed loop (more params than inits, or fewer) shows the rest.
                for &p in l.params.iter().skip(l.inits.len()) {
                    self.out.push_str(", ");
                    self.def_var(p);
                }
                for &init in l.inits.iter().skip(l.params.len()) {
                    self.out.push_str(", = ");
                    self.use_var(init);
                }
                self.out.push_str(") while ");
                self.block(&l.cond, depth);
                self.out.push_str(" do ");
                self.block(&l.body, depth);
            }
            Expr::Index {
                seq,
                index,
                checked,
            } => {
                let how = checked.map_or("unchecked", Origin::name);
                write!(self.out, "index({how}) ").unwrap();
                self.use_var(*seq);
                self.out.push('[');
                self.use_var(*index);
                self.out.push(']');
            }
            Expr::Len(v) => {
                self.out.push_str("len ");
                self.use_var(*v);
            }
            Expr::Math(m, vs) => {
                write!(self.out, "{} ", m.name()).unwrap();
                self.vars(vs);
            }
            Expr::Prim {
                prim,
                lambdas,
                args,
            } => {
                write!(self.out, "{}(", prim.name()).unwrap();
                let mut first = true;
                for l in lambdas {
                    if !first {
                        self.out.push_str(", ");
                    }
                    first = false;
                    self.lambda(l, depth);
                }
                for a in args {
                    if !first {
                        self.out.push_str(", ");
                    }
                    first = false;
                    self.use_var(*a);
                }
                self.out.push(')');
            }
            Expr::Soac(s) => {
                write!(self.out, "soac {}(", s.kind.name()).unwrap();
                self.use_var(s.len);
                self.out.push_str(", ");
                self.lambda(&s.elem, depth);
                match &s.kind {
                    SoacKind::Map | SoacKind::Permute | SoacKind::Sort | SoacKind::SortByKey => {}
                    SoacKind::Reduce { op, init } => {
                        self.out.push_str(", op: ");
                        self.lambda(op, depth);
                        if let Some(i) = init {
                            self.out.push_str(", init: ");
                            self.use_var(*i);
                        }
                    }
                    SoacKind::Scan { op } => {
                        self.out.push_str(", op: ");
                        self.lambda(op, depth);
                    }
                    SoacKind::ExclusiveScan { op, init } => {
                        self.out.push_str(", op: ");
                        self.lambda(op, depth);
                        self.out.push_str(", init: ");
                        self.use_var(*init);
                    }
                    SoacKind::Filter { pred } => {
                        self.out.push_str(", pred: ");
                        self.lambda(pred, depth);
                    }
                    SoacKind::Scatter { dst } => {
                        self.out.push_str(", dst: ");
                        self.use_var(*dst);
                    }
                    SoacKind::ScatterReduce { op, dst } => {
                        self.out.push_str(", op: ");
                        self.lambda(op, depth);
                        self.out.push_str(", dst: ");
                        self.use_var(*dst);
                    }
                }
                self.out.push(')');
            }
            Expr::Assert(a) => {
                let (origin, kind, vs) = match a {
                    Assertion::EqLen { origin, a, b } => (origin, "eq_len", vec![*a, *b]),
                    Assertion::IndicesInRange { origin, idx, len } => {
                        (origin, "indices_in_range", vec![*idx, *len])
                    }
                    Assertion::InBounds { origin, index, len } => {
                        (origin, "in_bounds", vec![*index, *len])
                    }
                    Assertion::NonEmpty { origin, len } => (origin, "non_empty", vec![*len]),
                };
                write!(self.out, "assert({}) {kind} ", origin.name()).unwrap();
                self.vars(&vs);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Lexing

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    /// `%12`
    Var(u32),
    Ident(String),
    /// A string literal, unescaped.
    Str(String),
    /// A number as written (sign, digits, fraction, exponent).
    Num(String),
    /// `->`
    Arrow,
    Punct(char),
    Eof,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Var(i) => write!(f, "`%{i}`"),
            Tok::Ident(s) => write!(f, "`{s}`"),
            Tok::Str(s) => write!(f, "string {s:?}"),
            Tok::Num(s) => write!(f, "number `{s}`"),
            Tok::Arrow => f.write_str("`->`"),
            Tok::Punct(c) => write!(f, "`{c}`"),
            Tok::Eof => f.write_str("end of input"),
        }
    }
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    line: usize,
    column: usize,
}

/// Splits `text` into tokens. With `named` (see [`parse_named`]) a `$name` variable becomes
/// the handle numbered in order of first appearance, followed by its name where it is
/// defined (before a `:`); the names, indexed by handle, are the second result. Without
/// it, `$` is an unexpected character.
fn lex(text: &str, named: bool) -> Result<(Vec<Token>, Vec<String>), ParseError> {
    let chars: Vec<char> = text.chars().collect();
    let mut toks = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let (mut i, mut line, mut col) = (0usize, 1usize, 1usize);
    let err = |line, column, message: String| ParseError {
        line,
        column,
        message,
    };
    while i < chars.len() {
        let c = chars[i];
        let (tl, tc) = (line, col);
        let start = i;
        let tok = if c == '\n' {
            i += 1;
            line += 1;
            col = 1;
            continue;
        } else if c.is_whitespace() {
            i += 1;
            col += 1;
            continue;
        } else if c == '/' && chars.get(i + 1) == Some(&'/') {
            // A comment to the end of the line.
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        } else if c == '$' && named {
            i += 1;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let name: String = chars[start + 1..i].iter().collect();
            if name.is_empty() {
                return Err(err(tl, tc, "expected a variable name after `$`".into()));
            }
            let k = match names.iter().position(|n| *n == name) {
                Some(k) => k,
                None => {
                    names.push(name.clone());
                    names.len() - 1
                }
            };
            let n = u32::try_from(k).map_err(|_| err(tl, tc, "too many variables".into()))?;
            toks.push(Token {
                tok: Tok::Var(n),
                line: tl,
                column: tc,
            });
            let mut m = i;
            while chars.get(m).is_some_and(|c| *c == ' ' || *c == '\t') {
                m += 1;
            }
            if chars.get(m) == Some(&':') {
                // A definition: the name the text form writes after the handle.
                toks.push(Token {
                    tok: Tok::Ident(name),
                    line: tl,
                    column: tc + 1,
                });
            }
            col += i - start;
            continue;
        } else if c == '%' && named {
            return Err(err(
                tl,
                tc,
                "a `%N` handle in a text written with `$name` variables".into(),
            ));
        } else if c == '%' {
            i += 1;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            let digits: String = chars[start + 1..i].iter().collect();
            let n = digits.parse::<u32>().map_err(|_| {
                err(
                    tl,
                    tc,
                    format!("expected a variable number after `%`, found `%{digits}`"),
                )
            })?;
            Tok::Var(n)
        } else if c.is_ascii_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            Tok::Ident(chars[start..i].iter().collect())
        } else if c.is_ascii_digit()
            || (c == '-' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            i += 1;
            let digits = |i: &mut usize| {
                while *i < chars.len() && chars[*i].is_ascii_digit() {
                    *i += 1;
                }
            };
            digits(&mut i);
            if chars.get(i) == Some(&'.') && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()) {
                i += 1;
                digits(&mut i);
            }
            if matches!(chars.get(i), Some('e' | 'E')) {
                let mut j = i + 1;
                if matches!(chars.get(j), Some('+' | '-')) {
                    j += 1;
                }
                if chars.get(j).is_some_and(|d| d.is_ascii_digit()) {
                    i = j;
                    digits(&mut i);
                }
            }
            Tok::Num(chars[start..i].iter().collect())
        } else if c == '"' {
            i += 1;
            let mut s = String::new();
            loop {
                let Some(&c) = chars.get(i) else {
                    return Err(err(tl, tc, "unterminated string".into()));
                };
                i += 1;
                match c {
                    '"' => break,
                    '\\' => {
                        let Some(&e) = chars.get(i) else {
                            return Err(err(tl, tc, "unterminated string".into()));
                        };
                        i += 1;
                        match e {
                            'n' => s.push('\n'),
                            'r' => s.push('\r'),
                            't' => s.push('\t'),
                            '0' => s.push('\0'),
                            '\\' | '"' | '\'' => s.push(e),
                            'u' => {
                                let close = chars[i..].iter().position(|&c| c == '}');
                                let code = (chars.get(i) == Some(&'{'))
                                    .then_some(close)
                                    .flatten()
                                    .map(|k| chars[i + 1..i + k].iter().collect::<String>())
                                    .and_then(|h| u32::from_str_radix(&h, 16).ok())
                                    .and_then(char::from_u32);
                                match (code, close) {
                                    (Some(ch), Some(k)) => {
                                        s.push(ch);
                                        i += k + 1;
                                    }
                                    _ => {
                                        return Err(err(
                                            tl,
                                            tc,
                                            "bad `\\u{..}` escape in string".into(),
                                        ));
                                    }
                                }
                            }
                            other => {
                                return Err(err(
                                    tl,
                                    tc,
                                    format!("unknown escape `\\{other}` in string"),
                                ));
                            }
                        }
                    }
                    '\n' => {
                        return Err(err(
                            tl,
                            tc,
                            "string literal runs past the end of the line".into(),
                        ));
                    }
                    c => s.push(c),
                }
            }
            Tok::Str(s)
        } else if c == '-' && chars.get(i + 1) == Some(&'>') {
            i += 2;
            Tok::Arrow
        } else if "()[]{},:;=|.-".contains(c) {
            i += 1;
            Tok::Punct(c)
        } else {
            return Err(err(tl, tc, format!("unexpected character `{c}`")));
        };
        col += i - start;
        toks.push(Token {
            tok,
            line: tl,
            column: tc,
        });
    }
    toks.push(Token {
        tok: Tok::Eof,
        line,
        column: col,
    });
    Ok((toks, names))
}

// ---------------------------------------------------------------------------------------
// Parsing

/// Parses the text form (see the [module docs](self)) into a function. Spans are
/// [`Span::NONE`]. Fails on a syntax error, on a variable defined twice with different
/// names or types, and on an arena that would have holes (an index never declared) or uses
/// of undeclared variables. It does not check scoping or types: that is
/// [`verify`](crate::verify).
pub fn parse(text: &str) -> Result<Function, ParseError> {
    let (toks, names) = lex(text, false)?;
    Parser::new(toks, names).run()
}

/// Parses the text form written with named variables, the form tests and hand-written
/// programs use: `$name` instead of a `%N` handle, `$name: type` where it is defined.
///
/// ```text
/// fn saxpy($a: f32, $x: [f32], $y: [f32]) -> [f32] {
///   $r: [f32] = map(|$xi: f32, $yi: f32| [] { $t: f32 = mul $a, $xi; $u: f32 = add $t, $yi; $u }, $x, $y)
///   $r
/// }
/// ```
///
/// Variables are numbered in order of first appearance (so the arena is dense and no
/// `declare` line is needed) and keep their names; the lambdas' capture lists are
/// recomputed ([`fix_captures`](crate::captures::fix_captures)), so they may be written
/// `[]`. Returns the function and the names indexed by handle (`names[v.index()]` is the
/// name of `v`). Fails as [`parse`] does, on a `%N` handle, and on a `$name` used but never
/// defined.
pub fn parse_named(text: &str) -> Result<(Function, Vec<String>), ParseError> {
    let (toks, names) = lex(text, true)?;
    let mut f = Parser::new(toks, names.clone()).run()?;
    crate::captures::fix_captures(&mut f);
    Ok((f, names))
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    /// Every definition seen: index -> (variable, where).
    declared: BTreeMap<u32, (Var, usize, usize)>,
    /// Every use: (index, line, column).
    uses: Vec<(u32, usize, usize)>,
    /// The `$name` of each handle when parsing named text ([`parse_named`]), else empty.
    names: Vec<String>,
}

type PResult<T> = Result<T, ParseError>;

impl Parser {
    fn new(toks: Vec<Token>, names: Vec<String>) -> Parser {
        Parser {
            toks,
            pos: 0,
            declared: BTreeMap::new(),
            uses: Vec::new(),
            names,
        }
    }

    fn run(mut self) -> PResult<Function> {
        let f = self.function()?;
        self.expect_eof()?;
        self.finish(f)
    }

    /// A variable as the text wrote it: `$name` in named text, else `%N`.
    fn show_var(&self, n: u32) -> String {
        match self.names.get(n as usize) {
            Some(name) => format!("${name}"),
            None => format!("%{n}"),
        }
    }

    fn peek(&self) -> &Tok {
        &self.toks[self.pos].tok
    }

    fn peek2(&self) -> &Tok {
        &self.toks[(self.pos + 1).min(self.toks.len() - 1)].tok
    }

    fn bump(&mut self) -> Token {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    fn error_here<T>(&self, message: impl Into<String>) -> PResult<T> {
        let t = &self.toks[self.pos];
        Err(ParseError {
            line: t.line,
            column: t.column,
            message: message.into(),
        })
    }

    fn expected<T>(&self, what: &str) -> PResult<T> {
        let found = match self.peek() {
            Tok::Var(n) => format!("`{}`", self.show_var(*n)),
            t => t.to_string(),
        };
        self.error_here(format!("expected {what}, found {found}"))
    }

    fn is_punct(&self, c: char) -> bool {
        *self.peek() == Tok::Punct(c)
    }

    fn eat_punct(&mut self, c: char) -> bool {
        if self.is_punct(c) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn expect_punct(&mut self, c: char) -> PResult<()> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            self.expected(&format!("`{c}`"))
        }
    }

    fn is_ident(&self, s: &str) -> bool {
        matches!(self.peek(), Tok::Ident(i) if i == s)
    }

    fn expect_ident(&mut self, s: &str) -> PResult<()> {
        if self.is_ident(s) {
            self.bump();
            Ok(())
        } else {
            self.expected(&format!("`{s}`"))
        }
    }

    fn ident(&mut self, what: &str) -> PResult<String> {
        match self.peek().clone() {
            Tok::Ident(s) => {
                self.bump();
                Ok(s)
            }
            _ => self.expected(what),
        }
    }

    fn expect_eof(&self) -> PResult<()> {
        if *self.peek() == Tok::Eof {
            Ok(())
        } else {
            self.expected("end of input")
        }
    }

    /// A use of a variable.
    fn var(&mut self) -> PResult<VarId> {
        let t = &self.toks[self.pos];
        match t.tok {
            Tok::Var(n) => {
                self.uses.push((n, t.line, t.column));
                self.bump();
                Ok(VarId::new(n as usize))
            }
            _ => self.expected("a variable `%N`"),
        }
    }

    /// `%1, %2, ...`: at least one variable, then more after each comma (the operands of
    /// an operator, which are not delimited).
    fn operands(&mut self) -> PResult<Vec<VarId>> {
        let mut vs = vec![self.var()?];
        while self.eat_punct(',') {
            vs.push(self.var()?);
        }
        Ok(vs)
    }

    /// `%1, %2, ...` (possibly none) up to (not including) `close`.
    fn var_list(&mut self, close: char) -> PResult<Vec<VarId>> {
        let mut vs = Vec::new();
        while !self.is_punct(close) {
            vs.push(self.var()?);
            if !self.eat_punct(',') {
                break;
            }
        }
        Ok(vs)
    }

    /// A definition `%N name: type` (the name is optional).
    fn def_var(&mut self) -> PResult<VarId> {
        let t = self.toks[self.pos].clone();
        let Tok::Var(n) = t.tok else {
            return self.expected("a variable definition `%N name: type`");
        };
        self.bump();
        let name = match self.peek().clone() {
            Tok::Ident(s) | Tok::Str(s) => {
                self.bump();
                s
            }
            _ => String::new(),
        };
        self.expect_punct(':')?;
        let ty = self.ty()?;
        let var = Var {
            name,
            ty,
            span: Span::NONE,
        };
        if let Some((old, line, column)) = self.declared.get(&n) {
            if *old != var {
                return Err(ParseError {
                    line: t.line,
                    column: t.column,
                    message: format!(
                        "{} is defined again with a different name or type (first defined at {line}:{column})",
                        self.show_var(n)
                    ),
                });
            }
        } else {
            self.declared.insert(n, (var, t.line, t.column));
        }
        Ok(VarId::new(n as usize))
    }

    fn ty(&mut self) -> PResult<Type> {
        match self.peek().clone() {
            Tok::Ident(s) if s == "_" => {
                self.bump();
                Ok(Type::Infer)
            }
            Tok::Ident(s) => match Scalar::from_name(&s) {
                Some(sc) => {
                    self.bump();
                    Ok(Type::Scalar(sc))
                }
                None => self.expected("a type"),
            },
            Tok::Punct('[') => {
                self.bump();
                let t = self.ty()?;
                self.expect_punct(']')?;
                Ok(Type::seq(t))
            }
            Tok::Punct('(') => {
                self.bump();
                let mut ts = Vec::new();
                while !self.is_punct(')') {
                    ts.push(self.ty()?);
                    if !self.eat_punct(',') {
                        break;
                    }
                }
                self.expect_punct(')')?;
                Ok(Type::Tuple(ts))
            }
            _ => self.expected("a type"),
        }
    }

    fn function(&mut self) -> PResult<Function> {
        self.expect_ident("fn")?;
        let name = match self.peek().clone() {
            Tok::Ident(s) | Tok::Str(s) => {
                self.bump();
                s
            }
            _ => return self.expected("the function's name"),
        };
        self.expect_punct('(')?;
        let mut params = Vec::new();
        while !self.is_punct(')') {
            params.push(self.def_var()?);
            if !self.eat_punct(',') {
                break;
            }
        }
        self.expect_punct(')')?;
        if *self.peek() != Tok::Arrow {
            return self.expected("`->`");
        }
        self.bump();
        let ret = self.ty()?;
        self.expect_punct('{')?;
        if self.is_ident("declare") {
            self.bump();
            loop {
                self.def_var()?;
                if !self.eat_punct(',') {
                    break;
                }
            }
            self.eat_punct(';');
        }
        let body = self.block_contents()?;
        self.expect_punct('}')?;
        Ok(Function {
            name,
            vars: Arena::new(),
            params,
            ret,
            body,
        })
    }

    /// Builds the arena from the definitions and checks that it is dense and that every
    /// use names a declared variable.
    fn finish(self, mut f: Function) -> PResult<Function> {
        if !self.names.is_empty()
            && let Some(&(idx, line, column)) =
                self.uses.iter().find(|u| !self.declared.contains_key(&u.0))
        {
            // Named variables are numbered densely, so a hole is always a use of a name
            // never defined.
            return Err(ParseError {
                line,
                column,
                message: format!("{} is used but never defined", self.show_var(idx)),
            });
        }
        let n = self.declared.len();
        for (i, (&idx, (_, line, column))) in self.declared.iter().enumerate() {
            if idx as usize != i {
                return Err(ParseError {
                    line: *line,
                    column: *column,
                    message: format!(
                        "variable %{i} is never declared, but %{idx} is (the arena must be dense: list unused variables on the `declare` line)"
                    ),
                });
            }
        }
        if let Some(&(idx, line, column)) = self.uses.iter().find(|u| u.0 as usize >= n) {
            return Err(ParseError {
                line,
                column,
                message: format!("%{idx} is used but never declared"),
            });
        }
        for (_, (var, _, _)) in self.declared {
            f.vars.push(var);
        }
        Ok(f)
    }

    /// Statements and the result variable, up to (not including) the closing `}`.
    fn block_contents(&mut self) -> PResult<Block> {
        let mut stmts = Vec::new();
        loop {
            if !matches!(self.peek(), Tok::Var(_)) {
                return self
                    .expected("a statement `%N name: type = ...` or the block's result `%N`");
            }
            if matches!(self.peek2(), Tok::Punct('}')) {
                let result = self.var()?;
                return Ok(Block { stmts, result });
            }
            let var = self.def_var()?;
            self.expect_punct('=')?;
            let expr = self.expr()?;
            stmts.push(Stmt {
                var,
                expr,
                span: Span::NONE,
            });
            self.eat_punct(';');
        }
    }

    fn block(&mut self) -> PResult<Block> {
        self.expect_punct('{')?;
        let b = self.block_contents()?;
        self.expect_punct('}')?;
        Ok(b)
    }

    fn lambda(&mut self) -> PResult<Lambda> {
        self.expect_punct('|')?;
        let mut params = Vec::new();
        while !self.is_punct('|') {
            params.push(self.def_var()?);
            if !self.eat_punct(',') {
                break;
            }
        }
        self.expect_punct('|')?;
        self.expect_punct('[')?;
        let captures = self.var_list(']')?;
        self.expect_punct(']')?;
        let body = self.block()?;
        Ok(Lambda {
            params,
            captures,
            body,
        })
    }

    fn origin(&mut self) -> PResult<Origin> {
        let name = self.ident("an origin (`index` or a primitive name)")?;
        match Origin::from_name(&name) {
            Some(o) => Ok(o),
            None => {
                self.pos -= 1;
                self.error_here(format!(
                    "`{name}` is not an origin (`index` or a primitive name)"
                ))
            }
        }
    }

    fn int<T: std::str::FromStr>(&mut self, what: &str) -> PResult<T> {
        match self.peek().clone() {
            Tok::Num(s) => match s.parse::<T>() {
                Ok(v) => {
                    self.bump();
                    Ok(v)
                }
                Err(_) => self.error_here(format!("`{s}` is not a valid {what}")),
            },
            _ => self.expected(what),
        }
    }

    fn constant(&mut self) -> PResult<Const> {
        match self.peek().clone() {
            Tok::Ident(s) if s == "true" || s == "false" => {
                self.bump();
                Ok(Const::Bool(s == "true"))
            }
            Tok::Ident(s) if s == "inf" || s == "NaN" => {
                self.bump();
                Ok(Const::Float(if s == "inf" {
                    f64::INFINITY
                } else {
                    f64::NAN
                }))
            }
            Tok::Punct('-') if matches!(self.peek2(), Tok::Ident(s) if s == "inf") => {
                self.bump();
                self.bump();
                Ok(Const::Float(f64::NEG_INFINITY))
            }
            Tok::Num(s) => {
                let is_float = s.contains(['.', 'e', 'E']);
                let c = if is_float {
                    s.parse::<f64>().ok().map(Const::Float)
                } else {
                    s.parse::<i128>().ok().map(Const::Int)
                };
                match c {
                    Some(c) => {
                        self.bump();
                        Ok(c)
                    }
                    None => self.error_here(format!("`{s}` is not a valid literal")),
                }
            }
            _ => self.expected("a literal (integer, float, `true` or `false`)"),
        }
    }

    fn expr(&mut self) -> PResult<Expr> {
        let head = match self.peek().clone() {
            Tok::Var(_) => {
                let v = self.var()?;
                if self.eat_punct('.') {
                    let n = self.int::<u32>("a tuple field number")?;
                    return Ok(Expr::Field(v, n));
                }
                return Ok(Expr::Var(v));
            }
            Tok::Ident(s) => s,
            _ => return self.expected("an expression"),
        };
        let call = matches!(self.peek2(), Tok::Punct('('));
        self.bump();
        match head.as_str() {
            "const" => Ok(Expr::Const(self.constant()?)),
            "cast" => {
                let v = self.var()?;
                self.expect_ident("as")?;
                let name = self.ident("a scalar type")?;
                match Scalar::from_name(&name) {
                    Some(s) => Ok(Expr::Cast(v, s)),
                    None => {
                        self.pos -= 1;
                        self.error_here(format!("`{name}` is not a scalar type"))
                    }
                }
            }
            "tuple" => {
                self.expect_punct('(')?;
                let vs = self.var_list(')')?;
                self.expect_punct(')')?;
                Ok(Expr::Tuple(vs))
            }
            "if" => {
                let c = self.var()?;
                let t = self.block()?;
                self.expect_ident("else")?;
                let e = self.block()?;
                Ok(Expr::If(c, t, e))
            }
            "loop" => {
                self.expect_punct('(')?;
                let (mut params, mut inits) = (Vec::new(), Vec::new());
                while !self.is_punct(')') {
                    params.push(self.def_var()?);
                    self.expect_punct('=')?;
                    inits.push(self.var()?);
                    if !self.eat_punct(',') {
                        break;
                    }
                }
                self.expect_punct(')')?;
                self.expect_ident("while")?;
                let cond = self.block()?;
                self.expect_ident("do")?;
                let body = self.block()?;
                Ok(Expr::Loop(Box::new(Loop {
                    params,
                    inits,
                    cond,
                    body,
                })))
            }
            "index" => {
                self.expect_punct('(')?;
                let checked = if self.is_ident("unchecked") {
                    self.bump();
                    None
                } else {
                    Some(self.origin()?)
                };
                self.expect_punct(')')?;
                let seq = self.var()?;
                self.expect_punct('[')?;
                let index = self.var()?;
                self.expect_punct(']')?;
                Ok(Expr::Index {
                    seq,
                    index,
                    checked,
                })
            }
            "len" if !call => Ok(Expr::Len(self.var()?)),
            "assert" => {
                self.expect_punct('(')?;
                let origin = self.origin()?;
                self.expect_punct(')')?;
                let kind = self.ident("an assertion kind")?;
                let at = self.pos - 1;
                let vs = self.operands()?;
                let arity = |n: usize, p: &Self| -> PResult<()> {
                    if vs.len() == n {
                        Ok(())
                    } else {
                        let t = &p.toks[at];
                        Err(ParseError {
                            line: t.line,
                            column: t.column,
                            message: format!("`{kind}` takes {n} variables, found {}", vs.len()),
                        })
                    }
                };
                let a = match kind.as_str() {
                    "eq_len" => {
                        arity(2, self)?;
                        Assertion::EqLen {
                            origin,
                            a: vs[0],
                            b: vs[1],
                        }
                    }
                    "indices_in_range" => {
                        arity(2, self)?;
                        Assertion::IndicesInRange {
                            origin,
                            idx: vs[0],
                            len: vs[1],
                        }
                    }
                    "in_bounds" => {
                        arity(2, self)?;
                        Assertion::InBounds {
                            origin,
                            index: vs[0],
                            len: vs[1],
                        }
                    }
                    "non_empty" => {
                        arity(1, self)?;
                        Assertion::NonEmpty { origin, len: vs[0] }
                    }
                    _ => {
                        self.pos = at;
                        return self.error_here(format!(
                            "`{kind}` is not an assertion (eq_len, indices_in_range, in_bounds, non_empty)"
                        ));
                    }
                };
                Ok(Expr::Assert(a))
            }
            "soac" => self.soac(),
            _ if call => match Prim::from_name(&head) {
                Some(prim) => {
                    self.expect_punct('(')?;
                    let (mut lambdas, mut args) = (Vec::new(), Vec::new());
                    while !self.is_punct(')') {
                        if self.is_punct('|') {
                            lambdas.push(self.lambda()?);
                        } else {
                            args.push(self.var()?);
                        }
                        if !self.eat_punct(',') {
                            break;
                        }
                    }
                    self.expect_punct(')')?;
                    Ok(Expr::Prim {
                        prim,
                        lambdas,
                        args,
                    })
                }
                None => {
                    self.pos -= 1;
                    self.error_here(format!("`{head}` is not a primitive"))
                }
            },
            _ => {
                if let Some(op) = [UnOp::Neg, UnOp::Not]
                    .into_iter()
                    .find(|o| unop_name(*o) == head)
                {
                    return Ok(Expr::Unary(op, self.var()?));
                }
                if let Some(op) = BinOp::from_name(&head) {
                    let a = self.var()?;
                    self.expect_punct(',')?;
                    let b = self.var()?;
                    return Ok(Expr::Binary(op, a, b));
                }
                if let Some(m) = MathFn::from_name(&head) {
                    let vs = self.operands()?;
                    return Ok(Expr::Math(m, vs));
                }
                self.pos -= 1;
                self.error_here(format!("`{head}` does not start an expression"))
            }
        }
    }

    fn soac(&mut self) -> PResult<Expr> {
        let kind_at = self.pos;
        let kind = self.ident("a combinator kind")?;
        self.expect_punct('(')?;
        let len = self.var()?;
        self.expect_punct(',')?;
        let elem = self.lambda()?;
        let (mut op, mut pred, mut init, mut dst) = (None, None, None, None);
        while self.eat_punct(',') {
            let key_at = self.pos;
            let key = self.ident("`op:`, `pred:`, `init:` or `dst:`")?;
            self.expect_punct(':')?;
            let dup = match key.as_str() {
                "op" => op.replace(self.lambda()?).is_some(),
                "pred" => pred.replace(self.lambda()?).is_some(),
                "init" => init.replace(self.var()?).is_some(),
                "dst" => dst.replace(self.var()?).is_some(),
                _ => {
                    self.pos = key_at;
                    return self.error_here(format!(
                        "`{key}` is not a combinator argument (op, pred, init, dst)"
                    ));
                }
            };
            if dup {
                self.pos = key_at;
                return self.error_here(format!("`{key}` is given twice"));
            }
        }
        let close_at = self.pos;
        self.expect_punct(')')?;
        let given = [
            ("op", op.is_some()),
            ("pred", pred.is_some()),
            ("init", init.is_some()),
            ("dst", dst.is_some()),
        ];
        let (required, optional): (&[&str], &[&str]) = match kind.as_str() {
            "map" | "permute" | "sort" | "sort_by_key" => (&[], &[]),
            "reduce" => (&["op"], &["init"]),
            "scan" => (&["op"], &[]),
            "exclusive_scan" => (&["op", "init"], &[]),
            "filter" => (&["pred"], &[]),
            "scatter" => (&["dst"], &[]),
            "scatter_reduce" => (&["op", "dst"], &[]),
            _ => {
                self.pos = kind_at;
                return self.error_here(format!("`{kind}` is not a combinator kind"));
            }
        };
        for (key, present) in given {
            let allowed = required.contains(&key) || optional.contains(&key);
            if present != required.contains(&key) && !(present && allowed) {
                self.pos = close_at;
                return self.error_here(if present {
                    format!("`soac {kind}` takes no `{key}:`")
                } else {
                    format!("`soac {kind}` needs `{key}:`")
                });
            }
        }
        let kind = match kind.as_str() {
            "map" => SoacKind::Map,
            "permute" => SoacKind::Permute,
            "sort" => SoacKind::Sort,
            "sort_by_key" => SoacKind::SortByKey,
            "reduce" => SoacKind::Reduce {
                op: op.unwrap(),
                init,
            },
            "scan" => SoacKind::Scan { op: op.unwrap() },
            "exclusive_scan" => SoacKind::ExclusiveScan {
                op: op.unwrap(),
                init: init.unwrap(),
            },
            "filter" => SoacKind::Filter {
                pred: pred.unwrap(),
            },
            "scatter" => SoacKind::Scatter { dst: dst.unwrap() },
            _ => SoacKind::ScatterReduce {
                op: op.unwrap(),
                dst: dst.unwrap(),
            },
        };
        Ok(Expr::Soac(Box::new(Soac { kind, len, elem })))
    }
}
