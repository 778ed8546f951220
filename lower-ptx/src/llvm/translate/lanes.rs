//! Per-thread vectors as their lanes.
//!
//! An nvgpu `vector<…>` is, in this backend, the list of its lanes in row-major order ([`Lanes`]). A lane is
//! a scalar LLVM value, or a part of an LLVM value that holds several lanes: a register an intrinsic returned
//! (an `ldmatrix` `i32` word of two f16, an `mma.sync` `<2 x half>`, its f32s are lanes of their own) or a
//! whole LLVM vector (a load, an elementwise op's result, a loop's `phi`). Taking lanes apart
//! (`nvgpu.extract`, an `mma.sync` operand, regrouping registers with `nvgpu.insert`) emits nothing; an LLVM
//! value of some shape is made only where an instruction reads one ([`FuncTranslator::gather`]), and when
//! the lanes it needs are exactly one value's, that value is used as it is (bit-cast at most). So the
//! `mma.sync` chain through an accumulator, the `ldmatrix` registers an `mma.sync` reads and the fragments
//! `nvgpu.extract`/`insert` regroup pass registers along, without the `insertelement`s, `extractelement`s
//! and `shufflevector`s that LLVM would otherwise fold away again.
//!
//! The machine code is the one the ops define, made with fewer instructions: a vector that some op reads
//! whole (a store, an elementwise op, a loop carrying it as a vector `phi`) is built where it is defined, by
//! `insertelement`s where `nvgpu.insert` builds it, from lanes `nvgpu.extract` takes where it takes them
//! ([`read_whole`]); an `mma.sync` operand that is not one value's lanes is taken from its whole vector (a
//! shuffle, an element, a word of a bit cast). LLVM then sees the instructions it used to see, in the same
//! order, less the packing and unpacking between intrinsics, and emits the same PTX (`scripts/ptx-snapshot.sh`
//! shows every example byte-identical; vector phis and build order matter to NVPTX's register numbering).
//!
//! Values made for an instruction (bit casts, gathered registers, extracted lanes) are reused within their
//! block, where they dominate every later use.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use inkwell::basic_block::BasicBlock;
use inkwell::types::{AsTypeRef, BasicTypeEnum, VectorType};
use inkwell::values::{BasicValue, BasicValueEnum, VectorValue};

use tilec_ir::body::{Func, Operation, Value};
use tilec_ir::types::Type;
use tilec_ir::OpKind;

use super::func::FuncTranslator;
use super::Result;
use crate::llvm::FragmentRegister;

/// One lane of a per-thread vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Lane<'ctx> {
    /// A scalar LLVM value of the lane's type.
    Scalar(BasicValueEnum<'ctx>),
    /// Lane `index` of `of`, an LLVM value that holds several lanes of type `elem` (the raw type of `elem`
    /// is its LLVM type reference, so the lane can be a hash key).
    Part { of: BasicValueEnum<'ctx>, index: u32, elem: TypeKey },
}

/// An LLVM type as a hash key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct TypeKey(usize);

impl TypeKey {
    fn of(ty: BasicTypeEnum<'_>) -> TypeKey {
        TypeKey(ty.as_type_ref() as usize)
    }
}

/// A per-thread vector: its lanes and the flat LLVM vector type they make (`<N*M x T>`).
#[derive(Clone, Debug)]
pub(super) struct Lanes<'ctx> {
    pub ty: VectorType<'ctx>,
    pub lanes: Vec<Lane<'ctx>>,
}

impl<'ctx> Lanes<'ctx> {
    /// The lanes of the LLVM vector `v`.
    pub fn of_vector(v: VectorValue<'ctx>) -> Lanes<'ctx> {
        let ty = v.get_type();
        let elem = TypeKey::of(ty.get_element_type());
        let of = v.as_basic_value_enum();
        Lanes { ty, lanes: (0..ty.get_size()).map(|index| Lane::Part { of, index, elem }).collect() }
    }

    /// The lanes of the vector type `ty` held by `registers` in order, each of as many lanes as its bits hold
    /// (a register of the element type is one lane).
    pub fn of_registers(ty: VectorType<'ctx>, registers: &[BasicValueEnum<'ctx>]) -> Lanes<'ctx> {
        let elem_ty = ty.get_element_type();
        let elem = TypeKey::of(elem_ty);
        let mut lanes = Vec::with_capacity(ty.get_size() as usize);
        for &r in registers {
            if r.get_type() == elem_ty {
                lanes.push(Lane::Scalar(r));
            } else {
                let count = bits(r.get_type()) / bits(elem_ty).max(1);
                lanes.extend((0..count).map(|index| Lane::Part { of: r, index, elem }));
            }
        }
        Lanes { ty, lanes }
    }

    /// The element type.
    pub fn elem(&self) -> BasicTypeEnum<'ctx> {
        self.ty.get_element_type()
    }
}

/// The LLVM value of an IR register value.
#[derive(Clone, Debug)]
pub(super) enum Lowered<'ctx> {
    /// A scalar (an `nvgpu.extract` result stays the lane it took).
    Scalar(Lane<'ctx>),
    /// A per-thread vector.
    Vector(Lanes<'ctx>),
}

impl<'ctx> From<BasicValueEnum<'ctx>> for Lowered<'ctx> {
    /// A scalar, or an LLVM vector's lanes.
    fn from(x: BasicValueEnum<'ctx>) -> Self {
        match x {
            BasicValueEnum::VectorValue(v) => Lowered::Vector(Lanes::of_vector(v)),
            x => Lowered::Scalar(Lane::Scalar(x)),
        }
    }
}

/// The values some op of `func` reads as an LLVM value: every vector operand except those of the ops that
/// read lanes or registers (`nvgpu.extract`/`insert`, `mma.sync`, `stmatrix`, `warpgroup.mma`) and of the
/// loops that carry them (`tile.for`, `tile.yield`), and every scalar operand except an inserted lane.
pub(super) fn read_whole(func: &Func) -> HashSet<Value> {
    let body = &func.body;
    let mut whole = HashSet::default();
    let mut ops = Vec::new();
    body.walk(func.entry, &mut |id| ops.push(id));
    for &id in &ops {
        let op = body.op(id);
        let vectors_by_lanes =
            matches!(op.kind, OpKind::Extract | OpKind::Insert | OpKind::MmaSync | OpKind::StMatrix | OpKind::WarpgroupMma);
        for &v in &op.operands {
            let by_lanes = match body.ty(v) {
                Type::Vector(_) => vectors_by_lanes,
                _ => op.kind == OpKind::Insert,
            };
            if !by_lanes {
                whole.insert(v);
            }
        }
    }
    // Backwards: an insert into a vector read whole, and the extract of a lane read whole, work on whole vectors.
    for &id in ops.iter().rev() {
        let op = body.op(id);
        if matches!(op.kind, OpKind::Insert | OpKind::Extract) && op.results.iter().any(|r| whole.contains(r)) {
            whole.extend(op.operands.iter().copied());
        }
    }
    whole
}

/// The bits of an integer, float or vector type (0 for others).
pub(super) fn bits(ty: BasicTypeEnum<'_>) -> u32 {
    match ty {
        BasicTypeEnum::IntType(i) => i.get_bit_width(),
        BasicTypeEnum::FloatType(f) => {
            let cx = f.get_context();
            if f == cx.f64_type() {
                64
            } else if f == cx.f32_type() {
                32
            } else {
                16
            }
        }
        BasicTypeEnum::VectorType(v) => v.get_size() * bits(v.get_element_type()),
        _ => 0,
    }
}

/// The values made for instructions, by block (see the module doc).
#[derive(Default)]
pub(super) struct Made<'ctx> {
    /// `(value, type, block)` → the value bit-cast to the type.
    views: HashMap<(BasicValueEnum<'ctx>, TypeKey, BasicBlock<'ctx>), BasicValueEnum<'ctx>>,
    /// `(lane, type, block)` → the value of that type the lane makes (one lane: no allocated key).
    gathered_one: HashMap<(Lane<'ctx>, TypeKey, BasicBlock<'ctx>), BasicValueEnum<'ctx>>,
    /// `(lanes, type, block)` → the value of that type the lanes make.
    gathered: HashMap<(Vec<Lane<'ctx>>, TypeKey, BasicBlock<'ctx>), BasicValueEnum<'ctx>>,
}

impl<'ctx> FuncTranslator<'_, 'ctx> {
    /// The lanes of the vector operand `v` of `op`.
    pub(super) fn lanes(&self, op: &Operation, v: Value) -> Result<Lanes<'ctx>> {
        match self.lowered(op, v)? {
            Lowered::Vector(lanes) => Ok(lanes),
            Lowered::Scalar(_) => Err(self.kernel.unsupported(op, "an operand must be a vector")),
        }
    }

    /// The lanes of `lanes` as `count` registers of kind `register` (an `mma.sync`'s or `stmatrix`'s operand).
    pub(super) fn fragment_registers(
        &self,
        op: &Operation,
        lanes: &Lanes<'ctx>,
        register: FragmentRegister,
        count: u32,
    ) -> Result<Vec<BasicValueEnum<'ctx>>> {
        let elem = lanes.elem();
        let register_ty = register.llvm_type(self.cx);
        let per = bits(register_ty) / bits(elem).max(1);
        let fits = match register {
            FragmentRegister::F16x2 => elem == self.cx.f16_type().into(),
            FragmentRegister::F32 => elem == self.cx.f32_type().into(),
            FragmentRegister::I32 => bits(elem) > 0,
        } && per > 0
            && lanes.lanes.len() as u32 == per * count;
        if !fits {
            return Err(self.kernel.unsupported(
                op,
                format!("a fragment of type {} does not fill {count} {register:?} registers", lanes.ty.print_to_string()),
            ));
        }
        // A register that is one value's lanes is that value; the others are taken from the whole vector (a
        // shuffle, an element, or a word of its bit cast).
        let mut whole: Option<Lanes<'ctx>> = None;
        let mut registers = Vec::with_capacity(count as usize);
        for (i, chunk) in lanes.lanes.chunks(per as usize).enumerate() {
            if one_source(chunk).is_some() || matches!(chunk, [Lane::Scalar(x)] if x.get_type() == register_ty) {
                registers.push(self.gather(elem, chunk, register_ty)?);
                continue;
            }
            if whole.is_none() {
                let w = self.gather(elem, &lanes.lanes, lanes.ty.into())?.into_vector_value();
                whole = Some(Lanes::of_vector(w));
            }
            let parts = whole.as_ref().map(|w| &w.lanes[i * per as usize..(i + 1) * per as usize]).unwrap_or(&[]);
            registers.push(self.gather(elem, parts, register_ty)?);
        }
        Ok(registers)
    }

    /// The scalar LLVM value of `lane` (of type `elem`).
    pub(super) fn lane_value(&self, elem: BasicTypeEnum<'ctx>, lane: Lane<'ctx>) -> Result<BasicValueEnum<'ctx>> {
        match lane {
            Lane::Scalar(x) => Ok(x),
            Lane::Part { .. } => self.gather(elem, &[lane], elem),
        }
    }

    /// The LLVM value of type `ty` that `lanes` (of type `elem`) make, in order: the value they are the parts
    /// of where they are all of one (bit-cast to `ty` if need be), else built from the lanes.
    pub(super) fn gather(&self, elem: BasicTypeEnum<'ctx>, lanes: &[Lane<'ctx>], ty: BasicTypeEnum<'ctx>) -> Result<BasicValueEnum<'ctx>> {
        if let [Lane::Scalar(x)] = lanes {
            if x.get_type() == ty {
                return Ok(*x);
            }
        }
        let block = self.block()?;
        if let [lane] = lanes {
            let key = (*lane, TypeKey::of(ty), block);
            if let Some(x) = self.made.borrow().gathered_one.get(&key) {
                return Ok(*x);
            }
            let x = self.gather_new(elem, lanes, ty)?;
            self.made.borrow_mut().gathered_one.insert(key, x);
            return Ok(x);
        }
        let key = (lanes.to_vec(), TypeKey::of(ty), block);
        if let Some(x) = self.made.borrow().gathered.get(&key) {
            return Ok(*x);
        }
        let x = self.gather_new(elem, lanes, ty)?;
        self.made.borrow_mut().gathered.insert(key, x);
        Ok(x)
    }

    fn gather_new(&self, elem: BasicTypeEnum<'ctx>, lanes: &[Lane<'ctx>], ty: BasicTypeEnum<'ctx>) -> Result<BasicValueEnum<'ctx>> {
        let b = &self.builder;
        let i32_ty = self.cx.i32_type();
        let n = lanes.len() as u32;
        if let Some((of, first)) = one_source(lanes) {
            let of_ty = of.get_type();
            let of_vector = match of_ty {
                BasicTypeEnum::VectorType(v) if v.get_element_type() == elem => Some(v),
                _ => None,
            };
            let held = match of_vector {
                Some(v) => v.get_size(),
                None => bits(of_ty) / bits(elem).max(1),
            };
            if first == 0 && n == held && bits(ty) == bits(of_ty) {
                return self.view(of, ty);
            }
            match (of_vector, ty) {
                // One lane of a register: its view as a vector of lanes, then the element.
                (None, _) if n == 1 && ty == elem && held > 0 => {
                    let lanes_ty = vector_of(elem, held)?;
                    let view = self.view(of, lanes_ty.into())?.into_vector_value();
                    return Ok(b.build_extract_element(view, i32_ty.const_int(u64::from(first), false), "")?);
                }
                (Some(_), _) if n == 1 && ty == elem => {
                    return Ok(b.build_extract_element(of.into_vector_value(), i32_ty.const_int(u64::from(first), false), "")?);
                }
                // A run of a vector's lanes as a shorter vector: a shuffle.
                (Some(_), BasicTypeEnum::VectorType(t)) if t.get_element_type() == elem && t.get_size() == n => {
                    let mask: Vec<_> = (first..first + n).map(|i| i32_ty.const_int(u64::from(i), false)).collect();
                    let mask = VectorType::const_vector(&mask);
                    let poison = of_ty.into_vector_type().get_poison();
                    return Ok(b.build_shuffle_vector(of.into_vector_value(), poison, mask, "")?.into());
                }
                // A 32-bit word of a vector's lanes: the vector as words, then the word.
                (Some(_), BasicTypeEnum::IntType(t))
                    if t.get_bit_width() == 32 && n * bits(elem) == 32 && (first * bits(elem)).is_multiple_of(32) && bits(of_ty).is_multiple_of(32) =>
                {
                    let words = self.view(of, i32_ty.vec_type(bits(of_ty) / 32).into())?.into_vector_value();
                    let index = i32_ty.const_int(u64::from(first * bits(elem) / 32), false);
                    return Ok(b.build_extract_element(words, index, "")?);
                }
                _ => {}
            }
        }
        // Lanes that are whole 32-bit registers (an intrinsic's words, `<2 x half>`s): the registers as `i32`s
        // inserted into an `<k x i32>`, bit-cast to `ty`.
        let per_word = 32 / bits(elem).max(1);
        if bits(elem) < 32 && n > per_word && n.is_multiple_of(per_word) {
            let words: Option<Vec<BasicValueEnum<'ctx>>> = lanes
                .chunks(per_word as usize)
                .map(|chunk| match one_source(chunk) {
                    Some((of, 0)) if bits(of.get_type()) == 32 && !matches!(of.get_type(), BasicTypeEnum::VectorType(v) if v.get_size() != per_word) => Some(of),
                    _ => None,
                })
                .collect();
            if let Some(words) = words {
                let mut v = i32_ty.vec_type(n / per_word).get_poison();
                for (i, word) in words.into_iter().enumerate() {
                    let word = self.view(word, i32_ty.into())?;
                    v = b.build_insert_element(v, word, i32_ty.const_int(i as u64, false), "")?;
                }
                return self.view(v.into(), ty);
            }
        }
        // Any other lanes: inserted one by one into a vector of the lanes' type, bit-cast to `ty`.
        let vector_ty = vector_of(elem, n)?;
        let mut v = vector_ty.get_poison();
        for (i, &lane) in lanes.iter().enumerate() {
            let x = self.lane_value(elem, lane)?;
            v = b.build_insert_element(v, x, i32_ty.const_int(i as u64, false), "")?;
        }
        self.view(v.into(), ty)
    }

    /// `x` bit-cast to `ty` (`x` itself if it has that type).
    pub(super) fn view(&self, x: BasicValueEnum<'ctx>, ty: BasicTypeEnum<'ctx>) -> Result<BasicValueEnum<'ctx>> {
        if x.get_type() == ty {
            return Ok(x);
        }
        let key = (x, TypeKey::of(ty), self.block()?);
        if let Some(view) = self.made.borrow().views.get(&key) {
            return Ok(*view);
        }
        let view = self.builder.build_bit_cast(x, ty, "")?;
        self.made.borrow_mut().views.insert(key, view);
        Ok(view)
    }

    /// The block the builder is in.
    fn block(&self) -> Result<BasicBlock<'ctx>> {
        self.builder.get_insert_block().ok_or_else(|| super::internal("an insertion block"))
    }
}

/// The value all of `lanes` are consecutive parts of, and the first one's index.
fn one_source<'ctx>(lanes: &[Lane<'ctx>]) -> Option<(BasicValueEnum<'ctx>, u32)> {
    let Some(Lane::Part { of, index: first, .. }) = lanes.first().copied() else {
        return None;
    };
    let consecutive = lanes.iter().enumerate().all(|(i, lane)| match *lane {
        Lane::Part { of: o, index, .. } => o == of && index == first + i as u32,
        Lane::Scalar(_) => false,
    });
    consecutive.then_some((of, first))
}

/// The vector type `<n x elem>`.
fn vector_of(elem: BasicTypeEnum<'_>, n: u32) -> Result<VectorType<'_>> {
    match elem {
        BasicTypeEnum::IntType(t) => Ok(t.vec_type(n)),
        BasicTypeEnum::FloatType(t) => Ok(t.vec_type(n)),
        _ => Err(super::internal("vector lanes are integers or floats")),
    }
}
