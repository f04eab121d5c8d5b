//! Where a connection URL keeps its credentials: the one rule by which dbrig finds a password
//! in a URL. Parsing a target (`dbrig-driver`'s `Target::parse`), redacting a URL that does not
//! parse, and the results database's refusal of unredacted passwords all call
//! [`split_userinfo`], so none of them can disagree about where a password ends.
//!
//! The rule: in `SCHEME://REST`, the userinfo is `REST` up to its **last** `@`; the user is the
//! userinfo up to its first `:`, the password everything after that `:`. A password may thus
//! hold any of `@ : / ? # %` unescaped (people paste such passwords), while a user must escape
//! `:` and an `@` after the host (in a socket path, say) must be written `%40`. An empty
//! password (`root:@host`) is no password, everywhere.
//!
//! Each part is then percent-decoded ([`percent_decode`]): `p%40ss` is the password `p@ss`.
//! A password thus has many written forms (raw, encoded in either case of hex, partly
//! encoded); `dbrig_exec::secrets` masks all of them.

/// A URL's text after `SCHEME://`, split at its credentials. All parts are still
/// percent-encoded, exactly as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Userinfo<'a> {
    /// The user, when the URL has an `@`.
    pub user: Option<&'a str>,
    /// The password, when the userinfo has a non-empty one after its first `:`.
    pub password: Option<&'a str>,
    /// What follows the userinfo's `@` (host, port, path, query), or all of it without an `@`.
    pub rest: &'a str,
}

/// The one place a URL's credentials are found: `after_scheme` is the URL's text after `://`.
pub fn split_userinfo(after_scheme: &str) -> Userinfo<'_> {
    match after_scheme.rsplit_once('@') {
        None => Userinfo {
            user: None,
            password: None,
            rest: after_scheme,
        },
        Some((userinfo, rest)) => {
            let (user, password) = match userinfo.split_once(':') {
                Some((user, password)) => (user, Some(password).filter(|p| !p.is_empty())),
                None => (userinfo, None),
            };
            Userinfo {
                user: Some(user),
                password,
                rest,
            }
        }
    }
}

/// A URL part as it means: every `%HH` replaced by its byte (either case of hex digits), byte
/// by byte so no multi-byte character is split; a `%` not followed by two hex digits stays as
/// it is, and bytes that do not make UTF-8 become U+FFFD.
pub fn percent_decode(part: &str) -> String {
    percent_encoding::percent_decode_str(part)
        .decode_utf8_lossy()
        .into_owned()
}

/// What a redacted password reads as.
pub const REDACTED: &str = "***";

/// `url` with its password (if any) replaced by [`REDACTED`]; a URL that does not even parse
/// as a target is redacted by the same rule (for error messages).
pub fn redact(url: &str) -> String {
    if let Some((scheme, after)) = url.split_once("://") {
        let parts = split_userinfo(after);
        if let (Some(user), Some(_)) = (parts.user, parts.password) {
            return format!("{scheme}://{user}:{REDACTED}@{}", parts.rest);
        }
    }
    url.to_owned()
}

/// Whether `text` (a command line, an error message, a JSON document) holds a URL whose password
/// is not [`REDACTED`]. In free text a URL ends at whitespace or a quote; a URL dbrig accepts
/// holds neither unescaped (`Target::parse` refuses them), so every URL it could have printed is
/// seen whole here.
pub fn text_has_unredacted_password(text: &str) -> bool {
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        rest = &rest[i + 3..];
        let end = rest.find(ends_url_in_text).unwrap_or(rest.len());
        if split_userinfo(&rest[..end])
            .password
            .is_some_and(|p| p != REDACTED)
        {
            return true;
        }
    }
    false
}

/// The characters that end a URL inside free text (and that a target URL must escape).
pub fn ends_url_in_text(c: char) -> bool {
    c.is_whitespace() || c.is_control() || matches!(c, '"' | '\'' | '`' | '\\')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_at_ends_the_userinfo() {
        assert_eq!(
            split_userinfo("root:p@ss:w/o?r#d%@[::1]:3307/db?socket=/s"),
            Userinfo {
                user: Some("root"),
                password: Some("p@ss:w/o?r#d%"),
                rest: "[::1]:3307/db?socket=/s",
            }
        );
        assert_eq!(
            split_userinfo("bench@h/db"),
            Userinfo {
                user: Some("bench"),
                password: None,
                rest: "h/db",
            }
        );
        assert_eq!(
            split_userinfo("h:5432/db"),
            Userinfo {
                user: None,
                password: None,
                rest: "h:5432/db",
            }
        );
    }

    #[test]
    fn percent_decoding_takes_either_case_and_leaves_stray_percents() {
        assert_eq!(percent_decode("p%40ss%3aw%2Frd%25%C3%A9"), "p@ss:w/rd%é");
        assert_eq!(percent_decode("%zz%aé%4"), "%zz%aé%4");
        assert_eq!(percent_decode("%%40"), "%@");
    }

    #[test]
    fn an_empty_password_is_none() {
        let parts = split_userinfo("root:@h/db");
        assert_eq!((parts.user, parts.password), (Some("root"), None));
        assert_eq!(redact("mysql://root:@h/db"), "mysql://root:@h/db");
        assert!(!text_has_unredacted_password("mysql://root:@h/db"));
    }

    #[test]
    fn redacts_up_to_the_last_at() {
        assert_eq!(
            redact("mysql://root:p@ssw0rd@h:1/db"),
            "mysql://root:***@h:1/db"
        );
        assert_eq!(redact("mysql://root@h/db"), "mysql://root@h/db");
        assert_eq!(redact("sqlite:/tmp/a@b"), "sqlite:/tmp/a@b");
        assert_eq!(redact("ftp://u:x@y"), "ftp://u:***@y");
    }

    #[test]
    fn finds_passwords_in_text() {
        for s in [
            "mysql://root:hunter2@127.0.0.1:3306/test",
            "postgres://bench:p/w@localhost/db",
            "--target=postgres://u:x@h/db",
            "first mysql://a:***@h/x then mysql://a:secret@h/y",
            "\"mysql://root:pw@localhost/db?socket=/tmp/s\"",
            "invalid target URL 'mysql://root:p@ssw0rd@h/db': port",
            "mysql://root:***@p@h/db",
        ] {
            assert!(text_has_unredacted_password(s), "{s}");
        }
        for s in [
            "mysql://root:***@127.0.0.1:3306/test",
            "mysql://root@127.0.0.1:3306/test",
            "postgres://bench:@localhost/db",
            "sqlite:/tmp/x.db",
            "mock:?latency=1ms",
            "postgres://localhost/db?user=a@b",
            "see https://example.com/a:b for details; mail me@example.com",
            // Quotes end a URL in JSON and messages, so a later '@' is not read as its own.
            r#"{"target":"mysql://u:***@h/db","mail":"me@example.com"}"#,
            "invalid target URL 'mysql://u:***@h/db': ask admin@example.com",
            "`mysql://u:***@h/db`@x",
            r"mysql://u:***@h/db\@x",
            "",
        ] {
            assert!(!text_has_unredacted_password(s), "{s}");
        }
    }
}
