/*
 * Build from this directory: ./build.sh, which runs
 *
 *     clang --target=wasm32-wasi -O2 -mexec-model=reactor -I../../../sdk/c -o conformance.wasm conformance.c
 *
 * The conformance guest in C: it exercises every host function of skillbox/v1 once per
 * outcome and reports what happened. The contract (arguments, operations, result keys,
 * outcomes) is the header comment of ../go/main.go; this guest must give the same
 * result as the Go one, compared as JSON values.
 */
#include "skillbox.h"

static const char skipped[] = "skipped";

/* outcome names a host call's status the way every conformance guest does. */
static const char *outcome(sb_status st) { return sb_status_name(st); }

/* The arguments: every one a string except bigWrite. */
typedef struct args {
    char *fetch_url, *denied_url, *missing_url, *env_name, *denied_env, *read_path,
        *missing_path, *write_path, *write_data, *read_only_path, *escape_path;
    long long big_write;
} args;

/* arg returns the string argument key, "" when absent. */
static char *arg(const char *in, size_t n, const char *key) {
    char *s = sb_json_get_string(in, n, key, NULL);
    return s ? s : (char *)calloc(1, 1);
}

/* fetch writes {"outcome":...} or, on success, the response's fields. */
static void fetch(sb_buf *out, const char *url, const sb_request *req) {
    sb_response resp;
    sb_status st;
    const char *v;
    sb_json_begin_object(out);
    sb_json_key(out, "outcome");
    if (!*url) {
        sb_json_string(out, skipped);
        sb_json_end_object(out);
        return;
    }
    st = sb_fetch(req, &resp);
    sb_json_string(out, outcome(st));
    if (st == SB_OK) {
        sb_json_key(out, "status");
        sb_json_int(out, resp.status);
        sb_json_key(out, "body");
        sb_json_string_n(out, resp.body, resp.body_len);
        sb_json_key(out, "echo");
        sb_json_string(out, (v = sb_response_header(&resp, "x-echo")) ? v : "");
        sb_json_key(out, "contentType");
        sb_json_string(out, (v = sb_response_header(&resp, "content-type")) ? v : "");
        sb_response_free(&resp);
    }
    sb_json_end_object(out);
}

/* get is a GET whose outcome alone is reported. */
static const char *get(const char *url) {
    sb_response resp;
    sb_status st;
    if (!*url) return skipped;
    st = sb_get(url, &resp);
    sb_response_free(&resp);
    return outcome(st);
}

/* env reports a variable; any failure is "not_found" (the host cannot tell unset from
 * not granted). With out NULL it returns the outcome only. */
static const char *env(sb_buf *out, const char *name) {
    char *value = NULL;
    const char *oc = skipped;
    if (*name) oc = sb_env(name, &value) == SB_OK ? "ok" : "not_found";
    if (out) {
        sb_json_begin_object(out);
        sb_json_key(out, "outcome");
        sb_json_string(out, oc);
        if (value) {
            sb_json_key(out, "value");
            sb_json_string(out, value);
        }
        sb_json_end_object(out);
    }
    free(value);
    return oc;
}

/* read reports a file's text; with out NULL it returns the outcome only. */
static const char *reading(sb_buf *out, const char *path) {
    char *data = NULL;
    size_t len = 0;
    const char *oc = skipped;
    if (*path) oc = outcome(sb_read_file(path, &data, &len));
    if (out) {
        sb_json_begin_object(out);
        sb_json_key(out, "outcome");
        sb_json_string(out, oc);
        if (data) {
            sb_json_key(out, "text");
            sb_json_string_n(out, data, len);
        }
        sb_json_end_object(out);
    }
    free(data);
    return oc;
}

static const char *writing(const char *path, const void *data, size_t len) {
    if (!*path) return skipped;
    return outcome(sb_write_file(path, data, len));
}

SB_EXPORT("execute") int execute(void) {
    size_t n;
    char *in = sb_input(&n);
    args a;
    sb_buf r = SB_BUF_INIT;
    sb_request req;
    sb_header test = {"X-Test", "1"};
    const char *big = skipped;

    if (!in) return sb_fail("out of memory");
    a.fetch_url = arg(in, n, "fetchUrl");
    a.denied_url = arg(in, n, "deniedUrl");
    a.missing_url = arg(in, n, "missingUrl");
    a.env_name = arg(in, n, "envName");
    a.denied_env = arg(in, n, "deniedEnv");
    a.read_path = arg(in, n, "readPath");
    a.missing_path = arg(in, n, "missingPath");
    a.write_path = arg(in, n, "writePath");
    a.write_data = arg(in, n, "writeData");
    a.read_only_path = arg(in, n, "readOnlyPath");
    a.escape_path = arg(in, n, "escapePath");
    a.big_write = 0;
    sb_json_get_int(in, n, "bigWrite", &a.big_write);
    free(in);

    sb_json_begin_object(&r);

    memset(&req, 0, sizeof req);
    req.method = "GET";
    req.url = a.fetch_url;
    sb_json_key(&r, "fetch");
    fetch(&r, a.fetch_url, &req);

    req.method = "POST";
    req.headers = &test;
    req.header_count = 1;
    req.body = "ping";
    req.body_len = 4;
    sb_json_key(&r, "fetchPost");
    fetch(&r, a.fetch_url, &req);

    sb_json_key(&r, "fetchDenied");
    sb_json_string(&r, get(a.denied_url));
    sb_json_key(&r, "fetchMissing");
    sb_json_string(&r, get(a.missing_url));

    sb_json_key(&r, "env");
    env(&r, a.env_name);
    sb_json_key(&r, "envDenied");
    sb_json_string(&r, env(NULL, a.denied_env));

    sb_json_key(&r, "read");
    reading(&r, a.read_path);
    sb_json_key(&r, "readMissing");
    sb_json_string(&r, reading(NULL, a.missing_path));
    sb_json_key(&r, "write");
    sb_json_string(&r, writing(a.write_path, a.write_data, strlen(a.write_data)));
    sb_json_key(&r, "readBack");
    reading(&r, a.write_path);
    sb_json_key(&r, "writeReadOnly");
    sb_json_string(&r, writing(a.read_only_path, a.write_data, strlen(a.write_data)));
    sb_json_key(&r, "escape");
    sb_json_string(&r, reading(NULL, a.escape_path));

    if (a.big_write > 0 && *a.write_path) {
        sb_buf path = SB_BUF_INIT;
        char *x = (char *)malloc((size_t)a.big_write);
        sb_buf_puts(&path, a.write_path);
        sb_buf_puts(&path, ".big");
        if (x && !path.failed) {
            memset(x, 'x', (size_t)a.big_write);
            big = writing(path.data, x, (size_t)a.big_write);
        } else {
            big = "error: out of memory";
        }
        free(x);
        sb_buf_free(&path);
    }
    sb_json_key(&r, "bigWrite");
    sb_json_string(&r, big);

    sb_log(SB_DEBUG, "conformance: debug");
    sb_log(SB_INFO, "conformance: info");
    sb_log(SB_WARN, "conformance: warn");
    sb_log(SB_ERROR, "conformance: error");
    sb_json_key(&r, "log");
    sb_json_string(&r, "ok");

    sb_json_end_object(&r);

    free(a.fetch_url); free(a.denied_url); free(a.missing_url); free(a.env_name);
    free(a.denied_env); free(a.read_path); free(a.missing_path); free(a.write_path);
    free(a.write_data); free(a.read_only_path); free(a.escape_path);
    return sb_ok_buf(&r);
}
