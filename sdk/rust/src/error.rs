use std::fmt;

/// Why a host call did not succeed: the first byte of the host's reply (docs/abi.md §3).
///
/// The values are part of the ABI and never change. A reply status this SDK does not know (from
/// a newer host) is reported as [`Status::Failed`] with the code in the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// The variable is unset (or not granted), the file does not exist.
    NotFound = 1,
    /// The run's grant does not allow it: host, method, address, path, mount access.
    Denied = 2,
    /// The request is malformed: bad JSON, URL or path, an oversized argument.
    Invalid = 3,
    /// A per-run quota was reached: fetch count, response size, bytes written.
    Limit = 4,
    /// Allowed, but it failed: connection refused, DNS, timeout, I/O error.
    Failed = 5,
}

impl Status {
    /// The status byte of the ABI (1 to 5).
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The failure status of an ABI status byte; `None` for 0 (OK) and unknown codes.
    pub fn from_code(code: u8) -> Option<Status> {
        match code {
            1 => Some(Status::NotFound),
            2 => Some(Status::Denied),
            3 => Some(Status::Invalid),
            4 => Some(Status::Limit),
            5 => Some(Status::Failed),
            _ => None,
        }
    }

    /// The ABI's name in lower case: `not_found`, `denied`, `invalid`, `limit`, `failed`; the
    /// spelling every guest language uses in its conformance output.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::NotFound => "not_found",
            Status::Denied => "denied",
            Status::Invalid => "invalid",
            Status::Limit => "limit",
            Status::Failed => "failed",
        }
    }

    /// The words used in error messages: `not found`, `denied`, ...
    fn words(self) -> &'static str {
        match self {
            Status::NotFound => "not found",
            other => other.as_str(),
        }
    }
}

/// Writes [`Status::as_str`].
impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A host call that did not succeed.
///
/// Its text is written for the model that reads the skill's result:
/// `fetch: denied: host "example.com" is not on the grant`. Branch on [`Error::status`], never
/// on the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The host call: `fetch`, `env`, `read_file` or `write_file`.
    pub op: &'static str,
    /// Why it failed.
    pub status: Status,
    /// The host's explanation; may be empty.
    pub message: String,
}

impl Error {
    /// An error for `op` with `status` and `message`.
    pub fn new(op: &'static str, status: Status, message: impl Into<String>) -> Error {
        Error {
            op,
            status,
            message: message.into(),
        }
    }
}

/// `op: status: message` (`read_file: not found: /workspace/x.txt`), without the last part when
/// the message is empty.
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.op, self.status.words())?;
        if !self.message.is_empty() {
            write!(f, ": {}", self.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// Separates a reply block into its payload, or the error its status byte and message mean.
pub(crate) fn split_reply(op: &'static str, mut reply: Vec<u8>) -> Result<Vec<u8>, Error> {
    let code = match reply.first() {
        Some(&c) => c,
        None => return Err(Error::new(op, Status::Failed, "empty reply from the host")),
    };
    if code == 0 {
        reply.remove(0);
        return Ok(reply);
    }
    let message = String::from_utf8_lossy(&reply[1..]).into_owned();
    Err(match Status::from_code(code) {
        Some(status) => Error::new(op, status, message),
        None => Error::new(
            op,
            Status::Failed,
            format!("unknown reply status {}: {}", code, message),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses() {
        for code in 1..=5 {
            let s = Status::from_code(code).unwrap();
            assert_eq!(s.code(), code);
        }
        assert_eq!(Status::from_code(0), None);
        assert_eq!(Status::from_code(6), None);
        let names: Vec<_> = (1..=5)
            .map(|c| Status::from_code(c).unwrap().to_string())
            .collect();
        assert_eq!(names, ["not_found", "denied", "invalid", "limit", "failed"]);
    }

    #[test]
    fn splits_replies() {
        assert_eq!(split_reply("env", vec![0]).unwrap(), b"");
        assert_eq!(split_reply("env", b"\x00value".to_vec()).unwrap(), b"value");
        assert_eq!(
            split_reply("env", b"\x00\x01\x00".to_vec()).unwrap(),
            b"\x01\x00"
        );

        let e = split_reply("read_file", b"\x01no such file".to_vec()).unwrap_err();
        assert_eq!(e, Error::new("read_file", Status::NotFound, "no such file"));
        assert_eq!(e.to_string(), "read_file: not found: no such file");

        let e = split_reply("fetch", b"\x02".to_vec()).unwrap_err();
        assert_eq!(
            (e.status, e.to_string().as_str()),
            (Status::Denied, "fetch: denied")
        );

        let e = split_reply("env", Vec::new()).unwrap_err();
        assert_eq!(e.to_string(), "env: failed: empty reply from the host");

        let e = split_reply("env", b"\x09later".to_vec()).unwrap_err();
        assert_eq!(e.status, Status::Failed);
        assert_eq!(e.message, "unknown reply status 9: later");

        let e = split_reply("write_file", b"\x04\xffbad utf8".to_vec()).unwrap_err();
        assert_eq!(
            (e.status, e.message.as_str()),
            (Status::Limit, "\u{FFFD}bad utf8")
        );
    }
}
