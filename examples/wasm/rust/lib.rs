// Build from this directory (build.sh picks the rustc and the target):
//
//	bash build.sh
//
// which runs, with Debian 12's rustc 1.63,
//
//	RUSTC=/usr/bin/rustc /usr/bin/cargo build --release --offline --target wasm32-wasi
//
// (wasm32-wasip1 on Rust 1.78 and later) and copies the module to conformance.wasm.

//! The conformance guest in Rust: it exercises every host function of skillbox/v1 once per
//! outcome and reports what happened. The contract (arguments, operations, result keys and
//! outcomes) is the header comment of examples/wasm/go/main.go; every language's guest must give
//! the same result as the Go guest, compared as JSON values.
//!
//! It uses no crate but the SDK: arguments and result go through the SDK's small `json` module,
//! so it builds offline with any rustc that has a wasm32 standard library.

use skillbox::json::Value;
use skillbox::{BoxError, Context, Error, FromArgs, Level, Request};

skillbox::skill!(conform);

const SKIPPED: &str = "skipped";

/// The arguments; absent strings are "", an absent bigWrite is 0.
struct Args {
    fetch_url: String,
    denied_url: String,
    missing_url: String,
    env_name: String,
    denied_env: String,
    read_path: String,
    missing_path: String,
    write_path: String,
    write_data: String,
    read_only_path: String,
    escape_path: String,
    big_write: i64,
}

impl FromArgs for Args {
    fn from_args(input: &[u8]) -> Result<Self, BoxError> {
        let v = Value::parse(input)?;
        let s = |key: &str| -> Result<String, BoxError> {
            match v.get(key) {
                None | Some(Value::Null) => Ok(String::new()),
                Some(Value::String(s)) => Ok(s.clone()),
                Some(_) => Err(format!("{}: want a string", key).into()),
            }
        };
        let big_write = match v.get("bigWrite") {
            None | Some(Value::Null) => 0,
            Some(n) => n.as_i64().ok_or("bigWrite: want an integer")?,
        };
        Ok(Args {
            fetch_url: s("fetchUrl")?,
            denied_url: s("deniedUrl")?,
            missing_url: s("missingUrl")?,
            env_name: s("envName")?,
            denied_env: s("deniedEnv")?,
            read_path: s("readPath")?,
            missing_path: s("missingPath")?,
            write_path: s("writePath")?,
            write_data: s("writeData")?,
            read_only_path: s("readOnlyPath")?,
            escape_path: s("escapePath")?,
            big_write,
        })
    }
}

fn conform(ctx: &Context, a: Args) -> Result<Value, Error> {
    let fetch_result = fetch(ctx, &a.fetch_url, &Request::get(&a.fetch_url));
    let post = Request::post(&a.fetch_url, "ping").with_header("X-Test", "1");
    let fetch_post = fetch(ctx, &a.fetch_url, &post);
    let fetch_denied = get(ctx, &a.denied_url);
    let fetch_missing = get(ctx, &a.missing_url);

    let env_result = env(ctx, &a.env_name);
    let env_denied = outcome_of(&env(ctx, &a.denied_env));

    let read_result = read(ctx, &a.read_path);
    let read_missing = outcome_of(&read(ctx, &a.missing_path));
    let write_result = write(ctx, &a.write_path, a.write_data.as_bytes());
    let read_back = read(ctx, &a.write_path);
    let write_read_only = write(ctx, &a.read_only_path, a.write_data.as_bytes());
    let escape = outcome_of(&read(ctx, &a.escape_path));
    let mut big_write = SKIPPED.to_string();
    if a.big_write > 0 && !a.write_path.is_empty() {
        let data = vec![b'x'; a.big_write as usize];
        big_write = write(ctx, &format!("{}.big", a.write_path), &data);
    }

    ctx.log(Level::Debug, "conformance: debug");
    ctx.log(Level::Info, "conformance: info");
    ctx.log(Level::Warn, "conformance: warn");
    ctx.log(Level::Error, "conformance: error");

    Ok(Value::object([
        ("fetch", fetch_result),
        ("fetchPost", fetch_post),
        ("fetchDenied", Value::from(fetch_denied)),
        ("fetchMissing", Value::from(fetch_missing)),
        ("env", env_result),
        ("envDenied", Value::from(env_denied)),
        ("read", read_result),
        ("readMissing", Value::from(read_missing)),
        ("write", Value::from(write_result)),
        ("readBack", read_back),
        ("writeReadOnly", Value::from(write_read_only)),
        ("escape", Value::from(escape)),
        ("bigWrite", Value::from(big_write)),
        ("log", Value::from("ok")),
    ]))
}

/// The outcome of a host call, named the way every conformance guest does.
fn outcome<T>(r: &Result<T, Error>) -> &'static str {
    match r {
        Ok(_) => "ok",
        Err(e) => e.status.as_str(),
    }
}

/// An object holding only an outcome: `{"outcome":"denied"}`.
fn only(outcome: &str) -> Value {
    Value::object([("outcome", outcome)])
}

/// The outcome of an object made by fetch, env or read.
fn outcome_of(v: &Value) -> String {
    v.get("outcome")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

fn fetch(ctx: &Context, url: &str, req: &Request) -> Value {
    if url.is_empty() {
        return only(SKIPPED);
    }
    let resp = match ctx.fetch(req) {
        Ok(resp) => resp,
        Err(e) => return only(e.status.as_str()),
    };
    Value::object([
        ("outcome", Value::from("ok")),
        ("status", Value::from(resp.status)),
        ("body", Value::from(resp.text().into_owned())),
        ("echo", Value::from(resp.header("x-echo").unwrap_or(""))),
        (
            "contentType",
            Value::from(resp.header("content-type").unwrap_or("")),
        ),
    ])
}

fn get(ctx: &Context, url: &str) -> String {
    outcome_of(&fetch(ctx, url, &Request::get(url)))
}

fn env(ctx: &Context, name: &str) -> Value {
    if name.is_empty() {
        return only(SKIPPED);
    }
    match ctx.env(name) {
        Some(v) => Value::object([("outcome", "ok"), ("value", v.as_str())]),
        None => only(skillbox::Status::NotFound.as_str()),
    }
}

fn read(ctx: &Context, path: &str) -> Value {
    if path.is_empty() {
        return only(SKIPPED);
    }
    match ctx.read_file(path) {
        Ok(b) => Value::object([("outcome", "ok"), ("text", &*String::from_utf8_lossy(&b))]),
        Err(e) => only(e.status.as_str()),
    }
}

fn write(ctx: &Context, path: &str, data: &[u8]) -> String {
    if path.is_empty() {
        return SKIPPED.to_string();
    }
    outcome(&ctx.write_file(path, data)).to_string()
}
