//! Emitting ops during lowering: at the current op, or hoisted to the top of the function (thread ids,
//! constants, and the lane/warp terms of addresses, which do not change during a kernel).

use tilec_ir::ops::{CmpPredicate, GridAxis, Literal};
use tilec_ir::{typed, OpId, OpSpec, ScalarType, Type, TypedOp, Value, VectorType};

use super::Lowering;
use tilec_ir::ops::BinaryArith;

impl<'f> Lowering<'f> {
    /// Creates an op before the op being lowered.
    pub fn emit(&mut self, spec: OpSpec) -> OpId {
        let spec = spec.span(self.span);
        let id = self.func.body.create_op(spec);
        self.func.body.insert_before(self.at, id);
        id
    }

    pub fn emit_value(&mut self, spec: OpSpec) -> Value {
        let id = self.emit(spec);
        self.func.body.op(id).results[0]
    }

    /// Creates a one-result op at the top of the function body (after the ops hoisted before); returns its result.
    pub fn hoist_value(&mut self, spec: OpSpec) -> Value {
        let id = self.hoist_op(spec);
        self.func.body.op(id).results[0]
    }

    /// Creates an op at the top of the function body (after the ops hoisted before).
    pub fn hoist_op(&mut self, spec: OpSpec) -> OpId {
        let entry = self.func.entry;
        let id = self.func.body.create_op(spec);
        self.func.body.block_mut(entry).ops.insert(self.hoist_pos, id);
        self.func.body.op_mut(id).parent = Some(entry);
        self.hoist_pos += 1;
        id
    }

    /// An `index` constant (hoisted, one per value).
    pub fn index(&mut self, n: i64) -> Value {
        if let Some(&v) = self.constants.get(&(n, false)) {
            return v;
        }
        let v = self.hoist_value(typed::Constant { value: Literal::Int(n) }.into_spec().result(Type::INDEX));
        self.constants.insert((n, false), v);
        v
    }

    /// An `i1` constant (hoisted).
    pub fn bool_const(&mut self, b: bool) -> Value {
        if let Some(&v) = self.constants.get(&(b as i64, true)) {
            return v;
        }
        let v = self.hoist_value(typed::Constant { value: Literal::Bool(b) }.into_spec().result(ScalarType::I1));
        self.constants.insert((b as i64, true), v);
        v
    }

    /// `nvgpu.thread_id x` (hoisted, once).
    pub fn thread_id(&mut self) -> Value {
        self.special(typed::ThreadId { dim: GridAxis::X })
    }

    /// `nvgpu.lane_id` (hoisted, once).
    pub fn lane_id(&mut self) -> Value {
        self.special(typed::LaneId {})
    }

    /// `nvgpu.warp_id` (hoisted, once).
    pub fn warp_id(&mut self) -> Value {
        self.special(typed::WarpId {})
    }

    /// An id op of the thread (hoisted, once per kind).
    fn special<T: TypedOp>(&mut self, op: T) -> Value {
        if let Some(&v) = self.special.get(&T::KIND) {
            return v;
        }
        let v = self.hoist_value(op.into_spec().result(Type::INDEX));
        self.special.insert(T::KIND, v);
        v
    }

    /// A binary op on values of one type.
    pub fn binary(&mut self, op: BinaryArith, a: Value, b: Value) -> Value {
        let ty = self.ty(a).clone();
        self.emit_value(op.spec(a, b).result(ty))
    }

    pub(super) fn hoisted_binary(&mut self, op: BinaryArith, a: Value, b: Value) -> Value {
        let ty = self.ty(a).clone();
        self.hoist_value(op.spec(a, b).result(ty))
    }

    /// `a + n` (no op when `n` is 0).
    pub fn add_const(&mut self, a: Value, n: i64) -> Value {
        if n == 0 {
            return a;
        }
        let c = self.index(n);
        self.binary(BinaryArith::Add, a, c)
    }

    pub fn cmp(&mut self, predicate: CmpPredicate, lhs: Value, rhs: Value) -> Value {
        self.emit_value(typed::Cmp { lhs, rhs, predicate }.into_spec().result(ScalarType::I1))
    }

    /// Logical and of two `i1` values (`tile.min`).
    pub fn and(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryArith::Min, a, b)
    }

    pub fn select(&mut self, cond: Value, true_value: Value, false_value: Value) -> Value {
        let ty = self.ty(true_value).clone();
        self.emit_value(typed::Select { cond, true_value, false_value }.into_spec().result(ty))
    }

    /// Logical not of an `i1` value.
    pub fn not(&mut self, a: Value) -> Value {
        let (t, f) = (self.bool_const(true), self.bool_const(false));
        self.select(a, f, t)
    }

    /// `Σ_b ((x >> b) & 1) * bases[b]` for the row and col components, hoisted and cached: the part of a
    /// coordinate that a lane or warp id contributes through an additive layout.
    pub fn bit_terms(&mut self, x: Value, bases: &[(u32, u32)]) -> (Value, Value) {
        let key = (x, bases.to_vec());
        if let Some(&v) = self.bit_terms.get(&key) {
            return v;
        }
        let zero = self.index(0);
        let (mut row, mut col) = (zero, zero);
        for (b, &(br, bc)) in bases.iter().enumerate() {
            if br == 0 && bc == 0 {
                continue;
            }
            let shifted = if b == 0 {
                x
            } else {
                let d = self.index(1 << b);
                self.hoisted_binary(BinaryArith::Div, x, d)
            };
            let two = self.index(2);
            let bit = self.hoisted_binary(BinaryArith::Rem, shifted, two);
            for (acc, scale) in [(&mut row, br), (&mut col, bc)] {
                if scale == 0 {
                    continue;
                }
                let term = if scale == 1 {
                    bit
                } else {
                    let s = self.index(scale as i64);
                    self.hoisted_binary(BinaryArith::Mul, bit, s)
                };
                *acc = if *acc == zero { term } else { self.hoisted_binary(BinaryArith::Add, *acc, term) };
            }
        }
        self.bit_terms.insert(key, (row, col));
        (row, col)
    }

    /// The lane and warp part of the coordinates of an additive distributed layout (hoisted).
    pub fn thread_coords(&mut self, lane_bases: &[(u32, u32)], warp_bases: &[(u32, u32)]) -> (Value, Value) {
        let lane = self.lane_id();
        let (lr, lc) = self.bit_terms(lane, lane_bases);
        if warp_bases.iter().all(|&b| b == (0, 0)) {
            return (lr, lc);
        }
        let warp = self.warp_id();
        let (wr, wc) = self.bit_terms(warp, warp_bases);
        let zero = self.index(0);
        let row = if wr == zero { lr } else { self.hoisted_binary(BinaryArith::Add, lr, wr) };
        let col = if wc == zero { lc } else { self.hoisted_binary(BinaryArith::Add, lc, wc) };
        (row, col)
    }

    pub fn extract(&mut self, vector: Value, position: Vec<u32>) -> Value {
        let elem = self.ty(vector).element_type();
        self.emit_value(typed::Extract { vector, position }.into_spec().result(elem))
    }

    pub fn insert(&mut self, value: Value, vector: Value, position: Vec<u32>) -> Value {
        let ty = self.ty(vector).clone();
        self.emit_value(typed::Insert { value, vector, position }.into_spec().result(ty))
    }

    /// `tile.fill 0` of a vector type.
    pub fn zero_vector(&mut self, ty: VectorType) -> Value {
        self.emit_value(typed::Fill { value: Literal::Int(0) }.into_spec().result(ty))
    }
}
