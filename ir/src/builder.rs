//! Building IR from Rust, for compilers that embed tilec and for passes.
//!
//! ```
//! use tilec_ir::builder::FuncBuilder;
//! use tilec_ir::{MemorySpace, ScalarType, TileType, Type};
//!
//! let mut b = FuncBuilder::new("scale");
//! let x = b.arg(TileType::new(&[16, 16], ScalarType::F32, MemorySpace::Global));
//! let zero = b.index(0);
//! let s = b.alloc_shared(TileType::new(&[16, 16], ScalarType::F32, MemorySpace::Shared));
//! b.copy_g2s(x, &[zero, zero], s);
//! let r = b.copy_s2r(s, &[], TileType::new(&[16, 16], ScalarType::F32, MemorySpace::Register));
//! let two = b.fill(2.0, TileType::new(&[16, 16], ScalarType::F32, MemorySpace::Register));
//! let y = b.mul(r, two);
//! b.copy_r2g(y, x, &[zero, zero]);
//! b.ret();
//! let func = b.finish();
//! assert!(tilec_ir::verify::verify_func(&func).is_empty());
//! ```

use crate::attr::Attribute;
use crate::body::{BlockId, Func, OpId, OpSpec, Value};
use crate::diag::Span;
use crate::ops::typed;
use crate::ops::{BinaryArith, GridAxis, Literal, MatrixOrder, MmaShape, OpKind, TypedOp};
use crate::types::{ScalarType, TileType, Type, VectorType};

/// Appends ops to a function, at the end of the current block.
pub struct FuncBuilder {
    func: Func,
    /// Where new ops go; the innermost open loop body last.
    blocks: Vec<BlockId>,
    span: Span,
}

impl FuncBuilder {
    /// A builder for a new, empty function.
    pub fn new(name: impl Into<String>) -> FuncBuilder {
        let func = Func::new(name, Vec::new());
        let entry = func.entry;
        FuncBuilder { func, blocks: vec![entry], span: Span::UNKNOWN }
    }

    /// Continues an existing function, appending to its entry block.
    pub fn from_func(func: Func) -> FuncBuilder {
        let entry = func.entry;
        FuncBuilder { func, blocks: vec![entry], span: Span::UNKNOWN }
    }

    /// The location given to the ops built from now on.
    pub fn set_span(&mut self, span: Span) {
        self.span = span;
    }

    /// Sets a function attribute (launch configuration, tiling, ...).
    pub fn func_attr(&mut self, name: &str, value: impl Into<Attribute>) {
        self.func.attrs.insert(name.to_string(), value.into());
    }

    /// Adds a function argument.
    pub fn arg(&mut self, ty: impl Into<Type>) -> Value {
        let entry = self.func.entry;
        self.func.body.add_block_arg(entry, ty.into(), None, Span::UNKNOWN)
    }

    /// Names a value (the printer uses the name when it is unique).
    pub fn name(&mut self, v: Value, name: &str) -> Value {
        self.func.body.values[v.index()].name = Some(name.to_string());
        v
    }

    /// The type of a value built so far.
    pub fn ty(&self, v: Value) -> &Type {
        self.func.body.ty(v)
    }

    /// Appends an op built from a spec and returns it.
    pub fn push(&mut self, spec: OpSpec) -> OpId {
        let spec = if spec.span.is_unknown() { spec.span(self.span) } else { spec };
        let op = self.func.body.create_op(spec);
        let block = *self.blocks.last().unwrap_or(&self.func.entry);
        self.func.body.append(block, op);
        op
    }

    /// Appends an op with one result and returns the result.
    pub fn push_value(&mut self, spec: OpSpec) -> Value {
        let op = self.push(spec);
        self.func.body.op(op).results[0]
    }

    /// `tile.constant` of type `index`.
    pub fn index(&mut self, n: i64) -> Value {
        self.constant(n, ScalarType::Index)
    }

    /// `tile.constant`.
    pub fn constant(&mut self, value: impl Into<Literal>, ty: ScalarType) -> Value {
        self.push_value(typed::Constant { value: value.into() }.into_spec().result(ty))
    }

    /// `tile.block_id` along `x`, `y` or `z`.
    pub fn block_id(&mut self, dim: GridAxis) -> Value {
        self.push_value(typed::BlockId { dim }.into_spec().result(Type::INDEX))
    }

    /// `tile.grid_dim` along `x`, `y` or `z`: the number of blocks of the grid.
    pub fn grid_dim(&mut self, dim: GridAxis) -> Value {
        self.push_value(typed::GridDim { dim }.into_spec().result(Type::INDEX))
    }

    /// `nvgpu.thread_id` along `x`, `y` or `z`.
    pub fn thread_id(&mut self, dim: GridAxis) -> Value {
        self.push_value(typed::ThreadId { dim }.into_spec().result(Type::INDEX))
    }

    /// An elementwise binary op (`tile.add`, `tile.mul`, ...); the result has the left operand's type.
    /// `None` when `kind` is not one.
    pub fn binary(&mut self, kind: OpKind, lhs: Value, rhs: Value) -> Option<Value> {
        Some(self.arith(BinaryArith::from_kind(kind)?, lhs, rhs))
    }

    /// `lhs <op> rhs`; the result has the left operand's type.
    pub fn arith(&mut self, op: BinaryArith, lhs: Value, rhs: Value) -> Value {
        let ty = self.ty(lhs).clone();
        self.push_value(op.spec(lhs, rhs).result(ty))
    }

    pub fn add(&mut self, lhs: Value, rhs: Value) -> Value {
        self.arith(BinaryArith::Add, lhs, rhs)
    }

    pub fn mul(&mut self, lhs: Value, rhs: Value) -> Value {
        self.arith(BinaryArith::Mul, lhs, rhs)
    }

    /// `tile.fill`: a register tile or vector of one constant.
    pub fn fill(&mut self, value: impl Into<Literal>, ty: impl Into<Type>) -> Value {
        self.push_value(typed::Fill { value: value.into() }.into_spec().result(ty))
    }

    /// `tile.alloc_shared`.
    pub fn alloc_shared(&mut self, ty: TileType) -> Value {
        self.push_value(typed::AllocShared {}.into_spec().result(ty))
    }

    /// `tile.copy_g2s src[indices], dst`.
    pub fn copy_g2s(&mut self, src: Value, indices: &[Value], dst: Value) {
        self.push(typed::CopyG2S { src, src_indices: indices.to_vec(), dst }.into_spec());
    }

    /// `tile.copy_s2r src[indices] : ty`.
    pub fn copy_s2r(&mut self, src: Value, indices: &[Value], ty: TileType) -> Value {
        self.push_value(typed::CopyS2R { src, src_indices: indices.to_vec() }.into_spec().result(ty))
    }

    /// `tile.copy_r2s value, dst[indices]`.
    pub fn copy_r2s(&mut self, value: Value, dst: Value, indices: &[Value]) {
        self.push(typed::CopyR2S { value, dst, dst_indices: indices.to_vec() }.into_spec());
    }

    /// `tile.copy_r2g value, dst[indices]`.
    pub fn copy_r2g(&mut self, value: Value, dst: Value, indices: &[Value]) {
        self.push(typed::CopyR2G { value, dst, dst_indices: indices.to_vec() }.into_spec());
    }

    /// `tile.mma a, b, c`: the result has the accumulator's type.
    pub fn mma(&mut self, a: Value, b: Value, c: Value) -> Value {
        let ty = self.ty(c).clone();
        self.push_value(typed::Mma { a, b, c, mma_shape: None, warp_grid: None, warp_tile: None }.into_spec().result(ty))
    }

    /// `nvgpu.ldmatrix src[indices] {numTiles, transpose}`.
    pub fn ldmatrix(&mut self, src: Value, indices: &[Value], num_tiles: u32, transpose: bool) -> Value {
        let elem = self.ty(src).element_type();
        let ty = VectorType::new(&[u64::from(num_tiles), 2], elem);
        self.push_value(typed::LdMatrix { src, indices: indices.to_vec(), num_tiles, transpose }.into_spec().result(ty))
    }

    /// `nvgpu.mma.sync(a, b, c) {mmaShape = [m, n, k]}`.
    pub fn mma_sync(&mut self, a: Value, b: Value, c: Value, mma_shape: MmaShape) -> Value {
        let ty = self.ty(c).clone();
        let mma = typed::MmaSync {
            a,
            b,
            c,
            mma_shape,
            layout_a: MatrixOrder::Row,
            layout_b: MatrixOrder::Col,
            satfinite: false,
        };
        self.push_value(mma.into_spec().result(ty))
    }

    /// `tile.for iv = lower to upper step step iter_args(inits)`: `body` receives the builder (positioned in
    /// the loop body), the induction variable and the carried values, and returns the values to yield.
    /// Returns the loop's results.
    pub fn for_loop(
        &mut self,
        lower: Value,
        upper: Value,
        step: Value,
        inits: &[Value],
        body: impl FnOnce(&mut FuncBuilder, Value, &[Value]) -> Vec<Value>,
    ) -> Vec<Value> {
        let block = self.func.body.new_block();
        let iv = self.func.body.add_block_arg(block, Type::INDEX, None, Span::UNKNOWN);
        let types: Vec<Type> = inits.iter().map(|&v| self.ty(v).clone()).collect();
        let carried: Vec<Value> = types
            .iter()
            .map(|ty| self.func.body.add_block_arg(block, ty.clone(), None, Span::UNKNOWN))
            .collect();
        self.blocks.push(block);
        let yielded = body(self, iv, &carried);
        self.push(typed::Yield { values: yielded }.into_spec());
        self.blocks.pop();
        let mut spec = typed::For { lower, upper, step, inits: inits.to_vec(), pipeline_stages: None, hoist: None }.into_spec().region(block);
        spec.result_types = types;
        let op = self.push(spec);
        self.func.body.op(op).results.clone()
    }

    /// `tile.return`.
    pub fn ret(&mut self) {
        self.push(typed::Return {}.into_spec());
    }

    /// The function built.
    pub fn finish(self) -> Func {
        self.func
    }
}
