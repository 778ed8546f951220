//! [`PassRegistry`]: pass names → constructors. The built-in passes are registered in
//! [`PassRegistry::with_builtin`]; compilers that embed tilec add their own with [`PassRegistry::register`]
//! or [`PassRegistry::register_pass`].

use std::collections::BTreeMap;

use tilec_ir::{Diagnostic, Span};

use crate::cleanup::{Canonicalize, Cse, Dce};
use crate::options::PassOptions;
use crate::pass::Pass;
use crate::pipeline::{Pipeline, PipelineEntry};

/// Builds a pass from the options written after its name in a pipeline.
pub type PassConstructor = Box<dyn Fn(&PassOptions) -> Result<Box<dyn Pass>, Diagnostic>>;

/// What the registry knows about one pass.
pub struct PassInfo {
    pub name: &'static str,
    pub description: &'static str,
    constructor: PassConstructor,
}

impl PassInfo {
    /// Builds the pass with the given options.
    pub fn build(&self, options: &PassOptions) -> Result<Box<dyn Pass>, Diagnostic> {
        self.constructor.as_ref()(options)
    }
}

/// The passes a pipeline string may name.
#[derive(Default)]
pub struct PassRegistry {
    passes: BTreeMap<&'static str, PassInfo>,
}

impl PassRegistry {
    /// An empty registry.
    pub fn new() -> PassRegistry {
        PassRegistry::default()
    }

    /// A registry with every pass of tilec. One line per pass.
    pub fn with_builtin() -> PassRegistry {
        let mut r = PassRegistry::new();
        r.register_pass::<Canonicalize>();
        r.register_pass::<Cse>();
        r.register_pass::<Dce>();
        r.register_pass::<crate::LayoutAssignment>();
        r.register(crate::LowerTileToNvgpu::NAME, crate::LowerTileToNvgpu::DESCRIPTION, |o| Ok(Box::new(crate::LowerTileToNvgpu::from_options(o)?)));
        r.register_pass::<crate::swizzle::SwizzlePass>();
        r.register_pass::<crate::check_resources::CheckResources>();
        r.register(crate::Rasterize::NAME, crate::Rasterize::DESCRIPTION, |o| Ok(Box::new(crate::Rasterize::from_options(o)?)));
        r.register(crate::PersistentGrid::NAME, crate::PersistentGrid::DESCRIPTION, |o| {
            o.expect_only(crate::PersistentGrid::NAME, &[])?;
            Ok(Box::new(crate::PersistentGrid))
        });
        r.register(crate::SoftwarePipeline::NAME, crate::SoftwarePipeline::DESCRIPTION, |o| Ok(Box::new(crate::SoftwarePipeline::from_options(o)?)));
        r
    }

    /// Registers a pass by name with a constructor that reads its options. Replaces (and returns `true`
    /// for) a pass already registered under that name, so an embedder may override a built-in pass.
    pub fn register(
        &mut self,
        name: &'static str,
        description: &'static str,
        constructor: impl Fn(&PassOptions) -> Result<Box<dyn Pass>, Diagnostic> + 'static,
    ) -> bool {
        let info = PassInfo { name, description, constructor: Box::new(constructor) };
        self.passes.insert(name, info).is_some()
    }

    /// Registers a pass type without options (its name and description come from `P::default()`);
    /// a pipeline giving it options is an error.
    pub fn register_pass<P: Pass + Default + 'static>(&mut self) -> bool {
        let probe = P::default();
        let (name, description) = (probe.name(), probe.description());
        self.register(name, description, move |options| {
            options.expect_only(name, &[])?;
            Ok(Box::new(P::default()))
        })
    }

    pub fn contains(&self, name: &str) -> bool {
        self.passes.contains_key(name)
    }

    pub fn get(&self, name: &str) -> Option<&PassInfo> {
        self.passes.get(name)
    }

    /// Registered names, sorted.
    pub fn names(&self) -> Vec<&'static str> {
        self.passes.keys().copied().collect()
    }

    /// Every registered pass, sorted by name.
    pub fn passes(&self) -> impl Iterator<Item = &PassInfo> {
        self.passes.values()
    }

    /// The registered name closest to a misspelt one, if any is close enough to be a likely typo.
    pub fn suggest(&self, name: &str) -> Option<&'static str> {
        tilec_ir::diag::did_you_mean(name, self.passes.keys().copied())
    }

    /// Builds the pass of one pipeline entry; an unknown name is an error with a did-you-mean.
    pub fn build(&self, entry: &PipelineEntry) -> Result<Box<dyn Pass>, Diagnostic> {
        let Some(info) = self.passes.get(entry.name.as_str()) else {
            return Err(self.unknown_pass(&entry.name, entry.span));
        };
        info.build(&entry.options).map_err(|mut d| {
            if d.span.is_unknown() {
                d.span = entry.span;
            }
            d
        })
    }

    /// Builds every pass of a pipeline, in order.
    pub fn build_pipeline(&self, pipeline: &Pipeline) -> Result<Vec<Box<dyn Pass>>, Diagnostic> {
        pipeline.entries.iter().map(|e| self.build(e)).collect()
    }

    /// Parses a pipeline string and checks that every pass exists and accepts its options.
    pub fn parse_pipeline(&self, text: &str) -> Result<Pipeline, Diagnostic> {
        let pipeline = Pipeline::parse(text)?;
        self.build_pipeline(&pipeline)?;
        Ok(pipeline)
    }

    /// The error for a name that is not registered.
    pub fn unknown_pass(&self, name: &str, span: Span) -> Diagnostic {
        let hint = tilec_ir::diag::NameHint::new(name, self.names());
        Diagnostic::error(span, format!("unknown pass '{name}'")).with_note(hint.note("passes"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        let r = PassRegistry::with_builtin();
        assert_eq!(r.suggest("canonicalise"), Some("canonicalize"));
        assert_eq!(r.suggest("canon"), Some("canonicalize"));
        assert_eq!(r.suggest("dcd"), Some("dce"));
        assert_eq!(r.suggest("CSE"), Some("cse"));
        assert_eq!(r.suggest("software-pipelining"), Some("software-pipeline"));
        assert_eq!(r.suggest("vectorize-loads"), None);
    }
}
