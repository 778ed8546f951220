//! [`TimingReport`]: wall time per pass, printed like `mlir-opt --mlir-timing`.

use std::fmt;
use std::time::Duration;

/// What a row of the report measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimingKind {
    /// One pass of the pipeline (a pass that appears twice has two rows).
    Pass,
    /// The verifier, summed over all its runs (after every pass when `verify_each` is on).
    Verifier,
    /// Printing IR for `--print-ir-*`, summed.
    Printing,
    /// Anything the embedder adds (parsing, output) with [`TimingReport::push`].
    Other,
}

/// One row: a name and the wall time spent on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimingRow {
    pub name: String,
    pub kind: TimingKind,
    pub wall: Duration,
}

/// Wall time of each pass of a run, in pipeline order, then the verifier and printing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TimingReport {
    pub rows: Vec<TimingRow>,
}

impl TimingReport {
    /// Adds a row at the end (e.g. the driver's `parse` before and `output` after the pipeline).
    pub fn push(&mut self, name: impl Into<String>, kind: TimingKind, wall: Duration) {
        self.rows.push(TimingRow { name: name.into(), kind, wall });
    }

    /// Adds a row at the start.
    pub fn push_front(&mut self, name: impl Into<String>, kind: TimingKind, wall: Duration) {
        self.rows.insert(0, TimingRow { name: name.into(), kind, wall });
    }

    /// The sum of all rows.
    pub fn total(&self) -> Duration {
        self.rows.iter().map(|r| r.wall).sum()
    }

    /// The names of the rows, in order.
    pub fn names(&self) -> Vec<&str> {
        self.rows.iter().map(|r| r.name.as_str()).collect()
    }
}

const RULE: &str = "===-------------------------------------------------------------------------===";

/// The `mlir-opt --mlir-timing` layout:
/// ```text
/// ===-------------------------------------------------------------------------===
///                          ... Execution time report ...
/// ===-------------------------------------------------------------------------===
///   Total Execution Time: 0.0012 seconds
///
///   ----Wall Time----  ----Name----
///     0.0003 ( 25.0%)  canonicalize
///     ...
///     0.0012 (100.0%)  Total
/// ```
impl fmt::Display for TimingReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total = self.total().as_secs_f64();
        let percent = |d: Duration| if total > 0.0 { 100.0 * d.as_secs_f64() / total } else { 0.0 };
        writeln!(f, "{RULE}")?;
        writeln!(f, "{:>52}", "... Execution time report ...")?;
        writeln!(f, "{RULE}")?;
        writeln!(f, "  Total Execution Time: {total:.4} seconds")?;
        writeln!(f)?;
        writeln!(f, "  ----Wall Time----  ----Name----")?;
        for row in &self.rows {
            writeln!(f, "  {:>9.4} ({:>5.1}%)  {}", row.wall.as_secs_f64(), percent(row.wall), row.name)?;
        }
        writeln!(f, "  {:>9.4} ({:>5.1}%)  Total", total, if total > 0.0 { 100.0 } else { 0.0 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        let mut r = TimingReport::default();
        r.push("canonicalize", TimingKind::Pass, Duration::from_millis(30));
        r.push("dce", TimingKind::Pass, Duration::from_millis(10));
        let text = r.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], RULE);
        assert_eq!(lines[1].trim(), "... Execution time report ...");
        assert_eq!(lines[3], "  Total Execution Time: 0.0400 seconds");
        assert_eq!(lines[5], "  ----Wall Time----  ----Name----");
        assert_eq!(lines[6], "     0.0300 ( 75.0%)  canonicalize");
        assert_eq!(lines[7], "     0.0100 ( 25.0%)  dce");
        assert_eq!(lines[8], "     0.0400 (100.0%)  Total");
    }
}
