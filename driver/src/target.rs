//! `--target`: the one place the driver turns the option's text into a [`Target`] (compile, sim, bundle,
//! run, bench and tune all call [`parse_target`]).

use tilec_ir::Target;

use crate::error::DriverError;

/// What `--target` takes when it is not given, for every command that compiles without a GPU at hand
/// (compile, sim, bundle, run). `tilec bench` and `tilec tune` measure on the GPU and default to its target.
pub const DEFAULT_TARGET: &str = Target::DEFAULT.chip();

/// The names `--target` accepts, for help texts.
pub const TARGET_VALUES: &str = "sm_80|sm_86|sm_89|sm_90|sm_90a|native";

/// `sm_80`, `sm80`, `80` (likewise for the other targets) or `native`: the newest target the GPU present
/// (device 0) runs. `native` without a GPU is an environment error (exit code 2).
pub fn parse_target(text: &str) -> Result<Target, DriverError> {
    if text == "native" {
        let ctx = tilec_gpu_runner::open_gpu().map_err(|e| {
            let why = match e {
                tilec_gpu_runner::RunError::NoGpu(why) => why,
                other => other.to_string(),
            };
            DriverError::Environment(format!("no GPU: --target native needs one; pass --target sm_80|sm_86|sm_89|sm_90|sm_90a ({why})"))
        })?;
        return target_of(&ctx);
    }
    text.parse().map_err(|_: tilec_ir::UnknownTarget| {
        DriverError::Usage(format!("unknown target '{text}' (expected one of sm_80, sm_86, sm_89, sm_90, sm_90a, native)"))
    })
}

/// The target for this machine's GPU: the newest tilec target its compute capability runs.
pub fn target_of(ctx: &std::sync::Arc<tilec_gpu_runner::CudaContext>) -> Result<Target, DriverError> {
    let (major, minor) =
        ctx.compute_capability().map_err(|e| DriverError::Environment(format!("compute capability: {e:?}")))?;
    let cc = u32::try_from(major * 10 + minor).unwrap_or(0);
    Target::newest_for_compute_capability(cc)
        .ok_or_else(|| DriverError::Environment(format!("the GPU is sm_{cc}; tilec needs sm_80 or newer")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_and_names() {
        assert_eq!(parse_target(DEFAULT_TARGET).ok(), Some(Target::DEFAULT));
        assert_eq!(parse_target("sm90").ok(), Some(Target::Sm90));
        let err = parse_target("sm_75").err().map(|e| (e.exit_code(), e.to_string()));
        assert_eq!(err, Some((1, "unknown target 'sm_75' (expected one of sm_80, sm_86, sm_89, sm_90, sm_90a, native)".into())));
    }
}
