//! `tile.for` → a loop with phi nodes.
//!
//! ```text
//!   pre:    br header
//!   header: %iv = phi [lb, pre], [%next, latch]; %x = phi [init, pre], [yielded, latch]; …
//!           br (icmp slt %iv, ub), body, exit
//!   body:   … (nested loops add blocks; the block where `tile.yield` lands is the latch)
//!   latch:  %next = add nsw %iv, step; br header
//!   exit:   the loop's results are the header's phis
//! ```
//! Steps are positive (the interpreter and simulator reject others), so `iv < ub` is the whole test.
//!
//! `hoist = false` puts `!llvm.loop !{self, !{"llvm.licm.disable"}}` on the back edge: LICM leaves the loop's
//! invariant code where it is (the persistent-grid pass's tile loop, whose epilogue arithmetic would otherwise
//! stay live in registers across the k-loop).

use inkwell::basic_block::BasicBlock;
use inkwell::values::{BasicValue, IntValue, PhiValue};
use inkwell::IntPredicate;

use tilec_ir::body::{Operation, Value};
use tilec_ir::ops::typed;

use super::func::FuncTranslator;
use super::{types, Result};
use crate::spine::EmitLoop;

/// A loop being emitted: its header's phis, its step and its exit block.
pub(crate) struct Loop<'ctx> {
    header: BasicBlock<'ctx>,
    exit: BasicBlock<'ctx>,
    iv: PhiValue<'ctx>,
    step: IntValue<'ctx>,
    phis: Vec<PhiValue<'ctx>>,
}

impl<'ctx> EmitLoop for FuncTranslator<'_, 'ctx> {
    type Loop = Loop<'ctx>;

    /// `pre` branches to the header (`iv` and the carried values as phis, the exit test), the builder goes on in
    /// the body.
    fn begin_for(&mut self, op: &Operation, v: &typed::For, iv: Value, carried: &[Value]) -> Result<Loop<'ctx>> {
        let func = self.func;
        let (lb, ub, step) = (self.int(op, v.lower)?, self.int(op, v.upper)?, self.int(op, v.step)?);
        let init_values = v.inits.iter().map(|&x| self.value(op, x)).collect::<Result<Vec<_>>>()?;

        let function = self.function.ok_or_else(|| super::internal("inside a function"))?;
        let pre = self.builder.get_insert_block().ok_or_else(|| super::internal("positioned"))?;
        let header = self.cx.append_basic_block(function, "loop");
        let body_block = self.cx.append_basic_block(function, "body");
        let exit = self.cx.append_basic_block(function, "done");
        self.builder.build_unconditional_branch(header)?;

        self.builder.position_at_end(header);
        let iv_phi = self.builder.build_phi(self.cx.i64_type(), "iv")?;
        iv_phi.add_incoming(&[(&lb, pre)]);
        let mut phis: Vec<PhiValue> = Vec::with_capacity(carried.len());
        for (&arg, init) in carried.iter().zip(&init_values) {
            let ty = types::value_type(self.cx, func.body.ty(arg))
                .ok_or_else(|| self.kernel.unsupported(op, format!("it cannot carry '{}'", func.body.ty(arg))))?;
            let phi = self.builder.build_phi(ty, "")?;
            phi.add_incoming(&[(init as &dyn BasicValue, pre)]);
            phis.push(phi);
        }
        let iv_value = iv_phi.as_basic_value().into_int_value();
        let go_on = self.builder.build_int_compare(IntPredicate::SLT, iv_value, ub, "")?;
        self.builder.build_conditional_branch(go_on, body_block, exit)?;

        self.builder.position_at_end(body_block);
        self.set(iv, iv_value.into());
        for (&arg, phi) in carried.iter().zip(&phis) {
            self.set(arg, phi.as_basic_value());
        }
        Ok(Loop { header, exit, iv: iv_phi, step, phis })
    }

    /// The block the body ended in is the latch: `iv + step` and the yielded values flow back to the header; the
    /// loop's results are the header's phis.
    fn end_for(&mut self, op: &Operation, lp: Loop<'ctx>, yielded: &[Value]) -> Result<()> {
        let latch = self.builder.get_insert_block().ok_or_else(|| super::internal("positioned"))?;
        let iv_value = lp.iv.as_basic_value().into_int_value();
        let next = self.builder.build_int_nsw_add(iv_value, lp.step, "iv.next")?;
        let yielded = yielded.iter().map(|&x| self.value(op, x)).collect::<Result<Vec<_>>>()?;
        lp.iv.add_incoming(&[(&next, latch)]);
        for (phi, x) in lp.phis.iter().zip(&yielded) {
            phi.add_incoming(&[(x as &dyn BasicValue, latch)]);
        }
        let back_edge = self.builder.build_unconditional_branch(lp.header)?;
        if op.view::<typed::For>().and_then(|f| f.hoist) == Some(false) {
            disable_licm(self.cx, back_edge);
        }

        self.builder.position_at_end(lp.exit);
        for (&result, phi) in op.results.iter().zip(&lp.phis) {
            self.set(result, phi.as_basic_value());
        }
        Ok(())
    }
}

/// Loop metadata `!llvm.loop !0`, `!0 = !{!0, !{!"llvm.licm.disable"}}`, on the loop's back-edge branch (a loop ID
/// is a node whose first operand is itself: made from a temporary node replaced by the node).
fn disable_licm(cx: inkwell::context::ContextRef<'_>, back_edge: inkwell::values::InstructionValue<'_>) {
    use inkwell::context::AsContextRef;
    use inkwell::llvm_sys::core::{LLVMGetMDKindIDInContext, LLVMMDNodeInContext2, LLVMMDStringInContext2, LLVMMetadataAsValue, LLVMSetMetadata};
    use inkwell::llvm_sys::debuginfo::{LLVMMetadataReplaceAllUsesWith, LLVMTemporaryMDNode};
    use inkwell::values::AsValueRef;
    const HINT: &str = "llvm.licm.disable";
    const KIND: &str = "llvm.loop";
    // SAFETY: every reference comes from `cx`, which outlives this call, and from `back_edge`, an instruction of a
    // module of `cx`; the temporary node is consumed by the replacement, as LLVM's C API requires.
    unsafe {
        let c = cx.as_ctx_ref();
        let mut hint = [LLVMMDStringInContext2(c, HINT.as_ptr().cast(), HINT.len())];
        let hint_node = LLVMMDNodeInContext2(c, hint.as_mut_ptr(), 1);
        let temporary = LLVMTemporaryMDNode(c, std::ptr::null_mut(), 0);
        let mut operands = [temporary, hint_node];
        let loop_id = LLVMMDNodeInContext2(c, operands.as_mut_ptr(), 2);
        LLVMMetadataReplaceAllUsesWith(temporary, loop_id);
        let kind = LLVMGetMDKindIDInContext(c, KIND.as_ptr().cast(), KIND.len() as u32);
        LLVMSetMetadata(back_edge.as_value_ref(), kind, LLVMMetadataAsValue(c, loop_id));
    }
}
