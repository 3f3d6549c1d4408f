//! PTX text to a syntax tree: a lexer and a recursive-descent parser.
//!
//! The tree keeps names as strings and every statement's line; resolving names to
//! registers, symbols and labels is the decoder's job (`decode/`). Debug information
//! (`.loc`, `.file`, `.section` blocks) is skipped.

use crate::error::{Error, Result};

/// A literal as written in the text.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Literal {
    /// An integer literal (decimal, hex, octal or binary), possibly negated.
    Int(i128),
    /// `0fXXXXXXXX`: the bits of an f32.
    F32(u32),
    /// `0dXXXXXXXXXXXXXXXX`: the bits of an f64.
    F64(u64),
    /// A decimal floating-point literal such as `1.5`.
    Float(f64),
}

/// One operand of an instruction.
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// A register, special register (`%tid.x`), symbol or label name.
    Name(String),
    /// `!%p`: a negated predicate.
    Not(String),
    /// A literal.
    Imm(Literal),
    /// `[base+offset]`.
    Addr {
        /// Register or symbol, if any.
        base: Option<String>,
        /// Constant byte offset.
        offset: i64,
    },
    /// `{a, b, ...}`.
    Vector(Vec<Operand>),
    /// `(a, b, ...)` in `call`.
    List(Vec<Operand>),
    /// `p|q` (two predicate destinations of `setp`).
    Pair(String, String),
    /// `_`: a sink.
    Sink,
    /// `sym+offset` outside brackets (the address of a symbol plus a constant).
    SymOffset(String, i64),
}

/// A state space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    /// `.reg`
    Reg,
    /// `.global`
    Global,
    /// `.shared`
    Shared,
    /// `.const`
    Const,
    /// `.local`
    Local,
    /// `.param`
    Param,
}

/// A variable declaration (registers, memory symbols, parameters).
#[derive(Clone, Debug)]
pub struct VarDecl {
    /// State space.
    pub space: Space,
    /// The element type name without the dot (`b8`, `u32`, `f32`, `pred`, ...).
    pub ty: String,
    /// `.v2`/`.v4` vector width, 1 otherwise.
    pub vec: u32,
    /// `.align N`, if given.
    pub align: Option<u32>,
    /// The name.
    pub name: String,
    /// `%r<10>`: declares `%r0` ... `%r9`.
    pub range: Option<u32>,
    /// Array dimensions; `None` inside means `[]` (size from the initializer or extern).
    pub dims: Vec<Option<u64>>,
    /// Flattened initializer.
    pub init: Option<Vec<Literal>>,
    /// Declared `.extern`.
    pub is_extern: bool,
    /// 1-based line.
    pub line: u32,
}

/// An instruction.
#[derive(Clone, Debug)]
pub struct Instr {
    /// `@p` / `@!p` guard: (register, negated).
    pub guard: Option<(String, bool)>,
    /// The opcode without modifiers (`ld`, `mad`, ...).
    pub opcode: String,
    /// The modifiers without dots, in order (`global`, `v4`, `f32`, ...).
    pub mods: Vec<String>,
    /// Operands.
    pub operands: Vec<Operand>,
    /// 1-based line.
    pub line: u32,
}

impl Instr {
    /// `opcode.mod.mod` as written.
    pub fn text(&self) -> String {
        let mut s = self.opcode.clone();
        for m in &self.mods {
            s.push('.');
            s.push_str(m);
        }
        s
    }
}

/// A statement of a function body.
#[derive(Clone, Debug)]
pub enum Stmt {
    /// A declaration.
    Decl(VarDecl),
    /// `name:`.
    Label(String, u32),
    /// An instruction.
    Inst(Instr),
    /// `{`: opens a scope.
    Open,
    /// `}`: closes a scope.
    Close,
}

/// A `.entry` or `.func`.
#[derive(Clone, Debug)]
pub struct Function {
    /// The name.
    pub name: String,
    /// `.entry` (a kernel) rather than `.func`.
    pub is_entry: bool,
    /// Parameters.
    pub params: Vec<VarDecl>,
    /// Return parameters (`.func` only).
    pub rets: Vec<VarDecl>,
    /// The body; `None` for a declaration (prototype or `.extern`).
    pub body: Option<Vec<Stmt>>,
    /// 1-based line of the header.
    pub line: u32,
    /// `.maxntid x, y, z` (missing dimensions are 1).
    pub maxntid: Option<[u32; 3]>,
    /// `.reqntid x, y, z`.
    pub reqntid: Option<[u32; 3]>,
}

/// A parsed PTX module.
#[derive(Clone, Debug, Default)]
pub struct PtxModule {
    /// `.version major.minor`.
    pub version: Option<(u32, u32)>,
    /// `.target` names.
    pub target: Vec<String>,
    /// `.address_size` (64 unless given).
    pub address_size: u32,
    /// Module-scope variables (`.global`, `.const`, `.shared`).
    pub vars: Vec<VarDecl>,
    /// Functions and kernels in text order.
    pub funcs: Vec<Function>,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Dot(String),
    Lit(Literal),
    Str(String),
    Punct(char),
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    line: u32,
    /// Whether whitespace precedes the token (so `%tid.x` is one name but `%r .x` is not).
    spaced: bool,
}

fn err<T>(line: u32, msg: impl Into<String>) -> Result<T> {
    Err(Error::Parse {
        line,
        msg: msg.into(),
    })
}

fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$'
}

fn parse_number(text: &str, line: u32) -> Result<Literal> {
    let t = text.trim_end_matches(['U', 'u']);
    let lower = t.to_ascii_lowercase();
    let bad = || Error::Parse {
        line,
        msg: format!("bad number `{text}`"),
    };
    if (lower.starts_with("0f")) && lower.len() == 10 {
        return u32::from_str_radix(&lower[2..], 16)
            .map(Literal::F32)
            .map_err(|_| bad());
    }
    if lower.starts_with("0d") && lower.len() == 18 {
        return u64::from_str_radix(&lower[2..], 16)
            .map(Literal::F64)
            .map_err(|_| bad());
    }
    if let Some(h) = lower.strip_prefix("0x") {
        return i128::from_str_radix(h, 16)
            .map(Literal::Int)
            .map_err(|_| bad());
    }
    if let Some(b) = lower.strip_prefix("0b") {
        return i128::from_str_radix(b, 2)
            .map(Literal::Int)
            .map_err(|_| bad());
    }
    if lower.contains('.') || lower.contains('e') {
        return text.parse::<f64>().map(Literal::Float).map_err(|_| bad());
    }
    if lower.len() > 1 && lower.starts_with('0') {
        return i128::from_str_radix(&lower[1..], 8)
            .map(Literal::Int)
            .map_err(|_| bad());
    }
    lower.parse::<i128>().map(Literal::Int).map_err(|_| bad())
}

fn lex(src: &str) -> Result<Vec<Token>> {
    let b = src.as_bytes();
    let mut i = 0;
    let mut line = 1u32;
    let mut out = Vec::new();
    let mut spaced = true;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            i += 1;
            spaced = true;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            spaced = true;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                if b[i] == b'\n' {
                    line += 1;
                }
                i += 1;
            }
            i += 2;
            spaced = true;
            continue;
        }
        let start = i;
        let tok = if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\n' {
                    return err(line, "unterminated string");
                }
                i += 1;
            }
            i += 1;
            Tok::Str(src[start + 1..i - 1].to_string())
        } else if c == b'.' && i + 1 < b.len() && (is_ident_char(b[i + 1])) {
            i += 1;
            while i < b.len()
                && (is_ident_char(b[i]) || (b[i] == b':' && b.get(i + 1) == Some(&b':')))
            {
                if b[i] == b':' {
                    i += 2;
                } else {
                    i += 1;
                }
            }
            Tok::Dot(src[start + 1..i].to_string())
        } else if c.is_ascii_digit() {
            i += 1;
            while i < b.len() {
                let d = b[i];
                let lower = src[start..i].to_ascii_lowercase();
                let exponent_sign = (d == b'-' || d == b'+')
                    && matches!(b[i - 1], b'e' | b'E')
                    && !["0x", "0f", "0d"].iter().any(|p| lower.starts_with(p));
                if d.is_ascii_alphanumeric() || d == b'.' || exponent_sign {
                    i += 1;
                } else {
                    break;
                }
            }
            Tok::Lit(parse_number(&src[start..i], line)?)
        } else if c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c == b'%' {
            i += 1;
            while i < b.len() && is_ident_char(b[i]) {
                i += 1;
            }
            Tok::Ident(src[start..i].to_string())
        } else if b"{}()[],;:+-!@|<>=".contains(&c) {
            i += 1;
            Tok::Punct(c as char)
        } else {
            return err(line, format!("unexpected character `{}`", c as char));
        };
        out.push(Token { tok, line, spaced });
        spaced = false;
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }
    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.pos + k).map(|t| &t.tok)
    }
    fn line(&self) -> u32 {
        self.toks
            .get(self.pos)
            .or(self.toks.last())
            .map(|t| t.line)
            .unwrap_or(1)
    }
    fn next(&mut self) -> Result<Tok> {
        match self.toks.get(self.pos) {
            Some(t) => {
                self.pos += 1;
                Ok(t.tok.clone())
            }
            None => err(self.line(), "unexpected end of text"),
        }
    }
    fn is_punct(&self, c: char) -> bool {
        self.peek() == Some(&Tok::Punct(c))
    }
    fn eat_punct(&mut self, c: char) -> bool {
        if self.is_punct(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect_punct(&mut self, c: char) -> Result<()> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            let l = self.line();
            err(l, format!("expected `{c}`, found {}", self.describe()))
        }
    }
    fn describe(&self) -> String {
        match self.peek() {
            None => "end of text".into(),
            Some(Tok::Ident(s)) => format!("`{s}`"),
            Some(Tok::Dot(s)) => format!("`.{s}`"),
            Some(Tok::Lit(l)) => format!("literal {l:?}"),
            Some(Tok::Str(s)) => format!("string \"{s}\""),
            Some(Tok::Punct(c)) => format!("`{c}`"),
        }
    }
    fn ident(&mut self) -> Result<String> {
        let l = self.line();
        match self.next()? {
            Tok::Ident(s) => Ok(s),
            _ => {
                self.pos -= 1;
                err(l, format!("expected a name, found {}", self.describe()))
            }
        }
    }
    fn int(&mut self) -> Result<i128> {
        let l = self.line();
        let neg = self.eat_punct('-');
        match self.next()? {
            Tok::Lit(Literal::Int(v)) => Ok(if neg { -v } else { v }),
            _ => {
                self.pos -= 1;
                err(l, format!("expected an integer, found {}", self.describe()))
            }
        }
    }
    /// Skips the rest of the current line (for `.loc`, `.file`).
    fn skip_line(&mut self, line: u32) {
        while self.pos < self.toks.len() && self.toks[self.pos].line == line {
            self.pos += 1;
        }
    }
    /// Skips a balanced `{ ... }` group (debug sections).
    fn skip_braces(&mut self) -> Result<()> {
        self.expect_punct('{')?;
        let mut depth = 1;
        while depth > 0 {
            match self.next()? {
                Tok::Punct('{') => depth += 1,
                Tok::Punct('}') => depth -= 1,
                _ => {}
            }
        }
        Ok(())
    }
}

const TYPES: &[&str] = &[
    "b8", "b16", "b32", "b64", "b128", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "f16",
    "f16x2", "bf16", "bf16x2", "f32", "f64", "pred", "tf32", "e4m3", "e5m2",
];

/// Parses PTX text.
pub fn parse(src: &str) -> Result<PtxModule> {
    let toks = lex(src)?;
    let mut p = Parser { toks, pos: 0 };
    let mut m = PtxModule {
        address_size: 64,
        ..Default::default()
    };
    while p.pos < p.toks.len() {
        let line = p.line();
        let t = p.next()?;
        let d = match t {
            Tok::Dot(d) => d,
            Tok::Punct(';') => continue,
            _ => return err(line, "expected a directive at module level"),
        };
        match d.as_str() {
            "version" => {
                m.version = Some(match p.next()? {
                    Tok::Lit(Literal::Float(f)) => {
                        let maj = f.trunc() as u32;
                        let min = ((f - f.trunc()) * 10.0).round() as u32;
                        (maj, min)
                    }
                    Tok::Lit(Literal::Int(i)) => (i as u32, 0),
                    _ => return err(line, "bad .version"),
                });
            }
            "target" => loop {
                m.target.push(p.ident()?);
                if !p.eat_punct(',') {
                    break;
                }
            },
            "address_size" => {
                m.address_size = p.int()? as u32;
                if m.address_size != 64 {
                    return err(line, "only .address_size 64 is supported");
                }
            }
            "file" | "loc" => p.skip_line(line),
            "section" => {
                p.next()?;
                p.skip_braces()?;
            }
            "pragma" => {
                while !p.eat_punct(';') {
                    p.next()?;
                }
            }
            "visible" | "extern" | "weak" | "common" | "entry" | "func" | "global" | "const"
            | "shared" | "local" | "tex" | "surfref" | "texref" | "samplerref" => {
                let mut linkage_extern = false;
                let mut dir = d.clone();
                loop {
                    match dir.as_str() {
                        "visible" | "weak" | "common" => {}
                        "extern" => linkage_extern = true,
                        _ => break,
                    }
                    dir = match p.next()? {
                        Tok::Dot(x) => x,
                        _ => return err(line, "expected a directive after linkage"),
                    };
                }
                match dir.as_str() {
                    "entry" | "func" => {
                        let f = parse_function(&mut p, dir == "entry", line)?;
                        m.funcs.push(f);
                    }
                    "global" | "const" | "shared" | "local" => {
                        let space = space_of(&dir).expect("listed");
                        let mut v = parse_var(&mut p, space, line)?;
                        v.is_extern = linkage_extern;
                        p.expect_punct(';')?;
                        m.vars.push(v);
                    }
                    other => return err(line, format!("unsupported directive `.{other}`")),
                }
            }
            other => return err(line, format!("unsupported directive `.{other}`")),
        }
    }
    Ok(m)
}

fn space_of(s: &str) -> Option<Space> {
    Some(match s {
        "reg" => Space::Reg,
        "global" => Space::Global,
        "shared" => Space::Shared,
        "const" => Space::Const,
        "local" => Space::Local,
        "param" => Space::Param,
        _ => return None,
    })
}

/// Parses the rest of a variable declaration after its state space directive (without `;`).
fn parse_var(p: &mut Parser, space: Space, line: u32) -> Result<VarDecl> {
    let mut v = VarDecl {
        space,
        ty: String::new(),
        vec: 1,
        align: None,
        name: String::new(),
        range: None,
        dims: Vec::new(),
        init: None,
        is_extern: false,
        line,
    };
    loop {
        match p.peek().cloned() {
            Some(Tok::Dot(d)) => {
                p.pos += 1;
                match d.as_str() {
                    "align" => v.align = Some(p.int()? as u32),
                    "v2" => v.vec = 2,
                    "v4" => v.vec = 4,
                    "v8" => v.vec = 8,
                    "ptr" | "global" | "shared" | "const" | "local" | "shared::cta" => {}
                    t if TYPES.contains(&t) => v.ty = t.to_string(),
                    other => {
                        return err(line, format!("unsupported declaration modifier `.{other}`"));
                    }
                }
            }
            Some(Tok::Ident(name)) => {
                p.pos += 1;
                v.name = name;
                break;
            }
            _ => {
                return err(
                    line,
                    format!("expected a declaration, found {}", p.describe()),
                );
            }
        }
    }
    if v.ty.is_empty() {
        return err(line, format!("declaration of `{}` without a type", v.name));
    }
    parse_var_suffix(p, &mut v)?;
    Ok(v)
}

/// The part of a declaration after the name: `<N>`, `[N]...`, `= init`.
fn parse_var_suffix(p: &mut Parser, v: &mut VarDecl) -> Result<()> {
    if p.eat_punct('<') {
        v.range = Some(p.int()? as u32);
        p.expect_punct('>')?;
    }
    while p.eat_punct('[') {
        if p.eat_punct(']') {
            v.dims.push(None);
        } else {
            v.dims.push(Some(p.int()? as u64));
            p.expect_punct(']')?;
        }
    }
    if p.eat_punct('=') {
        let mut lits = Vec::new();
        parse_init(p, &mut lits)?;
        v.init = Some(lits);
    }
    Ok(())
}

fn parse_init(p: &mut Parser, out: &mut Vec<Literal>) -> Result<()> {
    if p.eat_punct('{') {
        loop {
            if p.eat_punct('}') {
                break;
            }
            parse_init(p, out)?;
            if !p.eat_punct(',') {
                p.expect_punct('}')?;
                break;
            }
        }
        return Ok(());
    }
    let line = p.line();
    let neg = p.eat_punct('-');
    match p.next()? {
        Tok::Lit(l) => out.push(if neg { negate(l) } else { l }),
        other => {
            return err(
                line,
                format!(
                    "unsupported initializer {other:?} (only literal initializers are supported)"
                ),
            );
        }
    }
    Ok(())
}

fn negate(l: Literal) -> Literal {
    match l {
        Literal::Int(v) => Literal::Int(-v),
        Literal::F32(b) => Literal::F32(b ^ 0x8000_0000),
        Literal::F64(b) => Literal::F64(b ^ (1 << 63)),
        Literal::Float(f) => Literal::Float(-f),
    }
}

fn parse_params(p: &mut Parser) -> Result<Vec<VarDecl>> {
    let mut out = Vec::new();
    p.expect_punct('(')?;
    if p.eat_punct(')') {
        return Ok(out);
    }
    loop {
        let line = p.line();
        match p.next()? {
            Tok::Dot(d) if d == "param" || d == "reg" => {
                let v = parse_var(
                    p,
                    if d == "param" {
                        Space::Param
                    } else {
                        Space::Reg
                    },
                    line,
                )?;
                out.push(v);
            }
            _ => return err(line, "expected `.param` in a parameter list"),
        }
        if p.eat_punct(')') {
            break;
        }
        p.expect_punct(',')?;
    }
    Ok(out)
}

fn parse_function(p: &mut Parser, is_entry: bool, line: u32) -> Result<Function> {
    let mut rets = Vec::new();
    if !is_entry && p.is_punct('(') {
        rets = parse_params(p)?;
    }
    let name = p.ident()?;
    let params = if p.is_punct('(') {
        parse_params(p)?
    } else {
        Vec::new()
    };
    // Performance directives (.maxntid 256, 1, 1 / .reqntid / .minnctapersm / .noreturn ...).
    let (mut maxntid, mut reqntid) = (None, None);
    while let Some(Tok::Dot(d)) = p.peek().cloned() {
        p.pos += 1;
        match d.as_str() {
            "maxntid" | "reqntid" => {
                let mut dims = [1u32; 3];
                for (k, slot) in dims.iter_mut().enumerate() {
                    if k > 0 && !p.eat_punct(',') {
                        break;
                    }
                    *slot = p.int()? as u32;
                }
                if d == "maxntid" {
                    maxntid = Some(dims);
                } else {
                    reqntid = Some(dims);
                }
            }
            "minnctapersm" | "maxnctapersm" | "maxnreg" | "reqnctapercluster"
            | "maxclusterrank" | "explicitcluster" | "noreturn" | "pragma" => {
                while matches!(
                    p.peek(),
                    Some(Tok::Lit(_)) | Some(Tok::Punct(',')) | Some(Tok::Str(_))
                ) {
                    p.pos += 1;
                }
            }
            other => {
                return err(
                    p.line(),
                    format!("unsupported function directive `.{other}`"),
                );
            }
        }
    }
    if p.eat_punct(';') {
        return Ok(Function {
            name,
            is_entry,
            params,
            rets,
            body: None,
            line,
            maxntid,
            reqntid,
        });
    }
    p.expect_punct('{')?;
    let mut body = Vec::new();
    let mut depth = 1;
    loop {
        let sline = p.line();
        match p.peek().cloned() {
            None => return err(sline, format!("unterminated body of `{name}`")),
            Some(Tok::Punct('{')) => {
                p.pos += 1;
                depth += 1;
                body.push(Stmt::Open);
            }
            Some(Tok::Punct('}')) => {
                p.pos += 1;
                depth -= 1;
                if depth == 0 {
                    break;
                }
                body.push(Stmt::Close);
            }
            Some(Tok::Punct(';')) => p.pos += 1,
            Some(Tok::Dot(d)) => {
                p.pos += 1;
                match d.as_str() {
                    "loc" | "file" => p.skip_line(sline),
                    "pragma" => {
                        while !p.eat_punct(';') {
                            p.next()?;
                        }
                    }
                    "reg" | "shared" | "local" | "param" | "const" | "global" => {
                        let v = parse_var(p, space_of(&d).expect("listed"), sline)?;
                        // `.reg .f16 low, high;` declares several names.
                        let mut more = Vec::new();
                        while p.eat_punct(',') {
                            let mut w = VarDecl {
                                name: p.ident()?,
                                range: None,
                                dims: Vec::new(),
                                init: None,
                                ..v.clone()
                            };
                            parse_var_suffix(p, &mut w)?;
                            more.push(w);
                        }
                        p.expect_punct(';')?;
                        body.push(Stmt::Decl(v));
                        body.extend(more.into_iter().map(Stmt::Decl));
                    }
                    "extern" => {
                        let sp = match p.next()? {
                            Tok::Dot(s) => space_of(&s),
                            _ => None,
                        };
                        let Some(sp) = sp else {
                            return err(sline, "expected a state space after .extern");
                        };
                        let mut v = parse_var(p, sp, sline)?;
                        v.is_extern = true;
                        p.expect_punct(';')?;
                        body.push(Stmt::Decl(v));
                    }
                    other => {
                        return err(
                            sline,
                            format!("unsupported directive `.{other}` in a function body"),
                        );
                    }
                }
            }
            Some(Tok::Ident(id)) if p.peek_at(1) == Some(&Tok::Punct(':')) => {
                p.pos += 2;
                body.push(Stmt::Label(id, sline));
            }
            Some(_) => body.push(Stmt::Inst(parse_instr(p)?)),
        }
    }
    Ok(Function {
        name,
        is_entry,
        params,
        rets,
        body: Some(body),
        line,
        maxntid,
        reqntid,
    })
}

fn parse_instr(p: &mut Parser) -> Result<Instr> {
    let line = p.line();
    let mut guard = None;
    if p.eat_punct('@') {
        let neg = p.eat_punct('!');
        guard = Some((p.ident()?, neg));
    }
    let opcode = p.ident()?;
    let mut mods = Vec::new();
    while let Some(Tok::Dot(d)) = p.peek().cloned() {
        p.pos += 1;
        mods.push(d);
    }
    let mut operands = Vec::new();
    if !p.is_punct(';') {
        loop {
            operands.push(parse_operand(p)?);
            if !p.eat_punct(',') {
                break;
            }
        }
    }
    if !p.eat_punct(';') {
        return err(
            line,
            format!("expected `;` after `{opcode}`, found {}", p.describe()),
        );
    }
    Ok(Instr {
        guard,
        opcode,
        mods,
        operands,
        line,
    })
}

/// A name possibly followed by a component (`%tid.x`) written without spaces.
fn parse_name(p: &mut Parser) -> Result<String> {
    let mut n = p.ident()?;
    if let Some(t) = p.toks.get(p.pos)
        && !t.spaced
        && let Tok::Dot(c) = &t.tok
        && matches!(c.as_str(), "x" | "y" | "z" | "w")
    {
        n.push('.');
        n.push_str(c);
        p.pos += 1;
    }
    Ok(n)
}

fn parse_operand(p: &mut Parser) -> Result<Operand> {
    let line = p.line();
    match p.peek().cloned() {
        Some(Tok::Punct('{')) => {
            p.pos += 1;
            let mut v = Vec::new();
            loop {
                v.push(parse_operand(p)?);
                if p.eat_punct('}') {
                    break;
                }
                p.expect_punct(',')?;
            }
            Ok(Operand::Vector(v))
        }
        Some(Tok::Punct('(')) => {
            p.pos += 1;
            let mut v = Vec::new();
            if p.eat_punct(')') {
                return Ok(Operand::List(v));
            }
            loop {
                v.push(parse_operand(p)?);
                if p.eat_punct(')') {
                    break;
                }
                p.expect_punct(',')?;
            }
            Ok(Operand::List(v))
        }
        Some(Tok::Punct('[')) => {
            p.pos += 1;
            let mut base = None;
            let mut offset: i64 = 0;
            if let Some(Tok::Ident(_)) = p.peek() {
                base = Some(parse_name(p)?);
                // `+N`, `+-N` and `-N` (the sign is read by `int`).
                if p.eat_punct('+') || p.is_punct('-') {
                    offset = p.int()? as i64;
                }
            } else {
                offset = p.int()? as i64;
            }
            p.expect_punct(']')?;
            Ok(Operand::Addr { base, offset })
        }
        Some(Tok::Punct('!')) => {
            p.pos += 1;
            Ok(Operand::Not(parse_name(p)?))
        }
        Some(Tok::Punct('-')) => {
            p.pos += 1;
            match p.next()? {
                Tok::Lit(l) => Ok(Operand::Imm(negate(l))),
                _ => err(line, "expected a literal after `-`"),
            }
        }
        Some(Tok::Lit(l)) => {
            p.pos += 1;
            Ok(Operand::Imm(l))
        }
        Some(Tok::Ident(id)) if id == "_" => {
            p.pos += 1;
            Ok(Operand::Sink)
        }
        Some(Tok::Ident(_)) => {
            let n = parse_name(p)?;
            if p.eat_punct('|') {
                let q = parse_name(p)?;
                return Ok(Operand::Pair(n, q));
            }
            // `sym+4` as a plain operand (mov of an address with offset).
            if p.is_punct('+')
                && let Some(Tok::Lit(Literal::Int(_))) = p.peek_at(1)
            {
                p.pos += 1;
                let off = p.int()? as i64;
                return Ok(Operand::SymOffset(n, off));
            }
            Ok(Operand::Name(n))
        }
        _ => err(line, format!("unexpected {} in operand", p.describe())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexes_numbers() {
        assert_eq!(
            parse_number("0f3F800000", 1).unwrap(),
            Literal::F32(0x3F80_0000)
        );
        assert_eq!(
            parse_number("0d3FF0000000000000", 1).unwrap(),
            Literal::F64(0x3FF0_0000_0000_0000)
        );
        assert_eq!(parse_number("0x1F", 1).unwrap(), Literal::Int(31));
        assert_eq!(parse_number("017", 1).unwrap(), Literal::Int(15));
        assert_eq!(parse_number("42U", 1).unwrap(), Literal::Int(42));
        assert_eq!(parse_number("1.5", 1).unwrap(), Literal::Float(1.5));
        assert_eq!(parse_number("0", 1).unwrap(), Literal::Int(0));
    }

    #[test]
    fn parses_a_kernel() {
        let src = r#"
//
// Generated by NVIDIA NVVM Compiler
.version 8.4
.target sm_80
.address_size 64

	// .globl	k
.visible .entry k(
	.param .u64 k_param_0,
	.param .u32 k_param_1
)
.maxntid 256, 1, 1
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<5>;
	.reg .b64 	%rd<4>;
	.loc	1 5 0
	ld.param.u64 	%rd1, [k_param_0];
	mov.u32 	%r1, %tid.x;
	setp.ge.s32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB0_2;
	st.global.v2.f32 	[%rd1+-8], {%r1, %r2};
	setp.lt.f32 %p1|%p2, %r1, 0f3F800000;
$L__BB0_2:
	ret;
}
"#;
        let m = parse(src).unwrap();
        assert_eq!(m.version, Some((8, 4)));
        let f = &m.funcs[0];
        assert_eq!(f.params.len(), 2);
        let body = f.body.as_ref().unwrap();
        let insts: Vec<&Instr> = body
            .iter()
            .filter_map(|s| if let Stmt::Inst(i) = s { Some(i) } else { None })
            .collect();
        assert_eq!(insts.len(), 7);
        assert_eq!(insts[1].operands[1], Operand::Name("%tid.x".into()));
        assert_eq!(insts[3].guard, Some(("%p1".into(), false)));
        assert_eq!(
            insts[4].operands[0],
            Operand::Addr {
                base: Some("%rd1".into()),
                offset: -8
            }
        );
        assert_eq!(
            insts[5].operands[0],
            Operand::Pair("%p1".into(), "%p2".into())
        );
        assert_eq!(insts[4].line, 23);
    }

    #[test]
    fn reports_the_line_of_a_syntax_error() {
        let src = ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n  add.s32 %r1, %r2 %r3;\n}\n";
        match parse(src) {
            Err(Error::Parse { line, .. }) => assert_eq!(line, 6),
            other => panic!("{other:?}"),
        }
    }
}
