//! The Rust guest SDK for Skillbox skills.
//!
//! A skill is a WebAssembly module that the Skillbox host runs in a sandbox. The host speaks a
//! small byte-level ABI (`skillbox/v1`, docs/abi.md in the Skillbox repository); this crate
//! hides it, so that a skill author writes `ctx.get(url)?` and matches on [`Status`], never on
//! block offsets and status bytes.
//!
//! A skill is a `cdylib` crate whose entry point [`skill!`] exports:
//!
//! ```no_run
//! use skillbox::{json::Value, Context};
//!
//! skillbox::skill!(greet);
//!
//! fn greet(ctx: &Context, args: Value) -> Result<Value, skillbox::Error> {
//!     let name = args.get("name").and_then(Value::as_str).unwrap_or("world");
//!     ctx.info(format!("greeting {}", name));
//!     Ok(Value::object([("greeting", format!("Hello, {}!", name))]))
//! }
//! ```
//!
//! built for WASI as a library (a reactor: it is called, it does not run `main`):
//!
//! ```text
//! cargo build --release --target wasm32-wasip1      # Rust 1.78 and later
//! cargo build --release --target wasm32-wasi        # earlier (Debian 12's rustc 1.63)
//! ```
//!
//! The crate has no dependencies, uses nothing newer than Rust 1.63, and no WASI-only API, so it
//! also builds for `wasm32-unknown-unknown`. Natively it compiles too, so that a skill's logic can
//! be unit-tested with `cargo test`: there the host calls answer [`Status::Failed`] and
//! [`input`] panics.

#![warn(missing_docs)]

mod context;
mod error;
mod fetch;
pub mod json;
mod sys;

use std::fmt;

pub use context::{Context, Level};
pub use error::{Error, Status};
pub use fetch::{Request, Response};

/// The error type of [`FromArgs`] and [`IntoJson`]: anything that converts with `?`, strings
/// included.
pub type BoxError = Box<dyn std::error::Error>;

/// Exports a handler as the module's entry point: `skill!(handler)` defines
/// `#[no_mangle] pub extern "C" fn execute() -> i32` calling [`run`] with it, and
/// `skill!(name => handler)` names the export (the manifest's `entrypoint`).
///
/// ```no_run
/// fn hello(_: &skillbox::Context, _: ()) -> Result<&'static str, skillbox::Error> {
///     Ok("hello")
/// }
/// skillbox::skill!(hello);
/// ```
#[macro_export]
macro_rules! skill {
    ($entry:ident => $handler:expr) => {
        #[no_mangle]
        pub extern "C" fn $entry() -> i32 {
            $crate::run($handler)
        }
    };
    ($handler:expr) => {
        $crate::skill!(execute => $handler);
    };
}

/// The body of a skill's entry point: decodes the call's arguments into `A`, calls `handler`,
/// and writes the `SkillResult` envelope the host expects:
///
/// ```text
/// {"success":true,"result":<R as JSON>}
/// {"success":false,"error":"<the error's Display text>"}
/// ```
///
/// It returns 0 whatever the handler does. A skill failure is reported in the envelope, where the
/// model reads it; a non-zero code would make the host report a `skill_error` instead. Arguments
/// that do not decode and a result that does not encode become `success:false` too. Empty input
/// is decoded as `{}`, so a skill without arguments can be called bare.
///
/// # Notes
///
/// WebAssembly has no unwinding in Rust (`panic = "abort"`): a panic in the handler traps, and
/// the host reports the run as a `trap`. `run` installs a panic hook that first logs the panic's
/// message at error level, so the run's logs say what happened.
pub fn run<A, R, E, F>(handler: F) -> i32
where
    A: FromArgs,
    R: IntoJson,
    E: fmt::Display,
    F: FnOnce(&Context, A) -> Result<R, E>,
{
    install_panic_hook();
    let out = handle(&Context::new(), &sys::input(), handler);
    sys::output(out.as_bytes());
    0
}

/// Turns the input into the output envelope by way of handler.
fn handle<A, R, E, F>(ctx: &Context, input: &[u8], handler: F) -> String
where
    A: FromArgs,
    R: IntoJson,
    E: fmt::Display,
    F: FnOnce(&Context, A) -> Result<R, E>,
{
    let input: &[u8] = if input.is_empty() { b"{}" } else { input };
    let args = match A::from_args(input) {
        Ok(a) => a,
        Err(e) => return failure(&format!("decode arguments: {}", e)),
    };
    match handler(ctx, args) {
        Err(e) => failure(&e.to_string()),
        Ok(r) => match r.into_json() {
            Ok(raw) => success_json(&raw),
            Err(e) => failure(&format!("encode result: {}", e)),
        },
    }
}

#[cfg(target_arch = "wasm32")]
fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let msg = format!("panic: {}", info);
            sys::log(Level::Error as i32, msg.as_bytes());
            sys::set_error(msg.as_bytes());
        }))
    });
}

#[cfg(not(target_arch = "wasm32"))]
fn install_panic_hook() {} // natively, panics are the test harness's

/// A skill's arguments, decoded from the call's input (a JSON object, already validated against
/// the manifest's schema, defaults applied).
///
/// Implemented for [`json::Value`], for `Vec<u8>` and `String` (the raw JSON text) and for `()`
/// (arguments ignored). Implement it for your own type to decode into a struct, by hand or with
/// serde:
///
/// ```ignore
/// impl skillbox::FromArgs for Args {
///     fn from_args(input: &[u8]) -> Result<Self, skillbox::BoxError> {
///         Ok(serde_json::from_slice(input)?)
///     }
/// }
/// ```
pub trait FromArgs: Sized {
    /// Decodes the input.
    fn from_args(input: &[u8]) -> Result<Self, BoxError>;
}

impl FromArgs for json::Value {
    fn from_args(input: &[u8]) -> Result<Self, BoxError> {
        Ok(json::Value::parse(input)?)
    }
}

impl FromArgs for Vec<u8> {
    fn from_args(input: &[u8]) -> Result<Self, BoxError> {
        Ok(input.to_vec())
    }
}

impl FromArgs for String {
    fn from_args(input: &[u8]) -> Result<Self, BoxError> {
        Ok(String::from_utf8_lossy(input).into_owned())
    }
}

impl FromArgs for () {
    fn from_args(_: &[u8]) -> Result<Self, BoxError> {
        Ok(())
    }
}

/// A skill's result, encoded as JSON for the envelope's `result`.
///
/// Implemented for [`json::Value`], [`RawJson`] (already encoded, e.g. by `serde_json`), `String`
/// and `&str` (a JSON string) and `()` (`null`).
pub trait IntoJson {
    /// Encodes the value as one JSON text.
    fn into_json(self) -> Result<String, BoxError>;
}

impl IntoJson for json::Value {
    fn into_json(self) -> Result<String, BoxError> {
        Ok(self.to_string())
    }
}

impl IntoJson for RawJson {
    fn into_json(self) -> Result<String, BoxError> {
        Ok(self.0)
    }
}

impl IntoJson for String {
    fn into_json(self) -> Result<String, BoxError> {
        Ok(json::quote(&self))
    }
}

impl IntoJson for &str {
    fn into_json(self) -> Result<String, BoxError> {
        Ok(json::quote(self))
    }
}

impl IntoJson for () {
    fn into_json(self) -> Result<String, BoxError> {
        Ok("null".to_string())
    }
}

/// JSON text that is already encoded, returned as is: `RawJson(serde_json::to_string(&r)?)`.
/// It must be one valid JSON value; the SDK does not check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawJson(pub String);

/// Returns the call's input: the arguments as JSON. [`run`] reads it for you.
///
/// # Panics
///
/// Natively, where there is no host.
pub fn input() -> Vec<u8> {
    sys::input()
}

/// Sets the call's output. [`run`] sets it for you; a hand-written entry point writes a
/// [`success_json`] or [`failure`] envelope (or any JSON, which becomes the result).
pub fn output(data: &[u8]) {
    sys::output(data)
}

/// Sets the Extism error of the call. With a non-zero return code from the entry point, the host
/// fails the run with kind `skill_error` and this message. Prefer a [`failure`] envelope, which
/// the model reads.
pub fn set_error(message: &str) {
    sys::set_error(message.as_bytes())
}

/// The envelope of a successful call around `raw_result`, which must be one JSON value:
/// `{"success":true,"result":<raw_result>}`.
///
/// ```
/// assert_eq!(skillbox::success_json("[1,2]"), r#"{"success":true,"result":[1,2]}"#);
/// ```
pub fn success_json(raw_result: &str) -> String {
    let mut s = String::with_capacity(raw_result.len() + 28);
    s.push_str("{\"success\":true,\"result\":");
    s.push_str(raw_result);
    s.push('}');
    s
}

/// The envelope of a failed call: `{"success":false,"error":"<message>"}`, the message escaped
/// as a JSON string.
///
/// ```
/// assert_eq!(skillbox::failure("bad \"x\""), r#"{"success":false,"error":"bad \"x\""}"#);
/// ```
pub fn failure(message: &str) -> String {
    let mut s = String::with_capacity(message.len() + 30);
    s.push_str("{\"success\":false,\"error\":");
    let _ = json::write_quoted(&mut s, message); // writing to a String cannot fail
    s.push('}');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Value;
    use crate::sys::imp::{install, Fake};

    fn greet(ctx: &Context, args: Value) -> Result<Value, Error> {
        let name = args.get("name").and_then(Value::as_str).unwrap_or("world");
        ctx.info(format!("greeting {}", name));
        Ok(Value::object([("greeting", format!("Hello, {}!", name))]))
    }

    #[test]
    fn envelopes() {
        assert_eq!(success_json("null"), r#"{"success":true,"result":null}"#);
        assert_eq!(failure(""), r#"{"success":false,"error":""}"#);
        let msg = "line 1\nline \"2\"\t\\ \u{1} é";
        let v = Value::parse(failure(msg).as_bytes()).unwrap();
        assert_eq!(v.get("success"), Some(&Value::Bool(false)));
        assert_eq!(v.get("error").and_then(Value::as_str), Some(msg));
    }

    #[test]
    fn handles_calls() {
        let ctx = Context::new();
        assert_eq!(
            handle(&ctx, br#"{"name":"Ada"}"#, greet),
            r#"{"success":true,"result":{"greeting":"Hello, Ada!"}}"#
        );
        assert_eq!(
            handle(&ctx, b"", greet),
            r#"{"success":true,"result":{"greeting":"Hello, world!"}}"#
        );
        assert_eq!(
            handle(&ctx, b"{", greet),
            r#"{"success":false,"error":"decode arguments: invalid JSON at byte 1: expected a member name"}"#
        );
        let fails = |_: &Context, _: ()| -> Result<(), Error> {
            Err(Error::new("env", Status::Denied, "no \"x\""))
        };
        assert_eq!(
            handle(&ctx, b"{}", fails),
            r#"{"success":false,"error":"env: denied: no \"x\""}"#
        );
        let raw = |_: &Context, input: Vec<u8>| -> Result<RawJson, String> {
            Ok(RawJson(String::from_utf8(input).unwrap()))
        };
        assert_eq!(
            handle(&ctx, b"[1]", raw),
            r#"{"success":true,"result":[1]}"#
        );
        let text = |_: &Context, s: String| -> Result<String, BoxError> { Ok(s) };
        assert_eq!(
            handle(&ctx, b"{\"a\":1}", text),
            r#"{"success":true,"result":"{\"a\":1}"}"#
        );
        let unit = |_: &Context, _: ()| -> Result<(), &str> { Ok(()) };
        assert_eq!(
            handle(&ctx, b"{}", unit),
            r#"{"success":true,"result":null}"#
        );
        let bad = |_: &Context, _: ()| -> Result<Bad, &str> { Ok(Bad) };
        assert_eq!(
            handle(&ctx, b"{}", bad),
            r#"{"success":false,"error":"encode result: no"}"#
        );
    }

    struct Bad;
    impl IntoJson for Bad {
        fn into_json(self) -> Result<String, BoxError> {
            Err("no".into())
        }
    }

    #[test]
    fn runs_against_the_host() {
        install(Fake {
            input: br#"{"name":"Bob"}"#.to_vec(),
            ..Fake::default()
        });
        assert_eq!(run(greet), 0);
        let fake = install(Fake::default());
        assert_eq!(
            fake.output.as_deref(),
            Some(&br#"{"success":true,"result":{"greeting":"Hello, Bob!"}}"#[..])
        );
        assert_eq!(fake.logs, [(1, "greeting Bob".to_string())]);
    }

    mod exported {
        // The macro compiles in a module of its own, both forms.
        fn h(_: &crate::Context, _: ()) -> Result<(), crate::Error> {
            Ok(())
        }
        skill!(skillbox_test_entry => h);
        skill!(|_: &crate::Context, _: ()| -> Result<(), crate::Error> { Ok(()) });

        #[test]
        fn defines_entry_points() {
            let _: extern "C" fn() -> i32 = skillbox_test_entry;
            let _: extern "C" fn() -> i32 = execute;
        }
    }
}
