//! The defensive check that no password reaches the results database.
//!
//! Callers redact connection strings before they get here (`dbrig-driver`'s `Target` prints
//! passwords as `***`); this check only catches a caller that forgot, so it looks for the one
//! shape a leaked password takes in dbrig: the userinfo of a URL, `scheme://user:password@`.

/// Whether `text` contains a URL whose userinfo has a password other than `***`.
pub(crate) fn contains_unredacted_password(text: &str) -> bool {
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        rest = &rest[i + 3..];
        // The authority ends at the first of these; the userinfo is what precedes an '@'
        // inside it. Whitespace and quotes end it too, because `text` may be a command line
        // or a JSON document holding the URL. '/' is deliberately *not* an end: an unescaped
        // '/' in a password is common, and redact_url in dbrig-driver splits at '@' as well.
        let end = rest
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '?' | '#'))
            .unwrap_or(rest.len());
        let authority = &rest[..end];
        if let Some((userinfo, _)) = authority.split_once('@')
            && let Some((_, password)) = userinfo.split_once(':')
            && !password.is_empty()
            && password != "***"
        {
            return true;
        }
    }
    false
}

/// Whether any string (or object key) inside `value` contains an unredacted password.
pub(crate) fn json_contains_unredacted_password(value: &serde_json::Value) -> bool {
    use serde_json::Value;
    match value {
        Value::String(s) => contains_unredacted_password(s),
        Value::Array(items) => items.iter().any(json_contains_unredacted_password),
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| contains_unredacted_password(k) || json_contains_unredacted_password(v)),
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_passwords_in_urls() {
        for s in [
            "mysql://root:hunter2@127.0.0.1:3306/test",
            "postgres://bench:p/w@localhost/db",
            "--target=postgres://u:x@h/db",
            "first mysql://a:***@h/x then mysql://a:secret@h/y",
            "\"mysql://root:pw@localhost/db?socket=/tmp/s\"",
        ] {
            assert!(contains_unredacted_password(s), "{s}");
        }
    }

    #[test]
    fn accepts_redacted_and_passwordless() {
        for s in [
            "mysql://root:***@127.0.0.1:3306/test",
            "mysql://root@127.0.0.1:3306/test",
            "postgres://bench:@localhost/db",
            "sqlite:/tmp/x.db",
            "sqlite::memory:",
            "mock:?latency=1ms",
            "postgres://localhost/db?user=a@b",
            "see https://example.com/a:b for details; mail me@example.com",
            "",
        ] {
            assert!(!contains_unredacted_password(s), "{s}");
        }
    }

    #[test]
    fn walks_json() {
        let ok = serde_json::json!({"target": "mysql://u:***@h/db", "n": 1, "l": [null, true]});
        let bad = serde_json::json!({"cells": [{"target": "mysql://u:pw@h/db"}]});
        assert!(!json_contains_unredacted_password(&ok));
        assert!(json_contains_unredacted_password(&bad));
    }
}
