//! The defensive check that no password reaches the results database.
//!
//! Callers redact connection strings before they get here (`dbrig-driver`'s `Target` prints
//! passwords as `***`); this check only catches a caller that forgot, so it looks for the one
//! shape a leaked password takes in dbrig: the userinfo of a URL, `scheme://user:password@`,
//! found by `dbrig_core::url`'s rule, the one target parsing and redaction use.

/// Whether `text` contains a URL whose userinfo has a password other than `***` (found by
/// the same rule that parses and redacts target URLs).
pub(crate) fn contains_unredacted_password(text: &str) -> bool {
    dbrig_core::url::text_has_unredacted_password(text)
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
    fn uses_the_last_at_like_target_parsing() {
        // The case the old first-'@' scan missed: a password holding '@'.
        assert!(contains_unredacted_password(
            "invalid target URL 'mysql://root:***@ssw0rd@h/db': bad port"
        ));
        assert!(!contains_unredacted_password("mysql://root:***@h:3306/db"));
    }

    #[test]
    fn walks_json() {
        let ok = serde_json::json!({"target": "mysql://u:***@h/db", "n": 1, "l": [null, true]});
        let bad = serde_json::json!({"cells": [{"target": "mysql://u:pw@h/db"}]});
        assert!(!json_contains_unredacted_password(&ok));
        assert!(json_contains_unredacted_password(&bad));
    }
}
