//! `warpwise cc`: a C compiler wrapper (`CC="warpwise cc" make`) that instruments every C
//! file it compiles and links the profiler runtime; everything else goes to the real
//! compiler (`$WARPWISE_CC`, else `cc`) unchanged.

use clap::Args;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct CcArgs {
    /// The compiler's arguments, passed through.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    pub args: Vec<String>,
}

pub fn run_command(args: &[String]) -> ExitCode {
    let code = profile::driver::cc(args);
    ExitCode::from(code.clamp(0, 255) as u8)
}
