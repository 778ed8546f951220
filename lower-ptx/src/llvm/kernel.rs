//! Kernel entry points, launch bounds and shared memory in LLVM IR for NVPTX.

use inkwell::attributes::AttributeLoc;
use inkwell::module::{Linkage, Module};
use inkwell::types::{BasicType, BasicTypeEnum};
use inkwell::values::{FunctionValue, GlobalValue};

/// The `ptx_kernel` calling convention (LLVM's `CallingConv::PTX_Kernel`): a function with it is emitted
/// as a PTX `.entry`. In LLVM 22 this replaces the old `nvvm.annotations` `kernel` metadata.
pub const PTX_KERNEL_CALLING_CONVENTION: u32 = 71;

/// NVPTX address spaces, as LLVM numbers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddressSpace {
    /// Generic (flat) pointers.
    Generic = 0,
    /// Global memory.
    Global = 1,
    /// Shared memory (per block).
    Shared = 3,
    /// Constant memory.
    Constant = 4,
    /// Local memory (per thread).
    Local = 5,
}

impl From<AddressSpace> for inkwell::AddressSpace {
    fn from(space: AddressSpace) -> Self {
        inkwell::AddressSpace::from(space as u16)
    }
}

/// Adds a kernel entry point `name` returning `void` with the given parameters.
pub fn declare_kernel<'ctx>(
    module: &Module<'ctx>,
    name: &str,
    params: &[BasicTypeEnum<'ctx>],
) -> FunctionValue<'ctx> {
    let context = module.get_context();
    let params: Vec<_> = params.iter().map(|t| (*t).into()).collect();
    let function = module.add_function(name, context.void_type().fn_type(&params, false), None);
    function.set_call_conventions(PTX_KERNEL_CALLING_CONVENTION);
    function
}

/// Sets `__launch_bounds__(max_threads, min_blocks)`: the function attributes `nvvm.maxntid` and
/// `nvvm.minctasm`, which NVPTX emits as `.maxntid` and `.minnctapersm`.
pub fn set_launch_bounds(
    function: FunctionValue<'_>,
    max_threads: u32,
    min_blocks_per_sm: Option<u32>,
) {
    let context = function.get_type().get_context();
    function.add_attribute(
        AttributeLoc::Function,
        context.create_string_attribute("nvvm.maxntid", &max_threads.to_string()),
    );
    if let Some(min_blocks) = min_blocks_per_sm {
        function.add_attribute(
            AttributeLoc::Function,
            context.create_string_attribute("nvvm.minctasm", &min_blocks.to_string()),
        );
    }
}

/// Adds a statically sized shared-memory array `[len x element]` with the given alignment (bytes).
pub fn add_static_shared_array<'ctx>(
    module: &Module<'ctx>,
    name: &str,
    element: BasicTypeEnum<'ctx>,
    len: u32,
    align: u32,
) -> GlobalValue<'ctx> {
    let array = element.array_type(len);
    let global = module.add_global(array, Some(AddressSpace::Shared.into()), name);
    global.set_linkage(Linkage::Internal);
    global.set_initializer(&array.get_undef());
    global.set_alignment(align);
    global
}

/// Declares the block's dynamic shared memory: an external `[0 x i8]` in the shared space, sized at
/// launch time.
pub fn add_dynamic_shared_memory<'ctx>(
    module: &Module<'ctx>,
    name: &str,
    align: u32,
) -> GlobalValue<'ctx> {
    let context = module.get_context();
    let array = context.i8_type().array_type(0);
    let global = module.add_global(array, Some(AddressSpace::Shared.into()), name);
    global.set_linkage(Linkage::External);
    global.set_alignment(align);
    global
}
