//! Moving values between a whole tile and per-lane fragments through a layout.
//!
//! These are the two primitives a warp simulator needs for every
//! fragment-producing or -consuming instruction: `matrix_to_fragment` is what a
//! lane sees after a load (`ldmatrix`, or the fragment an `mma` reads), and
//! `fragment_to_matrix` puts lane values back at their coordinates (`stmatrix`,
//! or reading an `mma` result as a matrix).
//!
//! Matrices are row-major slices of `rows * cols` values; fragments are
//! `fragments[lane][value]` for lanes `0..32`.

use crate::error::LayoutError;
use crate::hardware::HardwareLayout;

/// Lanes in a warp.
pub const WARP_SIZE: u32 = 32;

fn check_matrix<T>(layout: &HardwareLayout, matrix: &[T]) -> Result<(), LayoutError> {
    let want = layout.rows as usize * layout.cols as usize;
    if matrix.len() != want {
        return Err(LayoutError::Fragment(format!(
            "{}: matrix has {} values, expected {}x{} = {want}",
            layout.name,
            matrix.len(),
            layout.rows,
            layout.cols
        )));
    }
    Ok(())
}

/// Gathers each lane's fragment from a row-major `rows x cols` matrix:
/// `result[lane][value] = matrix[row * cols + col]` where `(row, col) =
/// layout(value, lane)`.
pub fn matrix_to_fragment<T: Clone>(layout: &HardwareLayout, matrix: &[T]) -> Result<Vec<Vec<T>>, LayoutError> {
    check_matrix(layout, matrix)?;
    (0..WARP_SIZE)
        .map(|lane| {
            (0..layout.values_per_lane())
                .map(|value| {
                    let (row, col) = layout
                        .coord(value, lane)
                        .ok_or_else(|| LayoutError::Fragment(format!("{}: no value {value} in lane {lane}", layout.name)))?;
                    Ok(matrix[(row * layout.cols + col) as usize].clone())
                })
                .collect()
        })
        .collect()
}

/// Scatters fragments into a row-major matrix, reading only the given lanes.
///
/// Every element must be written by some lane, and lanes holding the same
/// element (a broadcast layout such as the `mma.m8n8k4` quad-pairs) must agree;
/// otherwise this is an error naming the element.
pub fn fragment_to_matrix_from_lanes<T: Clone + PartialEq + std::fmt::Debug>(
    layout: &HardwareLayout,
    fragments: &[Vec<T>],
    lanes: &[u32],
) -> Result<Vec<T>, LayoutError> {
    if fragments.len() != WARP_SIZE as usize {
        return Err(LayoutError::Fragment(format!("{}: {} lanes of fragments, expected 32", layout.name, fragments.len())));
    }
    let mut matrix: Vec<Option<T>> = vec![None; layout.rows as usize * layout.cols as usize];
    for &lane in lanes {
        let values = fragments
            .get(lane as usize)
            .ok_or_else(|| LayoutError::Fragment(format!("{}: no lane {lane}", layout.name)))?;
        if values.len() != layout.values_per_lane() as usize {
            return Err(LayoutError::Fragment(format!(
                "{}: lane {lane} holds {} values, expected {}",
                layout.name,
                values.len(),
                layout.values_per_lane()
            )));
        }
        for (value, v) in values.iter().enumerate() {
            let (row, col) = layout
                .coord(value as u32, lane)
                .ok_or_else(|| LayoutError::Fragment(format!("{}: no value {value} in lane {lane}", layout.name)))?;
            let slot = &mut matrix[(row * layout.cols + col) as usize];
            match slot {
                Some(old) if old != v => {
                    return Err(LayoutError::Fragment(format!(
                        "{}: element ({row}, {col}) is {old:?} in one lane and {v:?} in lane {lane}",
                        layout.name
                    )))
                }
                _ => *slot = Some(v.clone()),
            }
        }
    }
    matrix
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            v.ok_or_else(|| {
                LayoutError::Fragment(format!("{}: element ({}, {}) is held by none of the lanes read", layout.name, i as u32 / layout.cols, i as u32 % layout.cols))
            })
        })
        .collect()
}

/// Scatters the fragments of all 32 lanes into a row-major matrix (see
/// [`fragment_to_matrix_from_lanes`]).
pub fn fragment_to_matrix<T: Clone + PartialEq + std::fmt::Debug>(
    layout: &HardwareLayout,
    fragments: &[Vec<T>],
) -> Result<Vec<T>, LayoutError> {
    let lanes: Vec<u32> = (0..WARP_SIZE).collect();
    fragment_to_matrix_from_lanes(layout, fragments, &lanes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hardware::hardware_layout;

    #[test]
    fn round_trip_and_conflicts() {
        let h = hardware_layout("mma.m16n8k16.f16.a").unwrap();
        let m: Vec<u32> = (0..256).collect();
        let f = matrix_to_fragment(h, &m).unwrap();
        assert_eq!(f[1], vec![2, 3, 130, 131, 10, 11, 138, 139]);
        assert_eq!(fragment_to_matrix(h, &f).unwrap(), m);

        let q = hardware_layout("mma.m8n8k4.f16.a.row").unwrap();
        let mut f = matrix_to_fragment(q, &(0..32).collect::<Vec<u32>>()).unwrap();
        assert!(fragment_to_matrix(q, &f).is_ok());
        f[4][0] = 99; // quad-pair 1 disagrees with quad-pair 0
        assert!(fragment_to_matrix(q, &f).is_err());
        assert!(fragment_to_matrix_from_lanes(q, &f, &[0, 1, 2, 3, 16, 17, 18, 19]).is_ok());
    }
}
