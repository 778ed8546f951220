//! The operation catalogue: every op of the `tile` and `nvgpu` dialects declared once, with its name,
//! operand groups, result arity, and the custom assembly format that the parser and printer share.
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

/// Everything the generic machinery knows about one kind of op.
#[derive(Debug)]
pub struct OpDef {
    pub kind: OpKind,
    /// Full name with dialect prefix, e.g. `tile.copy_s2r`.
    pub name: &'static str,
    pub operands: &'static [OperandGroup],
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
}

macro_rules! operand_groups {
    ($($name:ident : $arity:ident),* $(,)?) => {
        &[$(OperandGroup { name: stringify!($name), arity: Arity::$arity }),*]
    };
}

macro_rules! define_ops {
    ($(
        $variant:ident = $name:literal {
            operands: [$($operands:tt)*],
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
                operands: operand_groups!($($operands)*),
                results: $results,
                format: $format,
                summary: $summary,
            },)*
        ];
    };
}

const NONE: Option<Arity> = None;
const ONE: Option<Arity> = Some(Arity::One);

define_ops! {
    // ---- tile dialect: functions, control flow, scalars -------------------------------------------------
    Func = "tile.func" {
        operands: [], results: NONE, format: None,
        summary: "A kernel: arguments, attributes (launch configuration, tiling) and a body.",
    }
    For = "tile.for" {
        operands: [lower: One, upper: One, step: One, inits: Variadic], results: Some(Arity::Variadic), format: None,
        summary: "A counted loop with loop-carried values: `tile.for %i = %lb to %ub step %s iter_args(%x = %init) -> (T)`.",
    }
    Yield = "tile.yield" {
        operands: [values: Variadic], results: NONE, format: Some("$values attr-dict"),
        summary: "Ends a loop body, passing the next values of the loop-carried variables.",
    }
    Return = "tile.return" {
        operands: [], results: NONE, format: Some("attr-dict"),
        summary: "Ends a kernel.",
    }
    Constant = "tile.constant" {
        operands: [], results: ONE, format: Some("$value attr-dict : type(results)"),
        summary: "A scalar constant.",
    }
    BlockId = "tile.block_id" {
        operands: [], results: ONE, format: Some("$dim attr-dict : type(results)"),
        summary: "The index of this thread block in the grid along `x`, `y` or `z`.",
    }
    GridDim = "tile.grid_dim" {
        operands: [], results: ONE, format: Some("$dim attr-dict : type(results)"),
        summary: "The number of thread blocks in the grid along `x`, `y` or `z`.",
    }
    Dim = "tile.dim" {
        operands: [source: One], results: ONE, format: Some("$source , $axis attr-dict : type(results)"),
        summary: "The run-time extent of a global tile along an axis.",
    }
    Add = "tile.add" {
        operands: [lhs: One, rhs: One], results: ONE, format: Some("$lhs , $rhs attr-dict : type(results)"),
        summary: "Elementwise addition of scalars, vectors or register tiles.",
    }
    Sub = "tile.sub" {
        operands: [lhs: One, rhs: One], results: ONE, format: Some("$lhs , $rhs attr-dict : type(results)"),
        summary: "Elementwise subtraction.",
    }
    Mul = "tile.mul" {
        operands: [lhs: One, rhs: One], results: ONE, format: Some("$lhs , $rhs attr-dict : type(results)"),
        summary: "Elementwise multiplication.",
    }
    Div = "tile.div" {
        operands: [lhs: One, rhs: One], results: ONE, format: Some("$lhs , $rhs attr-dict : type(results)"),
        summary: "Elementwise division (integers round toward zero; division by zero is an error).",
    }
    Rem = "tile.rem" {
        operands: [lhs: One, rhs: One], results: ONE, format: Some("$lhs , $rhs attr-dict : type(results)"),
        summary: "Integer remainder (sign of the dividend).",
    }
    Min = "tile.min" {
        operands: [lhs: One, rhs: One], results: ONE, format: Some("$lhs , $rhs attr-dict : type(results)"),
        summary: "Elementwise minimum.",
    }
    Max = "tile.max" {
        operands: [lhs: One, rhs: One], results: ONE, format: Some("$lhs , $rhs attr-dict : type(results)"),
        summary: "Elementwise maximum.",
    }
    Cmp = "tile.cmp" {
        operands: [lhs: One, rhs: One], results: ONE, format: Some("$predicate $lhs , $rhs attr-dict : type(results)"),
        summary: "Comparison (`eq`, `ne`, `lt`, `le`, `gt`, `ge`) giving `i1`.",
    }
    Select = "tile.select" {
        operands: [cond: One, true_value: One, false_value: One], results: ONE,
        format: Some("$cond , $true_value , $false_value attr-dict : type(results)"),
        summary: "Chooses between two values of the same type by an `i1` condition.",
    }
    Cast = "tile.cast" {
        operands: [source: One], results: ONE, format: Some("$source attr-dict : type(results)"),
        summary: "Converts the element type (round to nearest even for floats, truncation toward zero to integers).",
    }
    // ---- tile dialect: tiles ----------------------------------------------------------------------------
    Splat = "tile.splat" {
        operands: [value: One], results: ONE, format: Some("$value attr-dict : type(results)"),
        summary: "A register tile or vector with every element equal to a scalar value.",
    }
    Fill = "tile.fill" {
        operands: [], results: ONE, format: Some("$value attr-dict : type(results)"),
        summary: "A register tile or vector with every element equal to a constant.",
    }
    AllocShared = "tile.alloc_shared" {
        operands: [], results: ONE, format: Some("attr-dict : type(results)"),
        summary: "Allocates a tile in the block's shared memory.",
    }
    CopyG2S = "tile.copy_g2s" {
        operands: [src: One, src_indices: Variadic, dst: One], results: NONE,
        format: Some("$src[$src_indices] , $dst attr-dict"),
        summary: "Copies the window of a global tile at the given offset, shaped like the shared tile, into it; elements outside the global tile read as zero.",
    }
    CopyS2R = "tile.copy_s2r" {
        operands: [src: One, src_indices: Variadic], results: ONE,
        format: Some("$src[$src_indices] attr-dict : type(results)"),
        summary: "Loads the window of a shared tile at the given offset (shaped like the result) into a register tile.",
    }
    CopyR2S = "tile.copy_r2s" {
        operands: [value: One, dst: One, dst_indices: Variadic], results: NONE,
        format: Some("$value , $dst[$dst_indices] attr-dict"),
        summary: "Stores a register tile into the window of a shared tile at the given offset.",
    }
    CopyR2G = "tile.copy_r2g" {
        operands: [value: One, dst: One, dst_indices: Variadic], results: NONE,
        format: Some("$value , $dst[$dst_indices] attr-dict"),
        summary: "Stores a register tile into the window of a global tile at the given offset; elements outside the global tile are dropped.",
    }
    Mma = "tile.mma" {
        operands: [a: One, b: One, c: One], results: ONE, format: Some("$a , $b , $c attr-dict : type(results)"),
        summary: "Matrix multiply-accumulate on register tiles: D = A (MxK) * B (KxN) + C (MxN).",
    }
    // ---- nvgpu dialect: per-thread, warp-synchronous ------------------------------------------------------
    ThreadId = "nvgpu.thread_id" {
        operands: [], results: ONE, format: Some("$dim attr-dict : type(results)"),
        summary: "The index of this thread in its block along `x`, `y` or `z`.",
    }
    LaneId = "nvgpu.lane_id" {
        operands: [], results: ONE, format: Some("attr-dict : type(results)"),
        summary: "The index of this thread in its warp (0..32).",
    }
    WarpId = "nvgpu.warp_id" {
        operands: [], results: ONE, format: Some("attr-dict : type(results)"),
        summary: "The index of this thread's warp in its block.",
    }
    LdMatrix = "nvgpu.ldmatrix" {
        operands: [src: One, indices: Variadic], results: ONE,
        format: Some("$src[$indices] attr-dict : type(results)"),
        summary: "Warp-collective load of 1, 2 or 4 8x8 b16 matrices from shared memory (`numTiles`, `transpose`).",
    }
    StMatrix = "nvgpu.stmatrix" {
        operands: [value: One, dst: One, indices: Variadic], results: NONE,
        format: Some("$value , $dst[$indices] attr-dict"),
        summary: "Warp-collective store of 1, 2 or 4 8x8 b16 matrices to shared memory (`numTiles`, `transpose`).",
    }
    MmaSync = "nvgpu.mma.sync" {
        operands: [a: One, b: One, c: One], results: ONE,
        format: Some("( $a , $b , $c ) attr-dict : type(results)"),
        summary: "Warp-collective tensor-core MMA on per-thread fragments (`mmaShape = [m, n, k]`; m8n8k4 also takes `layoutA`/`layoutB` = `row` or `col`, default `.row.col`).",
    }
    DeviceAsyncCopy = "nvgpu.device_async_copy" {
        operands: [src: One, src_indices: Variadic, dst: One, dst_indices: Variadic, src_elements: Optional],
        results: NONE,
        format: Some("$src[$src_indices] , $dst[$dst_indices] , $dstElements { , $src_elements }? attr-dict"),
        summary: "Asynchronous global-to-shared copy of `dstElements` elements (4, 8 or 16 bytes); only `src_elements` are read, the rest zero-filled.",
    }
    DeviceAsyncCreateGroup = "nvgpu.device_async_create_group" {
        operands: [], results: NONE, format: Some("attr-dict"),
        summary: "Commits the asynchronous copies issued so far by this thread as one group.",
    }
    DeviceAsyncWait = "nvgpu.device_async_wait" {
        operands: [], results: NONE, format: Some("attr-dict"),
        summary: "Waits until at most `numGroups` (default 0) of this thread's copy groups are pending.",
    }
    Load = "nvgpu.load" {
        operands: [src: One, indices: Variadic, mask: Optional], results: ONE,
        format: Some("$src[$indices] { if $mask }? attr-dict : type(results)"),
        summary: "Per-thread load of a scalar or a vector (elements consecutive in memory: along the last axis, down a column of a `#col_major` tile) from global or shared memory; with `if %mask` (an `i1`), zero where the mask is false, and nothing is read there.",
    }
    Store = "nvgpu.store" {
        operands: [value: One, dst: One, indices: Variadic, mask: Optional], results: NONE,
        format: Some("$value , $dst[$indices] { if $mask }? attr-dict"),
        summary: "Per-thread store of a scalar or a vector to global or shared memory; with `if %mask` (an `i1`), only where the mask is true.",
    }
    Barrier = "nvgpu.barrier" {
        operands: [], results: NONE, format: Some("attr-dict"),
        summary: "Block-wide barrier (`bar.sync 0`): waits for every thread and orders shared memory.",
    }
    Extract = "nvgpu.extract" {
        operands: [vector: One], results: ONE, format: Some("$vector $position attr-dict : type(results)"),
        summary: "Reads the element of a vector at a constant position.",
    }
    Insert = "nvgpu.insert" {
        operands: [value: One, vector: One], results: ONE,
        format: Some("$value , $vector $position attr-dict : type(results)"),
        summary: "A copy of a vector with the element at a constant position replaced.",
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
