//! `.netrc` files as curl reads them: `machine HOST login L password P` (tokens separated by
//! any white space, so an entry may span lines), `default` for any other host, `account`
//! ignored, `macdef NAME` skipping its body up to the next blank line, `#` comment lines.

use std::path::Path;

/// One `machine` (or `default`) entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetrcEntry {
    /// the host, or `None` for `default`
    pub machine: Option<String>,
    /// the user name
    pub login: String,
    /// the password
    pub password: String,
}

/// The entries of a `.netrc` file.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Netrc {
    entries: Vec<NetrcEntry>,
}

// no Debug of passwords
impl std::fmt::Debug for Netrc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Netrc({} entries)", self.entries.len())
    }
}

impl Netrc {
    /// The entries of a `.netrc` text (unknown tokens are skipped).
    pub fn parse(text: &str) -> Netrc {
        let mut tokens = Vec::new();
        let mut in_macro = false;
        let mut after_macdef = false;
        for line in text.lines() {
            if in_macro {
                if line.trim().is_empty() {
                    in_macro = false;
                }
                continue;
            }
            if line.trim_start().starts_with('#') {
                continue;
            }
            for t in line.split_whitespace() {
                if after_macdef {
                    // the macro's name; its body starts on the next line
                    after_macdef = false;
                    in_macro = true;
                    continue;
                }
                if t == "macdef" {
                    after_macdef = true;
                    continue;
                }
                tokens.push(t);
            }
            if after_macdef {
                after_macdef = false;
                in_macro = true;
            }
        }
        let mut entries: Vec<NetrcEntry> = Vec::new();
        let mut i = 0;
        while i < tokens.len() {
            match tokens[i] {
                "machine" | "default" => {
                    let machine = if tokens[i] == "machine" {
                        i += 1;
                        tokens.get(i).map(|h| h.to_ascii_lowercase())
                    } else {
                        None
                    };
                    entries.push(NetrcEntry {
                        machine,
                        login: String::new(),
                        password: String::new(),
                    });
                }
                key @ ("login" | "password" | "account") => {
                    i += 1;
                    if let (Some(v), Some(e)) = (tokens.get(i), entries.last_mut()) {
                        match key {
                            "login" => e.login = (*v).to_string(),
                            "password" => e.password = (*v).to_string(),
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
            i += 1;
        }
        Netrc { entries }
    }

    /// The file at `path`; `None` when it cannot be read.
    pub fn load(path: &Path) -> Option<Netrc> {
        std::fs::read_to_string(path).ok().map(|t| Netrc::parse(&t))
    }

    /// The entry for `host`: its `machine` entry, else the `default` entry.
    pub fn lookup(&self, host: &str) -> Option<&NetrcEntry> {
        self.entries
            .iter()
            .find(|e| {
                e.machine
                    .as_deref()
                    .is_some_and(|m| m.eq_ignore_ascii_case(host))
            })
            .or_else(|| self.entries.iter().find(|e| e.machine.is_none()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machines_default_and_macros() {
        let n = Netrc::parse(
            "# my hosts\n\
             machine urs.earthdata.nasa.gov login alice password s3cret\n\
             machine Data.Example.org\n  login bob\n  account x\n  password pw2\n\
             macdef init\n  machine evil login no password no\n\n\
             default login anon password guest\n",
        );
        let e = n.lookup("urs.earthdata.nasa.gov").unwrap();
        assert_eq!((e.login.as_str(), e.password.as_str()), ("alice", "s3cret"));
        let e = n.lookup("data.example.org").unwrap();
        assert_eq!((e.login.as_str(), e.password.as_str()), ("bob", "pw2"));
        // the macro's body is no entry: "evil" falls to the default
        let e = n.lookup("evil").unwrap();
        assert_eq!((e.login.as_str(), e.password.as_str()), ("anon", "guest"));
        assert_eq!(n.entries.len(), 3);
        assert_eq!(
            Netrc::parse("machine a login b password c").lookup("z"),
            None
        );
    }
}
