//! Which argument of a kernel is A, B and C of a GEMM, read from its signature and checked against its body.
//!
//! `tilec bench` has to know the kernel's contract to make inputs, call cuBLAS on the same problem and compare:
//! the kernel must take exactly three rank-2 global tiles, A (MxK), B (KxN) and C (MxN) in this order, and may
//! take f32 scalars named `alpha` and `beta` (C = alpha * A * B + beta * C). Each tile is row-major unless its
//! type says `#col_major`. The body must contain a `tile.mma` and store C (`tile.copy_r2g` into it) but never A
//! or B. Anything else is refused with a diagnostic at the offending argument: guessing would time or check
//! the wrong computation.

use tilec_gpu_runner::bench::{Elem, MatrixLayout, Operand};
use tilec_ir::{Diagnostic, Func, MemorySpace, OpKind, ScalarType, Span, Type};
use tilec_layout::Layout;

/// The GEMM a kernel computes.
#[derive(Clone, Debug, PartialEq)]
pub struct GemmRoles {
    /// Argument positions of A, B and C.
    pub a: usize,
    pub b: usize,
    pub c: usize,
    /// Argument positions of the `alpha` and `beta` scalars, when the kernel has them.
    pub alpha: Option<usize>,
    pub beta: Option<usize>,
    /// Element type and layout of A, B and C.
    pub operands: [Operand; 3],
    /// The static extents of A, B and C (`None` for `?`), to check the shapes asked for.
    pub extents: [[Option<u64>; 2]; 3],
}

const CONTRACT: &str =
    "`--shape M,N,K` needs a GEMM kernel: three rank-2 global tiles A (MxK), B (KxN), C (MxN) in this order, optionally f32 scalars named 'alpha' and 'beta'";

/// What to do with any other kernel (trial finding 10: a GEMM with a fused epilogue was a dead end).
const OTHER_KERNELS: &str = "for another kernel (a fused epilogue, attention) give each argument's shape with --arg NAME=SHAPE: \
     `tilec tune FILE --arg ...` searches its attributes, and `tilec bundle FILE -o DIR --no-oracle --repeat 20 --arg ...` \
     makes a bundle that `tilec-gpu-runner DIR` times on the GPU machine (`tilec bench` compares only GEMMs with cuBLAS)";

/// Reads the GEMM roles of `func`, or says why it does not look like a GEMM.
pub fn infer(func: &Func) -> Result<GemmRoles, Diagnostic> {
    let body = &func.body;
    let not_gemm = |span: Span, why: String| Diagnostic::error(span, format!("@{} does not look like a GEMM: {why}", func.name)).with_note(CONTRACT).with_note(OTHER_KERNELS);
    let mut tiles = Vec::new();
    let (mut alpha, mut beta) = (None, None);
    for (index, &arg) in func.args().iter().enumerate() {
        let value = body.value(arg);
        let name = value.name.clone().unwrap_or_else(|| format!("#{index}"));
        match body.ty(arg) {
            Type::Tile(t) if t.space == MemorySpace::Global => {
                if t.rank() != 2 {
                    return Err(not_gemm(value.span, format!("'%{name}' has rank {}, not 2", t.rank())));
                }
                tiles.push((index, name, t.clone(), value.span));
            }
            Type::Scalar(ScalarType::F32) if name == "alpha" || name == "beta" => {
                let slot = if name == "alpha" { &mut alpha } else { &mut beta };
                if slot.replace(index).is_some() {
                    return Err(not_gemm(value.span, format!("a second argument named '{name}'")));
                }
            }
            Type::Scalar(s) if name == "alpha" || name == "beta" => {
                return Err(not_gemm(value.span, format!("'%{name}' is {s}; the bench passes alpha and beta as f32")));
            }
            other => {
                return Err(not_gemm(value.span, format!("argument '%{name}' of type '{other}' has no role in a GEMM")));
            }
        }
    }
    let [a, b, c] = match <[_; 3]>::try_from(tiles) {
        Ok(three) => three,
        Err(tiles) => return Err(not_gemm(func.span, format!("it has {} global tile argument(s), not 3", tiles.len()))),
    };
    let operand = |(_, name, t, span): &(usize, String, tilec_ir::TileType, Span), allowed: &[Elem]| {
        let elem = Elem::from_name(t.elem.name()).filter(|e| allowed.contains(e)).ok_or_else(|| {
            let names: Vec<&str> = allowed.iter().map(|e| e.name()).collect();
            not_gemm(*span, format!("'%{name}' holds {}; the bench knows {} here", t.elem, names.join(", ")))
        })?;
        let layout = match &t.layout {
            None | Some(Layout::RowMajor) => MatrixLayout::RowMajor,
            Some(Layout::ColMajor) => MatrixLayout::ColMajor,
            Some(other) => return Err(not_gemm(*span, format!("'%{name}' has layout {other}; the bench knows #row_major and #col_major"))),
        };
        Ok(Operand { elem, layout })
    };
    let inputs = [Elem::F16, Elem::Bf16, Elem::I8];
    let a_op = operand(&a, &inputs)?;
    let b_op = operand(&b, &inputs)?;
    let c_op = operand(&c, &[Elem::F16, Elem::Bf16, Elem::F32, Elem::I32])?;
    if a_op.elem != b_op.elem {
        return Err(not_gemm(b.3, format!("A holds {} but B holds {}", a_op.elem.name(), b_op.elem.name())));
    }

    // The body: a matrix multiply, C stored, A and B only read.
    let mut ops = Vec::new();
    body.walk(func.entry, &mut |id| ops.push(id));
    let mut has_mma = false;
    let mut stores_c = false;
    for &id in &ops {
        let op = body.op(id);
        has_mma |= op.kind == OpKind::Mma;
        if let Some(store) = op.view::<tilec_ir::typed::CopyR2G>() {
            let dst = Some(store.dst);
            for (tile, role) in [(&a, "A"), (&b, "B")] {
                if dst == Some(func.args()[tile.0]) {
                    return Err(not_gemm(op.span, format!("it stores into '%{}', its {role} operand", tile.1)));
                }
            }
            stores_c |= dst == Some(func.args()[c.0]);
        }
    }
    if !has_mma {
        return Err(not_gemm(func.span, "it has no tile.mma".into()));
    }
    if !stores_c {
        return Err(not_gemm(c.3, format!("it never stores into '%{}' (no tile.copy_r2g into C)", c.1)));
    }
    let extents = |t: &tilec_ir::TileType| [t.shape[0].as_static(), t.shape[1].as_static()];
    Ok(GemmRoles {
        a: a.0,
        b: b.0,
        c: c.0,
        alpha,
        beta,
        operands: [a_op, b_op, c_op],
        extents: [extents(&a.2), extents(&b.2), extents(&c.2)],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roles(src: &str) -> Result<GemmRoles, String> {
        let module = tilec_ir::parse_module(src).map_err(|d| format!("{d}"))?;
        infer(&module.funcs[0]).map_err(|d| d.message)
    }

    const GEMM_BODY: &str = r#"
  %c0 = tile.constant 0 : index
  %z = tile.fill 0.0 : tile<16x16xf32, reg>
  %sa = tile.alloc_shared : tile<16x16xf16, shared>
  %sb = tile.alloc_shared : tile<16x16xf16, shared>
  tile.copy_g2s %A[%c0, %c0], %sa
  tile.copy_g2s %B[%c0, %c0], %sb
  %a = tile.copy_s2r %sa : tile<16x16xf16, reg>
  %b = tile.copy_s2r %sb : tile<16x16xf16, reg>
  %d = tile.mma %a, %b, %z : tile<16x16xf32, reg>
  tile.copy_r2g %d, %C[%c0, %c0]
  tile.return
}"#;

    #[test]
    fn the_examples_signature_is_a_gemm() {
        let src = format!(
            "tile.func @g(%A: tile<?x?xf16, global>, %B: tile<?x?xf16, global, #col_major>, %C: tile<?x16xf32, global>, %alpha: f32) {{{GEMM_BODY}"
        );
        let r = roles(&src).unwrap();
        assert_eq!((r.a, r.b, r.c, r.alpha, r.beta), (0, 1, 2, Some(3), None));
        assert_eq!(r.operands[0], Operand { elem: Elem::F16, layout: MatrixLayout::RowMajor });
        assert_eq!(r.operands[1].layout, MatrixLayout::ColMajor);
        assert_eq!(r.operands[2].elem, Elem::F32);
        assert_eq!(r.extents[2], [None, Some(16)]);
    }

    #[test]
    fn what_is_not_a_gemm_is_refused_with_the_reason() {
        let sig = |args: &str| format!("tile.func @g({args}) {{{GEMM_BODY}");
        let e = roles(&sig("%A: tile<?x?xf16, global>, %B: tile<?x?xf16, global>, %C: tile<?x?xf32, global>, %D: tile<?x?xf32, global>"))
            .unwrap_err();
        assert!(e.contains("4 global tile argument(s), not 3"), "{e}");
        let e = roles(&sig("%A: tile<?x?xf16, global>, %B: tile<?x?xf16, global>, %C: tile<?x?x?xf32, global>")).unwrap_err();
        assert!(e.contains("'%C' has rank 3, not 2"), "{e}");
        let e = roles(&sig("%A: tile<?x?xf16, global>, %B: tile<?x?xf16, global>, %C: tile<?x?xf32, global>, %s: f32")).unwrap_err();
        assert!(e.contains("'%s' of type 'f32' has no role"), "{e}");
        let e = roles(&sig("%A: tile<?x?xf16, global>, %B: tile<?x?xbf16, global>, %C: tile<?x?xf32, global>")).unwrap_err();
        assert!(e.contains("A holds f16 but B holds bf16"), "{e}");
        let e = roles(&sig("%A: tile<?x?xf16, global>, %B: tile<?x?xf16, global>, %C: tile<?x?xf32, global>, %alpha: f16")).unwrap_err();
        assert!(e.contains("alpha and beta as f32"), "{e}");
        // C is stored, but named in the wrong position: the kernel stores into its "A".
        let e = roles(&sig("%C: tile<?x?xf16, global>, %B: tile<?x?xf16, global>, %A: tile<?x?xf32, global>")).unwrap_err();
        assert!(e.contains("stores into '%C', its A operand"), "{e}");
    }
}
