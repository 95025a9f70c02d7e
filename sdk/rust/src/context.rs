use crate::error::{split_reply, Error};
use crate::fetch::{decode_response, Request, Response};
use crate::sys;

/// A skill's handle on the host, handed to the handler by [`run`](crate::run).
///
/// Every capability goes through it: the host checks each call against the run's grant and
/// records refusals in the run's result, so an operator sees what a skill tried even when the
/// skill swallows the error. It is a struct so that capabilities can be added later without
/// changing handler signatures.
#[derive(Clone, Copy, Debug, Default)]
pub struct Context {
    _private: (),
}

impl Context {
    /// A context on the host. [`run`](crate::run) makes one; a hand-written entry point can
    /// too.
    pub fn new() -> Context {
        Context { _private: () }
    }

    /// Sends `req` through the host and returns the response, whatever its HTTP status.
    ///
    /// # Errors
    ///
    /// [`Status::Denied`](crate::Status::Denied) for a host, method or address outside the
    /// grant; `Invalid` for a malformed request or a header only the host may set; `Limit` for
    /// too many fetches or too large a response; `Failed` for DNS, connection and timeout
    /// failures.
    pub fn fetch(&self, req: &Request) -> Result<Response, Error> {
        let payload = split_reply("fetch", sys::fetch(req.head().as_bytes(), &req.body))?;
        decode_response(payload)
    }

    /// Fetches `url` with `GET`. See [`Context::fetch`] for the errors.
    pub fn get(&self, url: &str) -> Result<Response, Error> {
        self.fetch(&Request::get(url))
    }

    /// The value of the granted environment variable `name`.
    ///
    /// A variable outside the grant looks exactly like an unset one, by design: a skill cannot
    /// probe the host's environment. A value that is not UTF-8 has its bad bytes replaced by
    /// U+FFFD.
    pub fn env(&self, name: &str) -> Option<String> {
        match split_reply("env", sys::env(name.as_bytes())) {
            Ok(v) => Some(match String::from_utf8(v) {
                Ok(s) => s,
                Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
            }),
            Err(_) => None,
        }
    }

    /// The contents of the file at the absolute virtual `path`, under a granted mount or under
    /// `/skill`, the skill's own directory (read-only).
    ///
    /// # Errors
    ///
    /// `NotFound` when it does not exist; `Denied` outside the mounts or through a symlink out
    /// of one; `Invalid` for a relative path or a `..` segment; `Limit` past the run's file size
    /// limit.
    pub fn read_file(&self, path: &str) -> Result<Vec<u8>, Error> {
        split_reply("read_file", sys::read_file(path.as_bytes()))
    }

    /// Creates or replaces the file at `path` with `data`, creating parent directories inside
    /// the mount. The file is written aside and renamed into place.
    ///
    /// # Errors
    ///
    /// `Denied` on a read-only mount or outside the mounts; `Invalid` for a bad path; `Limit`
    /// when the run's write quota (bytes or files) would be exceeded.
    pub fn write_file(&self, path: &str, data: impl AsRef<[u8]>) -> Result<(), Error> {
        split_reply(
            "write_file",
            sys::write_file(path.as_bytes(), data.as_ref()),
        )
        .map(|_| ())
    }

    /// Appends `msg` to the run's logs. Logging never fails: past the run's log quota the host
    /// drops the line and counts it.
    pub fn log(&self, level: Level, msg: impl AsRef<str>) {
        sys::log(level as i32, msg.as_ref().as_bytes())
    }

    /// Logs at [`Level::Debug`].
    pub fn debug(&self, msg: impl AsRef<str>) {
        self.log(Level::Debug, msg)
    }

    /// Logs at [`Level::Info`]: `ctx.info(format!("greeting {}", name))`.
    pub fn info(&self, msg: impl AsRef<str>) {
        self.log(Level::Info, msg)
    }

    /// Logs at [`Level::Warn`].
    pub fn warn(&self, msg: impl AsRef<str>) {
        self.log(Level::Warn, msg)
    }

    /// Logs at [`Level::Error`]. It is a log line, not an error: the run goes on.
    pub fn error(&self, msg: impl AsRef<str>) {
        self.log(Level::Error, msg)
    }
}

/// The severity of a log line; the values are the ABI's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    /// 0
    Debug = 0,
    /// 1
    Info = 1,
    /// 2
    Warn = 2,
    /// 3
    Error = 3,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::imp::{install, Fake};
    use crate::Status;

    fn reply(status: u8, payload: &[u8]) -> Vec<u8> {
        let mut r = vec![status];
        r.extend_from_slice(payload);
        r
    }

    #[test]
    fn calls_the_host_with_the_abis_blocks() {
        let head = br#"{"status":201,"url":"http://h/x","headers":{"x-echo":"1"}}"#;
        let mut fetched = (head.len() as u32).to_le_bytes().to_vec();
        fetched.extend_from_slice(head);
        fetched.extend_from_slice(b"POST:ping");
        install(Fake {
            replies: vec![
                reply(0, &fetched),
                reply(2, b"host \"x\" is not on the grant"),
                reply(0, b"hej"),
                reply(1, b""),
                reply(0, b"file"),
                reply(4, b"over quota"),
                Vec::new(),
            ],
            ..Fake::default()
        });
        let ctx = Context::new();

        let r = ctx
            .fetch(&Request::post("http://h/x", "ping").with_header("X-Test", "1"))
            .unwrap();
        assert_eq!(
            (r.status, r.url.as_str(), r.header("X-Echo")),
            (201, "http://h/x", Some("1"))
        );
        assert_eq!(r.text(), "POST:ping");
        let e = ctx.get("http://x/").unwrap_err();
        assert_eq!(
            e.to_string(),
            "fetch: denied: host \"x\" is not on the grant"
        );
        assert_eq!(ctx.env("GREETING").as_deref(), Some("hej"));
        assert_eq!(ctx.env("HOME"), None);
        assert_eq!(ctx.read_file("/workspace/a").unwrap(), b"file");
        let e = ctx.write_file("/workspace/b", "data").unwrap_err();
        assert_eq!((e.op, e.status), ("write_file", Status::Limit));
        let e = ctx.read_file("/x").unwrap_err();
        assert_eq!(
            (e.status, e.message.as_str()),
            (Status::Failed, "empty reply from the host")
        );
        ctx.debug("d");
        ctx.info(format!("i {}", 1));
        ctx.warn("w");
        ctx.error("e");

        let fake = install(Fake::default());
        let calls: Vec<(&str, Vec<String>)> = fake
            .calls
            .iter()
            .map(|(n, args)| {
                (
                    *n,
                    args.iter()
                        .map(|a| String::from_utf8_lossy(a).into_owned())
                        .collect(),
                )
            })
            .collect();
        let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            calls,
            vec![
                (
                    "fetch",
                    s(&[
                        r#"{"method":"POST","url":"http://h/x","headers":{"X-Test":"1"}}"#,
                        "ping"
                    ])
                ),
                ("fetch", s(&[r#"{"method":"GET","url":"http://x/"}"#, ""])),
                ("env", s(&["GREETING"])),
                ("env", s(&["HOME"])),
                ("read_file", s(&["/workspace/a"])),
                ("write_file", s(&["/workspace/b", "data"])),
                ("read_file", s(&["/x"])),
            ]
        );
        let logs: Vec<(i32, &str)> = fake.logs.iter().map(|(l, m)| (*l, m.as_str())).collect();
        assert_eq!(logs, [(0, "d"), (1, "i 1"), (2, "w"), (3, "e")]);
    }
}
