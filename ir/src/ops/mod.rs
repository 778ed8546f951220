//! The operation catalogue: every op of the `tile` and `nvgpu` dialects declared once, with its name,
//! operand groups, attributes (name, Rust type, default or required), result arity, and the custom assembly
//! format that the parser and printer share.
//!
//! From each declaration the catalogue also generates a **typed view** in [`typed`]: a struct with one field
//! per operand group and per attribute (`typed::LdMatrix { src, indices, num_tiles, transpose }`), read from an
//! [`Operation`] with [`Operation::view`] and turned back into an [`OpSpec`] with [`TypedOp::into_spec`]. Code
//! outside this module reads and builds ops through those views, never by a string name; the verifier checks
//! every op's attributes against the declarations (an unknown attribute is an error).
//!
//! A format is a space-separated list of elements (see [`crate::syntax::format`]):
//! - `$name` — an operand group (one value, or a comma-separated list for variadic groups) or, if no operand
//!   group has that name, an attribute written inline (`tile.block_id x`, `tile.constant 1.0`);
//! - `$mem[$idx]` — a memory operand followed by an optional `[i, j]` index list (the group `idx`);
//! - `attr-dict` — the remaining attributes as `{name = value, ...}`, omitted when empty;
//! - `type(results)` — the result types, comma-separated;
//! - `{ ... }?` — an optional section, present when its first literal is;
//! - anything else is a literal token: `,` `:` `(` `)` `->` or a keyword.
//!
//! `tile.func` and `tile.for` carry regions and have hand-written syntax in the parser and printer.

pub mod attr_value;
pub mod binary;
pub mod unary;
pub mod kernel;
pub mod reference;
pub mod wgmma;

pub use binary::BinaryArith;
pub use unary::UnaryMath;
pub use attr_value::{AttrValue, CmpPredicate, GridAxis, Literal, MatrixOrder, MmaInstruction, MmaShape, PipelineTail, Probe, ReduceKind, ShuffleMode, Tolerance};

use crate::attr::Attribute;
use crate::body::{OpSpec, Operation, Value};

/// How many values an operand group or an op's results hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arity {
    /// Exactly one.
    One,
    /// Zero or one.
    Optional,
    /// Any number, written comma-separated.
    Variadic,
}

/// A named group of operands.
#[derive(Clone, Copy, Debug)]
pub struct OperandGroup {
    pub name: &'static str,
    pub arity: Arity,
}

/// A declared attribute of an op (or of a kernel, see [`kernel`]).
#[derive(Debug)]
pub struct AttrDef {
    /// The name as written in the text (`numTiles`).
    pub name: &'static str,
    /// What the value must be ([`AttrValue::EXPECTED`] of its Rust type).
    pub expected: &'static str,
    /// Whether a value of this attribute decodes (the Rust type's [`AttrValue::decode`]).
    pub accepts: fn(&Attribute) -> bool,
    /// The value when the attribute is left out; `None` for a required attribute, and for an optional one
    /// whose absence means "not given".
    pub default: Option<fn() -> Option<Attribute>>,
    /// Whether the op is malformed without it.
    pub required: bool,
    /// One line of documentation.
    pub doc: &'static str,
}

impl AttrDef {
    /// The default as text (`false`, `row`), if the attribute has one.
    pub fn default_text(&self) -> Option<String> {
        self.default.and_then(|f| f()).map(|a| a.to_string())
    }
}

/// The attributes every op may carry, beside its own.
pub static COMMON_ATTRS: &[AttrDef] = &[AttrDef {
    name: "probe",
    expected: <Probe as AttrValue>::EXPECTED,
    accepts: |a| Probe::decode(a).is_some(),
    default: None,
    required: false,
    doc: "Marks the op's result for the simulator's probe output (`tilec sim` of an nvgpu-level kernel prints each lane's value), under the value's name or the string given. An error on an op whose result is a tile (tile-level kernels: see their results with `tilec interp --output`).",
}];

/// Everything the generic machinery knows about one kind of op.
#[derive(Debug)]
pub struct OpDef {
    pub kind: OpKind,
    /// Full name with dialect prefix, e.g. `tile.copy_s2r`.
    pub name: &'static str,
    pub operands: &'static [OperandGroup],
    /// The op's own attributes ([`COMMON_ATTRS`] apply to every op besides).
    pub attributes: &'static [AttrDef],
    /// `None` for ops without results, `One`, or `Variadic`.
    pub results: Option<Arity>,
    /// The custom assembly format, or `None` for the ops with hand-written syntax.
    pub format: Option<&'static str>,
    /// One line of documentation.
    pub summary: &'static str,
}

impl OpDef {
    /// The dialect prefix (`tile` or `nvgpu`).
    pub fn dialect(&self) -> &'static str {
        self.name.split('.').next().unwrap_or(self.name)
    }

    /// Index of the operand group with this name.
    pub fn group_index(&self, name: &str) -> Option<usize> {
        self.operands.iter().position(|g| g.name == name)
    }

    /// The declaration of an attribute the op accepts (its own or a common one).
    pub fn attribute(&self, name: &str) -> Option<&'static AttrDef> {
        self.attributes.iter().chain(COMMON_ATTRS).find(|a| a.name == name)
    }
}

/// Checks one attribute written on an op or a kernel against the declarations that apply there; the error
/// is a diagnostic at `span` (the attribute's own span when the parser checks, the owner's otherwise).
///
/// A name with a dot (`host.tag`) is another compiler's attribute, carried along unchecked (MLIR's
/// dialect-prefixed discardable attributes): an embedder's pass may annotate the IR without declaring it here.
pub fn check_attribute(
    owner: &str,
    declared: &[&'static AttrDef],
    name: &str,
    value: &Attribute,
    span: crate::diag::Span,
) -> Result<(), crate::diag::Diagnostic> {
    use crate::diag::Diagnostic;
    if is_host_attribute(name) {
        return Ok(());
    }
    match declared.iter().find(|a| a.name == name) {
        Some(def) if (def.accepts)(value) => Ok(()),
        Some(def) => {
            let diag = Diagnostic::error(span, format!("{owner}: '{name}' must be {}, found {value}", def.expected));
            Err(match keyword_value_hint(def, value) {
                Some(close) => diag.with_note(format!("did you mean '{close}'?")),
                None => diag,
            })
        }
        None => {
            let known: Vec<&str> = declared.iter().map(|a| a.name).collect();
            let diag = Diagnostic::error(span, format!("{owner} has no attribute '{name}'"));
            Err(match crate::diag::NameHint::new(name, known) {
                crate::diag::NameHint::OneOf(known) if known.is_empty() => diag.with_note("it takes no attributes"),
                hint => diag.with_note(hint.note("attributes")),
            })
        }
    }
}

/// For a misspelt keyword of an enumeration (`maximum` for `max`, `slt` for `lt`): the value meant, when one
/// is within a small edit distance ([`crate::diag::did_you_mean`]) or is the only one of three letters or
/// more that the word starts with (`maximum`, `minimum`; not `le` for `lessthan`). The declaration's message
/// already lists the valid values.
fn keyword_value_hint(def: &AttrDef, value: &Attribute) -> Option<&'static str> {
    let word = match value {
        Attribute::Keyword(w) | Attribute::Str(w) => w.as_str(),
        _ => return None,
    };
    let valid: Vec<&'static str> = def.expected.strip_prefix("one of ")?.split(", ").collect();
    crate::diag::did_you_mean(word, valid.iter().copied()).or_else(|| {
        let lower = word.to_ascii_lowercase();
        let mut prefixes = valid.iter().filter(|v| v.len() >= 3 && lower.starts_with(&v.to_ascii_lowercase()));
        match (prefixes.next(), prefixes.next()) {
            (Some(&only), None) => Some(only),
            _ => None,
        }
    })
}

/// A dotted attribute name (`host.tag`): another compiler's attribute, which tilec keeps but does not read.
pub fn is_host_attribute(name: &str) -> bool {
    name.contains('.')
}

/// The attributes an op accepts: its own, then the common ones.
pub fn op_attributes(kind: OpKind) -> Vec<&'static AttrDef> {
    kind.def().attributes.iter().chain(COMMON_ATTRS).collect()
}

impl Operation {
    /// The op's `probe` marker (a [`COMMON_ATTRS`] attribute), if it has a valid one.
    pub fn probe(&self) -> Option<Probe> {
        self.attrs.get(COMMON_ATTRS[0].name).and_then(Probe::decode)
    }
}

/// A typed view of one kind of op: its operand groups and attributes as fields (see [`typed`]).
pub trait TypedOp: Sized {
    const KIND: OpKind;

    /// The view of `op`, or `None` when `op` is of another kind or malformed (operand groups of the wrong
    /// arity, a required attribute missing, an attribute of the wrong type: what the verifier reports).
    fn from_op(op: &Operation) -> Option<Self>;

    /// The op's operands and attributes (those equal to their declared default left out), ready for result
    /// types and a span.
    fn into_spec(self) -> OpSpec;
}

/// Reads one operand group of a view, checking its arity.
trait GroupValue: Sized {
    fn from_group(values: &[Value]) -> Option<Self>;
    fn into_group(self) -> Vec<Value>;
}

impl GroupValue for Value {
    fn from_group(values: &[Value]) -> Option<Value> {
        match values {
            [v] => Some(*v),
            _ => None,
        }
    }

    fn into_group(self) -> Vec<Value> {
        vec![self]
    }
}

impl GroupValue for Option<Value> {
    fn from_group(values: &[Value]) -> Option<Option<Value>> {
        match values {
            [] => Some(None),
            [v] => Some(Some(*v)),
            _ => None,
        }
    }

    fn into_group(self) -> Vec<Value> {
        self.into_iter().collect()
    }
}

impl GroupValue for Vec<Value> {
    fn from_group(values: &[Value]) -> Option<Vec<Value>> {
        Some(values.to_vec())
    }

    fn into_group(self) -> Vec<Value> {
        self
    }
}

/// The Rust type of an operand group's field.
macro_rules! group_type {
    (One) => { Value };
    (Optional) => { Option<Value> };
    (Variadic) => { Vec<Value> };
}

/// An attribute's text name: the field name unless given (`num_tiles("numTiles")`).
macro_rules! attr_name {
    ($field:ident) => { stringify!($field) };
    ($field:ident $text:literal) => { $text };
}

/// Reads an attribute: a default when absent, `None` (malformed) when required and absent or mistyped.
macro_rules! decode_attr {
    ($op:expr, $name:expr, $ty:ty) => {
        $op.attrs.get($name).and_then(<$ty as AttrValue>::decode)
    };
    ($op:expr, $name:expr, $ty:ty, $default:expr) => {
        match $op.attrs.get($name) {
            None => Some($default),
            Some(attr) => <$ty as AttrValue>::decode(attr),
        }
    };
}

macro_rules! attr_default {
    ($ty:ty) => { None };
    ($ty:ty, $default:expr) => { Some(|| <$ty as AttrValue>::encode(&$default)) };
}

/// Whether a view's attribute has its declared default (then [`TypedOp::into_spec`] leaves it out, so built
/// IR prints as compactly as a person would write it).
macro_rules! attr_is_default {
    ($value:expr) => { false };
    ($value:expr, $default:expr) => { $value == $default };
}

/// An attribute without a default is required; an optional one is declared `Option<T> = None`.
macro_rules! attr_required {
    ($ty:ty) => { true };
    ($ty:ty, $default:expr) => { false };
}

macro_rules! define_ops {
    ($(
        $variant:ident = $name:literal {
            operands: [$($group:ident : $arity:ident),* $(,)?],
            attributes: [$($attr:ident $(($text:literal))? : $aty:ty $(= $default:expr)? ; $adoc:literal),* $(,)?],
            results: $results:expr,
            format: $format:expr,
            summary: $summary:literal $(,)?
        }
    )*) => {
        /// Every kind of operation tilec knows.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum OpKind {
            $(#[doc = $summary] $variant,)*
        }

        /// The catalogue, one entry per [`OpKind`], in declaration order.
        pub static OP_DEFS: &[OpDef] = &[
            $(OpDef {
                kind: OpKind::$variant,
                name: $name,
                operands: &[$(OperandGroup { name: stringify!($group), arity: Arity::$arity }),*],
                attributes: &[$(AttrDef {
                    name: attr_name!($attr $($text)?),
                    expected: <$aty as AttrValue>::EXPECTED,
                    accepts: |a| <$aty as AttrValue>::decode(a).is_some(),
                    default: attr_default!($aty $(, $default)?),
                    required: attr_required!($aty $(, $default)?),
                    doc: $adoc,
                }),*],
                results: $results,
                format: $format,
                summary: $summary,
            },)*
        ];

        /// Typed views of the ops: one struct per [`OpKind`] with a field per operand group (a `Value`, an
        /// `Option<Value>` or a `Vec<Value>` by arity) and per declared attribute (its Rust type, defaults
        /// applied). Results, regions and the span stay on the [`Operation`].
        pub mod typed {
            use super::*;

            $(
                #[doc = $summary]
                #[derive(Clone, Debug, PartialEq)]
                pub struct $variant {
                    $(pub $group: group_type!($arity),)*
                    $(#[doc = $adoc] pub $attr: $aty,)*
                }

                impl TypedOp for $variant {
                    const KIND: OpKind = OpKind::$variant;

                    #[allow(unused_mut, unused_variables)]
                    fn from_op(op: &Operation) -> Option<$variant> {
                        if op.kind != OpKind::$variant {
                            return None;
                        }
                        let mut groups = op.groups();
                        Some($variant {
                            $($group: GroupValue::from_group(groups.next()?)?,)*
                            $($attr: decode_attr!(op, attr_name!($attr $($text)?), $aty $(, $default)?)?,)*
                        })
                    }

                    #[allow(unused_mut)]
                    fn into_spec(self) -> OpSpec {
                        let mut spec = OpSpec::new(OpKind::$variant);
                        spec.set_groups(vec![$(GroupValue::into_group(self.$group)),*]);
                        $(
                            if !attr_is_default!(self.$attr $(, $default)?) {
                                if let Some(attr) = AttrValue::encode(&self.$attr) {
                                    spec.attrs.insert(attr_name!($attr $($text)?).to_string(), attr);
                                }
                            }
                        )*
                        spec
                    }
                }
            )*

            /// Any op's typed view, for a `match` over every kind.
            #[derive(Clone, Debug, PartialEq)]
            pub enum AnyOp {
                $($variant($variant),)*
            }

            impl AnyOp {
                /// The view of `op` (`None` when it is malformed).
                pub fn from_op(op: &Operation) -> Option<AnyOp> {
                    match op.kind {
                        $(OpKind::$variant => $variant::from_op(op).map(AnyOp::$variant),)*
                    }
                }
            }
        }
    };
}

const NONE: Option<Arity> = None;
const ONE: Option<Arity> = Some(Arity::One);

define_ops! {
    // ---- tile dialect: functions, control flow, scalars -------------------------------------------------
    Func = "tile.func" {
        operands: [],
        attributes: [],
        results: NONE, format: None,
        summary: "A kernel: arguments, attributes (launch configuration, tiling) and a body.",
    }
    For = "tile.for" {
        operands: [lower: One, upper: One, step: One, inits: Variadic],
        attributes: [
            pipeline_stages: Option<u32> = None ; "This loop's software-pipelining stage count (1..=8; 1: single-stage), in place of the kernel's `pipeline_stages`: e.g. a loop of one iteration that need not cost a ring of shared stages.",
            hoist: Option<bool> = None ; "Whether the backends may hoist loop-invariant code out of this loop (LLVM's LICM; default true). `false` (the persistent-grid pass's tile loop) keeps per-thread address arithmetic of the body where it is used instead of live in registers across the whole loop.",
        ],
        results: Some(Arity::Variadic), format: None,
        summary: "A counted loop with loop-carried values: `tile.for %i = %lb to %ub step %s iter_args(%x = %init) -> (T)`.",
    }
    Yield = "tile.yield" {
        operands: [values: Variadic],
        attributes: [],
        results: NONE, format: Some("$values attr-dict"),
        summary: "Ends a loop body, passing the next values of the loop-carried variables.",
    }
    Return = "tile.return" {
        operands: [],
        attributes: [],
        results: NONE, format: Some("attr-dict"),
        summary: "Ends a kernel.",
    }
    Constant = "tile.constant" {
        operands: [],
        attributes: [
            value: Literal ; "The value (an integer, a float, or true/false for `i1`).",
        ],
        results: ONE, format: Some("$value attr-dict : type(results)"),
        summary: "A scalar constant.",
    }
    BlockId = "tile.block_id" {
        operands: [],
        attributes: [
            dim: GridAxis ; "The grid axis.",
        ],
        results: ONE, format: Some("$dim attr-dict : type(results)"),
        summary: "The index of this thread block in the grid along `x`, `y` or `z`.",
    }
    GridDim = "tile.grid_dim" {
        operands: [],
        attributes: [
            dim: GridAxis ; "The grid axis.",
        ],
        results: ONE, format: Some("$dim attr-dict : type(results)"),
        summary: "The number of thread blocks in the grid along `x`, `y` or `z`.",
    }
    Dim = "tile.dim" {
        operands: [source: One],
        attributes: [
            axis: u32 ; "The axis of the tile.",
        ],
        results: ONE, format: Some("$source , $axis attr-dict : type(results)"),
        summary: "The run-time extent of a global tile along an axis.",
    }
    Add = "tile.add" {
        operands: [lhs: One, rhs: One],
        attributes: [],
        results: ONE, format: Some("$lhs , $rhs attr-dict : type(results)"),
        summary: "Elementwise addition of scalars, vectors or register tiles.",
    }
    Sub = "tile.sub" {
        operands: [lhs: One, rhs: One],
        attributes: [],
        results: ONE, format: Some("$lhs , $rhs attr-dict : type(results)"),
        summary: "Elementwise subtraction.",
    }
    Mul = "tile.mul" {
        operands: [lhs: One, rhs: One],
        attributes: [],
        results: ONE, format: Some("$lhs , $rhs attr-dict : type(results)"),
        summary: "Elementwise multiplication.",
    }
    Div = "tile.div" {
        operands: [lhs: One, rhs: One],
        attributes: [],
        results: ONE, format: Some("$lhs , $rhs attr-dict : type(results)"),
        summary: "Elementwise division (integers round toward zero; division by zero is an error).",
    }
    Rem = "tile.rem" {
        operands: [lhs: One, rhs: One],
        attributes: [],
        results: ONE, format: Some("$lhs , $rhs attr-dict : type(results)"),
        summary: "Integer remainder (sign of the dividend).",
    }
    Min = "tile.min" {
        operands: [lhs: One, rhs: One],
        attributes: [],
        results: ONE, format: Some("$lhs , $rhs attr-dict : type(results)"),
        summary: "Elementwise minimum.",
    }
    Max = "tile.max" {
        operands: [lhs: One, rhs: One],
        attributes: [],
        results: ONE, format: Some("$lhs , $rhs attr-dict : type(results)"),
        summary: "Elementwise maximum.",
    }
    Fma = "tile.fma" {
        operands: [lhs: One, rhs: One, addend: One],
        attributes: [],
        results: ONE, format: Some("$lhs , $rhs , $addend attr-dict : type(results)"),
        summary: "Elementwise fused multiply-add `lhs·rhs + addend` of f32 values, rounded once (`fma.rn.f32`; e.g. FlashAttention's `exp2(s·scale - m·scale)` argument in one instruction).",
    }
    Cmp = "tile.cmp" {
        operands: [lhs: One, rhs: One],
        attributes: [
            predicate: CmpPredicate ; "The comparison.",
        ],
        results: ONE, format: Some("$predicate $lhs , $rhs attr-dict : type(results)"),
        summary: "Comparison (`eq`, `ne`, `lt`, `le`, `gt`, `ge`) giving `i1`, elementwise on vectors and register tiles (an `i1` of their shape).",
    }
    Select = "tile.select" {
        operands: [cond: One, true_value: One, false_value: One],
        attributes: [],
        results: ONE,
        format: Some("$cond , $true_value , $false_value attr-dict : type(results)"),
        summary: "Chooses between two values of the same type by an `i1` condition, or element by element by an `i1` vector or register tile of their shape.",
    }
    Cast = "tile.cast" {
        operands: [source: One],
        attributes: [],
        results: ONE, format: Some("$source attr-dict : type(results)"),
        summary: "Converts the element type (round to nearest even for floats, truncation toward zero to integers, wrapping to narrower integers).",
    }
    ConvertLayout = "tile.convert_layout" {
        operands: [source: One],
        attributes: [],
        results: ONE, format: Some("$source attr-dict : type(results)"),
        summary: "Redistributes a register tile over the threads in another layout (same shape and elements): in registers when the two layouts differ only in which register of a thread holds what, through shared memory otherwise. Layout assignment inserts one where two ops need one value in different layouts.",
    }
    Neg = "tile.neg" {
        operands: [source: One],
        attributes: [],
        results: ONE, format: Some("$source attr-dict : type(results)"),
        summary: "Elementwise negation of floats (exact: flips the sign, `neg.f32`) or signed integers (wrapping).",
    }
    Abs = "tile.abs" {
        operands: [source: One],
        attributes: [],
        results: ONE, format: Some("$source attr-dict : type(results)"),
        summary: "Elementwise absolute value of floats (exact: clears the sign, `abs.f32`) or signed integers (wrapping: |-128 : i8| = -128, `abs.s32`).",
    }
    Exp = "tile.exp" {
        operands: [source: One],
        attributes: [],
        results: ONE, format: Some("$source attr-dict : type(results)"),
        summary: "Elementwise e^x of floats: `ex2.approx.f32` of x·log2(e) on the GPU (f16/bf16 computed in f32, then rounded).",
    }
    Exp2 = "tile.exp2" {
        operands: [source: One],
        attributes: [
            ftz: bool = false ; "Flush subnormal inputs and results to zero: `ex2.approx.ftz.f32`, one `MUFU.EX2` where `ex2.approx.f32` takes three to four SASS instructions (a range test and two multiplies around it); results below 2^-126 become +0 (FlashAttention-2's exp2, built with --use_fast_math).",
        ],
        results: ONE, format: Some("$source attr-dict : type(results)"),
        summary: "Elementwise 2^x of floats: `ex2.approx.f32` on the GPU, within 2 ulp of f32 (f16/bf16 computed in f32, then rounded).",
    }
    Log = "tile.log" {
        operands: [source: One],
        attributes: [],
        results: ONE, format: Some("$source attr-dict : type(results)"),
        summary: "Elementwise natural logarithm of floats: `lg2.approx.f32` times ln(2) on the GPU (f16/bf16 computed in f32, then rounded).",
    }
    Sqrt = "tile.sqrt" {
        operands: [source: One],
        attributes: [],
        results: ONE, format: Some("$source attr-dict : type(results)"),
        summary: "Elementwise square root of floats, correctly rounded (`sqrt.rn.f32`; f16/bf16 computed in f32, then rounded).",
    }
    Rsqrt = "tile.rsqrt" {
        operands: [source: One],
        attributes: [],
        results: ONE, format: Some("$source attr-dict : type(results)"),
        summary: "Elementwise 1/sqrt(x) of floats: `rsqrt.approx.f32` on the GPU (f16/bf16 computed in f32, then rounded).",
    }
    Tanh = "tile.tanh" {
        operands: [source: One],
        attributes: [],
        results: ONE, format: Some("$source attr-dict : type(results)"),
        summary: "Elementwise hyperbolic tangent of floats: `tanh.approx.f32` on the GPU (one `MUFU.TANH`, sm_75 and later: about 16.5 correct bits, relative error up to 1.1e-5; docs/math.md), f16/bf16 computed in f32, then rounded. For GELU's tanh form and similar epilogues.",
    }
    Sigmoid = "tile.sigmoid" {
        operands: [source: One],
        attributes: [],
        results: ONE, format: Some("$source attr-dict : type(results)"),
        summary: "Elementwise logistic function 1/(1 + e^-x) of floats: 0.5·tanh(0.5·x) + 0.5 on the GPU (`mul`, `tanh.approx.f32`, `fma`: one MUFU op, no division), absolute error up to about 6e-6 (docs/math.md), f16/bf16 computed in f32, then rounded. For SiLU (x·sigmoid(x)) and gating epilogues.",
    }
    // ---- tile dialect: tiles ----------------------------------------------------------------------------
    Splat = "tile.splat" {
        operands: [value: One],
        attributes: [],
        results: ONE, format: Some("$value attr-dict : type(results)"),
        summary: "A register tile or vector with every element equal to a scalar value.",
    }
    Fill = "tile.fill" {
        operands: [],
        attributes: [
            value: Literal ; "The value of every element.",
        ],
        results: ONE, format: Some("$value attr-dict : type(results)"),
        summary: "A register tile or vector with every element equal to a constant.",
    }
    AllocShared = "tile.alloc_shared" {
        operands: [],
        attributes: [],
        results: ONE, format: Some("attr-dict : type(results)"),
        summary: "Allocates a tile in the block's shared memory.",
    }
    CopyG2S = "tile.copy_g2s" {
        operands: [src: One, src_indices: Variadic, dst: One],
        attributes: [],
        results: NONE,
        format: Some("$src[$src_indices] , $dst attr-dict"),
        summary: "Copies the window of a global tile at the given offset, shaped like the shared tile, into it; elements outside the global tile read as zero. A global tile of higher rank than the shared tile is indexed on every axis and its leading indices pick a slice (`%A[%b, %m0, %k0]` of a rank-3 `%A` into a 2-D shared tile: batching). A 1-D global tile (a vector) is copied as the row of a `1xN` shared tile or the column of an `Mx1` one (`%bias[%n0]`).",
    }
    CopyS2R = "tile.copy_s2r" {
        operands: [src: One, src_indices: Variadic],
        attributes: [],
        results: ONE,
        format: Some("$src[$src_indices] attr-dict : type(results)"),
        summary: "Loads the window of a shared tile at the given offset (shaped like the result) into a register tile.",
    }
    CopyR2S = "tile.copy_r2s" {
        operands: [value: One, dst: One, dst_indices: Variadic],
        attributes: [],
        results: NONE,
        format: Some("$value , $dst[$dst_indices] attr-dict"),
        summary: "Stores a register tile into the window of a shared tile at the given offset.",
    }
    CopyR2G = "tile.copy_r2g" {
        operands: [value: One, dst: One, dst_indices: Variadic],
        attributes: [],
        results: NONE,
        format: Some("$value , $dst[$dst_indices] attr-dict"),
        summary: "Stores a register tile into the window of a global tile at the given offset; elements outside the global tile are dropped. As for `tile.copy_g2s`, the leading indices of a global tile of higher rank pick a slice (`%C[%b, %m0, %n0]`), and a `1xN` or `Mx1` tile is stored into a 1-D global tile as its row or column (`%v[%n0]`).",
    }
    Mma = "tile.mma" {
        operands: [a: One, b: One, c: One],
        attributes: [
            mma_shape("mmaShape"): Option<MmaShape> = None ; "The `nvgpu.mma.sync` shape layout assignment chose (written by the pass).",
            warp_grid("warpGrid"): Option<Vec<u32>> = None ; "`[rows, columns]` of warps over the output tile (written by layout assignment).",
            warp_tile("warp_tile"): Option<Vec<u32>> = None ; "`[WM, WN]`: this mma's warp tile, in place of the kernel's `warp_tile` (for kernels whose mmas have different shapes, such as attention's S = Q·Kᵀ and O = P·V).",
        ],
        results: ONE, format: Some("$a , $b , $c attr-dict : type(results)"),
        summary: "Matrix multiply-accumulate on register tiles: D = A (MxK) * B (KxN) + C (MxN).",
    }
    // ---- batching and synchronization (issue 16 items 6-8) ------------------------------------------------
    TileBarrier = "tile.barrier" {
        operands: [],
        attributes: [],
        results: NONE, format: Some("attr-dict"),
        summary: "An explicit block-wide barrier (`nvgpu.barrier`): orders every warp's shared- and global-memory accesses before it against those after it, for what the lowering cannot see from the tile ops' memory effects (it places the barriers those need itself).",
    }
    // ---- nvgpu dialect: per-thread, warp-synchronous ------------------------------------------------------
    ThreadId = "nvgpu.thread_id" {
        operands: [],
        attributes: [
            dim: GridAxis ; "The block axis.",
        ],
        results: ONE, format: Some("$dim attr-dict : type(results)"),
        summary: "The index of this thread in its block along `x`, `y` or `z`.",
    }
    LaneId = "nvgpu.lane_id" {
        operands: [],
        attributes: [],
        results: ONE, format: Some("attr-dict : type(results)"),
        summary: "The index of this thread in its warp (0..32).",
    }
    WarpId = "nvgpu.warp_id" {
        operands: [],
        attributes: [],
        results: ONE, format: Some("attr-dict : type(results)"),
        summary: "The index of this thread's warp in its block.",
    }
    LdMatrix = "nvgpu.ldmatrix" {
        operands: [src: One, indices: Variadic],
        attributes: [
            num_tiles("numTiles"): u32 ; "How many 8x8 matrices: 1, 2 or 4.",
            transpose: bool = false ; "Whether each matrix is transposed (`.trans`, 16-bit elements only).",
        ],
        results: ONE,
        format: Some("$src[$indices] attr-dict : type(results)"),
        summary: "Warp-collective load of 1, 2 or 4 8x8 b16 matrices from shared memory (`numTiles`, `transpose`).",
    }
    StMatrix = "nvgpu.stmatrix" {
        operands: [value: One, dst: One, indices: Variadic],
        attributes: [
            num_tiles("numTiles"): u32 ; "How many 8x8 matrices: 1, 2 or 4.",
            transpose: bool = false ; "Whether each matrix is transposed (`.trans`).",
        ],
        results: NONE,
        format: Some("$value , $dst[$indices] attr-dict"),
        summary: "Warp-collective store of 1, 2 or 4 8x8 b16 matrices to shared memory (`numTiles`, `transpose`).",
    }
    MmaSync = "nvgpu.mma.sync" {
        operands: [a: One, b: One, c: One],
        attributes: [
            mma_shape("mmaShape"): MmaShape ; "The instruction shape `[m, n, k]`.",
            layout_a("layoutA"): MatrixOrder = MatrixOrder::Row ; "The order of A's fragment (`col` only for m8n8k4).",
            layout_b("layoutB"): MatrixOrder = MatrixOrder::Col ; "The order of B's fragment (`row` only for m8n8k4).",
            satfinite: bool = false ; "Saturate an s32 accumulator instead of wrapping (`.satfinite`).",
        ],
        results: ONE,
        format: Some("( $a , $b , $c ) attr-dict : type(results)"),
        summary: "Warp-collective tensor-core MMA on per-thread fragments (`mmaShape = [m, n, k]`; m8n8k4 also takes `layoutA`/`layoutB` = `row` or `col`, default `.row.col`).",
    }
    DeviceAsyncCopy = "nvgpu.device_async_copy" {
        operands: [src: One, src_indices: Variadic, dst: One, dst_indices: Variadic, src_elements: Optional],
        attributes: [
            dst_elements("dstElements"): u32 ; "How many elements the copy writes (4, 8 or 16 bytes of them).",
        ],
        results: NONE,
        format: Some("$src[$src_indices] , $dst[$dst_indices] , $dstElements { , $src_elements }? attr-dict"),
        summary: "Asynchronous global-to-shared copy of `dstElements` elements (4, 8 or 16 bytes); only `src_elements` are read, the rest zero-filled.",
    }
    DeviceAsyncCreateGroup = "nvgpu.device_async_create_group" {
        operands: [],
        attributes: [],
        results: NONE, format: Some("attr-dict"),
        summary: "Commits the asynchronous copies issued so far by this thread as one group.",
    }
    DeviceAsyncWait = "nvgpu.device_async_wait" {
        operands: [],
        attributes: [
            num_groups("numGroups"): u32 = 0 ; "How many of this thread's copy groups may stay pending (0..=7).",
        ],
        results: NONE, format: Some("attr-dict"),
        summary: "Waits until at most `numGroups` (default 0) of this thread's copy groups are pending.",
    }
    // ---- nvgpu dialect: Hopper mbarriers (sm_90; issue 18), named and shaped like MLIR's `nvgpu.mbarrier.*` ----
    MBarrierCreate = "nvgpu.mbarrier.create" {
        operands: [],
        attributes: [],
        results: ONE, format: Some("attr-dict : type(results)"),
        summary: "Allocates a group of mbarrier objects in the block's shared memory: `tile<N x index, shared>`, one 64-bit word per barrier (the storage MLIR's `!nvgpu.mbarrier.group<num_barriers = N>` lowers to).",
    }
    MBarrierInit = "nvgpu.mbarrier.init" {
        operands: [barriers: One, mbar_id: One, count: One, predicate: Optional],
        attributes: [],
        results: NONE,
        format: Some("$barriers[$mbar_id] , $count { , predicate = $predicate }? attr-dict"),
        summary: "Initializes barrier `mbar_id` of the group: phase 0, `count` (1..2^20) arrivals expected per phase, tx-count 0 (`mbarrier.init.shared.b64`); with `predicate = %p` (an `i1`), only the threads where it is true.",
    }
    MBarrierArrive = "nvgpu.mbarrier.arrive" {
        operands: [barriers: One, mbar_id: One],
        attributes: [],
        results: NONE,
        format: Some("$barriers[$mbar_id] attr-dict"),
        summary: "This thread arrives on barrier `mbar_id` (`mbarrier.arrive.shared.b64`, release at CTA scope); the phase completes when every expected thread has arrived and the tx-count is zero. (MLIR's op returns a token that nothing here reads, so it has no result.)",
    }
    MBarrierArriveExpectTx = "nvgpu.mbarrier.arrive.expect_tx" {
        operands: [barriers: One, mbar_id: One, txcount: One, predicate: Optional],
        attributes: [],
        results: NONE,
        format: Some("$barriers[$mbar_id] , $txcount { , predicate = $predicate }? attr-dict"),
        summary: "Raises the current phase's tx-count by `txcount` bytes (0..2^20) that asynchronous copies (TMA) will complete, then arrives (`mbarrier.arrive.expect_tx.shared.b64`); with `predicate = %p`, only the threads where it is true.",
    }
    MBarrierTryWaitParity = "nvgpu.mbarrier.try_wait.parity" {
        operands: [barriers: One, mbar_id: One, phase_parity: One, ticks: One],
        attributes: [],
        results: NONE,
        format: Some("$barriers[$mbar_id] , $phase_parity , $ticks attr-dict"),
        summary: "Waits until the phase of barrier `mbar_id` whose parity is `phase_parity` (an `i1`: 0 even, 1 odd) has completed (`mbarrier.try_wait.parity.shared.b64` in a loop, acquire at CTA scope; `ticks` is the suspend-time hint in ns).",
    }
    // ---- nvgpu dialect: Hopper TMA (sm_90; issue 18), named and shaped like MLIR's `nvgpu.tma.*` ----------------
    TmaAsyncLoad = "nvgpu.tma.async.load" {
        operands: [tensor: One, coords: Variadic, barriers: One, mbar_id: One, dst: One, predicate: Optional],
        attributes: [
            panel: u32 = 0 ; "Which box of `dst` the load fills: `dst` is one box, or the column panels of a wgmma operand (each one swizzle span wide, consecutive in memory), one box each.",
        ],
        results: NONE,
        format: Some("$tensor[$coords] , $barriers[$mbar_id] to $dst { , predicate = $predicate }? attr-dict"),
        summary: "TMA load (`cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::complete_tx::bytes`): copies the box of the global tile argument `tensor` at `coords` (one `index` per axis in the tensor map's order: the tile's, or (column, row) for a `#col_major` tensor, whose map is over its transpose; the box's own origin; may be negative or past the end: those elements are zero-filled) into the shared tile `dst` (all of it, or its column panel `panel`, whose bytes start `panel` boxes after the tile's), in the swizzle mode of `dst`'s layout, and completes the box's bytes on barrier `mbar_id` (expect them with `arrive.expect_tx`: a tile of several panels needs one load per panel, the same barrier, all their bytes). The tensor map (`tensor`, box = `dst`'s shape or one panel's, swizzle) is a kernel parameter the launcher builds (`cuTensorMapEncodeTiled`); with `predicate = %p`, only the threads where it is true issue.",
    }
    TmaAsyncStore = "nvgpu.tma.async.store" {
        operands: [src: One, tensor: One, coords: Variadic, predicate: Optional],
        attributes: [],
        results: NONE,
        format: Some("$src to $tensor[$coords] { , predicate = $predicate }? attr-dict"),
        summary: "TMA store (`cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group`): writes the shared tile `src` (in the swizzle mode of its layout) as the box of the global tile argument `tensor` at `coords`; elements outside the tensor are not written. Shared writes of the generic proxy need `nvgpu.fence.proxy.async` before it; `src` may be overwritten only after `nvgpu.tma.commit_group` and a `nvgpu.tma.wait_group` covering it.",
    }
    TmaCommitGroup = "nvgpu.tma.commit_group" {
        operands: [],
        attributes: [],
        results: NONE, format: Some("attr-dict"),
        summary: "Commits this thread's TMA stores issued so far as one bulk async-group (`cp.async.bulk.commit_group`).",
    }
    TmaWaitGroup = "nvgpu.tma.wait_group" {
        operands: [],
        attributes: [
            num_groups("numGroups"): u32 = 0 ; "How many of this thread's bulk async-groups may stay pending (0..=7).",
            read: bool = false ; "Wait only until the groups have read their shared-memory source (`.read`), not until their global writes are done.",
        ],
        results: NONE, format: Some("attr-dict"),
        summary: "Waits until at most `numGroups` of this thread's bulk async-groups are pending (`cp.async.bulk.wait_group[.read] N`).",
    }
    FenceProxyAsync = "nvgpu.fence.proxy.async" {
        operands: [],
        attributes: [],
        results: NONE, format: Some("attr-dict"),
        summary: "Orders this thread's shared-memory accesses of the generic proxy (`nvgpu.store`, ...) with the async proxy's (a TMA store reading them, `wgmma`): `fence.proxy.async.shared::cta`.",
    }
    // ---- nvgpu dialect: Hopper warpgroup MMA synchronization (sm_90a; issue 18), NVVM's `wgmma.*` -------------
    WgmmaFence = "nvgpu.wgmma.fence" {
        operands: [],
        attributes: [],
        results: NONE, format: Some("attr-dict"),
        summary: "Orders this warpgroup's register and shared-memory accesses before the `wgmma.mma_async` that follow (`wgmma.fence.sync.aligned`; whole warpgroups, converged).",
    }
    WgmmaCommitGroup = "nvgpu.wgmma.commit_group" {
        operands: [],
        attributes: [],
        results: NONE, format: Some("attr-dict"),
        summary: "Commits the `wgmma.mma_async` issued so far by this warpgroup as one group (`wgmma.commit_group.sync.aligned`).",
    }
    WgmmaWaitGroup = "nvgpu.wgmma.wait_group" {
        operands: [],
        attributes: [
            num_groups("numGroups"): u32 = 0 ; "How many of the warpgroup's wgmma groups may stay pending (0..=7).",
        ],
        results: NONE, format: Some("attr-dict"),
        summary: "Waits until at most `numGroups` (default 0) of this warpgroup's wgmma groups are pending (`wgmma.wait_group.sync.aligned N`).",
    }
    // ---- nvgpu dialect: Hopper warpgroup MMA (sm_90a; issue 18), named after MLIR's `nvgpu.warpgroup.*` ---------
    WarpgroupGenerateDescriptor = "nvgpu.warpgroup.generate.descriptor" {
        operands: [tensor: One, indices: Variadic],
        attributes: [
            swizzle: u32 = 0 ; "The swizzle mode in bytes: 0 (none: 8x16-byte core matrices), 32, 64 or 128 (descriptor bits 62-63: 0, 3, 2, 1).",
            leading_byte_offset("leadingByteOffset"): u32 ; "K-major: bytes between core matrices along K (no swizzle); 16 with a swizzle, where the hardware does not use it. MN-major: bytes between swizzle panels along MN (swizzled), or between groups of 8 K rows (no swizzle). A multiple of 16 below 2^18.",
            stride_byte_offset("strideByteOffset"): u32 ; "K-major: bytes between consecutive groups of 8 rows (of M for A, of N for B). MN-major: bytes between groups of 8 K rows (swizzled), or between 16-byte core-matrix columns along MN (no swizzle). A multiple of 16 below 2^18.",
        ],
        results: ONE,
        format: Some("$tensor[$indices] attr-dict : type(results)"),
        summary: "The 64-bit wgmma matrix descriptor (an `index`) of the matrix that starts at `%tensor[indices]` in shared memory: start address, leading and stride byte offsets (each >> 4, 14 bits) and the swizzle mode, base offset 0 (the tile is aligned to 1024 bytes). The tile's layout must be the mode's: column panels one swizzle span (32, 64, 128 bytes) wide under its permutation (`#swizzle<B, 4 - log2(element bytes), 3, #row_major>` for one panel, `#swizzle<..., #linear<...>>` of `tilec_layout::column_panels` for several; the panels may also run along the rows, for a column-major K-major B); with none, row-major rows of 16 bytes (a core matrix's). With a swizzle, a K-major operand leaves the leading byte offset unused (write 16) and an MN-major one puts the distance between its panels there. MLIR's op derives the offsets from a TMA descriptor's swizzle; this one takes them as attributes.",
    }
    WarpgroupMma = "nvgpu.warpgroup.mma" {
        operands: [descriptor_a: One, descriptor_b: One, matrix_c: One],
        attributes: [
            mma_shape("mmaShape"): MmaShape ; "The instruction shape `[64, N, K]`: K 16 and N a multiple of 8 in 8..=256 for f16/bf16; K 32 and N 8, 16, 24 or a multiple of 16 up to 256 for s8/u8.",
            transpose_a("transposeA"): bool = false ; "A is MN-major (`imm-trans-a` 1: its shared matrix holds M contiguous, K-by-K rows of M; f16/bf16 only); by default K-major. Not with A from registers (always K-major).",
            transpose_b("transposeB"): bool = false ; "B is MN-major (`imm-trans-b` 1: its shared matrix holds N contiguous, a row-major K x N B; f16/bf16 only); by default K-major (a column-major B).",
        ],
        results: ONE,
        format: Some("$descriptor_a , $descriptor_b , $matrix_c attr-dict : type(results)"),
        summary: "One `wgmma.mma_async.sync.aligned.m64nNkK` of the warpgroup: D = A (64xK) * B (KxN, from shared memory through `descriptor_b`) + C. A is read from shared memory through `descriptor_a` (an `index` made by `nvgpu.warpgroup.generate.descriptor`), or from registers (the RS form FlashAttention-3 uses for P·V): then `descriptor_a` is the thread's A fragment, `vector<4x2xf16>` / `vector<4x2xbf16>` (k16) or `vector<4x4xi8>` / `vector<4x4xu8>` (k32), in the layout `wgmma.m64k16.f16.a` (`tilec layout`: warp w of the warpgroup holds rows 16w..16w+15 as an mma.sync A fragment), always K-major. A and B are K-major unless `transposeA`/`transposeB` say MN-major (16-bit elements only), C and D the thread's N/2 accumulator elements (f32 for f16/bf16 inputs, s32 for s8/u8) in wgmma's D layout. Asynchronous: needs a `nvgpu.wgmma.fence` before (and after any write of C's or a register A's registers), and D is readable only after `nvgpu.wgmma.commit_group` and a `nvgpu.wgmma.wait_group` that completes it.",
    }
    ElectSync = "nvgpu.elect_sync" {
        operands: [],
        attributes: [],
        results: ONE, format: Some("attr-dict : type(results)"),
        summary: "An `i1`, true in exactly one lane of the warp, its lowest (`elect.sync _|p, 0xffffffff`, sm_90): every lane of the warp must execute it together. Thread 0 of a block is `warp_id == 0` and the elected lane of warp 0; ptxas then knows one lane issues what it predicates (a TMA load needs no loop over the active lanes).",
    }
    SetMaxNRegInc = "nvgpu.setmaxnreg.inc" {
        operands: [],
        attributes: [
            count: u32 ; "The registers per thread to grow to: 24..=256, a multiple of 8.",
        ],
        results: NONE, format: Some("attr-dict"),
        summary: "Raises this warpgroup's registers per thread to `count` (`setmaxnreg.inc.sync.aligned.u32`, sm_90a): the consumer side of warp specialization.",
    }
    SetMaxNRegDec = "nvgpu.setmaxnreg.dec" {
        operands: [],
        attributes: [
            count: u32 ; "The registers per thread to shrink to: 24..=256, a multiple of 8.",
        ],
        results: NONE, format: Some("attr-dict"),
        summary: "Lowers this warpgroup's registers per thread to `count`, releasing the rest to the block's pool (`setmaxnreg.dec.sync.aligned.u32`, sm_90a): the producer side of warp specialization.",
    }
    Load = "nvgpu.load" {
        operands: [src: One, indices: Variadic, mask: Optional],
        attributes: [],
        results: ONE,
        format: Some("$src[$indices] { if $mask }? attr-dict : type(results)"),
        summary: "Per-thread load of a scalar or a vector (elements consecutive in memory: along the last axis, down a column of a `#col_major` tile) from global or shared memory; with `if %mask` (an `i1`), zero where the mask is false, and nothing is read there.",
    }
    Store = "nvgpu.store" {
        operands: [value: One, dst: One, indices: Variadic, mask: Optional],
        attributes: [],
        results: NONE,
        format: Some("$value , $dst[$indices] { if $mask }? attr-dict"),
        summary: "Per-thread store of a scalar or a vector to global or shared memory; with `if %mask` (an `i1`), only where the mask is true.",
    }
    Barrier = "nvgpu.barrier" {
        operands: [],
        attributes: [],
        results: NONE, format: Some("attr-dict"),
        summary: "Block-wide barrier (`bar.sync 0`): waits for every thread and orders shared memory.",
    }
    Extract = "nvgpu.extract" {
        operands: [vector: One],
        attributes: [
            position: Vec<u32> ; "The element's position in the vector, one index per dimension: `[i, j]`.",
        ],
        results: ONE, format: Some("$vector $position attr-dict : type(results)"),
        summary: "Reads the element of a vector at a constant position.",
    }
    Insert = "nvgpu.insert" {
        operands: [value: One, vector: One],
        attributes: [
            position: Vec<u32> ; "The element's position in the vector, one index per dimension: `[i, j]`.",
        ],
        results: ONE,
        format: Some("$value , $vector $position attr-dict : type(results)"),
        summary: "A copy of a vector with the element at a constant position replaced.",
    }
    // ---- reductions, broadcasts, masks (issue 16) -----------------------------------------------------------
    Reduce = "tile.reduce" {
        operands: [source: One],
        attributes: [
            kind: ReduceKind ; "The combining function: `sum`, `max` or `min`.",
            axis: u32 ; "The axis reduced; the result keeps the rank with extent 1 there.",
        ],
        results: ONE, format: Some("$kind $source attr-dict : type(results)"),
        summary: "Reduces a register tile of f32 or i32 along an axis (`tile.reduce max %x {axis = 1} : tile<64x1xf32, reg>`): the result has extent 1 on that axis. `max`/`min` are exact; a `sum` may add in any order (docs/math.md).",
    }
    Broadcast = "tile.broadcast" {
        operands: [source: One],
        attributes: [],
        results: ONE, format: Some("$source attr-dict : type(results)"),
        summary: "Repeats a register tile along its axes of extent 1 to the result's shape (`tile.broadcast %m : tile<64x128xf32, reg>` of a 64x1 tile).",
    }
    Transpose = "tile.transpose" {
        operands: [source: One],
        attributes: [],
        results: ONE, format: Some("$source attr-dict : type(results)"),
        summary: "Exchanges the rows and columns of a rank-2 register tile (`tile.transpose %k : tile<64x32xf16, reg>` of a 32x64 tile; Triton's `tl.trans`). It moves no data: layout assignment gives the result the source's layout with `row` and `col` exchanged, so the lowering only renames registers (a row-major `[N, K]` tile copied to registers this way is the mma's `.col` B operand: `ldmatrix` without `.trans`).",
    }
    Iota = "tile.iota" {
        operands: [],
        attributes: [
            axis: u32 ; "The axis whose index each element holds.",
        ],
        results: ONE, format: Some("attr-dict : type(results)"),
        summary: "A register tile of i32 whose every element is its own index along `axis` (with `tile.cmp` and `tile.select`, a mask).",
    }
    Shuffle = "nvgpu.shuffle" {
        operands: [value: One],
        attributes: [
            mode: ShuffleMode ; "How the source lane is found: `xor` (the lane id XOR `offset`, `shfl.sync.bfly`).",
            offset: u32 ; "The lane mask XORed with the lane id (1..=31; a power of two for one butterfly step).",
        ],
        results: ONE, format: Some("$mode $value , $offset attr-dict : type(results)"),
        summary: "Warp-collective exchange of a 32-bit scalar (MLIR's `gpu.shuffle xor`, PTX `shfl.sync.bfly.b32` over the full warp): every lane gets the value of lane `lane ^ offset`.",
    }
}

impl OpKind {
    /// The op's entry in the catalogue.
    pub fn def(self) -> &'static OpDef {
        // The table is generated in the same order as the enum.
        &OP_DEFS[self as usize]
    }

    pub fn name(self) -> &'static str {
        self.def().name
    }

    /// Looks an op up by its full name.
    pub fn from_name(name: &str) -> Option<OpKind> {
        OP_DEFS.iter().find(|d| d.name == name).map(|d| d.kind)
    }

    /// Ops whose body ends a block (`tile.yield`, `tile.return`).
    pub fn is_terminator(self) -> bool {
        matches!(self, OpKind::Yield | OpKind::Return)
    }

    /// Ops of the `nvgpu` dialect (per-thread semantics).
    pub fn is_nvgpu(self) -> bool {
        self.def().dialect() == "nvgpu"
    }

    /// The elementwise unary ops (`tile.neg` and the float math functions), one operand `source` each.
    pub fn is_unary_math(self) -> bool {
        matches!(
            self,
            OpKind::Neg | OpKind::Abs | OpKind::Exp | OpKind::Exp2 | OpKind::Log | OpKind::Sqrt | OpKind::Rsqrt | OpKind::Tanh | OpKind::Sigmoid
        )
    }

    /// The elementwise binary ops.
    pub fn is_binary_arith(self) -> bool {
        matches!(self, OpKind::Add | OpKind::Sub | OpKind::Mul | OpKind::Div | OpKind::Rem | OpKind::Min | OpKind::Max)
    }
}

impl std::fmt::Display for OpKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_enum_order_and_names_are_unique() {
        for (i, def) in OP_DEFS.iter().enumerate() {
            assert_eq!(def.kind as usize, i, "{} is out of order", def.name);
            assert_eq!(OpKind::from_name(def.name), Some(def.kind));
        }
        let mut names: Vec<_> = OP_DEFS.iter().map(|d| d.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), OP_DEFS.len());
    }
}
