//! URLs as the services show them: `scheme://host[:port]` only.
//!
//! An RPC provider's API key usually sits in the URL's path or query (or its user info), and
//! `/healthz` answers anyone (CORS allows any origin), so no answer, log line or boot message
//! shows more of a URL than its origin. The RPC client's own errors quote the URL they failed
//! on, so text that may hold one goes through [`urls_in`] before it is shown.

/// `url` as `scheme://host[:port]`: without user info, path, query or fragment. A value
/// without a scheme is cut the same way (`host[:port]`).
pub fn origin(url: &str) -> String {
    let url = url.trim();
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (Some(scheme), rest),
        None => (None, url),
    };
    let authority = rest.split(['/', '?', '#', '\\']).next().unwrap_or_default();
    // User info ends at the authority's last '@'.
    let host = authority.rsplit('@').next().unwrap_or_default();
    match scheme {
        Some(s) => format!("{s}://{host}"),
        None => host.to_string(),
    }
}

/// Characters that cannot be part of a URL (RFC 3986), so end one quoted in text.
fn ends_url(c: char) -> bool {
    c.is_whitespace() || matches!(c, '"' | '<' | '>' | '\\' | '^' | '`' | '{' | '|' | '}')
}

/// Punctuation that may follow a URL in text rather than belong to it: kept after the origin.
fn trailing(c: char) -> bool {
    matches!(c, ')' | ']' | '.' | ',' | ';' | ':' | '\'' | '!')
}

/// `text` with every URL in it (`scheme://...`) cut to its origin.
pub fn urls_in(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        // The scheme: the letters, digits, '+', '-' and '.' before "://", from a letter.
        let before = &rest[..at];
        let scheme_len = before
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            .count();
        let mut start = at - scheme_len;
        while start < at && !rest.as_bytes()[start].is_ascii_alphabetic() {
            start += 1;
        }
        let end = rest[at..].find(ends_url).map_or(rest.len(), |i| at + i);
        if start == at {
            // "://" without a scheme: not a URL; keep it and go on after it.
            out.push_str(&rest[..at + 3]);
            rest = &rest[at + 3..];
            continue;
        }
        let url = &rest[start..end];
        let kept = url.trim_end_matches(trailing);
        out.push_str(&rest[..start]);
        out.push_str(&origin(kept));
        out.push_str(&url[kept.len()..]);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_origin_is_scheme_host_and_port() {
        for (url, want) in [
            (
                "http://127.0.0.1:8899/secret-key?api-key=abc",
                "http://127.0.0.1:8899",
            ),
            ("https://rpc.example.com/v2/KEY", "https://rpc.example.com"),
            (
                "https://user:pass@rpc.example.com:8443/?k=1#f",
                "https://rpc.example.com:8443",
            ),
            (
                "https://rpc.example.com?api-key=abc",
                "https://rpc.example.com",
            ),
            ("http://[::1]:8899/x", "http://[::1]:8899"),
            (" http://127.0.0.1:8899/ ", "http://127.0.0.1:8899"),
            ("localhost:8899/secret", "localhost:8899"),
            ("", ""),
        ] {
            assert_eq!(origin(url), want, "{url}");
        }
    }

    #[test]
    fn urls_quoted_in_text_lose_everything_after_their_origin() {
        let e = "error sending request for url (http://127.0.0.1:1/secret-key?api-key=abc): connection refused";
        assert_eq!(
            urls_in(e),
            "error sending request for url (http://127.0.0.1:1): connection refused"
        );
        assert_eq!(
            urls_in("HTTP status server error (503 Service Unavailable) for url (https://u:p@rpc.example.com/KEY)"),
            "HTTP status server error (503 Service Unavailable) for url (https://rpc.example.com)"
        );
        assert_eq!(
            urls_in("two: http://a/x?k=1, and wss://b:9/y."),
            "two: http://a, and wss://b:9."
        );
        assert_eq!(urls_in("\"https://h/p\""), "\"https://h\"");
        // Text without a URL, or with a bare "://", is unchanged.
        for t in ["no url here", ":// alone", "a :// b", "é://ü", ""] {
            assert_eq!(urls_in(t), t);
        }
        // Idempotent.
        let once = urls_in(e);
        assert_eq!(urls_in(&once), once);
    }
}
