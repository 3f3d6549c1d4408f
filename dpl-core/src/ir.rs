//! The dpl intermediate representation.
//!
//! # Design
//!
//! A [`Function`] owns an arena of [`Var`]s; every other node refers to variables by
//! [`VarId`] handle. The body is a [`Block`]: a list of [`Stmt`]s, each binding exactly one
//! fresh variable to an [`Expr`] whose operands are variables (A-normal form). Every
//! variable is assigned exactly once, by a statement or as a parameter of the function or of
//! a [`Lambda`]; a variable is visible from its definition to the end of the block that
//! defines it, including nested blocks and lambdas. Literals are bound by [`Expr::Const`]
//! statements, so every value in the program has a variable and hence a type.
//!
//! The IR has two levels that share these types:
//!
//! * **Prim level** — what the front end produces: [`Expr::Prim`] nodes mirror the user's
//!   primitives (`map`, `gather`, `reduce`, ...), with their function arguments as explicit
//!   [`Lambda`]s. Closures bound with `let`, nested `fn`s and calls to other functions of a
//!   `#[parallel] mod` are inlined by the front end, so lambdas only ever appear as
//!   primitive arguments. The sequential reference backend compiles this level directly.
//! * **Soac level** — after normalization every primitive becomes an [`Expr::Soac`]: a
//!   second-order array combinator over an index space `0..len` whose elements are computed
//!   by an index function ([`Soac::elem`]). Shape checks become explicit [`Expr::Assert`]
//!   statements and indexing that is in range by construction is marked unchecked. Fusion
//!   works at this level: a producer `p = Soac(Map)` consumed as `p[j]` is replaced by its
//!   index function applied to `j`, which removes the temporary. Parallel backends compile
//!   this level.
//!
//! Types start as [`Type::Infer`] (unless annotated in the source) and are filled in by type
//! inference; after it, every variable has a concrete type.
//!
//! Source positions are opaque [`Span`] numbers: the macro keeps the table that maps them
//! back to `proc_macro2::Span`s, and the text form omits them.

use std::fmt;
use std::marker::PhantomData;

/// A typed index into an [`Arena`].
pub struct Handle<T> {
    index: u32,
    marker: PhantomData<fn() -> T>,
}

impl<T> Handle<T> {
    /// The handle for position `index` of an arena.
    pub fn new(index: usize) -> Self {
        let index = u32::try_from(index).expect("arena larger than u32::MAX");
        Handle {
            index,
            marker: PhantomData,
        }
    }

    /// The position in the arena.
    pub fn index(self) -> usize {
        self.index as usize
    }
}

impl<T> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Handle<T> {}
impl<T> PartialEq for Handle<T> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}
impl<T> Eq for Handle<T> {}
impl<T> PartialOrd for Handle<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Handle<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.index.cmp(&other.index)
    }
}
impl<T> std::hash::Hash for Handle<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.index.hash(state);
    }
}
impl<T> fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%{}", self.index)
    }
}

/// A growable store of `T`s addressed by [`Handle<T>`]. Items are never removed.
#[derive(Clone, Debug, PartialEq)]
pub struct Arena<T> {
    items: Vec<T>,
}

impl<T> Default for Arena<T> {
    fn default() -> Self {
        Arena { items: Vec::new() }
    }
}

impl<T> Arena<T> {
    /// An empty arena.
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores `item` and returns its handle.
    pub fn push(&mut self, item: T) -> Handle<T> {
        self.items.push(item);
        Handle::new(self.items.len() - 1)
    }

    /// Number of items stored.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// All items with their handles, in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (Handle<T>, &T)> {
        self.items
            .iter()
            .enumerate()
            .map(|(i, t)| (Handle::new(i), t))
    }

    /// All items mutably with their handles, in insertion order.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (Handle<T>, &mut T)> {
        self.items
            .iter_mut()
            .enumerate()
            .map(|(i, t)| (Handle::new(i), t))
    }
}

impl<T> std::ops::Index<Handle<T>> for Arena<T> {
    type Output = T;
    fn index(&self, h: Handle<T>) -> &T {
        &self.items[h.index()]
    }
}

impl<T> std::ops::IndexMut<Handle<T>> for Arena<T> {
    fn index_mut(&mut self, h: Handle<T>) -> &mut T {
        &mut self.items[h.index()]
    }
}

/// An opaque source position. `Span::NONE` for code that has no source (tests, passes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span(pub u32);

impl Span {
    /// No source position.
    pub const NONE: Span = Span(0);
}

/// Scalar types of the language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Scalar {
    /// `bool`
    Bool,
    /// `i8`
    I8,
    /// `u8`
    U8,
    /// `i16`
    I16,
    /// `u16`
    U16,
    /// `i32`
    I32,
    /// `u32`
    U32,
    /// `i64`
    I64,
    /// `u64`
    U64,
    /// `usize`: lengths and indices.
    Usize,
    /// `f16` (IEEE binary16, the `half` crate's type): operations compute in `f32` and
    /// round once.
    F16,
    /// `bf16` (bfloat16, the `half` crate's type): operations compute in `f32` and round
    /// once.
    BF16,
    /// `f32`
    F32,
    /// `f64`
    F64,
}

impl Scalar {
    /// Every scalar type, in declaration order.
    pub const ALL: [Scalar; 14] = [
        Scalar::Bool,
        Scalar::I8,
        Scalar::U8,
        Scalar::I16,
        Scalar::U16,
        Scalar::I32,
        Scalar::U32,
        Scalar::I64,
        Scalar::U64,
        Scalar::Usize,
        Scalar::F16,
        Scalar::BF16,
        Scalar::F32,
        Scalar::F64,
    ];

    /// The Rust spelling: `f32`, `usize`, ...
    pub fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::I8 => "i8",
            Scalar::U8 => "u8",
            Scalar::I16 => "i16",
            Scalar::U16 => "u16",
            Scalar::I32 => "i32",
            Scalar::U32 => "u32",
            Scalar::I64 => "i64",
            Scalar::U64 => "u64",
            Scalar::Usize => "usize",
            Scalar::F16 => "f16",
            Scalar::BF16 => "bf16",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
        }
    }

    /// Parses a Rust spelling of a scalar type.
    pub fn from_name(name: &str) -> Option<Scalar> {
        Scalar::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The Rust spellings of the scalar types that satisfy `keep`, in declaration order and
    /// comma-separated (`"i8, u8, ..."`), for messages that list what is allowed.
    pub fn names_where(keep: impl Fn(Scalar) -> bool) -> String {
        let names: Vec<&str> = Scalar::ALL
            .into_iter()
            .filter(|&s| keep(s))
            .map(Scalar::name)
            .collect();
        names.join(", ")
    }

    /// Signed or unsigned integer (including `usize`).
    pub fn is_int(self) -> bool {
        !matches!(self, Scalar::Bool) && !self.is_float()
    }

    /// Signed integer.
    pub fn is_signed_int(self) -> bool {
        matches!(self, Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64)
    }

    /// The smallest and largest value of an integer type (`usize` is 64-bit on every
    /// place); `(0, 0)` for `bool` and the floats.
    pub fn int_range(self) -> (i128, i128) {
        match self {
            Scalar::I8 => (i8::MIN.into(), i8::MAX.into()),
            Scalar::U8 => (0, u8::MAX.into()),
            Scalar::I16 => (i16::MIN.into(), i16::MAX.into()),
            Scalar::U16 => (0, u16::MAX.into()),
            Scalar::I32 => (i32::MIN.into(), i32::MAX.into()),
            Scalar::U32 => (0, u32::MAX.into()),
            Scalar::I64 => (i64::MIN.into(), i64::MAX.into()),
            Scalar::U64 | Scalar::Usize => (0, u64::MAX.into()),
            Scalar::Bool | Scalar::F16 | Scalar::BF16 | Scalar::F32 | Scalar::F64 => (0, 0),
        }
    }

    /// `f16`, `bf16`, `f32` or `f64`.
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::BF16 | Scalar::F32 | Scalar::F64)
    }

    /// `f16` or `bf16`: the 16-bit floats, whose operations compute in `f32` and round
    /// once ([`crate::float16`]).
    pub fn is_half(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::BF16)
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The scalar types a [`Type::Param`] may become (dpl's bounds of generic functions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Bound {
    /// Any scalar type (`bool` included).
    Scalar,
    /// An integer or float type.
    Num,
    /// An integer type.
    Int,
    /// A float type.
    Float,
}

impl Bound {
    /// Whether `s` satisfies the bound.
    pub fn admits(self, s: Scalar) -> bool {
        match self {
            Bound::Scalar => true,
            Bound::Num => s.is_int() || s.is_float(),
            Bound::Int => s.is_int(),
            Bound::Float => s.is_float(),
        }
    }

    /// The bound's name (`Num`).
    pub fn name(self) -> &'static str {
        match self {
            Bound::Scalar => "Scalar",
            Bound::Num => "Num",
            Bound::Int => "Int",
            Bound::Float => "Float",
        }
    }
}

/// The type of a value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Type {
    /// Not known yet; type inference replaces every `Infer`.
    Infer,
    /// Not known yet, and one of the scalar types of `Bound`: every `Param` with the same
    /// number in a function is the same type (a type parameter of a generic function
    /// called from the body); type inference replaces it like [`Type::Infer`].
    Param(u32, Bound),
    /// A scalar.
    Scalar(Scalar),
    /// A sequence of elements of the given type (`[T]`; `[[T]]` is a nested sequence).
    Seq(Box<Type>),
    /// A tuple. The empty tuple is the unit type (the type of [`Expr::Assert`]).
    Tuple(Vec<Type>),
}

impl Type {
    /// The unit type `()`.
    pub fn unit() -> Type {
        Type::Tuple(Vec::new())
    }

    /// `[elem]`
    pub fn seq(elem: Type) -> Type {
        Type::Seq(Box::new(elem))
    }

    /// `usize`
    pub fn usize() -> Type {
        Type::Scalar(Scalar::Usize)
    }

    /// `bool`
    pub fn bool() -> Type {
        Type::Scalar(Scalar::Bool)
    }

    /// Whether this type is or holds (in a tuple) a sequence.
    pub fn holds_seq(&self) -> bool {
        match self {
            Type::Seq(_) => true,
            Type::Tuple(ts) => ts.iter().any(Type::holds_seq),
            _ => false,
        }
    }

    /// Whether this type is or holds (in a tuple or sequence) a float: its reductions and
    /// scans must combine in dpl's one order to give the same bits everywhere.
    pub fn holds_float(&self) -> bool {
        match self {
            Type::Scalar(s) => s.is_float(),
            Type::Seq(t) => t.holds_float(),
            Type::Tuple(ts) => ts.iter().any(Type::holds_float),
            _ => false,
        }
    }

    /// The element type of a sequence type.
    pub fn elem(&self) -> Option<&Type> {
        match self {
            Type::Seq(t) => Some(t),
            _ => None,
        }
    }

    /// The scalar, if this is a scalar type.
    pub fn scalar(&self) -> Option<Scalar> {
        match self {
            Type::Scalar(s) => Some(*s),
            _ => None,
        }
    }

    /// True when no part of the type is [`Type::Infer`] or [`Type::Param`].
    pub fn is_known(&self) -> bool {
        match self {
            Type::Infer | Type::Param(..) => false,
            Type::Scalar(_) => true,
            Type::Seq(t) => t.is_known(),
            Type::Tuple(ts) => ts.iter().all(Type::is_known),
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Infer => f.write_str("_"),
            Type::Param(n, b) => write!(f, "_{n}: {}", b.name()),
            Type::Scalar(s) => write!(f, "{s}"),
            Type::Seq(t) => write!(f, "[{t}]"),
            Type::Tuple(ts) => {
                f.write_str("(")?;
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                if ts.len() == 1 {
                    f.write_str(",")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// A variable: the single definition of a value.
#[derive(Clone, Debug, PartialEq)]
pub struct Var {
    /// A readable name (the source name where there is one; need not be unique).
    pub name: String,
    /// The type; [`Type::Infer`] until type inference has run.
    pub ty: Type,
    /// Where the value comes from in the source.
    pub span: Span,
}

/// Handle of a [`Var`].
pub type VarId = Handle<Var>;

/// One compiled function: parameters, result type and body.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// The function's name.
    pub name: String,
    /// Every variable of the function, its lambdas included.
    pub vars: Arena<Var>,
    /// The parameters, in order; their types come from the Rust signature.
    pub params: Vec<VarId>,
    /// The declared result type (without any `Result<_, dpl::Error>` wrapper).
    pub ret: Type,
    /// The body; its result is the function's result.
    pub body: Block,
}

impl Function {
    /// A function with no parameters and an empty body returning a fresh variable; callers
    /// fill it in with [`Function::new_var`], [`Function::params`] and [`Function::body`].
    pub fn new(name: impl Into<String>, ret: Type) -> Function {
        let mut vars = Arena::new();
        let result = vars.push(Var {
            name: "unit".into(),
            ty: Type::unit(),
            span: Span::NONE,
        });
        Function {
            name: name.into(),
            vars,
            params: Vec::new(),
            ret,
            body: Block {
                stmts: Vec::new(),
                result,
            },
        }
    }

    /// Creates a fresh variable.
    pub fn new_var(&mut self, name: impl Into<String>, ty: Type, span: Span) -> VarId {
        self.vars.push(Var {
            name: name.into(),
            ty,
            span,
        })
    }

    /// The type of a variable.
    pub fn ty(&self, v: VarId) -> &Type {
        &self.vars[v].ty
    }
}

/// A sequence of statements followed by the variable holding the block's value.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// The statements, in evaluation order.
    pub stmts: Vec<Stmt>,
    /// The value of the block: a variable defined before (in this block or an enclosing
    /// scope, or a parameter).
    pub result: VarId,
}

/// `let var = expr;`
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    /// The variable defined; defined nowhere else.
    pub var: VarId,
    /// Its value.
    pub expr: Expr,
    /// The source of the expression (used in error messages at compile and run time).
    pub span: Span,
}

/// A function argument of a primitive: `|params| body`.
///
/// Lambdas are closed explicitly: `captures` lists every variable of enclosing scopes that
/// the body uses (in first-use order), so a backend can pass them as arguments. Parameters
/// and variables defined in the body are not captures.
#[derive(Clone, Debug, PartialEq)]
pub struct Lambda {
    /// The parameters; defined here and nowhere else.
    pub params: Vec<VarId>,
    /// Variables of enclosing scopes used by the body.
    pub captures: Vec<VarId>,
    /// The body; its result is the lambda's result.
    pub body: Block,
}

/// A literal value. Its type is the type of the variable it is bound to.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Const {
    /// `true` / `false`
    Bool(bool),
    /// An integer literal (any integer type; the value fits the type).
    Int(i128),
    /// A floating-point literal (`f32` values are exactly representable as `f64`).
    Float(f64),
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum UnOp {
    /// `-x` (wrapping for integers)
    Neg,
    /// `!x` (logical for `bool`, bitwise for integers)
    Not,
}

/// Binary operators. `&&` and `||` do not appear: the front end lowers them to
/// [`Expr::If`] so that they short-circuit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum BinOp {
    /// `+` (wrapping for integers)
    Add,
    /// `-` (wrapping for integers)
    Sub,
    /// `*` (wrapping for integers)
    Mul,
    /// `/` (integer division by zero panics, as in Rust; `MIN / -1` wraps)
    Div,
    /// `%` (as `Div`)
    Rem,
    /// `&`
    BitAnd,
    /// `|`
    BitOr,
    /// `^`
    BitXor,
    /// `<<` (the shift amount is taken modulo the bit width, as `wrapping_shl`)
    Shl,
    /// `>>` (arithmetic for signed types; amount modulo the bit width)
    Shr,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl BinOp {
    /// Every binary operator.
    pub const ALL: [BinOp; 16] = [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Rem,
        BinOp::BitAnd,
        BinOp::BitOr,
        BinOp::BitXor,
        BinOp::Shl,
        BinOp::Shr,
        BinOp::Eq,
        BinOp::Ne,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
    ];

    /// The name in the text form of the IR (`add`, `and`, `shl`, `eq`, ...).
    pub fn name(self) -> &'static str {
        match self {
            BinOp::Add => "add",
            BinOp::Sub => "sub",
            BinOp::Mul => "mul",
            BinOp::Div => "div",
            BinOp::Rem => "rem",
            BinOp::BitAnd => "and",
            BinOp::BitOr => "or",
            BinOp::BitXor => "xor",
            BinOp::Shl => "shl",
            BinOp::Shr => "shr",
            BinOp::Eq => "eq",
            BinOp::Ne => "ne",
            BinOp::Lt => "lt",
            BinOp::Le => "le",
            BinOp::Gt => "gt",
            BinOp::Ge => "ge",
        }
    }

    /// The operator named `name` in the text form ([`BinOp::name`]).
    pub fn from_name(name: &str) -> Option<BinOp> {
        BinOp::ALL.into_iter().find(|o| o.name() == name)
    }

    /// The Rust token.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
        }
    }

    /// True for the comparisons, whose result is `bool`.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
}

/// Scalar math functions (methods such as `v.sqrt()` or `f32::sqrt(v)` in the source).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum MathFn {
    /// `abs` (floats and signed integers; integer `abs` wraps)
    Abs,
    /// `sqrt`
    Sqrt,
    /// `exp`
    Exp,
    /// `ln`
    Ln,
    /// `log2`
    Log2,
    /// `sin`
    Sin,
    /// `cos`
    Cos,
    /// `tanh`
    Tanh,
    /// `powf` (2 arguments)
    Powf,
    /// `floor`
    Floor,
    /// `ceil`
    Ceil,
    /// `round`
    Round,
    /// `trunc`
    Trunc,
    /// `min` (2 arguments; floats and integers)
    Min,
    /// `max` (2 arguments; floats and integers)
    Max,
    /// `mul_add(a, b, c) = a * b + c` with one rounding (3 arguments)
    MulAdd,
}

impl MathFn {
    /// Every math function.
    pub const ALL: [MathFn; 16] = [
        MathFn::Abs,
        MathFn::Sqrt,
        MathFn::Exp,
        MathFn::Ln,
        MathFn::Log2,
        MathFn::Sin,
        MathFn::Cos,
        MathFn::Tanh,
        MathFn::Powf,
        MathFn::Floor,
        MathFn::Ceil,
        MathFn::Round,
        MathFn::Trunc,
        MathFn::Min,
        MathFn::Max,
        MathFn::MulAdd,
    ];

    /// The Rust method name.
    pub fn name(self) -> &'static str {
        match self {
            MathFn::Abs => "abs",
            MathFn::Sqrt => "sqrt",
            MathFn::Exp => "exp",
            MathFn::Ln => "ln",
            MathFn::Log2 => "log2",
            MathFn::Sin => "sin",
            MathFn::Cos => "cos",
            MathFn::Tanh => "tanh",
            MathFn::Powf => "powf",
            MathFn::Floor => "floor",
            MathFn::Ceil => "ceil",
            MathFn::Round => "round",
            MathFn::Trunc => "trunc",
            MathFn::Min => "min",
            MathFn::Max => "max",
            MathFn::MulAdd => "mul_add",
        }
    }

    /// Parses a method name.
    pub fn from_name(name: &str) -> Option<MathFn> {
        MathFn::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Number of arguments, the receiver included.
    pub fn arity(self) -> usize {
        match self {
            MathFn::Powf | MathFn::Min | MathFn::Max => 2,
            MathFn::MulAdd => 3,
            _ => 1,
        }
    }

    /// True when the function is defined for floats only.
    pub fn float_only(self) -> bool {
        !matches!(self, MathFn::Abs | MathFn::Min | MathFn::Max)
    }
}

/// The data-parallel primitives, as the user wrote them (Prim level).
///
/// Argument conventions of [`Expr::Prim`] (`lambdas` / `args`, in source order):
///
/// | prim | lambdas | args | result |
/// |---|---|---|---|
/// | `Map` | `f` (n params) | `xs1..xsn` (n = 1..=8) | `[R]` |
/// | `Zip` | — | `a, b` | `[(A, B)]` |
/// | `Unzip` | — | `s: [(A, B)]` | `([A], [B])` |
/// | `Gather` | — | `x, idx` | `[T]`, `y[i] = x[idx[i]]` |
/// | `Permute` | — | `x, idx` | `[T]`, `y[idx[i]] = x[i]` |
/// | `Scatter` | — | `src, idx, dst` | `[T]` |
/// | `ScatterReduce` | `op` (2 params) | `src, idx, dst` | `[T]` |
/// | `Reduce` | `op` (2 params) | `x, init` | `T` |
/// | `Sum` `Min` `Max` | — | `x` | `T` |
/// | `Any` `All` `Count` | — or `pred` (1 param) | `x` (`[bool]` without `pred`) | `bool` / `usize` |
/// | `Scan` | `op` | `x` | `[T]` |
/// | `ExclusiveScan` | `op` | `x, init` | `[T]` |
/// | `Filter` | `pred` | `x` | `[T]` |
/// | `Replicate` | — | `v, n` | `[T]` |
/// | `Indices` | — | `x` | `[usize]` |
/// | `Range` | — | `n` | `[usize]` |
/// | `Len` | — | `x` | `usize` |
/// | `Sort` | — | `x` | `[T]`, ascending in the [total order](crate::interp::total_cmp), stable |
/// | `SortByKey` | — | `keys, vals` | `[V]`: `vals` ordered by ascending `keys`, stable |
///
/// Index arguments (`idx`) may be sequences of any integer type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Prim {
    /// `map`
    Map,
    /// `zip`
    Zip,
    /// `unzip`
    Unzip,
    /// `gather`
    Gather,
    /// `permute`
    Permute,
    /// `scatter`
    Scatter,
    /// `scatter_reduce`
    ScatterReduce,
    /// `reduce`
    Reduce,
    /// `sum`
    Sum,
    /// `min`
    Min,
    /// `max`
    Max,
    /// `any`
    Any,
    /// `all`
    All,
    /// `count`
    Count,
    /// `scan`
    Scan,
    /// `exclusive_scan`
    ExclusiveScan,
    /// `filter`
    Filter,
    /// `replicate`
    Replicate,
    /// `indices`
    Indices,
    /// `range`
    Range,
    /// `len`
    Len,
    /// `sort`
    Sort,
    /// `sort_by_key`
    SortByKey,
}

impl Prim {
    /// Every primitive.
    pub const ALL: [Prim; 23] = [
        Prim::Map,
        Prim::Zip,
        Prim::Unzip,
        Prim::Gather,
        Prim::Permute,
        Prim::Scatter,
        Prim::ScatterReduce,
        Prim::Reduce,
        Prim::Sum,
        Prim::Min,
        Prim::Max,
        Prim::Any,
        Prim::All,
        Prim::Count,
        Prim::Scan,
        Prim::ExclusiveScan,
        Prim::Filter,
        Prim::Replicate,
        Prim::Indices,
        Prim::Range,
        Prim::Len,
        Prim::Sort,
        Prim::SortByKey,
    ];

    /// The name users write.
    pub fn name(self) -> &'static str {
        match self {
            Prim::Map => "map",
            Prim::Zip => "zip",
            Prim::Unzip => "unzip",
            Prim::Gather => "gather",
            Prim::Permute => "permute",
            Prim::Scatter => "scatter",
            Prim::ScatterReduce => "scatter_reduce",
            Prim::Reduce => "reduce",
            Prim::Sum => "sum",
            Prim::Min => "min",
            Prim::Max => "max",
            Prim::Any => "any",
            Prim::All => "all",
            Prim::Count => "count",
            Prim::Scan => "scan",
            Prim::ExclusiveScan => "exclusive_scan",
            Prim::Filter => "filter",
            Prim::Replicate => "replicate",
            Prim::Indices => "indices",
            Prim::Range => "range",
            Prim::Len => "len",
            Prim::Sort => "sort",
            Prim::SortByKey => "sort_by_key",
        }
    }

    /// Parses a primitive name.
    pub fn from_name(name: &str) -> Option<Prim> {
        Prim::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// What a run-time check or an error message is about: a primitive, a form of the
/// language that the front end lowers to other primitives, or plain indexing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Origin {
    /// `x[i]` written by the user.
    Index,
    /// A primitive.
    Prim(Prim),
    /// A form lowered by the front end.
    Form(Form),
}

impl Origin {
    /// The name used in messages (`index`, `gather`, `argmin`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Origin::Index => "index",
            Origin::Prim(p) => p.name(),
            Origin::Form(f) => f.name(),
        }
    }

    /// The origin named `name` ([`Origin::name`]).
    pub fn from_name(name: &str) -> Option<Origin> {
        if name == "index" {
            return Some(Origin::Index);
        }
        Prim::from_name(name)
            .map(Origin::Prim)
            .or_else(|| Form::from_name(name).map(Origin::Form))
    }
}

/// The forms of the language that the front end lowers to the primitives (`argmin(x)` is a
/// reduction over `(value, index)` pairs) but whose run-time checks are reported under
/// their own name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Form {
    /// `argmin(x)`: needs a non-empty sequence.
    Argmin,
    /// `argmax(x)`: needs a non-empty sequence.
    Argmax,
    /// `x[a..b]`: needs `a <= b <= len(x)`.
    Slice,
}

impl Form {
    /// Every form.
    pub const ALL: [Form; 3] = [Form::Argmin, Form::Argmax, Form::Slice];

    /// The name users write.
    pub fn name(self) -> &'static str {
        match self {
            Form::Argmin => "argmin",
            Form::Argmax => "argmax",
            Form::Slice => "slice",
        }
    }

    /// Parses a form name.
    pub fn from_name(name: &str) -> Option<Form> {
        Form::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// A run-time check made explicit at the Soac level. Each has unit type and panics (or
/// returns `Err`) with a message naming its origin and the statement's span when violated.
#[derive(Clone, Debug, PartialEq)]
pub enum Assertion {
    /// Two lengths (`usize` variables) are equal.
    EqLen {
        /// Who requires it.
        origin: Origin,
        /// First length.
        a: VarId,
        /// Second length.
        b: VarId,
    },
    /// Every element of `idx` is below `len`.
    IndicesInRange {
        /// Who requires it.
        origin: Origin,
        /// An integer sequence, or a sequence of integer rows (every element of every row).
        idx: VarId,
        /// The bound (`usize`).
        len: VarId,
    },
    /// A single index (any integer type) is below `len` (and not negative).
    InBounds {
        /// Who requires it.
        origin: Origin,
        /// The index.
        index: VarId,
        /// The bound (`usize`).
        len: VarId,
    },
    /// A length (`usize`) is not zero.
    NonEmpty {
        /// Who requires it.
        origin: Origin,
        /// The length.
        len: VarId,
    },
}

/// A second-order array combinator over the index space `0..len` (Soac level).
///
/// `elem` has exactly one parameter, the index (`usize`), and computes element `i`. All
/// reads of the combinator's inputs happen inside `elem`, which is what makes fusion a
/// substitution.
#[derive(Clone, Debug, PartialEq)]
pub struct Soac {
    /// What is done with the elements.
    pub kind: SoacKind,
    /// The size of the index space (`usize`).
    pub len: VarId,
    /// The index function `|i: usize| -> E`.
    pub elem: Lambda,
}

impl Soac {
    /// If this is a projection `map(|i| t[i].k)` (component `k` of each element of a
    /// sequence of tuples `t`, unchecked: what `unzip` becomes), `t` and `k`.
    pub fn projection(&self) -> Option<(VarId, u32)> {
        if self.kind != SoacKind::Map || self.elem.params.len() != 1 {
            return None;
        }
        let [read, field] = &self.elem.body.stmts[..] else {
            return None;
        };
        match (&read.expr, &field.expr) {
            (
                Expr::Index {
                    seq,
                    index,
                    checked: None,
                },
                Expr::Field(t, k),
            ) if *index == self.elem.params[0]
                && *t == read.var
                && self.elem.body.result == field.var =>
            {
                Some((*seq, *k))
            }
            _ => None,
        }
    }
}

/// The consumer part of a [`Soac`]. `E` is the element type computed by `elem`.
#[derive(Clone, Debug, PartialEq)]
pub enum SoacKind {
    /// `[E]` of length `len`.
    Map,
    /// `init op e0 op e1 ...` (`E`). With `init: None` the index space must not be empty
    /// (`min`/`max`). The combination order is unspecified: `op` must be associative and
    /// commutative.
    Reduce {
        /// `|a: E, b: E| -> E`
        op: Lambda,
        /// Start value, if any.
        init: Option<VarId>,
    },
    /// Inclusive scan: `[E]`. `op` must be associative.
    Scan {
        /// `|a: E, b: E| -> E`
        op: Lambda,
    },
    /// Exclusive scan: `[E]`, `y[0] = init`.
    ExclusiveScan {
        /// `|a: E, b: E| -> E`
        op: Lambda,
        /// Start value.
        init: VarId,
    },
    /// The elements for which `pred` holds, in order: `[E]`.
    Filter {
        /// `|e: &E| -> bool` (takes the element by value in the IR)
        pred: Lambda,
    },
    /// `E = (index, value)`: a copy of `dst` with `dst[index] = value`; an index out of
    /// range of `dst` is an error. Result `[V]`.
    Scatter {
        /// The sequence written into (not modified; the result is a copy).
        dst: VarId,
    },
    /// `E = (index, value)`: a copy of `dst` with `dst[index] = op(dst[index], value)`.
    ScatterReduce {
        /// `|acc: V, v: V| -> V`; associative and commutative.
        op: Lambda,
        /// The sequence combined into (not modified; the result is a copy).
        dst: VarId,
    },
    /// `E = (index, value)`: `y[index] = value` where the indices must form a permutation
    /// of `0..len`. Result `[V]` of length `len`.
    Permute,
    /// The elements `[E]`, ordered ascending by the [total order](crate::interp::total_cmp)
    /// of their values (floats by IEEE 754 `totalOrder`, tuples lexicographically); stable.
    /// The elements are materialised before they are ordered: the result of a sort is
    /// never fused into its consumers.
    Sort,
    /// `E = (key, value)`: the values `[V]`, ordered ascending by their keys (the order of
    /// [`SoacKind::Sort`]); values with equal keys keep their index order (stable).
    SortByKey,
}

/// A loop with loop-carried variables (Futhark's `loop`; block parameters as in
/// Cranelift): the `params` start as the `inits`; while `cond` (a block over the params
/// and the enclosing scope, of type `bool`) holds, `body` computes the params' next values
/// (its result is the tuple of them, in order). The loop's value is the tuple of the
/// params' final values. `break`, `continue` and loops over ranges are written with
/// these: a `for` loop carries its index, `break` a flag that `cond` tests.
///
/// Both blocks see the enclosing scope (they are not lambdas: nothing is captured); the
/// params are defined by the loop and visible only in its blocks. A loop that never ends
/// does not end.
#[derive(Clone, Debug, PartialEq)]
pub struct Loop {
    /// The loop-carried variables; defined here and nowhere else.
    pub params: Vec<VarId>,
    /// Their values before the first iteration (one per param, of its type).
    pub inits: Vec<VarId>,
    /// Whether to run the body once more (`bool`).
    pub cond: Block,
    /// The next values of the params: its result is a tuple with one value per param.
    pub body: Block,
}

/// An expression: the right-hand side of a [`Stmt`]. Operands are variables.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A literal.
    Const(Const),
    /// A copy of another variable.
    Var(VarId),
    /// `op x`
    Unary(UnOp, VarId),
    /// `a op b`; both operands have the same type (shift amounts may be any integer type).
    Binary(BinOp, VarId, VarId),
    /// `x as T` between scalar types, with Rust's `as` semantics (float to int saturates,
    /// NaN gives 0).
    Cast(VarId, Scalar),
    /// `(a, b, ...)`
    Tuple(Vec<VarId>),
    /// `t.n`
    Field(VarId, u32),
    /// `if c { a } else { b }`; only the taken branch is evaluated.
    If(VarId, Block, Block),
    /// `seq[index]` (any integer index type). `checked: Some(origin)` checks the bound at run
    /// time and reports `origin` when it fails; `None` means the index is in range by
    /// construction (produced by passes, and by the front end only for the reads of a
    /// `stencil` and of the forms it lowers to index arithmetic, such as `reverse(x)`,
    /// which it guards itself).
    Index {
        /// The sequence.
        seq: VarId,
        /// The index.
        index: VarId,
        /// Whether and on whose behalf the bound is checked.
        checked: Option<Origin>,
    },
    /// `seq.len()` as `usize`.
    Len(VarId),
    /// A scalar math function.
    Math(MathFn, Vec<VarId>),
    /// A primitive (Prim level only).
    Prim {
        /// Which one.
        prim: Prim,
        /// Its function arguments, in source order.
        lambdas: Vec<Lambda>,
        /// Its data arguments, in source order.
        args: Vec<VarId>,
    },
    /// A combinator over an index space (Soac level only).
    Soac(Box<Soac>),
    /// A run-time check (Soac level only); unit type.
    Assert(Assertion),
    /// A loop with loop-carried variables; its value is the tuple of their final values.
    Loop(Box<Loop>),
}

impl Block {
    /// All statements of this block, depth first, nested blocks and lambdas included.
    pub fn walk(&self, f: &mut impl FnMut(&Stmt)) {
        for stmt in &self.stmts {
            f(stmt);
            stmt.expr.for_each_block(&mut |b| b.walk(f));
        }
    }
}

impl Expr {
    /// Calls `f` on every block directly inside this expression (branches of `If`, bodies of
    /// lambdas), not recursively.
    pub fn for_each_block<'a>(&'a self, f: &mut impl FnMut(&'a Block)) {
        match self {
            Expr::If(_, a, b) => {
                f(a);
                f(b);
            }
            Expr::Prim { lambdas, .. } => lambdas.iter().for_each(|l| f(&l.body)),
            Expr::Soac(s) => {
                f(&s.elem.body);
                for l in s.kind.lambdas() {
                    f(&l.body);
                }
            }
            Expr::Loop(l) => {
                f(&l.cond);
                f(&l.body);
            }
            _ => {}
        }
    }

    /// Calls `f` on every lambda directly inside this expression.
    pub fn for_each_lambda<'a>(&'a self, f: &mut impl FnMut(&'a Lambda)) {
        match self {
            Expr::Prim { lambdas, .. } => lambdas.iter().for_each(f),
            Expr::Soac(s) => {
                f(&s.elem);
                s.kind.lambdas().into_iter().for_each(f);
            }
            _ => {}
        }
    }

    /// The variables this expression reads directly (not those read inside its blocks).
    pub fn operands(&self) -> Vec<VarId> {
        match self {
            Expr::Const(_) => vec![],
            Expr::Var(v) | Expr::Unary(_, v) | Expr::Cast(v, _) | Expr::Field(v, _) => vec![*v],
            Expr::Len(v) => vec![*v],
            Expr::Binary(_, a, b) => vec![*a, *b],
            Expr::Tuple(vs) | Expr::Math(_, vs) => vs.clone(),
            Expr::If(c, _, _) => vec![*c],
            Expr::Loop(l) => l.inits.clone(),
            Expr::Index { seq, index, .. } => vec![*seq, *index],
            Expr::Prim { args, .. } => args.clone(),
            Expr::Soac(s) => {
                let mut v = vec![s.len];
                match &s.kind {
                    SoacKind::Reduce { init: Some(i), .. }
                    | SoacKind::ExclusiveScan { init: i, .. } => v.push(*i),
                    SoacKind::Scatter { dst } | SoacKind::ScatterReduce { dst, .. } => v.push(*dst),
                    _ => {}
                }
                v
            }
            Expr::Assert(a) => match a {
                Assertion::EqLen { a, b, .. } => vec![*a, *b],
                Assertion::IndicesInRange { idx, len, .. } => vec![*idx, *len],
                Assertion::InBounds { index, len, .. } => vec![*index, *len],
                Assertion::NonEmpty { len, .. } => vec![*len],
            },
        }
    }
}

impl SoacKind {
    /// The operator / predicate lambdas of this kind (not `elem`).
    pub fn lambdas(&self) -> Vec<&Lambda> {
        match self {
            SoacKind::Reduce { op, .. }
            | SoacKind::Scan { op }
            | SoacKind::ExclusiveScan { op, .. }
            | SoacKind::ScatterReduce { op, .. } => vec![op],
            SoacKind::Filter { pred } => vec![pred],
            SoacKind::Map
            | SoacKind::Scatter { .. }
            | SoacKind::Permute
            | SoacKind::Sort
            | SoacKind::SortByKey => vec![],
        }
    }

    /// The primitive this combinator stands for, for run-time messages: like
    /// [`SoacKind::name`], except that a reduction without start value whose operator is
    /// `min` or `max` (what `min(x)` / `max(x)` normalize to) is named after it.
    pub fn origin_name(&self) -> &'static str {
        if let SoacKind::Reduce { op, init: None } = self {
            match op.body.stmts.as_slice() {
                [
                    Stmt {
                        expr: Expr::Math(MathFn::Min, _),
                        ..
                    },
                ] => return "min",
                [
                    Stmt {
                        expr: Expr::Math(MathFn::Max, _),
                        ..
                    },
                ] => return "max",
                _ => {}
            }
        }
        self.name()
    }

    /// A short name for messages and the text form.
    pub fn name(&self) -> &'static str {
        match self {
            SoacKind::Map => "map",
            SoacKind::Reduce { .. } => "reduce",
            SoacKind::Scan { .. } => "scan",
            SoacKind::ExclusiveScan { .. } => "exclusive_scan",
            SoacKind::Filter { .. } => "filter",
            SoacKind::Scatter { .. } => "scatter",
            SoacKind::ScatterReduce { .. } => "scatter_reduce",
            SoacKind::Permute => "permute",
            SoacKind::Sort => "sort",
            SoacKind::SortByKey => "sort_by_key",
        }
    }
}
