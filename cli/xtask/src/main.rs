//! `cargo run -p nc-xtask -- man DIR` writes `ncgen-rs.1`, `ncdump-rs.1` and `nccopy-rs.1`;
//! `cargo run -p nc-xtask -- completions DIR` writes each tool's bash, zsh and fish
//! completions. Both come from the clap definitions the binaries parse (`ncgen_rs::command()`
//! and its siblings), so they cannot disagree with the tools.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap_complete::Shell;

/// Every tool's command definition.
fn commands() -> Vec<clap::Command> {
    vec![
        ncgen_rs::command(),
        ncdump_rs::command(),
        nccopy_rs::command(),
    ]
}

/// Write `NAME.1` for every tool into `dir`; the paths written.
///
/// # Errors
/// When `dir` cannot be created or a file cannot be written.
pub fn write_man_pages(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut out = Vec::new();
    for cmd in commands() {
        let name = cmd.get_name().to_string();
        let path = dir.join(format!("{name}.1"));
        let mut buf = Vec::new();
        clap_mangen::Man::new(cmd)
            .render(&mut buf)
            .with_context(|| format!("rendering the man page of {name}"))?;
        std::fs::write(&path, buf).with_context(|| format!("writing {}", path.display()))?;
        out.push(path);
    }
    Ok(out)
}

/// Write bash, zsh and fish completions of every tool into `dir`; the paths written.
///
/// # Errors
/// When `dir` cannot be created or a file cannot be written.
pub fn write_completions(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut out = Vec::new();
    for mut cmd in commands() {
        let name = cmd.get_name().to_string();
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            let path = clap_complete::generate_to(shell, &mut cmd, &name, dir)
                .with_context(|| format!("writing the {shell} completions of {name}"))?;
            out.push(path);
        }
    }
    Ok(out)
}

fn run(args: &[String]) -> anyhow::Result<()> {
    let (what, dir) = match args {
        [what, dir] => (what.as_str(), PathBuf::from(dir)),
        _ => bail!("usage: nc-xtask man DIR | nc-xtask completions DIR"),
    };
    let written = match what {
        "man" => write_man_pages(&dir)?,
        "completions" => write_completions(&dir)?,
        other => bail!("unknown task {other:?}: use man or completions"),
    };
    for p in written {
        println!("{}", p.display());
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("nc-xtask: {e:#}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Each man page names its tool and documents every option letter it parses.
    #[test]
    fn man_pages_document_every_option() {
        let dir = std::env::temp_dir().join(format!("nc-xtask-man-{}", std::process::id()));
        let pages = write_man_pages(&dir).unwrap();
        assert_eq!(pages.len(), 3);
        for cmd in commands() {
            let name = cmd.get_name().to_string();
            let text = std::fs::read_to_string(dir.join(format!("{name}.1"))).unwrap();
            assert!(
                text.contains(&format!(".TH {name}")),
                "{name}: {}",
                &text[..200.min(text.len())]
            );
            for arg in cmd.get_arguments() {
                if let Some(s) = arg.get_short() {
                    // roff escapes the dash: \-k
                    assert!(text.contains(&format!("\\-{s}")), "{name}: -{s} missing");
                }
                if let Some(l) = arg.get_long() {
                    // every dash of a long name is escaped: \-\-kerchunk\-url
                    let escaped = l.replace('-', "\\-");
                    assert!(
                        text.contains(&format!("\\-\\-{escaped}")),
                        "{name}: --{l} missing"
                    );
                }
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Completions for the three shells, each naming the tool's options.
    #[test]
    fn completions_for_three_shells() {
        let dir = std::env::temp_dir().join(format!("nc-xtask-comp-{}", std::process::id()));
        let files = write_completions(&dir).unwrap();
        assert_eq!(files.len(), 9);
        let bash = std::fs::read_to_string(dir.join("nccopy-rs.bash")).unwrap();
        assert!(bash.contains("--explain") && bash.contains("-F"), "{bash}");
        let fish = std::fs::read_to_string(dir.join("ncdump-rs.fish")).unwrap();
        assert!(fish.contains("complete -c ncdump-rs"), "{fish}");
        assert!(dir.join("_ncgen-rs").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
