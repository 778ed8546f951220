//! A pass reads a kernel's attributes (`num_warps`, `pipeline_stages`, ...) through the declared, typed
//! [`KernelAttrs`], never by string; [`kernel_attrs`] turns a value of the wrong type (which the verifier
//! rejects, so only unverified input has one) into a diagnostic at the kernel.

use tilec_ir::ops::kernel::KERNEL_ATTRS;
use tilec_ir::{Diagnostic, Func, KernelAttrs};

/// The declared attributes of `func`, defaults applied; a mistyped one is an error at the kernel.
pub fn kernel_attrs(func: &Func) -> Result<KernelAttrs, Diagnostic> {
    KernelAttrs::of(func).map_err(|(name, value)| {
        let expected = KERNEL_ATTRS.iter().find(|a| a.name == name).map_or("of its declared type", |a| a.expected);
        Diagnostic::error(func.span, format!("{name} = {value}: expected {expected}"))
    })
}
