//! Every ```console block of the README, the user guide and the JSON page runs here, and its output is
//! compared (issue 15: the docs cannot rot).
//!
//! In a block, `$ cmd` starts a command, `> ` lines continue it (heredocs), and every other
//! line is the command's expected stdout, byte for byte. Each command must exit 0. Commands of
//! one document run in order, in one scratch directory, with the tools first on `PATH`, and
//! what one `export`s the next sees. A block preceded by `<!-- needs: X -->` runs only where
//! X (an absolute path, or a program on `PATH`) exists; elsewhere a SKIP line says so.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;
use std::path::Path;
use std::process::Command;

/// One command of a console block, with its expected stdout.
#[derive(Debug)]
struct Step {
    line: usize,
    command: String,
    expected: String,
}

/// The console blocks of a Markdown text: (its `needs`, its steps).
fn blocks(text: &str) -> Vec<(Option<String>, Vec<Step>)> {
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_end() != "```console" {
            i += 1;
            continue;
        }
        let needs = i
            .checked_sub(1)
            .and_then(|p| lines[p].trim().strip_prefix("<!-- needs:"))
            .and_then(|r| r.strip_suffix("-->"))
            .map(|r| r.trim().to_string());
        let mut steps: Vec<Step> = Vec::new();
        i += 1;
        while i < lines.len() && lines[i].trim_end() != "```" {
            let l = lines[i];
            if let Some(c) = l.strip_prefix("$ ") {
                steps.push(Step {
                    line: i + 1,
                    command: c.to_string(),
                    expected: String::new(),
                });
            } else if let Some(s) = steps.last_mut() {
                if let Some(c) = l.strip_prefix("> ").or((l == ">").then_some("")) {
                    if s.expected.is_empty() {
                        s.command.push('\n');
                        s.command.push_str(c);
                        i += 1;
                        continue;
                    }
                }
                s.expected.push_str(l);
                s.expected.push('\n');
            } else {
                panic!("line {}: output before any command", i + 1);
            }
            i += 1;
        }
        out.push((needs, steps));
        i += 1;
    }
    out
}

fn available(what: &str) -> bool {
    if what.starts_with('/') {
        Path::new(what).exists()
    } else {
        Command::new("sh")
            .args(["-c", &format!("command -v {what}")])
            .output()
            .is_ok_and(|o| o.status.success())
    }
}

fn run_document(doc: &str) {
    let text = fs::read_to_string(common::root().join(doc)).unwrap();
    let blocks = blocks(&text);
    assert!(!blocks.is_empty(), "{doc} has no console block");
    let dir = common::tempdir(&format!("doc-{}", doc.replace('/', "-")));
    let tools = common::bin("ncgen-rs").parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        tools.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = 0;
    for (needs, steps) in blocks {
        if let Some(n) = needs.as_deref().filter(|n| !available(n)) {
            eprintln!("SKIP: {doc}: a block needs {n}, not on this machine");
            continue;
        }
        for s in steps {
            let script = format!(
                "set -o pipefail\n. ./.doc_env 2>/dev/null\n{}\nrc=$?\nexport -p > .doc_env\nexit $rc\n",
                s.command
            );
            let o = Command::new("bash")
                .args(["-c", &script])
                .current_dir(&dir)
                .env("PATH", &path)
                .env_remove("HDF5_PLUGIN_PATH")
                .env_remove("NCRS_THREADS")
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "{doc}:{}: `{}` exited {:?}: {}",
                s.line,
                s.command,
                o.status.code(),
                String::from_utf8_lossy(&o.stderr)
            );
            let got = String::from_utf8_lossy(&o.stdout);
            assert_eq!(
                got, s.expected,
                "{doc}:{}: `{}` printed something else",
                s.line, s.command
            );
            ran += 1;
        }
    }
    eprintln!("{doc}: {ran} commands ran");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn readme_examples_run_as_written() {
    run_document("README.md");
}

#[test]
fn guide_examples_run_as_written() {
    run_document("docs/guide.md");
}

#[test]
fn json_page_examples_run_as_written() {
    run_document("docs/json.md");
}

#[test]
fn the_block_reader_takes_commands_continuations_and_output() {
    let b = blocks("x\n<!-- needs: ncdump -->\n```console\n$ cat > a <<'EOF'\n> one\n>\n> EOF\n$ cat a\none\n\n```\n");
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].0.as_deref(), Some("ncdump"));
    assert_eq!(b[0].1[0].command, "cat > a <<'EOF'\none\n\nEOF");
    assert_eq!(b[0].1[0].expected, "");
    assert_eq!(b[0].1[1].command, "cat a");
    assert_eq!(b[0].1[1].expected, "one\n\n");
}
