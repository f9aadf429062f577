//! nccopy-rs's command line as a library, so tools (man pages, shell completions) and tests
//! can build the same `clap::Command` the binary parses.

pub mod args;

/// The full command-line definition of nccopy-rs.
pub fn command() -> clap::Command {
    <args::Args as clap::CommandFactory>::command()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_definition_is_consistent() {
        super::command().debug_assert();
    }
}
