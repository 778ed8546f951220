//! `rasterize`: the order in which the blocks of a 2-D grid visit their output tiles, for L2 reuse
//! (Triton's grouped ordering, CUTLASS's threadblock swizzle).
//!
//! The GPU starts blocks in launch order, `x` fastest. A GEMM that maps `block_id x` to row tiles of C and
//! `block_id y` to column tiles therefore has, at any moment, blocks of every row tile but only a few
//! column tiles in flight: together they read all of A while reading little of B, and when A does not fit
//! in L2 (8192² fp16 is 128 MB; the H100's L2 is 50 MB) it is streamed from DRAM again for every few columns.
//! Grouped ordering hands consecutive blocks the tiles of `G` rows at a time, column by column, so the
//! blocks in flight cover a squarer patch of C and read about `G` row tiles of A and `resident / G` column
//! tiles of B.
//!
//! With `gx x gy` blocks and `lin = x + y * gx` (launch order), group `g = lin / (G * gy)` covers rows
//! `g * G ..` (fewer in the last group: `rows = min(gx - g * G, G)`), and
//! ```text
//! x' = g * G + (lin % (G * gy)) % rows
//! y' =         (lin % (G * gy)) / rows
//! ```
//! is a permutation of the grid: every `(x', y')` is visited exactly once. Every use of `block_id x` and
//! `block_id y` is replaced by `x'` and `y'`; `block_id z` is left alone. The grid itself is unchanged,
//! so the reference interpreter (which runs the kernel as written) and the GPU compute the same result,
//! which `tilec sim` checks.
//!
//! `G`: the pass option `group=N`, else the function attribute `raster_group`, else none (the pass does
//! nothing). A function that does not use both `block_id x` and `block_id y` is left alone.

use tilec_ir::ops::{GridAxis, Literal};
use tilec_ir::typed;
use tilec_ir::{Diagnostic, Func, Module, OpId, OpSpec, Type, TypedOp, Value};

use tilec_ir::ops::BinaryArith;
use crate::kernel_attrs::kernel_attrs;
use crate::options::PassOptions;

/// The function attribute naming the group size (read as [`tilec_ir::KernelAttrs::raster_group`]).
pub const RASTER_GROUP_ATTR: &str = "raster_group";

/// The `rasterize` pass (see the [module documentation](self)).
#[derive(Clone, Copy, Debug, Default)]
pub struct Rasterize {
    /// Overrides the function attribute.
    pub group: Option<u32>,
}

impl Rasterize {
    pub const NAME: &'static str = "rasterize";
    pub const DESCRIPTION: &'static str =
        "grouped block order for L2 reuse: block_id x/y remapped in groups of raster_group rows";

    /// Builds the pass from its pipeline options (`group=N`).
    pub fn from_options(options: &PassOptions) -> Result<Rasterize, Diagnostic> {
        options.expect_only(Self::NAME, &["group"])?;
        let group = match options.get("group") {
            None => None,
            Some(_) => Some(check_group(options.parse_or(Self::NAME, "group", 0i64)?).map_err(|m| Diagnostic::error(options.span, m))?),
        };
        Ok(Rasterize { group })
    }
}

fn check_group(n: i64) -> Result<u32, String> {
    match u32::try_from(n) {
        Ok(g @ 1..=65535) => Ok(g),
        _ => Err(format!("rasterize: the group must be 1..=65535 rows of blocks, not {n}")),
    }
}

impl crate::Pass for Rasterize {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn description(&self) -> &'static str {
        Self::DESCRIPTION
    }

    fn run(&self, module: &mut Module, _cx: &mut crate::PassContext) -> Result<(), Diagnostic> {
        for func in &mut module.funcs {
            let group = match self.group {
                Some(g) => g,
                None => match kernel_attrs(func)?.raster_group {
                    None => continue,
                    Some(n) => check_group(i64::from(n)).map_err(|m| Diagnostic::error(func.span, m))?,
                },
            };
            if group > 1 {
                rasterize(func, group);
            }
        }
        Ok(())
    }
}

/// Remaps `block_id x` and `block_id y` of `func` in groups of `group` rows.
fn rasterize(func: &mut Func, group: u32) {
    let mut ids: [Vec<OpId>; 2] = [Vec::new(), Vec::new()];
    func.body.walk(func.entry, &mut |id| {
        match func.body.op(id).view::<typed::BlockId>().map(|b| b.dim) {
            Some(GridAxis::X) => ids[0].push(id),
            Some(GridAxis::Y) => ids[1].push(id),
            _ => {}
        }
    });
    if ids.iter().any(Vec::is_empty) {
        return;
    }
    let Some(&first) = func.body.block(func.entry).ops.first() else { return };
    let span = func.span;
    let emit = |body: &mut tilec_ir::Body, spec: OpSpec| -> Value {
        let op = body.create_op(spec.span(span));
        body.insert_before(first, op);
        body.op(op).results[0]
    };
    let index = |spec: OpSpec| spec.result(Type::INDEX);
    let constant = |n: i64| index(typed::Constant { value: Literal::Int(n) }.into_spec());
    let binary = |op: BinaryArith, a: Value, b: Value| index(op.spec(a, b));
    let body = &mut func.body;
    let x = emit(body, index(typed::BlockId { dim: GridAxis::X }.into_spec()));
    let y = emit(body, index(typed::BlockId { dim: GridAxis::Y }.into_spec()));
    let gx = emit(body, index(typed::GridDim { dim: GridAxis::X }.into_spec()));
    let gy = emit(body, index(typed::GridDim { dim: GridAxis::Y }.into_spec()));
    let g = emit(body, constant(i64::from(group)));
    let y_gx = emit(body, binary(BinaryArith::Mul, y, gx));
    let lin = emit(body, binary(BinaryArith::Add, x, y_gx));
    let width = emit(body, binary(BinaryArith::Mul, g, gy));
    let gid = emit(body, binary(BinaryArith::Div, lin, width));
    let first_row = emit(body, binary(BinaryArith::Mul, gid, g));
    let rows_left = emit(body, binary(BinaryArith::Sub, gx, first_row));
    let rows = emit(body, binary(BinaryArith::Min, rows_left, g));
    let in_group = emit(body, binary(BinaryArith::Rem, lin, width));
    let row = emit(body, binary(BinaryArith::Rem, in_group, rows));
    let new_x = emit(body, binary(BinaryArith::Add, first_row, row));
    let new_y = emit(body, binary(BinaryArith::Div, in_group, rows));
    for (old, new) in [(&ids[0], new_x), (&ids[1], new_y)] {
        for &id in old {
            let result = body.op(id).results[0];
            body.replace_all_uses(result, new);
            body.erase(id);
        }
    }
}
