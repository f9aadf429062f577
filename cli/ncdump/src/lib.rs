//! ncdump-rs as a library: the clap command line ([`command`], for the binary and for man-page
//! and completion generators) and its mapping onto [`nc_cdl::DumpOptions`].

pub mod args;
pub mod options;

pub use args::{Args, USAGE};

/// The full clap command of `ncdump-rs` (every option, help headings, help texts).
pub fn command() -> clap::Command {
    <Args as clap::CommandFactory>::command()
}

#[cfg(test)]
mod tests {
    #[test]
    fn command_is_consistent() {
        super::command().debug_assert();
    }
}
