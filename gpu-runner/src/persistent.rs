//! The launch of a persistent kernel (`persistent = true` in tilec): the bundle's `grid` is the kernel's logical
//! grid, which the kernel receives as three hidden `index` arguments, and the launch is P blocks along x, each
//! looping over the tiles `t = block; t < tiles; t += P`. P = min(tiles, SMs x resident blocks per SM), the
//! resident blocks from the occupancy API (`cuOccupancyMaxActiveBlocksPerMultiprocessor` with the block size
//! and dynamic shared memory of the launch), as CUTLASS's persistent tile scheduler and Triton's persistent
//! matmul size their grids. `TILEC_PERSISTENT_MAX_BLOCKS=N` caps P further, so that a small check bundle (a
//! few tiles) still has blocks that run several tiles, as `tilec sim` does.

use std::sync::Arc;

use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{CudaContext, CudaFunction};

/// The number of tiles of a logical grid.
pub fn tiles(grid: [u32; 3]) -> u64 {
    grid.iter().map(|&g| u64::from(g)).product()
}

/// P for `tiles` tiles on `sms` multiprocessors with `resident` blocks each (at least one block).
pub fn blocks_for(tiles: u64, sms: u32, resident: u32) -> u32 {
    let full = u64::from(sms) * u64::from(resident.max(1));
    u32::try_from(tiles.min(full).max(1)).unwrap_or(u32::MAX)
}

/// The launch grid: `grid` itself for an ordinary kernel, `[P, 1, 1]` for a persistent one.
pub fn launch_grid(ctx: &Arc<CudaContext>, function: &CudaFunction, persistent: bool, grid: [u32; 3], block: [u32; 3], shared_bytes: u32) -> Result<[u32; 3], String> {
    if !persistent {
        return Ok(grid);
    }
    let sms = ctx
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .map_err(|e| format!("reading the multiprocessor count failed: {e:?}"))?;
    let threads: u32 = block.iter().product();
    let resident = function
        .occupancy_max_active_blocks_per_multiprocessor(threads, shared_bytes as usize, None)
        .map_err(|e| format!("the occupancy query failed: {e:?}"))?;
    if resident == 0 {
        return Err("the occupancy API says no block of this kernel fits on a multiprocessor".into());
    }
    let p = blocks_for(tiles(grid), u32::try_from(sms).unwrap_or(1), resident);
    let cap = std::env::var(MAX_BLOCKS_ENV).ok().and_then(|v| v.parse::<u32>().ok()).filter(|&n| n > 0);
    Ok([cap.map_or(p, |c| p.min(c)), 1, 1])
}

/// The environment variable that caps P (tests: several tiles per block on small inputs).
pub const MAX_BLOCKS_ENV: &str = "TILEC_PERSISTENT_MAX_BLOCKS";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_is_capped_by_tiles_and_by_the_device() {
        // 132 SMs, one resident block each: 4096^3 at 128x256 has 32 * 16 = 512 tiles.
        assert_eq!(blocks_for(tiles([32, 16, 1]), 132, 1), 132);
        assert_eq!(blocks_for(tiles([3, 1, 1]), 132, 1), 3);
        assert_eq!(blocks_for(tiles([8, 8, 2]), 132, 2), 128);
        assert_eq!(blocks_for(tiles([64, 64, 1]), 132, 2), 264);
    }
}
