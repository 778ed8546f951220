//! [`PassContext`]: what a pipeline run shares between passes (the target, global options) and what passes
//! leave behind for the driver (remarks and typed reports).
//!
//! Passes do not talk to each other through global state: a later pass or the driver reads what an earlier
//! pass stored here, e.g. the swizzle pass stores a `BankConflictReport` with [`PassContext::set_report`]
//! and the driver prints it with [`PassContext::report`].

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};

use tilec_ir::{Diagnostic, Span};

use tilec_ir::Target;

/// A note a pass leaves for the user (what it did, or why it could not do something), with where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remark {
    /// The pass that left it.
    pub pass: String,
    pub span: Span,
    pub message: String,
}

/// State of one pipeline run, handed to every pass.
#[derive(Debug, Default)]
pub struct PassContext {
    /// The architecture being compiled for.
    pub target: Target,
    /// Global options (`-D key=value`-style settings from the driver or the embedding compiler), as text.
    pub options: BTreeMap<String, String>,
    /// Remarks left by passes, in the order they were made.
    pub remarks: Vec<Remark>,
    /// Located warnings left by passes (what the user asked for and did not get, e.g. a loop the software
    /// pipeliner declined despite `pipeline_stages`): the driver prints them on stderr like errors.
    pub warnings: Vec<Diagnostic>,
    /// The pass now running (set by the [`crate::PassManager`]), used to attribute remarks.
    pub(crate) current_pass: Option<&'static str>,
    reports: HashMap<TypeId, Box<dyn Any>>,
}

impl PassContext {
    /// A context for the given target with no options.
    pub fn new(target: Target) -> PassContext {
        PassContext { target, ..PassContext::default() }
    }

    /// Sets a global option.
    pub fn with_option(mut self, key: impl Into<String>, value: impl Into<String>) -> PassContext {
        self.options.insert(key.into(), value.into());
        self
    }

    pub fn option(&self, key: &str) -> Option<&str> {
        self.options.get(key).map(String::as_str)
    }

    /// The pass now running, when called from inside a pass run by the manager.
    pub fn current_pass(&self) -> Option<&'static str> {
        self.current_pass
    }

    /// Leaves a remark, attributed to the running pass.
    pub fn remark(&mut self, span: Span, message: impl Into<String>) {
        let pass = self.current_pass.unwrap_or("<none>").to_string();
        self.remarks.push(Remark { pass, span, message: message.into() });
    }

    /// Leaves a located warning (severity [`tilec_ir::Severity::Warning`]) for the driver to print.
    pub fn warn(&mut self, warning: Diagnostic) {
        self.warnings.push(warning);
    }

    /// Stores a typed report (one per type; a second store replaces the first).
    pub fn set_report<R: Any>(&mut self, report: R) {
        self.reports.insert(TypeId::of::<R>(), Box::new(report));
    }

    /// The stored report of this type.
    pub fn report<R: Any>(&self) -> Option<&R> {
        self.reports.get(&TypeId::of::<R>())?.downcast_ref()
    }

    /// The stored report of this type, mutably (to add to it).
    pub fn report_mut<R: Any>(&mut self) -> Option<&mut R> {
        self.reports.get_mut(&TypeId::of::<R>())?.downcast_mut()
    }

    /// The stored report of this type, created with `Default` if absent.
    // Invariant: the map is keyed by the `TypeId` of the boxed value, so the downcast cannot fail.
    #[allow(clippy::expect_used)]
    pub fn report_or_default<R: Any + Default>(&mut self) -> &mut R {
        self.reports
            .entry(TypeId::of::<R>())
            .or_insert_with(|| Box::new(R::default()))
            .downcast_mut()
            .expect("reports are keyed by their type")
    }

    /// Removes and returns the stored report of this type.
    pub fn take_report<R: Any>(&mut self) -> Option<R> {
        let boxed = self.reports.remove(&TypeId::of::<R>())?;
        boxed.downcast().ok().map(|b| *b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, PartialEq)]
    struct Count(u32);

    #[test]
    fn typed_reports() {
        let mut cx = PassContext::new(Target::Sm90);
        assert!(cx.report::<Count>().is_none());
        cx.report_or_default::<Count>().0 += 2;
        cx.report_or_default::<Count>().0 += 1;
        assert_eq!(cx.report::<Count>(), Some(&Count(3)));
        assert_eq!(cx.take_report::<Count>(), Some(Count(3)));
        assert!(cx.report::<Count>().is_none());
    }
}
