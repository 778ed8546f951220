//! The IR's data structures: a [`Module`] of [`Func`]s; each function owns a [`Body`], an arena of values,
//! operations and blocks addressed by small copyable ids (as in naga's `Handle<T>` and pliron's arenas).
//!
//! Regions are single blocks (structured control flow only): a `tile.for` has one body block whose
//! arguments are the induction variable and the loop-carried values; a function's entry block has the
//! function's arguments.

use std::collections::BTreeMap;

use crate::attr::{AttrMap, Attribute};
use crate::diag::Span;
use crate::ops::{OpKind, TypedOp};
use crate::types::Type;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);

        impl $name {
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id_type!(
    /// An SSA value of a [`Body`].
    Value
);
id_type!(
    /// An operation of a [`Body`].
    OpId
);
id_type!(
    /// A block of a [`Body`].
    BlockId
);

/// Where a value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueDef {
    /// The `index`-th argument of a block.
    BlockArg { block: BlockId, index: u32 },
    /// The `index`-th result of an operation.
    OpResult { op: OpId, index: u32 },
}

/// A value's type, definition, and (when it came from text) its name and location.
#[derive(Clone, Debug)]
pub struct ValueData {
    pub ty: Type,
    pub def: ValueDef,
    /// The name the value had in the source (`%acc` → `acc`), used by the printer when unique.
    pub name: Option<String>,
    pub span: Span,
}

/// One operation.
#[derive(Clone, Debug)]
pub struct Operation {
    pub kind: OpKind,
    /// All operands, flattened; `segments[g]` says how many belong to operand group `g` of the op's definition.
    pub operands: Vec<Value>,
    pub segments: Vec<u32>,
    pub results: Vec<Value>,
    pub attrs: AttrMap,
    /// Where the text gave each attribute (empty for IR built in Rust): diagnostics about an attribute point
    /// at it. A parsed `tile.for` also records its step operand here
    /// ([`crate::syntax::parser::FOR_STEP_SPAN`]).
    pub attr_spans: BTreeMap<String, Span>,
    /// Body blocks (only `tile.for` has one).
    pub regions: Vec<BlockId>,
    pub span: Span,
    /// The block this op sits in; `None` once erased.
    pub parent: Option<BlockId>,
}

impl Operation {
    /// The typed view of this op (see [`crate::ops::typed`]): `op.view::<typed::LdMatrix>()`. `None` when the
    /// op is of another kind, or malformed in a way the verifier reports.
    pub fn view<T: TypedOp>(&self) -> Option<T> {
        T::from_op(self)
    }

    /// Rewrites this op's operands and attributes from a typed view of its kind (results, regions and span
    /// stay): read a view, change a field, write it back. Attributes the view does not declare (`probe`)
    /// are kept. Does nothing (and returns false) when the view is of another kind.
    pub fn set_from<T: TypedOp>(&mut self, view: T) -> bool {
        if T::KIND != self.kind {
            return false;
        }
        let spec = view.into_spec();
        self.operands = spec.operands;
        self.segments = spec.segments;
        for def in self.kind.def().attributes {
            self.attrs.remove(def.name);
        }
        for (name, value) in spec.attrs {
            self.attrs.insert(name, value);
        }
        true
    }

    /// The operands group by group, in the order of the op's definition (what the typed views read).
    pub(crate) fn groups(&self) -> impl Iterator<Item = &[Value]> + '_ {
        let well_formed = self.segments.len() == self.kind.def().operands.len();
        let mut start = 0usize;
        self.segments.iter().take_while(move |_| well_formed).map(move |&n| {
            let end = start + n as usize;
            let group = self.operands.get(start..end).unwrap_or(&[]);
            start = end;
            group
        })
    }

    /// The operands of the named group (see the op's [`crate::ops::OpDef`]). Empty if there is no such group.
    pub fn group(&self, name: &str) -> &[Value] {
        let Some(g) = self.kind.def().group_index(name) else { return &[] };
        let start: usize = self.segments.iter().take(g).map(|&n| n as usize).sum();
        let len = self.segments.get(g).copied().unwrap_or(0) as usize;
        self.operands.get(start..start + len).unwrap_or(&[])
    }

    /// The single operand of a group, if it holds exactly one.
    pub fn operand(&self, name: &str) -> Option<Value> {
        match self.group(name) {
            [v] => Some(*v),
            _ => None,
        }
    }

    /// Replaces the single operand of a group; false (and nothing changed) unless it holds exactly one.
    pub fn set_operand(&mut self, name: &str, value: Value) -> bool {
        let Some(g) = self.kind.def().group_index(name) else { return false };
        if self.segments.get(g) != Some(&1) {
            return false;
        }
        let start: usize = self.segments.iter().take(g).map(|&n| n as usize).sum();
        match self.operands.get_mut(start) {
            Some(slot) => {
                *slot = value;
                true
            }
            None => false,
        }
    }

    /// Where the attribute was written, or the op's span.
    pub fn attr_span(&self, name: &str) -> Span {
        self.attr_spans.get(name).copied().unwrap_or(self.span)
    }

    pub fn attr(&self, name: &str) -> Option<&Attribute> {
        self.attrs.get(name)
    }

    pub fn result(&self) -> Option<Value> {
        self.results.first().copied()
    }
}

/// A block: arguments and a list of operations in order.
#[derive(Clone, Debug, Default)]
pub struct Block {
    pub args: Vec<Value>,
    pub ops: Vec<OpId>,
    /// The op whose region this block is, `None` for a function's entry block.
    pub parent_op: Option<OpId>,
}

/// The arena of one function.
#[derive(Clone, Debug, Default)]
pub struct Body {
    pub values: Vec<ValueData>,
    pub ops: Vec<Operation>,
    pub blocks: Vec<Block>,
}

impl Body {
    pub fn value(&self, v: Value) -> &ValueData {
        &self.values[v.index()]
    }

    pub fn ty(&self, v: Value) -> &Type {
        &self.values[v.index()].ty
    }

    pub fn op(&self, op: OpId) -> &Operation {
        &self.ops[op.index()]
    }

    pub fn op_mut(&mut self, op: OpId) -> &mut Operation {
        &mut self.ops[op.index()]
    }

    pub fn block(&self, b: BlockId) -> &Block {
        &self.blocks[b.index()]
    }

    pub fn block_mut(&mut self, b: BlockId) -> &mut Block {
        &mut self.blocks[b.index()]
    }

    /// A new empty block, not yet attached to an op.
    pub fn new_block(&mut self) -> BlockId {
        self.blocks.push(Block::default());
        BlockId(self.blocks.len() as u32 - 1)
    }

    /// Appends an argument to a block.
    pub fn add_block_arg(&mut self, block: BlockId, ty: Type, name: Option<String>, span: Span) -> Value {
        let index = self.blocks[block.index()].args.len() as u32;
        let v = self.push_value(ValueData { ty, def: ValueDef::BlockArg { block, index }, name, span });
        self.blocks[block.index()].args.push(v);
        v
    }

    fn push_value(&mut self, data: ValueData) -> Value {
        self.values.push(data);
        Value(self.values.len() as u32 - 1)
    }

    /// Creates an operation with fresh result values, not yet placed in a block.
    pub fn create_op(&mut self, spec: OpSpec) -> OpId {
        let id = OpId(self.ops.len() as u32);
        let results = spec
            .result_types
            .into_iter()
            .enumerate()
            .map(|(i, ty)| {
                self.push_value(ValueData {
                    ty,
                    def: ValueDef::OpResult { op: id, index: i as u32 },
                    name: None,
                    span: spec.span,
                })
            })
            .collect();
        for &region in &spec.regions {
            self.blocks[region.index()].parent_op = Some(id);
        }
        self.ops.push(Operation {
            kind: spec.kind,
            operands: spec.operands,
            segments: spec.segments,
            results,
            attrs: spec.attrs,
            attr_spans: BTreeMap::new(),
            regions: spec.regions,
            span: spec.span,
            parent: None,
        });
        id
    }

    /// Appends an op at the end of a block.
    pub fn append(&mut self, block: BlockId, op: OpId) {
        self.ops[op.index()].parent = Some(block);
        self.blocks[block.index()].ops.push(op);
    }

    /// Inserts `op` just before `before` in `before`'s block.
    pub fn insert_before(&mut self, before: OpId, op: OpId) {
        let Some(block) = self.ops[before.index()].parent else { return };
        let ops = &mut self.blocks[block.index()].ops;
        // Searched from the end: the lowerings insert many ops before the op they are replacing, which has
        // few ops after it (from the front this was quadratic in a lowered block's length).
        let at = ops.iter().rposition(|&o| o == before).unwrap_or(ops.len());
        ops.insert(at, op);
        self.ops[op.index()].parent = Some(block);
    }

    /// Removes an op from its block. Its results must no longer be used.
    pub fn erase(&mut self, op: OpId) {
        if let Some(block) = self.ops[op.index()].parent.take() {
            self.blocks[block.index()].ops.retain(|&o| o != op);
        }
    }

    /// Replaces every use of `from` by `to` in the ops that are still placed.
    pub fn replace_all_uses(&mut self, from: Value, to: Value) {
        for op in &mut self.ops {
            if op.parent.is_some() {
                for operand in &mut op.operands {
                    if *operand == from {
                        *operand = to;
                    }
                }
            }
        }
    }

    /// Replaces every use of each `from` by its `to` in the ops that are still placed, in one walk over the ops
    /// (for many values, rather than [`replace_all_uses`](Self::replace_all_uses) once per value). A `to` is not
    /// itself replaced.
    pub fn replace_all_uses_of(&mut self, pairs: &[(Value, Value)]) {
        let mut to: Vec<Option<Value>> = vec![None; self.values.len()];
        for &(from, into) in pairs {
            if let Some(slot) = to.get_mut(from.index()) {
                *slot = Some(into);
            }
        }
        for op in &mut self.ops {
            if op.parent.is_some() {
                for operand in &mut op.operands {
                    if let Some(Some(into)) = to.get(operand.index()) {
                        *operand = *into;
                    }
                }
            }
        }
    }

    /// The ops of a block and, recursively, of the regions of those ops, in program order.
    pub fn walk(&self, block: BlockId, visit: &mut dyn FnMut(OpId)) {
        for &op in &self.blocks[block.index()].ops {
            visit(op);
            for &region in &self.ops[op.index()].regions {
                self.walk(region, visit);
            }
        }
    }

    /// Whether an op of a block or, recursively, of the regions of its ops satisfies `pred` (the walk stops at the
    /// first that does).
    pub fn any_op(&self, block: BlockId, pred: &mut dyn FnMut(&Operation) -> bool) -> bool {
        for &op in &self.blocks[block.index()].ops {
            if pred(self.op(op)) {
                return true;
            }
            for &region in &self.ops[op.index()].regions {
                if self.any_op(region, pred) {
                    return true;
                }
            }
        }
        false
    }

    /// The op that defines a value, if it is an op result.
    pub fn defining_op(&self, v: Value) -> Option<OpId> {
        match self.values[v.index()].def {
            ValueDef::OpResult { op, .. } => Some(op),
            ValueDef::BlockArg { .. } => None,
        }
    }

    /// The constant integer a value is defined as, if it is a `tile.constant`.
    pub fn constant_int(&self, v: Value) -> Option<i64> {
        let op = self.op(self.defining_op(v)?);
        op.view::<crate::ops::typed::Constant>()?.value.as_int()
    }
}

/// Everything needed to create an operation.
#[derive(Clone, Debug)]
pub struct OpSpec {
    pub kind: OpKind,
    pub operands: Vec<Value>,
    pub segments: Vec<u32>,
    pub result_types: Vec<Type>,
    pub attrs: AttrMap,
    pub regions: Vec<BlockId>,
    pub span: Span,
}

impl OpSpec {
    /// An op with no operands, results, attributes or regions yet.
    pub fn new(kind: OpKind) -> OpSpec {
        OpSpec {
            kind,
            operands: Vec::new(),
            segments: vec![0; kind.def().operands.len()],
            result_types: Vec::new(),
            attrs: AttrMap::new(),
            regions: Vec::new(),
            span: Span::UNKNOWN,
        }
    }

    /// Sets every operand group at once, in the order of the op's definition.
    pub(crate) fn set_groups(&mut self, groups: Vec<Vec<Value>>) {
        self.segments = groups.iter().map(|g| g.len() as u32).collect();
        self.operands = groups.into_iter().flatten().collect();
    }

    /// Sets the operands of a group. Groups may be set in any order; they are stored in definition order.
    pub fn group(mut self, name: &str, values: &[Value]) -> OpSpec {
        let def = self.kind.def();
        if let Some(g) = def.group_index(name) {
            let start: usize = self.segments.iter().take(g).map(|&n| n as usize).sum();
            let old = self.segments[g] as usize;
            self.operands.splice(start..start + old, values.iter().copied());
            self.segments[g] = values.len() as u32;
        } else {
            debug_assert!(false, "{} has no operand group {name}", def.name);
        }
        self
    }

    pub fn result(mut self, ty: impl Into<Type>) -> OpSpec {
        self.result_types.push(ty.into());
        self
    }

    pub fn attr(mut self, name: &str, value: impl Into<Attribute>) -> OpSpec {
        self.attrs.insert(name.to_string(), value.into());
        self
    }

    pub fn region(mut self, block: BlockId) -> OpSpec {
        self.regions.push(block);
        self
    }

    pub fn span(mut self, span: Span) -> OpSpec {
        self.span = span;
        self
    }
}

/// The function attribute where the lowering of tile copies records what they need of the run-time extents:
/// `[[argument, axis, multiple], ...]`, extent `axis` of the function's argument number `argument` a multiple
/// of `multiple` elements (or a copy's global address would be misaligned). Written by `tilec-passes`' lowering,
/// reported by `tilec-lower-ptx`'s kernel description, checked by the driver before a launch.
pub const ASYNC_COPY_ALIGNMENT_ATTR: &str = "async_copy_alignment";

/// A kernel.
#[derive(Clone, Debug)]
pub struct Func {
    pub name: String,
    /// Launch configuration, tiling choices and other function-level attributes.
    pub attrs: AttrMap,
    /// Where the text gave each attribute (empty for IR built in Rust).
    pub attr_spans: BTreeMap<String, Span>,
    pub body: Body,
    /// The entry block; its arguments are the function's arguments.
    pub entry: BlockId,
    pub span: Span,
}

impl Func {
    /// A function with the given argument types and an empty entry block.
    pub fn new(name: impl Into<String>, arg_types: Vec<Type>) -> Func {
        let mut body = Body::default();
        let entry = body.new_block();
        for ty in arg_types {
            body.add_block_arg(entry, ty, None, Span::UNKNOWN);
        }
        Func { name: name.into(), attrs: AttrMap::new(), attr_spans: BTreeMap::new(), body, entry, span: Span::UNKNOWN }
    }

    /// Where the attribute was written, or the kernel's span.
    pub fn attr_span(&self, name: &str) -> Span {
        self.attr_spans.get(name).copied().unwrap_or(self.span)
    }

    pub fn args(&self) -> &[Value] {
        &self.body.block(self.entry).args
    }
}

/// A compilation unit: a list of kernels.
#[derive(Clone, Debug, Default)]
pub struct Module {
    pub funcs: Vec<Func>,
}

impl Module {
    pub fn func(&self, name: &str) -> Option<&Func> {
        self.funcs.iter().find(|f| f.name == name)
    }
}
