//! Which side of a tool's work an error arose on — the input, the command line or the output —
//! so the tool can return the exit code [`crate::exit`] documents for it.

use std::error::Error;
use std::fmt;

/// Where an error arose; it decides the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Opening, reading or decoding the input ([`crate::exit::INPUT`]).
    Input,
    /// The command line: an option value, or a name it gives that the input lacks
    /// ([`crate::exit::USAGE`]).
    Usage,
    /// Creating, writing or committing the output, or a dataset the output format cannot
    /// hold ([`crate::exit::OUTPUT`]).
    Output,
}

impl Side {
    /// The exit code for a failure on this side.
    pub const fn exit_code(self) -> u8 {
        match self {
            Side::Input => crate::exit::INPUT,
            Side::Usage => crate::exit::USAGE,
            Side::Output => crate::exit::OUTPUT,
        }
    }
}

/// An error marked with the [`Side`] it arose on. It shows exactly what it wraps (its text
/// and its `source()` are the wrapped error's), so marking never changes a message.
///
/// A binary using `anyhow` finds the mark under any context it added with
/// `err.downcast_ref::<Failure>()`, and exits with [`Failure::exit_code`].
pub struct Failure {
    side: Side,
    error: Box<dyn Error + Send + Sync + 'static>,
}

impl Failure {
    /// Mark `error` as arising on `side`.
    pub fn new(side: Side, error: impl Into<Box<dyn Error + Send + Sync + 'static>>) -> Failure {
        Failure {
            side,
            error: error.into(),
        }
    }

    /// An input error (see [`Side::Input`]).
    pub fn input(error: impl Into<Box<dyn Error + Send + Sync + 'static>>) -> Failure {
        Failure::new(Side::Input, error)
    }

    /// A command-line error (see [`Side::Usage`]); a `String` is a message of its own.
    pub fn usage(error: impl Into<Box<dyn Error + Send + Sync + 'static>>) -> Failure {
        Failure::new(Side::Usage, error)
    }

    /// An output error (see [`Side::Output`]).
    pub fn output(error: impl Into<Box<dyn Error + Send + Sync + 'static>>) -> Failure {
        Failure::new(Side::Output, error)
    }

    /// The side the error arose on.
    pub fn side(&self) -> Side {
        self.side
    }

    /// The exit code for it.
    pub fn exit_code(&self) -> u8 {
        self.side.exit_code()
    }

    /// The error marked.
    pub fn inner(&self) -> &(dyn Error + Send + Sync + 'static) {
        self.error.as_ref()
    }
}

impl fmt::Debug for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Failure")
            .field("side", &self.side)
            .field("error", &self.error)
            .finish()
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.error, f)
    }
}

impl Error for Failure {
    // transparent: the wrapped error's own cause, never the wrapped error itself (which
    // `Display` already prints)
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.error.source()
    }
}

/// An error and its causes as a tool prints them: joined by ": ", as `anyhow`'s `{:#}` joins
/// them, each cause once. A cause whose text already ends the message is not repeated: an error
/// that words its source into its own text (`"{file}: {source}"`) and also gives it as its
/// `source()` read `"a.nc: truncated: truncated"` under `{:#}`.
pub fn error_text(e: &(dyn Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut next = e.source();
    while let Some(cause) = next {
        let t = cause.to_string();
        if !t.is_empty() && !text.ends_with(&t) {
            text.push_str(": ");
            text.push_str(&t);
        }
        next = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Wrap(String, Option<Box<dyn Error + 'static>>);
    impl fmt::Display for Wrap {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(&self.0)
        }
    }
    impl Error for Wrap {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            self.1.as_deref()
        }
    }

    #[test]
    fn each_cause_is_printed_once() {
        let leaf = || Box::new(Wrap("data up to byte 124 is needed".into(), None));
        // a cause the message words itself is not repeated
        let e = Wrap(
            "cannot open input".into(),
            Some(Box::new(Wrap(
                "b.nc: variable \"/time\": data up to byte 124 is needed".into(),
                Some(leaf()),
            ))),
        );
        assert_eq!(
            error_text(&e),
            "cannot open input: b.nc: variable \"/time\": data up to byte 124 is needed"
        );
        // one that it does not is joined, as {:#} joins it
        let e = Wrap(
            "cannot open input".into(),
            Some(Box::new(Wrap("b.nc".into(), Some(leaf())))),
        );
        assert_eq!(
            error_text(&e),
            "cannot open input: b.nc: data up to byte 124 is needed"
        );
        let any = anyhow::Error::new(std::io::Error::other("gone")).context("reading a.nc");
        assert_eq!(error_text(any.as_ref()), format!("{any:#}"));
    }

    #[test]
    fn marking_keeps_the_message_and_gives_the_exit_code() {
        let e = Failure::usage("-c latt/5: no dimension \"latt\" in the input".to_string());
        assert_eq!(
            e.to_string(),
            "-c latt/5: no dimension \"latt\" in the input"
        );
        assert_eq!(e.exit_code(), 2);
        assert!(e.source().is_none());
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let e = Failure::input(io);
        assert_eq!((e.side(), e.exit_code()), (Side::Input, 1));
        assert_eq!(Failure::output("x".to_string()).exit_code(), 3);
    }
}
