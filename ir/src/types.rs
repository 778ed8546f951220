//! Types of the tile IR: scalar element types, tiles in a memory space, and per-thread vectors.
//!
//! Text forms:
//! - scalars: `f16`, `bf16`, `f32`, `tf32`, `f64`, `f8e4m3`, `f8e5m2`, `i1`, `i4`, `u4`, `i8`, `u8`, `i32`, `index`;
//! - tiles: `tile<128x32xf16, shared>`, `tile<?x?xf16, global, #row_major>`, `tile<128x128xf32, reg, #hw<...>>`;
//! - vectors (per-thread registers, used by the `nvgpu` dialect): `vector<4x2xf16>`.

use std::fmt;

use tilec_layout::Layout;

/// A scalar element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScalarType {
    F16,
    BF16,
    F32,
    /// TensorFloat-32: stored in 32 bits, 10-bit mantissa in the tensor cores.
    TF32,
    F64,
    F8E4M3,
    F8E5M2,
    I1,
    I4,
    U4,
    I8,
    U8,
    I32,
    /// Machine-sized index (64-bit in the interpreter and the backends).
    Index,
}

impl ScalarType {
    /// Every scalar type, in the order they are documented.
    pub const ALL: [ScalarType; 14] = [
        ScalarType::F16,
        ScalarType::BF16,
        ScalarType::F32,
        ScalarType::TF32,
        ScalarType::F64,
        ScalarType::F8E4M3,
        ScalarType::F8E5M2,
        ScalarType::I1,
        ScalarType::I4,
        ScalarType::U4,
        ScalarType::I8,
        ScalarType::U8,
        ScalarType::I32,
        ScalarType::Index,
    ];

    /// The keyword this type is written as.
    pub fn name(self) -> &'static str {
        match self {
            ScalarType::F16 => "f16",
            ScalarType::BF16 => "bf16",
            ScalarType::F32 => "f32",
            ScalarType::TF32 => "tf32",
            ScalarType::F64 => "f64",
            ScalarType::F8E4M3 => "f8e4m3",
            ScalarType::F8E5M2 => "f8e5m2",
            ScalarType::I1 => "i1",
            ScalarType::I4 => "i4",
            ScalarType::U4 => "u4",
            ScalarType::I8 => "i8",
            ScalarType::U8 => "u8",
            ScalarType::I32 => "i32",
            ScalarType::Index => "index",
        }
    }

    /// Parses a scalar type keyword.
    pub fn from_name(name: &str) -> Option<ScalarType> {
        ScalarType::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Storage size in bits (`index` is 64 bits).
    pub fn bit_width(self) -> u32 {
        match self {
            ScalarType::I1 => 1,
            ScalarType::I4 | ScalarType::U4 => 4,
            ScalarType::I8 | ScalarType::U8 | ScalarType::F8E4M3 | ScalarType::F8E5M2 => 8,
            ScalarType::F16 | ScalarType::BF16 => 16,
            ScalarType::F32 | ScalarType::TF32 | ScalarType::I32 => 32,
            ScalarType::F64 | ScalarType::Index => 64,
        }
    }

    /// Floating-point types (including tf32 and the fp8 formats).
    pub fn is_float(self) -> bool {
        matches!(
            self,
            ScalarType::F16
                | ScalarType::BF16
                | ScalarType::F32
                | ScalarType::TF32
                | ScalarType::F64
                | ScalarType::F8E4M3
                | ScalarType::F8E5M2
        )
    }

    /// Integer types, `i1` and `index` included.
    pub fn is_integer(self) -> bool {
        !self.is_float()
    }

    /// Unsigned integer types.
    pub fn is_unsigned(self) -> bool {
        matches!(self, ScalarType::U4 | ScalarType::U8)
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a tile lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemorySpace {
    /// Device memory, visible to every block (a kernel argument or a view of one).
    Global,
    /// Shared memory of one thread block.
    Shared,
    /// Distributed over the registers of the block's threads.
    Register,
}

impl MemorySpace {
    pub fn name(self) -> &'static str {
        match self {
            MemorySpace::Global => "global",
            MemorySpace::Shared => "shared",
            MemorySpace::Register => "reg",
        }
    }

    pub fn from_name(name: &str) -> Option<MemorySpace> {
        match name {
            "global" => Some(MemorySpace::Global),
            "shared" => Some(MemorySpace::Shared),
            "reg" => Some(MemorySpace::Register),
            _ => None,
        }
    }
}

impl fmt::Display for MemorySpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One extent of a tile: known when compiling, or `?` (only for global tiles, known at launch).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    Static(u64),
    Dynamic,
}

impl Dim {
    pub fn as_static(self) -> Option<u64> {
        match self {
            Dim::Static(n) => Some(n),
            Dim::Dynamic => None,
        }
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Static(n) => write!(f, "{n}"),
            Dim::Dynamic => f.write_str("?"),
        }
    }
}

/// A tile: a shaped array of elements in one memory space, with an optional layout.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TileType {
    pub shape: Vec<Dim>,
    pub elem: ScalarType,
    pub space: MemorySpace,
    /// How elements map to memory (global/shared) or to threads and registers (register tiles).
    /// `None` until layout assignment fills it in.
    pub layout: Option<Layout>,
}

impl TileType {
    /// A tile of static shape without a layout.
    pub fn new(shape: &[u64], elem: ScalarType, space: MemorySpace) -> TileType {
        TileType { shape: shape.iter().map(|&n| Dim::Static(n)).collect(), elem, space, layout: None }
    }

    pub fn with_layout(mut self, layout: Layout) -> TileType {
        self.layout = Some(layout);
        self
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The shape when every extent is static.
    pub fn static_shape(&self) -> Option<Vec<u64>> {
        self.shape.iter().map(|d| d.as_static()).collect()
    }

    /// Number of elements when the shape is static.
    pub fn num_elements(&self) -> Option<u64> {
        self.static_shape().map(|s| s.iter().product())
    }

    /// Same shape and element type (memory space and layout may differ).
    pub fn same_shape_and_elem(&self, other: &TileType) -> bool {
        self.shape == other.shape && self.elem == other.elem
    }
}

/// A per-thread register vector (the `nvgpu` dialect's fragments), e.g. `vector<4x2xf16>`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VectorType {
    pub shape: Vec<u64>,
    pub elem: ScalarType,
}

impl VectorType {
    pub fn new(shape: &[u64], elem: ScalarType) -> VectorType {
        VectorType { shape: shape.to_vec(), elem }
    }

    pub fn num_elements(&self) -> u64 {
        self.shape.iter().product()
    }
}

/// The type of an SSA value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    Scalar(ScalarType),
    Tile(TileType),
    Vector(VectorType),
}

impl Type {
    pub const INDEX: Type = Type::Scalar(ScalarType::Index);

    pub fn as_scalar(&self) -> Option<ScalarType> {
        match self {
            Type::Scalar(s) => Some(*s),
            _ => None,
        }
    }

    pub fn as_tile(&self) -> Option<&TileType> {
        match self {
            Type::Tile(t) => Some(t),
            _ => None,
        }
    }

    pub fn as_vector(&self) -> Option<&VectorType> {
        match self {
            Type::Vector(v) => Some(v),
            _ => None,
        }
    }

    /// The element type of a tile or vector, or the scalar itself.
    pub fn element_type(&self) -> ScalarType {
        match self {
            Type::Scalar(s) => *s,
            Type::Tile(t) => t.elem,
            Type::Vector(v) => v.elem,
        }
    }

    pub fn is_index(&self) -> bool {
        matches!(self, Type::Scalar(ScalarType::Index))
    }
}

impl From<ScalarType> for Type {
    fn from(s: ScalarType) -> Type {
        Type::Scalar(s)
    }
}

impl From<TileType> for Type {
    fn from(t: TileType) -> Type {
        Type::Tile(t)
    }
}

impl From<VectorType> for Type {
    fn from(v: VectorType) -> Type {
        Type::Vector(v)
    }
}

fn write_shape<D: fmt::Display>(f: &mut fmt::Formatter<'_>, dims: &[D], elem: ScalarType) -> fmt::Result {
    for d in dims {
        write!(f, "{d}x")?;
    }
    write!(f, "{elem}")
}

impl fmt::Display for TileType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("tile<")?;
        write_shape(f, &self.shape, self.elem)?;
        write!(f, ", {}", self.space)?;
        if let Some(layout) = &self.layout {
            write!(f, ", {layout}")?;
        }
        f.write_str(">")
    }
}

impl fmt::Display for VectorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("vector<")?;
        write_shape(f, &self.shape, self.elem)?;
        f.write_str(">")
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Scalar(s) => write!(f, "{s}"),
            Type::Tile(t) => write!(f, "{t}"),
            Type::Vector(v) => write!(f, "{v}"),
        }
    }
}
