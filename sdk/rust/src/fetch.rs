use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::error::{Error, Status};
use crate::json::{self, Value};

/// An outgoing HTTP request. The host checks it against the run's network grant before anything
/// leaves the sandbox.
///
/// ```
/// use skillbox::Request;
///
/// let req = Request::post("https://api.example.com/v1/items", r#"{"name":"x"}"#)
///     .with_header("Content-Type", "application/json");
/// assert_eq!(req.method, "POST");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    /// `GET` when empty; the host accepts `GET HEAD POST PUT PATCH DELETE OPTIONS`.
    pub method: String,
    /// An absolute `http` or `https` URL without user info.
    pub url: String,
    /// Header names to single values. `Host`, `Content-Length`, `Transfer-Encoding`,
    /// `Connection` and the headers of granted secrets are the host's to set: the host refuses
    /// a request that sets them (`INVALID`).
    pub headers: BTreeMap<String, String>,
    /// The raw request body; empty sends none.
    pub body: Vec<u8>,
}

impl Request {
    /// A request with `method` to `url`, no headers and no body.
    pub fn new(method: impl Into<String>, url: impl Into<String>) -> Request {
        Request {
            method: method.into(),
            url: url.into(),
            ..Request::default()
        }
    }

    /// A `GET` request.
    pub fn get(url: impl Into<String>) -> Request {
        Request::new("GET", url)
    }

    /// A `POST` request with `body`.
    pub fn post(url: impl Into<String>, body: impl Into<Vec<u8>>) -> Request {
        Request::new("POST", url).with_body(body)
    }

    /// Sets header `name` to `value`, replacing an earlier value of the same name.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Request {
        self.headers.insert(name.into(), value.into());
        self
    }

    /// Sets the body.
    pub fn with_body(mut self, body: impl Into<Vec<u8>>) -> Request {
        self.body = body.into();
        self
    }

    /// The request block of `skillbox_fetch`: `{"method":..,"url":..,"headers":{..}}`, without
    /// an empty method or empty headers. The body travels in its own block, binary-safe.
    pub(crate) fn head(&self) -> String {
        let mut s = String::with_capacity(64 + self.url.len());
        s.push('{');
        if !self.method.is_empty() {
            s.push_str("\"method\":");
            s.push_str(&json::quote(&self.method));
            s.push(',');
        }
        s.push_str("\"url\":");
        s.push_str(&json::quote(&self.url));
        if !self.headers.is_empty() {
            s.push_str(",\"headers\":{");
            for (i, (k, v)) in self.headers.iter().enumerate() {
                if i > 0 {
                    s.push(',');
                }
                s.push_str(&json::quote(k));
                s.push(':');
                s.push_str(&json::quote(v));
            }
            s.push('}');
        }
        s.push('}');
        s
    }
}

/// The answer to a [`Request`]. Any HTTP status is a `Response`, not an error: a 404 is
/// information for the skill, while a refused or failed request is an [`Error`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Response {
    /// The HTTP status code.
    pub status: u16,
    /// The final URL, after redirects.
    pub url: String,
    /// Lower-case header names; repeated headers are joined with `, `.
    pub headers: BTreeMap<String, String>,
    /// The raw body.
    pub body: Vec<u8>,
}

impl Response {
    /// The value of header `name`, in any case (`Content-Type` finds `content-type`).
    pub fn header(&self, name: &str) -> Option<&str> {
        match self.headers.get(name) {
            Some(v) => Some(v),
            None => self
                .headers
                .get(&name.to_ascii_lowercase())
                .map(String::as_str),
        }
    }

    /// The body as text; invalid UTF-8 becomes U+FFFD.
    pub fn text(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.body)
    }

    /// The body parsed as JSON.
    pub fn json(&self) -> Result<Value, json::ParseError> {
        Value::parse(&self.body)
    }

    /// Whether the status is 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// Parses the OK payload of `skillbox_fetch`: a u32 little-endian head length N, N bytes of head
/// JSON, then the raw body.
pub(crate) fn decode_response(mut payload: Vec<u8>) -> Result<Response, Error> {
    if payload.len() < 4 {
        return Err(malformed(format!(
            "payload of {} bytes has no head length",
            payload.len()
        )));
    }
    let n = u32::from_le_bytes([payload[0], payload[1], payload[2], payload[3]]) as usize;
    if n > payload.len() - 4 {
        return Err(malformed(format!(
            "head length {} exceeds payload of {} bytes",
            n,
            payload.len()
        )));
    }
    let head = Value::parse(&payload[4..4 + n]).map_err(|e| malformed(format!("head: {}", e)))?;
    let status = match head.get("status").and_then(Value::as_u64) {
        Some(s) if s <= u64::from(u16::MAX) => s as u16,
        _ => return Err(malformed("head: no valid status".to_string())),
    };
    let url = head
        .get("url")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let mut headers = BTreeMap::new();
    match head.get("headers") {
        None | Some(Value::Null) => {}
        Some(Value::Object(members)) => {
            for (k, v) in members {
                match v.as_str() {
                    Some(v) => headers.insert(k.clone(), v.to_string()),
                    None => return Err(malformed(format!("head: header {} is not a string", k))),
                };
            }
        }
        Some(_) => return Err(malformed("head: headers is not an object".to_string())),
    }
    payload.drain(..4 + n);
    Ok(Response {
        status,
        url,
        headers,
        body: payload,
    })
}

/// A fetch reply the SDK cannot parse: a host bug or an ABI mismatch, which the skill can do
/// nothing about, hence FAILED.
fn malformed(msg: String) -> Error {
    Error::new("fetch", Status::Failed, format!("malformed reply: {}", msg))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(head: &str, body: &[u8]) -> Vec<u8> {
        let mut b = (head.len() as u32).to_le_bytes().to_vec();
        b.extend_from_slice(head.as_bytes());
        b.extend_from_slice(body);
        b
    }

    #[test]
    fn encodes_request_heads() {
        assert_eq!(Request::default().head(), r#"{"url":""}"#);
        assert_eq!(
            Request::get("http://x/").head(),
            r#"{"method":"GET","url":"http://x/"}"#
        );
        let r = Request::post("http://x/\"q\"", "body")
            .with_header("X-B", "2")
            .with_header("X-A", "line\nbreak");
        assert_eq!(
            r.head(),
            r#"{"method":"POST","url":"http://x/\"q\"","headers":{"X-A":"line\nbreak","X-B":"2"}}"#
        );
        assert_eq!(r.body, b"body");
        // Whatever the strings hold, the head is JSON that means the request.
        let v = Value::parse(r.head().as_bytes()).unwrap();
        assert_eq!(v.get("url").and_then(Value::as_str), Some("http://x/\"q\""));
    }

    #[test]
    fn decodes_responses() {
        let head = r#"{"status":404,"url":"https://e.com/x","headers":{"content-type":"text/plain","x-echo":"a, b"}}"#;
        let r = decode_response(frame(head, b"\x00binary\xff")).unwrap();
        assert_eq!(r.status, 404);
        assert!(!r.is_success());
        assert_eq!(r.url, "https://e.com/x");
        assert_eq!(r.header("Content-Type"), Some("text/plain"));
        assert_eq!(r.header("x-echo"), Some("a, b"));
        assert_eq!(r.header("missing"), None);
        assert_eq!(r.body, b"\x00binary\xff");

        let r = decode_response(frame(r#"{"status":200}"#, b"")).unwrap();
        assert_eq!(
            (r.status, r.url.as_str(), r.headers.len(), r.body.len()),
            (200, "", 0, 0)
        );
        assert!(r.is_success());

        let r = decode_response(frame(r#"{"status":200,"headers":null}"#, b"{\"a\":1}")).unwrap();
        assert_eq!(r.json().unwrap().get("a").and_then(Value::as_i64), Some(1));
        assert_eq!(r.text(), "{\"a\":1}");
    }

    #[test]
    fn refuses_malformed_replies() {
        for (payload, want) in [
            (vec![1, 0, 0], "payload of 3 bytes has no head length"),
            (
                vec![9, 0, 0, 0, b'{'],
                "head length 9 exceeds payload of 5 bytes",
            ),
            (
                vec![255, 255, 255, 255],
                "head length 4294967295 exceeds payload of 4 bytes",
            ),
            (
                frame("{", b""),
                "head: invalid JSON at byte 1: expected a member name",
            ),
            (frame("{}", b""), "head: no valid status"),
            (frame(r#"{"status":70000}"#, b""), "head: no valid status"),
            (
                frame(r#"{"status":200,"headers":[]}"#, b""),
                "head: headers is not an object",
            ),
            (
                frame(r#"{"status":200,"headers":{"a":1}}"#, b""),
                "head: header a is not a string",
            ),
        ] {
            let e = decode_response(payload).unwrap_err();
            assert_eq!(e.status, Status::Failed);
            assert_eq!(e.message, format!("malformed reply: {}", want));
        }
    }
}
