//! The executor: binds arguments, checks the function's static resource use, and runs every block of the
//! grid, one op at a time (one function per op kind that needs more than a line).

use std::rc::Rc;

use crate::body::{BlockId, Body, Func, OpId, Operation, Value};
use crate::data::{round_to, TensorData};
use crate::diag::Span;
use crate::ops::typed::{self, AnyOp};
use crate::ops::{OpKind, UnaryMath};
use crate::types::{Dim, MemorySpace, ScalarType, Type};

use super::arith::{self, ArithError};
use super::error::InterpError;
use super::mma::{self, Accumulation};
use super::window::{copy_window, window_inside};
use super::{ArgValue, Launch, Limits, OP_OVERHEAD};

/// How deeply `tile.for` loops may nest (guards the interpreter's stack against builder-made IR).
const MAX_LOOP_DEPTH: usize = 1000;

/// The run-time value of an SSA value.
#[derive(Clone, Debug)]
enum Slot {
    /// Not defined yet (only unverified IR reads one).
    Unset,
    Scalar(f64),
    /// A register tile or vector: its elements, row-major (the shape is the value's type's).
    Tile(Rc<Vec<f64>>),
    /// A global tile: the index of its kernel argument.
    Global(usize),
    /// A shared tile: the index of its buffer.
    Shared(usize),
}

/// What executing an op asks its block to do next.
enum Flow {
    Next,
    Yield(Vec<Slot>),
    Return,
}

/// One run: the function, its arguments (the global memory) and the state of the current block.
pub(super) struct Machine<'f, 'a> {
    body: &'f Body,
    func: &'f Func,
    args: &'a mut [ArgValue],
    limits: Limits,
    slots: Vec<Slot>,
    /// For every op, the shared buffer it allocates (only `tile.alloc_shared` ops have one).
    shared_of_op: Vec<Option<usize>>,
    shared: Vec<Vec<f64>>,
    shared_shapes: Vec<Vec<usize>>,
    block_id: [u32; 3],
    /// The launch grid (`tile.grid_dim`).
    grid: [u32; 3],
    fuel_left: u64,
    depth: usize,
}

fn malformed(op: &Operation, message: impl std::fmt::Display) -> InterpError {
    InterpError::Malformed { span: op.span, message: format!("'{}' {message}", op.kind) }
}

fn arith_error(op: &Operation, e: ArithError) -> InterpError {
    match e {
        ArithError::DivisionByZero => InterpError::DivisionByZero { span: op.span, op: op.kind.name() },
        ArithError::IndexOverflow(value) => InterpError::IndexOverflow { span: op.span, op: op.kind.name(), value },
    }
}

/// The shape of a register tile or vector type, `None` for other types or dynamic extents.
fn value_shape(ty: &Type) -> Option<Vec<usize>> {
    match ty {
        Type::Tile(t) if t.space == MemorySpace::Register => {
            t.shape.iter().map(|d| d.as_static().and_then(|n| usize::try_from(n).ok())).collect()
        }
        Type::Vector(v) => v.shape.iter().map(|&n| usize::try_from(n).ok()).collect(),
        _ => None,
    }
}

fn show_shape(shape: &[usize]) -> String {
    shape.iter().map(|n| n.to_string()).collect::<Vec<_>>().join("x")
}

impl<'f, 'a> Machine<'f, 'a> {
    /// Binds and checks the arguments and the function's static resource use.
    pub(super) fn new(func: &'f Func, args: &'a mut [ArgValue], limits: &Limits) -> Result<Machine<'f, 'a>, InterpError> {
        let body = &func.body;
        let mut m = Machine {
            body,
            func,
            args,
            limits: *limits,
            slots: vec![Slot::Unset; body.values.len()],
            shared_of_op: vec![None; body.ops.len()],
            shared: Vec::new(),
            shared_shapes: Vec::new(),
            block_id: [0; 3],
            grid: [1; 3],
            fuel_left: limits.fuel,
            depth: 0,
        };
        m.bind_args()?;
        m.check_static()?;
        Ok(m)
    }

    fn bind_args(&mut self) -> Result<(), InterpError> {
        let params = self.func.args();
        if params.len() != self.args.len() {
            return Err(InterpError::ArgCount {
                span: self.func.span,
                func: self.func.name.clone(),
                expected: params.len(),
                found: self.args.len(),
            });
        }
        for (index, (&param, arg)) in params.iter().zip(self.args.iter_mut()).enumerate() {
            let data = self.body.value(param);
            let (span, name) = (data.span, data.name.clone().unwrap_or_else(|| format!("#{index}")));
            let describe = |arg: &ArgValue| match arg {
                ArgValue::Tensor(t) => format!("a tensor of {} {}", show_shape(&t.shape), t.elem),
                ArgValue::Scalar(s, _) => format!("a scalar {s}"),
            };
            match (&data.ty, arg) {
                (Type::Tile(t), ArgValue::Tensor(tensor)) if t.space == MemorySpace::Global && tensor.elem == t.elem => {
                    let fits = tensor.shape.len() == t.shape.len()
                        && t.shape.iter().zip(&tensor.shape).all(|(d, &n)| match d {
                            Dim::Static(s) => *s == n as u64,
                            Dim::Dynamic => true,
                        });
                    let count = tensor.shape.iter().try_fold(1usize, |acc, &n| acc.checked_mul(n));
                    if !fits || count != Some(tensor.values.len()) {
                        let expected = t.shape.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x");
                        let found = if fits {
                            format!("{} holding {} values", show_shape(&tensor.shape), tensor.values.len())
                        } else {
                            show_shape(&tensor.shape)
                        };
                        return Err(InterpError::ArgShape { span, index, name, expected, found });
                    }
                    // As the device encoding would: every element a value of the type.
                    for x in &mut tensor.values {
                        *x = round_to(t.elem, *x);
                    }
                    self.slots[param.index()] = Slot::Global(index);
                }
                (Type::Scalar(s), ArgValue::Scalar(s2, x)) if s == s2 => {
                    let v = arith::cast(*s, *s, *x).map_err(|_| InterpError::ArgType {
                        span,
                        index,
                        name: name.clone(),
                        expected: "an index within ±2^53".to_string(),
                        found: format!("{x}"),
                    })?;
                    *x = v;
                    self.slots[param.index()] = Slot::Scalar(v);
                }
                (ty, arg) => {
                    let expected = match ty {
                        Type::Tile(t) => format!("a tensor of {}", t.elem),
                        Type::Scalar(s) => format!("a scalar {s}"),
                        Type::Vector(v) => format!("'{v}' (vectors cannot be kernel arguments)"),
                    };
                    return Err(InterpError::ArgType { span, index, name, expected, found: describe(arg) });
                }
            }
        }
        Ok(())
    }

    /// Rejects `nvgpu` ops, allocates the shared buffers (within the limit), and checks every register
    /// tile's size, before any block runs.
    fn check_static(&mut self) -> Result<(), InterpError> {
        let body = self.body;
        let mut ops = Vec::new();
        body.walk(self.func.entry, &mut |id| ops.push(id));
        let mut shared_bytes: u128 = 0;
        for id in ops {
            let op = body.op(id);
            if op.kind.is_nvgpu() {
                return Err(InterpError::NvgpuOp { span: op.span, op: op.kind.name() });
            }
            for &r in &op.results {
                let ty = body.ty(r);
                if matches!(ty, Type::Tile(t) if t.space == MemorySpace::Register) || matches!(ty, Type::Vector(_)) {
                    let Some(shape) = value_shape(ty) else {
                        return Err(InterpError::Unsupported {
                            span: op.span,
                            message: format!("'{}' produces '{ty}': register tiles need a static shape", op.kind),
                        });
                    };
                    let elements = shape.iter().fold(1u128, |acc, &n| acc.saturating_mul(n as u128));
                    if elements > u128::from(self.limits.max_tile_elements) {
                        return Err(InterpError::TileTooLarge { span: op.span, elements, limit: self.limits.max_tile_elements });
                    }
                }
            }
            if op.kind == OpKind::AllocShared {
                let ty = op.result().map(|r| body.ty(r));
                let Some(Type::Tile(t)) = ty.filter(|t| matches!(t, Type::Tile(t) if t.space == MemorySpace::Shared)) else {
                    return Err(malformed(op, "must produce a shared tile"));
                };
                let Some(shape) = t.shape.iter().map(|d| d.as_static().and_then(|n| usize::try_from(n).ok())).collect::<Option<Vec<_>>>() else {
                    return Err(malformed(op, "needs a static shape"));
                };
                let elements = shape.iter().fold(1u128, |acc, &n| acc.saturating_mul(n as u128));
                shared_bytes = shared_bytes.saturating_add(elements.saturating_mul(u128::from(t.elem.bit_width())).div_ceil(8));
                if shared_bytes > u128::from(self.limits.max_shared_bytes) {
                    return Err(InterpError::SharedMemoryTooLarge {
                        span: op.span,
                        bytes: u64::try_from(shared_bytes).unwrap_or(u64::MAX),
                        limit: self.limits.max_shared_bytes,
                    });
                }
                self.shared_of_op[id.index()] = Some(self.shared.len());
                self.shared.push(vec![0.0; elements as usize]);
                self.shared_shapes.push(shape);
            }
        }
        Ok(())
    }

    /// Runs every block of the grid: `z` outermost, `x` fastest.
    pub(super) fn run_grid(mut self, launch: &Launch) -> Result<(), InterpError> {
        if launch.grid.contains(&0) {
            return Err(InterpError::InvalidLaunch { grid: launch.grid });
        }
        let [gx, gy, gz] = launch.grid;
        self.grid = launch.grid;
        for z in 0..gz {
            for y in 0..gy {
                for x in 0..gx {
                    self.charge(OP_OVERHEAD, self.func.span)?;
                    self.block_id = [x, y, z];
                    for buffer in &mut self.shared {
                        buffer.fill(0.0);
                    }
                    self.exec_block(self.func.entry)?;
                }
            }
        }
        Ok(())
    }

    fn charge(&mut self, units: u64, span: Span) -> Result<(), InterpError> {
        match self.fuel_left.checked_sub(units) {
            Some(left) => {
                self.fuel_left = left;
                Ok(())
            }
            None => Err(InterpError::OutOfFuel { span, limit: self.limits.fuel }),
        }
    }

    fn exec_block(&mut self, block: BlockId) -> Result<Flow, InterpError> {
        let body = self.body;
        for &id in &body.block(block).ops {
            match self.exec_op(id)? {
                Flow::Next => {}
                flow => return Ok(flow),
            }
        }
        Ok(Flow::Next)
    }

    // ---- operand access ---------------------------------------------------------------------------------

    fn get(&self, op: &Operation, v: Value) -> Result<&Slot, InterpError> {
        match self.slots.get(v.index()) {
            Some(Slot::Unset) | None => Err(malformed(op, "uses a value that is not defined before it")),
            Some(slot) => Ok(slot),
        }
    }

    fn scalar(&self, op: &Operation, v: Value) -> Result<f64, InterpError> {
        match self.get(op, v)? {
            Slot::Scalar(x) => Ok(*x),
            _ => Err(malformed(op, "expects a scalar operand")),
        }
    }

    fn index(&self, op: &Operation, v: Value) -> Result<i64, InterpError> {
        Ok(self.scalar(op, v)? as i64)
    }

    fn indices(&self, op: &Operation, values: &[Value], rank: usize) -> Result<Vec<i64>, InterpError> {
        if values.is_empty() {
            return Ok(vec![0; rank]);
        }
        if values.len() != rank {
            return Err(malformed(op, format_args!("needs {rank} indices, found {}", values.len())));
        }
        values.iter().map(|&v| self.index(op, v)).collect()
    }

    /// A register tile or vector operand: its elements and its shape.
    fn tile(&self, op: &Operation, v: Value) -> Result<(Rc<Vec<f64>>, Vec<usize>), InterpError> {
        let shape = value_shape(self.body.ty(v)).ok_or_else(|| malformed(op, "expects a register tile operand"))?;
        match self.get(op, v)? {
            Slot::Tile(t) if t.len() == shape.iter().product::<usize>() => Ok((Rc::clone(t), shape)),
            _ => Err(malformed(op, "expects a register tile operand")),
        }
    }

    fn shared_buffer(&self, op: &Operation, v: Value) -> Result<usize, InterpError> {
        match self.get(op, v)? {
            Slot::Shared(i) => Ok(*i),
            _ => Err(malformed(op, "expects a shared tile operand")),
        }
    }

    fn result(&self, op: &Operation) -> Result<(Value, &'f Type), InterpError> {
        let r = op.result().ok_or_else(|| malformed(op, "has no result"))?;
        Ok((r, self.body.ty(r)))
    }

    fn set(&mut self, v: Value, slot: Slot) {
        self.slots[v.index()] = slot;
    }

    /// The tensor of a global tile operand.
    fn global_tensor(&self, op: &Operation, v: Value) -> Result<(usize, &TensorData), InterpError> {
        if let Slot::Global(i) = self.get(op, v)? {
            if let Some(ArgValue::Tensor(t)) = self.args.get(*i) {
                return Ok((*i, t));
            }
        }
        Err(malformed(op, "expects a global tile operand"))
    }

    // ---- ops ----------------------------------------------------------------------------------------------

    fn exec_op(&mut self, id: OpId) -> Result<Flow, InterpError> {
        let op = self.body.op(id);
        self.charge(OP_OVERHEAD, op.span)?;
        let typed = AnyOp::from_op(op).ok_or_else(|| malformed(op, "is malformed (run the verifier)"))?;
        match typed {
            AnyOp::Return(_) => return Ok(Flow::Return),
            // The interpreter runs a block's work in program order: nothing to wait for.
            AnyOp::TileBarrier(_) => {}
            AnyOp::Yield(y) => {
                let values = y.values.iter().map(|&v| self.get(op, v).cloned()).collect::<Result<_, _>>()?;
                return Ok(Flow::Yield(values));
            }
            AnyOp::For(f) => self.exec_for(op, &f)?,
            AnyOp::Constant(c) => {
                let (r, ty) = self.result(op)?;
                let elem = ty.as_scalar().ok_or_else(|| malformed(op, "produces a scalar"))?;
                let v = arith::cast(elem, elem, c.value.as_f64()).map_err(|e| arith_error(op, e))?;
                self.set(r, Slot::Scalar(v));
            }
            AnyOp::BlockId(typed::BlockId { dim }) | AnyOp::GridDim(typed::GridDim { dim }) => {
                let (r, _) = self.result(op)?;
                let of = if op.kind == OpKind::BlockId { self.block_id } else { self.grid };
                self.set(r, Slot::Scalar(f64::from(of[dim.index()])));
            }
            AnyOp::Dim(d) => {
                let (r, _) = self.result(op)?;
                let (_, tensor) = self.global_tensor(op, d.source)?;
                let shape = &tensor.shape;
                let n = shape.get(d.axis as usize).ok_or_else(|| malformed(op, "has an axis out of range"))?;
                let n = arith::wrap_int(ScalarType::Index, *n as i128).map_err(|e| arith_error(op, e))?;
                self.set(r, Slot::Scalar(n));
            }
            AnyOp::Add(typed::Add { lhs, rhs })
            | AnyOp::Sub(typed::Sub { lhs, rhs })
            | AnyOp::Mul(typed::Mul { lhs, rhs })
            | AnyOp::Div(typed::Div { lhs, rhs })
            | AnyOp::Rem(typed::Rem { lhs, rhs })
            | AnyOp::Min(typed::Min { lhs, rhs })
            | AnyOp::Max(typed::Max { lhs, rhs }) => self.exec_binary(op, lhs, rhs)?,
            view @ (crate::unary_math_view!()) => {
                let Some((f, source)) = UnaryMath::of_view(&view) else { return Err(malformed(op, "not a unary op")) };
                let (r, ty) = self.result(op)?;
                let elem = ty.element_type();
                let slot = match self.get(op, source)? {
                    Slot::Scalar(x) => Slot::Scalar(arith::unary(f, elem, *x)),
                    Slot::Tile(_) => {
                        let (t, _) = self.tile(op, source)?;
                        self.charge(t.len() as u64, op.span)?;
                        Slot::Tile(Rc::new(t.iter().map(|&x| arith::unary(f, elem, x)).collect()))
                    }
                    _ => return Err(malformed(op, "works on scalars and register tiles only")),
                };
                self.set(r, slot);
            }
            AnyOp::Cmp(c) => {
                let (r, _) = self.result(op)?;
                let slot = match (self.get(op, c.lhs)?, self.get(op, c.rhs)?) {
                    (Slot::Scalar(a), Slot::Scalar(b)) => Slot::Scalar(arith::compare(c.predicate, *a, *b)),
                    (Slot::Tile(_), Slot::Tile(_)) => {
                        let ((a, _), (b, _)) = (self.tile(op, c.lhs)?, self.tile(op, c.rhs)?);
                        self.charge(a.len() as u64, op.span)?;
                        Slot::Tile(Rc::new(a.iter().zip(b.iter()).map(|(&x, &y)| arith::compare(c.predicate, x, y)).collect()))
                    }
                    _ => return Err(malformed(op, "compares two scalars or two register tiles")),
                };
                self.set(r, slot);
            }
            AnyOp::Fma(f) => {
                let (r, _) = self.result(op)?;
                let slot = match (self.get(op, f.lhs)?, self.get(op, f.rhs)?, self.get(op, f.addend)?) {
                    (Slot::Scalar(a), Slot::Scalar(b), Slot::Scalar(c)) => Slot::Scalar(arith::fma(*a, *b, *c)),
                    (Slot::Tile(_), Slot::Tile(_), Slot::Tile(_)) => {
                        let ((a, sa), (b, sb), (c, sc)) = (self.tile(op, f.lhs)?, self.tile(op, f.rhs)?, self.tile(op, f.addend)?);
                        if sa != sb || sa != sc {
                            return Err(malformed(op, "needs operands of one shape"));
                        }
                        self.charge(a.len() as u64, op.span)?;
                        Slot::Tile(Rc::new(a.iter().zip(b.iter().zip(c.iter())).map(|(&x, (&y, &z))| arith::fma(x, y, z)).collect()))
                    }
                    _ => return Err(malformed(op, "needs three scalars or three register tiles")),
                };
                self.set(r, slot);
            }
            AnyOp::Select(s) => {
                let (r, _) = self.result(op)?;
                let slot = match self.get(op, s.cond)? {
                    Slot::Scalar(cond) => {
                        let chosen = if *cond != 0.0 { s.true_value } else { s.false_value };
                        self.get(op, chosen)?.clone()
                    }
                    // An i1 register tile chooses element by element.
                    Slot::Tile(_) => {
                        let ((c, _), (a, _), (b, _)) =
                            (self.tile(op, s.cond)?, self.tile(op, s.true_value)?, self.tile(op, s.false_value)?);
                        self.charge(c.len() as u64, op.span)?;
                        let out = c.iter().zip(a.iter().zip(b.iter())).map(|(&c, (&x, &y))| if c != 0.0 { x } else { y });
                        Slot::Tile(Rc::new(out.collect()))
                    }
                    _ => return Err(malformed(op, "needs an i1 scalar or an i1 register tile condition")),
                };
                self.set(r, slot);
            }
            AnyOp::ConvertLayout(c) => {
                // The layout says which thread holds what; the tile's values are the same.
                let (r, _) = self.result(op)?;
                let slot = match self.get(op, c.source)? {
                    slot @ Slot::Tile(_) => slot.clone(),
                    _ => return Err(malformed(op, "converts register tiles only")),
                };
                self.set(r, slot);
            }
            AnyOp::Cast(c) => {
                let (r, ty) = self.result(op)?;
                let to = ty.element_type();
                let source = c.source;
                let from = self.body.ty(source).element_type();
                let slot = match self.get(op, source)? {
                    Slot::Scalar(x) => Slot::Scalar(arith::cast(from, to, *x).map_err(|e| arith_error(op, e))?),
                    Slot::Tile(_) => {
                        let (t, _) = self.tile(op, source)?;
                        self.charge(t.len() as u64, op.span)?;
                        let out = t.iter().map(|&x| arith::cast(from, to, x)).collect::<Result<Vec<_>, _>>();
                        Slot::Tile(Rc::new(out.map_err(|e| arith_error(op, e))?))
                    }
                    _ => return Err(malformed(op, "casts scalars and register tiles only")),
                };
                self.set(r, slot);
            }
            AnyOp::Splat(_) | AnyOp::Fill(_) => {
                let (r, ty) = self.result(op)?;
                let shape = value_shape(ty).ok_or_else(|| malformed(op, "produces a register tile or a vector"))?;
                let x = match typed {
                    AnyOp::Splat(s) => self.scalar(op, s.value)?,
                    AnyOp::Fill(f) => f.value.as_f64(),
                    _ => return Err(malformed(op, "is neither a splat nor a fill")),
                };
                let n: usize = shape.iter().product();
                self.charge(n as u64, op.span)?;
                self.set(r, Slot::Tile(Rc::new(vec![round_to(ty.element_type(), x); n])));
            }
            AnyOp::AllocShared(_) => {
                let (r, _) = self.result(op)?;
                let buffer = self.shared_of_op[id.index()].ok_or_else(|| malformed(op, "was not allocated"))?;
                self.set(r, Slot::Shared(buffer));
            }
            AnyOp::CopyG2S(c) => self.exec_copy_g2s(op, &c)?,
            AnyOp::CopyS2R(c) => self.exec_copy_s2r(op, &c)?,
            AnyOp::CopyR2S(c) => self.exec_copy_r2s(op, &c)?,
            AnyOp::CopyR2G(c) => self.exec_copy_r2g(op, &c)?,
            AnyOp::Mma(m) => self.exec_mma(op, &m)?,
            AnyOp::Reduce(r) => self.exec_reduce(op, &r)?,
            AnyOp::Broadcast(b) => self.exec_broadcast(op, b.source)?,
            AnyOp::Iota(i) => self.exec_iota(op, i.axis)?,
            AnyOp::Transpose(t) => self.exec_transpose(op, t.source)?,
            AnyOp::Func(_) => return Err(malformed(op, "may only appear at the top level")),
            _ => return Err(InterpError::NvgpuOp { span: op.span, op: op.kind.name() }),
        }
        Ok(Flow::Next)
    }

    // ---- reductions, broadcasts, masks (issue 16) -----------------------------------------------------------

    /// `tile.reduce`: `max`/`min` exactly; `sum` of floats in f64 in index order, rounded once to the element
    /// type (the lowering adds in a tree in the element type: docs/math.md states the tolerance); integers wrap.
    fn exec_reduce(&mut self, op: &Operation, r: &typed::Reduce) -> Result<(), InterpError> {
        let (res, ty) = self.result(op)?;
        let elem = ty.element_type();
        let (t, shape) = self.tile(op, r.source)?;
        let axis = r.axis as usize;
        if axis >= shape.len() {
            return Err(malformed(op, "has an axis out of range"));
        }
        self.charge(t.len() as u64, op.span)?;
        let (outer, n, inner) = (shape[..axis].iter().product::<usize>(), shape[axis], shape[axis + 1..].iter().product::<usize>());
        let mut out = Vec::with_capacity(outer * inner);
        for o in 0..outer {
            for i in 0..inner {
                let xs = (0..n).map(|k| t[(o * n + k) * inner + i]);
                let v = match r.kind {
                    crate::ops::ReduceKind::Max => xs.fold(f64::NEG_INFINITY, f64::max),
                    crate::ops::ReduceKind::Min => xs.fold(f64::INFINITY, f64::min),
                    crate::ops::ReduceKind::Sum if elem.is_float() => round_to(elem, xs.sum::<f64>()),
                    crate::ops::ReduceKind::Sum => {
                        arith::wrap_int(elem, xs.map(|x| x as i128).sum::<i128>()).map_err(|e| arith_error(op, e))?
                    }
                };
                out.push(v);
            }
        }
        self.set(res, Slot::Tile(Rc::new(out)));
        Ok(())
    }

    /// `tile.broadcast`: element `i` of the result is the source's element at `i` with the repeated axes at 0.
    fn exec_broadcast(&mut self, op: &Operation, source: Value) -> Result<(), InterpError> {
        let (res, ty) = self.result(op)?;
        let out_shape = value_shape(ty).ok_or_else(|| malformed(op, "produces a register tile"))?;
        let (t, shape) = self.tile(op, source)?;
        if shape.len() != out_shape.len() {
            return Err(malformed(op, "changes the rank"));
        }
        let n: usize = out_shape.iter().product();
        self.charge(n as u64, op.span)?;
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let (mut rest, mut src, mut stride) = (i, 0usize, 1usize);
            for d in (0..out_shape.len()).rev() {
                let x = rest % out_shape[d];
                rest /= out_shape[d];
                if shape[d] != 1 {
                    src += x * stride;
                }
                stride *= shape[d];
            }
            out.push(t[src]);
        }
        self.set(res, Slot::Tile(Rc::new(out)));
        Ok(())
    }

    /// `tile.transpose`: element `(i, j)` of the result is element `(j, i)` of the source.
    fn exec_transpose(&mut self, op: &Operation, source: Value) -> Result<(), InterpError> {
        let (res, ty) = self.result(op)?;
        let out_shape = value_shape(ty).ok_or_else(|| malformed(op, "produces a register tile"))?;
        let (t, shape) = self.tile(op, source)?;
        if shape.len() != 2 || out_shape.len() != 2 || shape[0] != out_shape[1] || shape[1] != out_shape[0] {
            return Err(malformed(op, "exchanges the axes of a rank-2 tile"));
        }
        let (rows, cols) = (out_shape[0], out_shape[1]);
        self.charge((rows * cols) as u64, op.span)?;
        let mut out = Vec::with_capacity(rows * cols);
        for i in 0..rows {
            for j in 0..cols {
                out.push(t[j * rows + i]);
            }
        }
        self.set(res, Slot::Tile(Rc::new(out)));
        Ok(())
    }

    /// `tile.iota`: each element's index along `axis`.
    fn exec_iota(&mut self, op: &Operation, axis: u32) -> Result<(), InterpError> {
        let (res, ty) = self.result(op)?;
        let shape = value_shape(ty).ok_or_else(|| malformed(op, "produces a register tile"))?;
        let axis = axis as usize;
        if axis >= shape.len() {
            return Err(malformed(op, "has an axis out of range"));
        }
        let n: usize = shape.iter().product();
        self.charge(n as u64, op.span)?;
        let inner: usize = shape[axis + 1..].iter().product();
        let out = (0..n).map(|i| ((i / inner) % shape[axis]) as f64).collect();
        self.set(res, Slot::Tile(Rc::new(out)));
        Ok(())
    }

    fn exec_for(&mut self, op: &'f Operation, f: &typed::For) -> Result<(), InterpError> {
        let lower = self.index(op, f.lower)?;
        let upper = self.index(op, f.upper)?;
        let step = self.index(op, f.step)?;
        if step <= 0 {
            return Err(InterpError::NonPositiveStep { span: op.span, step });
        }
        let region = *op.regions.first().ok_or_else(|| malformed(op, "needs a body"))?;
        let args = &self.body.block(region).args;
        let inits = &f.inits;
        if args.len() != inits.len() + 1 || op.results.len() != inits.len() {
            return Err(malformed(op, "needs one body argument per iter_arg plus the induction variable"));
        }
        if self.depth >= MAX_LOOP_DEPTH {
            return Err(InterpError::Unsupported { span: op.span, message: format!("loops nest deeper than {MAX_LOOP_DEPTH}") });
        }
        let mut carried: Vec<Slot> = inits.iter().map(|&v| self.get(op, v).cloned()).collect::<Result<_, _>>()?;
        self.depth += 1;
        let mut iv = lower;
        while iv < upper {
            self.charge(OP_OVERHEAD, op.span)?;
            self.set(args[0], Slot::Scalar(iv as f64));
            for (&arg, slot) in args[1..].iter().zip(carried.drain(..)) {
                self.set(arg, slot);
            }
            match self.exec_block(region)? {
                Flow::Yield(values) if values.len() == inits.len() => carried = values,
                _ => {
                    self.depth -= 1;
                    return Err(malformed(op, "body must end with a 'tile.yield' of every loop-carried value"));
                }
            }
            match iv.checked_add(step) {
                Some(next) => iv = next,
                None => break,
            }
        }
        self.depth -= 1;
        for (&r, slot) in op.results.iter().zip(carried) {
            self.set(r, slot);
        }
        Ok(())
    }

    fn exec_binary(&mut self, op: &Operation, lhs: Value, rhs: Value) -> Result<(), InterpError> {
        let (r, ty) = self.result(op)?;
        let elem = ty.element_type();
        let slot = match (self.get(op, lhs)?, self.get(op, rhs)?) {
            (Slot::Scalar(a), Slot::Scalar(b)) => Slot::Scalar(arith::binary(op.kind, elem, *a, *b).map_err(|e| arith_error(op, e))?),
            (Slot::Tile(_), Slot::Tile(_)) => {
                let ((a, sa), (b, sb)) = (self.tile(op, lhs)?, self.tile(op, rhs)?);
                if sa != sb || value_shape(ty).as_ref() != Some(&sa) {
                    return Err(malformed(op, "needs operands and result of one shape"));
                }
                self.charge(a.len() as u64, op.span)?;
                let mut out = Vec::with_capacity(a.len());
                for (&x, &y) in a.iter().zip(b.iter()) {
                    out.push(arith::binary(op.kind, elem, x, y).map_err(|e| arith_error(op, e))?);
                }
                Slot::Tile(Rc::new(out))
            }
            _ => return Err(malformed(op, "needs two scalars or two register tiles")),
        };
        self.set(r, slot);
        Ok(())
    }

    fn exec_copy_g2s(&mut self, op: &Operation, copy: &typed::CopyG2S) -> Result<(), InterpError> {
        let (g, tensor) = self.global_tensor(op, copy.src)?;
        let s = self.shared_buffer(op, copy.dst)?;
        let shape = self.shared_shapes[s].clone();
        let offset = self.indices(op, &copy.src_indices, tensor.shape.len())?;
        let window = slice_window(op, offset.len(), &shape)?;
        self.charge(self.shared[s].len() as u64, op.span)?;
        let ArgValue::Tensor(t) = &self.args[g] else { return Err(malformed(op, "expects a global tile operand")) };
        let zeros = vec![0; window.len()];
        copy_window(&t.values, &t.shape, &offset, &mut self.shared[s], &window, &zeros, &window);
        Ok(())
    }

    fn exec_copy_s2r(&mut self, op: &Operation, copy: &typed::CopyS2R) -> Result<(), InterpError> {
        let (r, ty) = self.result(op)?;
        let window = value_shape(ty).ok_or_else(|| malformed(op, "produces a register tile"))?;
        let s = self.shared_buffer(op, copy.src)?;
        let shape = self.shared_shapes[s].clone();
        let offset = self.indices(op, &copy.src_indices, shape.len())?;
        if !window_inside(&shape, &offset, &window) {
            return Err(self.out_of_bounds(op, &offset, &window, s));
        }
        let mut out = vec![0.0; window.iter().product()];
        self.charge(out.len() as u64, op.span)?;
        let zeros = vec![0; window.len()];
        copy_window(&self.shared[s], &shape, &offset, &mut out, &window, &zeros, &window);
        self.set(r, Slot::Tile(Rc::new(out)));
        Ok(())
    }

    fn exec_copy_r2s(&mut self, op: &Operation, copy: &typed::CopyR2S) -> Result<(), InterpError> {
        let (value, window) = self.tile(op, copy.value)?;
        let s = self.shared_buffer(op, copy.dst)?;
        let shape = self.shared_shapes[s].clone();
        let offset = self.indices(op, &copy.dst_indices, shape.len())?;
        if !window_inside(&shape, &offset, &window) {
            return Err(self.out_of_bounds(op, &offset, &window, s));
        }
        self.charge(value.len() as u64, op.span)?;
        let zeros = vec![0; window.len()];
        copy_window(&value, &window, &zeros, &mut self.shared[s], &shape, &offset, &window);
        Ok(())
    }

    fn exec_copy_r2g(&mut self, op: &Operation, copy: &typed::CopyR2G) -> Result<(), InterpError> {
        let (value, window) = self.tile(op, copy.value)?;
        let (g, tensor) = self.global_tensor(op, copy.dst)?;
        let offset = self.indices(op, &copy.dst_indices, tensor.shape.len())?;
        let window = slice_window(op, offset.len(), &window)?;
        self.charge(value.len() as u64, op.span)?;
        let ArgValue::Tensor(t) = &mut self.args[g] else { return Err(malformed(op, "expects a global tile operand")) };
        let zeros = vec![0; window.len()];
        copy_window(&value, &window, &zeros, &mut t.values, &t.shape, &offset, &window);
        Ok(())
    }

    fn out_of_bounds(&self, op: &Operation, offset: &[i64], window: &[usize], s: usize) -> InterpError {
        InterpError::OutOfBounds {
            span: op.span,
            op: op.kind.name(),
            offset: format!("{offset:?}"),
            window: show_shape(window),
            shape: show_shape(&self.shared_shapes[s]),
        }
    }

    fn exec_mma(&mut self, op: &Operation, mma: &typed::Mma) -> Result<(), InterpError> {
        let (r, _) = self.result(op)?;
        let (av, bv, cv) = (mma.a, mma.b, mma.c);
        let ((a, sa), (b, sb), (c, sc)) = (self.tile(op, av)?, self.tile(op, bv)?, self.tile(op, cv)?);
        let (&[m, k], &[k2, n], &[m2, n2]) = (sa.as_slice(), sb.as_slice(), sc.as_slice()) else {
            return Err(malformed(op, "needs rank-2 operands"));
        };
        if k != k2 || m != m2 || n != n2 {
            return Err(malformed(op, format_args!("shapes do not chain: {m}x{k} * {k2}x{n} + {m2}x{n2}")));
        }
        let (ea, eb, ec) = (self.body.ty(av).element_type(), self.body.ty(bv).element_type(), self.body.ty(cv).element_type());
        let acc = Accumulation::of(ea, ec)
            .filter(|_| ea == eb || ea.is_integer() && eb.is_integer() && ea.bit_width() == eb.bit_width())
            .ok_or_else(|| malformed(op, format_args!("does not support {ea} x {eb} inputs with a {ec} accumulator")))?;
        let work = (m as u128 * n as u128 * k as u128).max((m * n) as u128);
        self.charge(u64::try_from(work).unwrap_or(u64::MAX), op.span)?;
        let d = mma::mma(acc, &a, ea, &b, eb, &c, (m, n, k));
        self.set(r, Slot::Tile(Rc::new(d)));
        Ok(())
    }
}

/// The window of a copy between a global tile of rank `global_rank` and a tile of shape `shape`, as a window
/// of the global tile: `shape` with extent 1 along the leading axes a rank-reducing copy's leading indices
/// pick (`%A[%b, %m0, %k0]` of a rank-3 `%A` into a 128x32 tile: 1x128x32). Its elements are the same, in the
/// same row-major order, as `shape`'s.
///
/// A 1-D global tile and a `1xN` or `Mx1` tile (a vector copy): the tile's first axis of extent 1 is dropped
/// (`[N]` or `[M]`), the same elements in the same order.
fn slice_window(op: &Operation, global_rank: usize, shape: &[usize]) -> Result<Vec<usize>, InterpError> {
    if global_rank == 1 && shape.len() == 2 {
        if let Some(unit) = shape.iter().position(|&n| n == 1) {
            return Ok(vec![shape[1 - unit]]);
        }
    }
    if global_rank < shape.len() {
        return Err(malformed(op, "copies between a global tile and a tile of higher rank"));
    }
    let mut window = vec![1; global_rank - shape.len()];
    window.extend_from_slice(shape);
    Ok(window)
}
