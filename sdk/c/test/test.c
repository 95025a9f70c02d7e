/*
 * Native unit tests of skillbox.h: JSON writing and escaping, JSON field reading, reply
 * and fetch-frame decoding, and the host calls end to end against the header's native
 * fake of the kernel and host. Run ./test.sh (it builds this as C and as C++).
 */
#include "skillbox.h"

int other_tu_env(const char *name); /* other.c: a second translation unit */

static int failures, checks;
static char untouched[] = "untouched"; /* a pointer the code under test must overwrite */

#define CHECK(cond)                                                                 \
    do {                                                                            \
        checks++;                                                                   \
        if (!(cond)) {                                                              \
            failures++;                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                           \
    } while (0)

/* CHECK_STR compares a string (NULL allowed) with the expected one. */
#define CHECK_STR(got, want) check_str(__FILE__, __LINE__, #got, (got), (want))

static void check_str(const char *file, int line, const char *expr, const char *got, const char *want) {
    checks++;
    if ((got == NULL) != (want == NULL) || (got && strcmp(got, want) != 0)) {
        failures++;
        fprintf(stderr, "%s:%d: %s\n  got  %s%s%s\n  want %s%s%s\n", file, line, expr,
                got ? "\"" : "", got ? got : "NULL", got ? "\"" : "",
                want ? "\"" : "", want ? want : "NULL", want ? "\"" : "");
    }
}

/* quoted returns s[0..n) as sb_json_quote writes it; the caller frees it. */
static char *quoted(const char *s, size_t n) {
    sb_buf b = SB_BUF_INIT;
    sb_json_quote(&b, s, n);
    return sb_buf_take(&b);
}

static void test_quote(void) {
    static const struct { const char *in; size_t n; const char *want; } cases[] = {
        {"", 0, "\"\""},
        {"plain", 5, "\"plain\""},
        {"say \"hi\"", 8, "\"say \\\"hi\\\"\""},
        {"back\\slash", 10, "\"back\\\\slash\""},
        {"a\nb\rc\td\be\ff", 11, "\"a\\nb\\rc\\td\\be\\ff\""},
        {"\x01\x1f\x7f", 3, "\"\\u0001\\u001f\x7f\""},
        {"nul\0in", 6, "\"nul\\u0000in\""},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14, "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\""},
        {"bad\xff", 4, "\"bad\xef\xbf\xbd\""},                  /* invalid byte */
        {"\xc3", 1, "\"\xef\xbf\xbd\""},                         /* truncated sequence */
        {"\xc0\xaf", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\""},         /* overlong */
        {"\xed\xa0\x80", 3, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""}, /* a surrogate */
        {"\xf4\x90\x80\x80", 4, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""}, /* > U+10FFFF */
        {"</script>", 9, "\"</script>\""},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *q = quoted(cases[i].in, cases[i].n);
        CHECK_STR(q, cases[i].want);
        free(q);
    }
}

static void test_builder(void) {
    sb_buf b = SB_BUF_INIT;
    char *s;
    static const char *const strs[] = {"a", "b"};
    size_t i;
    CHECK_STR(sb_buf_cstr(&b), "");
    sb_json_begin_object(&b);
    sb_json_key(&b, "s");
    sb_json_string(&b, "x\"y");
    sb_json_key(&b, "n");
    sb_json_int(&b, -42);
    sb_json_key(&b, "t");
    sb_json_bool(&b, 1);
    sb_json_key(&b, "f");
    sb_json_bool(&b, 0);
    sb_json_key(&b, "z");
    sb_json_null(&b);
    sb_json_key(&b, "nil");
    sb_json_string(&b, NULL);
    sb_json_key(&b, "arr");
    sb_json_begin_array(&b);
    for (i = 0; i < 2; i++) sb_json_string(&b, strs[i]);
    sb_json_begin_object(&b);
    sb_json_end_object(&b);
    sb_json_begin_array(&b);
    sb_json_end_array(&b);
    sb_json_int(&b, 0);
    sb_json_end_array(&b);
    sb_json_key(&b, "raw");
    sb_json_raw(&b, "{\"k\":[1,2]}");
    sb_json_key(&b, "bin");
    sb_json_string_n(&b, "a\0b", 3);
    sb_json_key(&b, "k\"ey");
    sb_json_raw(&b, "");
    sb_json_end_object(&b);
    CHECK_STR(sb_buf_cstr(&b),
              "{\"s\":\"x\\\"y\",\"n\":-42,\"t\":true,\"f\":false,\"z\":null,\"nil\":null,"
              "\"arr\":[\"a\",\"b\",{},[],0],\"raw\":{\"k\":[1,2]},\"bin\":\"a\\u0000b\","
              "\"k\\\"ey\":null}");
    CHECK(b.len == strlen(b.data) && !b.failed);
    sb_buf_reset(&b);
    CHECK(b.len == 0 && !b.failed);
    sb_json_int(&b, LLONG_MIN);
    sb_json_int(&b, LLONG_MAX);
    sb_json_int(&b, 0);
    CHECK_STR(sb_buf_cstr(&b), "-9223372036854775808,9223372036854775807,0");
    s = sb_buf_take(&b);
    CHECK_STR(s, "-9223372036854775808,9223372036854775807,0");
    CHECK(b.data == NULL && b.len == 0);
    free(s);
    s = sb_buf_take(&b); /* empty: a malloc'd "" */
    CHECK_STR(s, "");
    free(s);
    /* Growth past the first allocation keeps the contents. */
    for (i = 0; i < 1000; i++) sb_buf_putc(&b, (char)('a' + i % 26));
    CHECK(b.len == 1000 && b.data[999] == 'a' + 999 % 26 && b.data[1000] == 0);
    sb_buf_free(&b);
    sb_buf_free(&b); /* twice is harmless */
}

static const char args_json[] =
    " {\n"
    "  \"name\" : \"Ada \\\"the\\\" \\\\ Lovelace\\n\",\n"
    "  \"nested\": {\"name\": \"inner\", \"deep\": {\"x\": [1, \"}\", {\"name\": 3}]}, \"n\": 7},\n"
    "  \"list\": [\"name\", {\"name\": \"in array\"}, \"]\"],\n"
    "  \"unicode\": \"caf\\u00e9 \\u20AC \\ud83d\\ude00 \\/\",\n"
    "  \"lone\": \"x\\ud800y\\udc00z\",\n"
    "  \"badu\": \"\\u12G4\",\n"
    "  \"esc\\u0061ped\": \"key had an escape\",\n"
    "  \"nul\": \"a\\u0000b\",\n"
    "  \"int\": 5000, \"neg\": -12, \"zero\": 0, \"frac\": 1.5, \"exp\": 1e3,\n"
    "  \"max\": 9223372036854775807, \"min\": -9223372036854775808,\n"
    "  \"over\": 9223372036854775808, \"under\": -9223372036854775809,\n"
    "  \"str5\": \"5\", \"nul_value\": null, \"yes\": true, \"no\": false,\n"
    "  \"dup\": \"first\", \"dup\": \"last\",\n"
    "  \"empty\": \"\"\n"
    "}";

static void test_read(void) {
    const char *j = args_json;
    size_t n = strlen(j), len = 99, vlen;
    long long v = 0;
    int b = -1;
    char *s;
    const char *raw;

    s = sb_json_get_string(j, n, "name", &len);
    CHECK_STR(s, "Ada \"the\" \\ Lovelace\n");
    CHECK(len == strlen("Ada \"the\" \\ Lovelace\n"));
    free(s);
    s = sb_json_get_string(j, n, "unicode", NULL);
    CHECK_STR(s, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 /");
    free(s);
    s = sb_json_get_string(j, n, "lone", NULL);
    CHECK_STR(s, "x\xef\xbf\xbdy\xef\xbf\xbdz");
    free(s);
    s = sb_json_get_string(j, n, "badu", NULL);
    CHECK_STR(s, "u12G4");
    free(s);
    s = sb_json_get_string(j, n, "escaped", NULL);
    CHECK_STR(s, "key had an escape");
    free(s);
    s = sb_json_get_string(j, n, "nul", &len);
    CHECK(s && len == 3 && memcmp(s, "a\0b", 4) == 0);
    free(s);
    s = sb_json_get_string(j, n, "empty", &len);
    CHECK(s && len == 0 && *s == 0);
    free(s);
    s = sb_json_get_string(j, n, "dup", NULL);
    CHECK_STR(s, "last");
    free(s);

    /* Absent, or not a string: NULL. Only top-level keys match. */
    CHECK(sb_json_get_string(j, n, "missing", NULL) == NULL);
    CHECK(sb_json_get_string(j, n, "int", NULL) == NULL);
    CHECK(sb_json_get_string(j, n, "nul_value", NULL) == NULL);
    CHECK(sb_json_get_string(j, n, "nested", NULL) == NULL);
    CHECK(sb_json_get_string(j, n, "x", NULL) == NULL);
    CHECK(sb_json_get_string(j, n, "deep", NULL) == NULL);

    /* Descending with get_raw. */
    raw = sb_json_get_raw(j, n, "nested", &vlen);
    CHECK(raw && raw[0] == '{' && raw[vlen - 1] == '}');
    s = sb_json_get_string(raw, vlen, "name", NULL);
    CHECK_STR(s, "inner");
    free(s);
    CHECK(sb_json_get_int(raw, vlen, "n", &v) && v == 7);
    raw = sb_json_get_raw(j, n, "name", &vlen);
    s = sb_json_decode_string(raw, vlen, NULL);
    CHECK_STR(s, "Ada \"the\" \\ Lovelace\n");
    free(s);
    CHECK(sb_json_decode_string("\"open", 5, NULL) == NULL);
    CHECK(sb_json_decode_string("12", 2, NULL) == NULL);
    CHECK(sb_json_decode_string("\"a\"b\"", 5, NULL) == NULL);

    /* Integers. */
    CHECK(sb_json_get_int(j, n, "int", &v) && v == 5000);
    CHECK(sb_json_get_int(j, n, "neg", &v) && v == -12);
    CHECK(sb_json_get_int(j, n, "zero", &v) && v == 0);
    CHECK(sb_json_get_int(j, n, "max", &v) && v == LLONG_MAX);
    CHECK(sb_json_get_int(j, n, "min", &v) && v == LLONG_MIN);
    v = 123;
    CHECK(!sb_json_get_int(j, n, "over", &v) && v == 123);
    CHECK(!sb_json_get_int(j, n, "under", &v));
    CHECK(!sb_json_get_int(j, n, "frac", &v));
    CHECK(!sb_json_get_int(j, n, "exp", &v));
    CHECK(!sb_json_get_int(j, n, "str5", &v));
    CHECK(!sb_json_get_int(j, n, "missing", &v) && v == 123);

    /* Booleans. */
    CHECK(sb_json_get_bool(j, n, "yes", &b) && b == 1);
    CHECK(sb_json_get_bool(j, n, "no", &b) && b == 0);
    CHECK(!sb_json_get_bool(j, n, "int", &b));

    /* Not an object, empty, malformed: nothing found, nothing crashes. */
    CHECK(sb_json_get_raw("", 0, "a", NULL) == NULL);
    CHECK(sb_json_get_raw(NULL, 0, "a", NULL) == NULL);
    CHECK(sb_json_get_raw("[1]", 3, "a", NULL) == NULL);
    CHECK(sb_json_get_raw("{}", 2, "a", NULL) == NULL);
    CHECK(sb_json_get_raw("{\"a\":", 5, "a", NULL) == NULL);
    CHECK(sb_json_get_raw("{\"a\" 1}", 7, "a", NULL) == NULL);
    CHECK(sb_json_get_raw("{\"a\":\"x", 7, "a", NULL) == NULL);
    CHECK(sb_json_get_raw("{\"a\":{\"b\":1", 11, "a", NULL) == NULL);
    /* A truncated document: the members before the damage are still found. */
    CHECK(sb_json_get_int("{\"a\":1,\"b\":", 11, "a", &v) && v == 1);
    /* Only len bytes are read. */
    CHECK(sb_json_get_int("{\"a\":12}", 6, "a", &v) && v == 1);
}

/* reply makes a malloc'd reply buffer (room for a NUL) from n bytes. */
static unsigned char *reply(const char *bytes, size_t n) {
    unsigned char *b = (unsigned char *)malloc(n + 1);
    memcpy(b, bytes, n);
    return b;
}

static void test_split_reply(void) {
    static const struct {
        const char *reply;
        size_t n;
        sb_status st;
        const char *payload, *err, *msg;
    } cases[] = {
        {"\0value", 6, SB_OK, "value", "", ""},
        {"\0", 1, SB_OK, "", "", ""},
        {"\1no such file", 13, SB_NOT_FOUND, NULL, "env: not found: no such file", "no such file"},
        {"\2host \"x\" is not on the grant", 30, SB_DENIED, NULL, "env: denied: host \"x\" is not on the grant", "host \"x\" is not on the grant"},
        {"\3bad", 4, SB_INVALID, NULL, "env: invalid: bad", "bad"},
        {"\4quota", 6, SB_LIMIT, NULL, "env: limit: quota", "quota"},
        {"\5refused", 8, SB_FAILED, NULL, "env: failed: refused", "refused"},
        {"\5", 1, SB_FAILED, NULL, "env: failed", ""},
        {"\x09" "future", 7, (sb_status)9, NULL, "env: status(9): future", "future"},
        {"\xff", 1, (sb_status)255, NULL, "env: status(255)", ""},
        {NULL, 0, SB_FAILED, NULL, "env: failed: empty reply from host", "empty reply from host"},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char *payload = (unsigned char *)untouched;
        size_t plen = 77;
        unsigned char *buf = cases[i].reply ? reply(cases[i].reply, cases[i].n) : NULL;
        sb_status st = sb__split_reply("env", buf, cases[i].n, &payload, &plen);
        CHECK(st == cases[i].st);
        CHECK(sb_last_status() == cases[i].st);
        CHECK_STR((const char *)payload, cases[i].payload);
        if (cases[i].payload) CHECK(plen == strlen(cases[i].payload));
        else CHECK(plen == 0);
        CHECK_STR(sb_last_error(), cases[i].err);
        CHECK_STR(sb_last_message(), cases[i].msg);
        free(payload);
    }
    CHECK_STR(sb_status_name(SB_OK), "ok");
    CHECK_STR(sb_status_name(SB_NOT_FOUND), "not_found");
    CHECK_STR(sb_status_name(SB_DENIED), "denied");
    CHECK_STR(sb_status_name(SB_INVALID), "invalid");
    CHECK_STR(sb_status_name(SB_LIMIT), "limit");
    CHECK_STR(sb_status_name(SB_FAILED), "failed");
    CHECK_STR(sb_status_name((sb_status)9), "unknown");
}

/* frame makes a fetch OK payload: u32 LE head length, head, body. */
static unsigned char *frame(const char *head, const char *body, size_t body_len, size_t *n) {
    size_t h = strlen(head);
    unsigned char *p = (unsigned char *)malloc(4 + h + body_len + 1);
    p[0] = (unsigned char)h;
    p[1] = (unsigned char)(h >> 8);
    p[2] = (unsigned char)(h >> 16);
    p[3] = (unsigned char)(h >> 24);
    memcpy(p + 4, head, h);
    memcpy(p + 4 + h, body, body_len);
    *n = 4 + h + body_len;
    return p;
}

static void test_decode_response(void) {
    sb_response r;
    size_t n;
    unsigned char *p;

    p = frame("{\"status\":200,\"url\":\"https://example.com/a\\u002fb\","
              "\"headers\":{\"content-type\":\"text/plain; charset=utf-8\",\"x-echo\":\"\\\"ping\\\"\","
              "\"x-empty\":\"\",\"x-odd\":5}}",
              "bin\0ary", 7, &n);
    CHECK(sb__decode_response(p, n, &r) == SB_OK);
    CHECK(r.status == 200);
    CHECK_STR(r.url, "https://example.com/a/b");
    CHECK(r.header_count == 3);
    CHECK_STR(sb_response_header(&r, "content-type"), "text/plain; charset=utf-8");
    CHECK_STR(sb_response_header(&r, "Content-Type"), "text/plain; charset=utf-8");
    CHECK_STR(sb_response_header(&r, "x-echo"), "\"ping\"");
    CHECK_STR(sb_response_header(&r, "x-empty"), "");
    CHECK(sb_response_header(&r, "x-odd") == NULL);
    CHECK(sb_response_header(&r, "content") == NULL);
    CHECK(sb_response_header(&r, "content-type-x") == NULL);
    CHECK(r.body_len == 7 && memcmp(r.body, "bin\0ary", 8) == 0); /* NUL after the body */
    sb_response_free(&r);
    CHECK(r.body == NULL && r.headers == NULL && r.header_count == 0);
    sb_response_free(&r);

    /* No headers, empty body. */
    p = frame("{\"status\":204,\"url\":\"u\",\"headers\":{}}", "", 0, &n);
    CHECK(sb__decode_response(p, n, &r) == SB_OK);
    CHECK(r.status == 204 && r.header_count == 0 && r.body_len == 0 && r.body && r.body[0] == 0);
    CHECK(sb_response_header(&r, "x") == NULL);
    sb_response_free(&r);

    /* Malformed payloads are SB_FAILED, response zeroed. */
    p = reply("\3\0\0", 3);
    CHECK(sb__decode_response(p, 3, &r) == SB_FAILED);
    CHECK_STR(sb_last_error(), "fetch: failed: malformed reply: payload has no head length");
    CHECK(r.body == NULL && r.url == NULL);
    p = frame("{}", "", 0, &n);
    p[0] = 200;
    CHECK(sb__decode_response(p, n, &r) == SB_FAILED);
    CHECK_STR(sb_last_error(), "fetch: failed: malformed reply: head length exceeds the payload");
    p = frame("[1]", "body", 4, &n);
    CHECK(sb__decode_response(p, n, &r) == SB_FAILED);
    CHECK_STR(sb_last_message(), "malformed reply: head is not a JSON object");
    sb_response_free(&r);
}

/* The fake host: records each call, answers from the replies table. */
static sb_buf trace = SB_BUF_INIT;

static struct {
    const char *fn;
    const char *bytes;
    size_t n;
} answers[8];
static size_t nanswers;

static void answer(const char *fn, const char *bytes, size_t n) {
    size_t i;
    for (i = 0; i < nanswers; i++)
        if (strcmp(answers[i].fn, fn) == 0) break;
    if (i == nanswers) nanswers++;
    answers[i].fn = fn;
    answers[i].bytes = bytes;
    answers[i].n = n;
}

static void host(const sb_native_call *c, sb_buf *out, void *ctx) {
    size_t i;
    int k;
    (void)ctx;
    if (trace.len) sb_buf_putc(&trace, '\n');
    sb_buf_puts(&trace, c->fn);
    if (strcmp(c->fn, "log") == 0) {
        char lv[4] = {'[', (char)('0' + c->level), ']', 0};
        sb_buf_puts(&trace, lv);
    }
    sb_buf_putc(&trace, '(');
    for (k = 0; k < 2; k++) {
        if (k == 1 && strcmp(c->fn, "fetch") != 0 && strcmp(c->fn, "write_file") != 0) break;
        if (k) sb_buf_puts(&trace, ", ");
        if (c->arg[k]) sb_json_quote(&trace, (const char *)c->arg[k], c->len[k]);
        else sb_buf_puts(&trace, "0");
    }
    sb_buf_putc(&trace, ')');
    for (i = 0; i < nanswers; i++)
        if (strcmp(answers[i].fn, c->fn) == 0) sb_buf_append(out, answers[i].bytes, answers[i].n);
}

static void start(void) {
    sb_native_reset();
    sb_native_set_handler(host, NULL);
    sb_buf_free(&trace);
    nanswers = 0;
}

/* finish checks the trace and that every block but the output was freed. */
#define FINISH(want) finish(__LINE__, want)
static void finish(int line, const char *want) {
    size_t out = 0;
    check_str(__FILE__, line, "trace", sb_buf_cstr(&trace), want);
    sb_native_output(&out);
    checks++;
    if (sb_native_live_blocks() != (sb_native_output(NULL) ? 1u : 0u) || sb_native_bad_frees() != 0) {
        failures++;
        fprintf(stderr, "%s:%d: %zu live blocks, %ld bad frees\n", __FILE__, line,
                sb_native_live_blocks(), sb_native_bad_frees());
    }
}

static void test_fetch(void) {
    sb_response r;
    sb_header h[2] = {{"X-Test", "1"}, {"Accept", "a\"b"}};
    sb_request req;
    size_t n;
    unsigned char *p;
    char *ok;

    start();
    p = frame("{\"status\":200,\"url\":\"https://example.com/\",\"headers\":{\"x-echo\":\"ping\"}}",
              "{\"n\":1}", 7, &n);
    ok = (char *)malloc(n + 1);
    ok[0] = 0;
    memcpy(ok + 1, p, n);
    free(p);
    answer("fetch", ok, n + 1);
    memset(&req, 0, sizeof req);
    req.method = "POST";
    req.url = "https://example.com/";
    req.headers = h;
    req.header_count = 2;
    req.body = "ping";
    req.body_len = 4;
    CHECK(sb_fetch(&req, &r) == SB_OK);
    CHECK(r.status == 200 && r.body_len == 7);
    CHECK_STR(r.body, "{\"n\":1}");
    CHECK_STR(sb_response_header(&r, "x-echo"), "ping");
    CHECK_STR(sb_last_error(), "");
    sb_response_free(&r);
    CHECK(sb_get("https://example.com/x", &r) == SB_OK);
    sb_response_free(&r);
    memset(&req, 0, sizeof req);
    req.url = "https://example.com/y";
    CHECK(sb_fetch(&req, &r) == SB_OK);
    sb_response_free(&r);
    FINISH("fetch(\"{\\\"method\\\":\\\"POST\\\",\\\"url\\\":\\\"https://example.com/\\\","
           "\\\"headers\\\":{\\\"X-Test\\\":\\\"1\\\",\\\"Accept\\\":\\\"a\\\\\\\"b\\\"}}\", \"ping\")\n"
           "fetch(\"{\\\"method\\\":\\\"GET\\\",\\\"url\\\":\\\"https://example.com/x\\\"}\", 0)\n"
           "fetch(\"{\\\"url\\\":\\\"https://example.com/y\\\"}\", 0)");
    free(ok);

    start();
    answer("fetch", "\2host \"x\" is not on the grant", 30);
    r.status = 123;
    CHECK(sb_get("https://x/", &r) == SB_DENIED);
    CHECK(r.status == 0 && r.body == NULL);
    CHECK_STR(sb_last_error(), "fetch: denied: host \"x\" is not on the grant");
    sb_response_free(&r);
    answer("fetch", "\0\1\0", 3); /* OK but malformed */
    CHECK(sb_get("https://x/", &r) == SB_FAILED);
    CHECK_STR(sb_last_error(), "fetch: failed: malformed reply: payload has no head length");
    answer("fetch", "", 0); /* offset 0 */
    CHECK(sb_get("https://x/", &r) == SB_FAILED);
    CHECK_STR(sb_last_error(), "fetch: failed: empty reply from host");
    CHECK(sb_fetch(NULL, &r) == SB_INVALID);
    FINISH("fetch(\"{\\\"method\\\":\\\"GET\\\",\\\"url\\\":\\\"https://x/\\\"}\", 0)\n"
           "fetch(\"{\\\"method\\\":\\\"GET\\\",\\\"url\\\":\\\"https://x/\\\"}\", 0)\n"
           "fetch(\"{\\\"method\\\":\\\"GET\\\",\\\"url\\\":\\\"https://x/\\\"}\", 0)");
}

static void test_env_files_log(void) {
    char *v = untouched, *data = NULL;
    size_t len = 0;

    start();
    answer("env", "\0en_US", 6);
    CHECK(sb_env("LANG", &v) == SB_OK);
    CHECK_STR(v, "en_US");
    free(v);
    answer("env", "\1", 1);
    CHECK(sb_env("SECRET", &v) == SB_NOT_FOUND && v == NULL);
    CHECK_STR(sb_last_error(), "env: not found");
    CHECK(sb_env("SECRET", NULL) == SB_NOT_FOUND);
    answer("env", "\0", 1);
    CHECK(sb_env("EMPTY", &v) == SB_OK);
    CHECK_STR(v, "");
    free(v);
    /* The status is shared with other translation units. */
    CHECK(other_tu_env("X") == SB_OK && sb_last_status() == SB_OK);
    answer("env", "\1", 1);
    CHECK(other_tu_env("X") == SB_NOT_FOUND && sb_last_status() == SB_NOT_FOUND);
    CHECK_STR(sb_last_error(), "env: not found");
    FINISH("env(\"LANG\")\nenv(\"SECRET\")\nenv(\"SECRET\")\nenv(\"EMPTY\")\nenv(\"X\")\nenv(\"X\")");

    start();
    answer("read_file", "\0hel\0lo", 7);
    answer("write_file", "\0", 1);
    CHECK(sb_read_file("/workspace/a.md", &data, &len) == SB_OK);
    CHECK(len == 6 && memcmp(data, "hel\0lo", 7) == 0);
    free(data);
    CHECK(sb_write_file("/workspace/b.md", "x", 1) == SB_OK);
    CHECK(sb_write_file("/workspace/empty", NULL, 0) == SB_OK);
    answer("read_file", "\1/workspace/c.md does not exist", 31);
    data = untouched;
    CHECK(sb_read_file("/workspace/c.md", &data, &len) == SB_NOT_FOUND && data == NULL && len == 0);
    CHECK_STR(sb_last_error(), "read_file: not found: /workspace/c.md does not exist");
    answer("write_file", "\2read-only mount", 16);
    CHECK(sb_write_file("/skill/x", "", 0) == SB_DENIED);
    CHECK_STR(sb_last_error(), "write_file: denied: read-only mount");
    answer("write_file", "\4maxWriteBytes", 14);
    CHECK(sb_write_file("/workspace/big", "0123456789abcdefg", 17) == SB_LIMIT);
    FINISH("read_file(\"/workspace/a.md\")\n"
           "write_file(\"/workspace/b.md\", \"x\")\n"
           "write_file(\"/workspace/empty\", 0)\n"
           "read_file(\"/workspace/c.md\")\n"
           "write_file(\"/skill/x\", 0)\n"
           "write_file(\"/workspace/big\", \"0123456789abcdefg\")");

    start();
    {
        char big[600];
        memset(big, 'y', sizeof big - 1);
        big[sizeof big - 1] = 0;
        sb_logf(SB_WARN, "%s!", big); /* longer than sb_logf's stack buffer */
        CHECK(trace.len == strlen("log[2](\"\")") + 599 + 1);
        CHECK(trace.data && trace.data[trace.len - 3] == '!');
    }
    start();
    sb_log(SB_DEBUG, "d0");
    sb_log(SB_INFO, "i1");
    sb_log(SB_WARN, "w2");
    sb_log(SB_ERROR, "e3");
    sb_log(SB_INFO, "");
    sb_logf(SB_INFO, "n=%d s=%s", 42, "x");
    FINISH("log[0](\"d0\")\nlog[1](\"i1\")\nlog[2](\"w2\")\nlog[3](\"e3\")\nlog[1](0)\nlog[1](\"n=42 s=x\")");
}

static void test_no_host(void) {
    char *v = NULL;
    sb_response r;
    sb_native_reset(); /* no handler */
    CHECK(sb_get("https://example.com/", &r) == SB_FAILED);
    CHECK_STR(sb_last_error(), "fetch: failed: not running in a Skillbox WebAssembly guest");
    CHECK(sb_env("X", &v) == SB_FAILED && v == NULL);
    sb_log(SB_INFO, "dropped");
    CHECK(sb_native_live_blocks() == 0 && sb_native_bad_frees() == 0);
}

static void test_io(void) {
    size_t n = 99;
    char *in;
    const char *out;
    sb_buf b = SB_BUF_INIT;

    start();
    in = sb_input(&n); /* no input: "" */
    CHECK(in && n == 0 && *in == 0);
    free(in);
    sb_native_set_input("{\"name\":\"Ada\",\"pad\":\"0123456789\"}", 33);
    in = sb_input(&n);
    CHECK(n == 33);
    CHECK_STR(in, "{\"name\":\"Ada\",\"pad\":\"0123456789\"}");
    free(in);

    CHECK(sb_ok_json("{\"greeting\":\"Hello, Ada!\"}") == 0);
    out = sb_native_output(&n);
    CHECK(out && n == strlen("{\"success\":true,\"result\":{\"greeting\":\"Hello, Ada!\"}}"));
    CHECK(out && memcmp(out, "{\"success\":true,\"result\":{\"greeting\":\"Hello, Ada!\"}}", n) == 0);
    CHECK(sb_ok_json(NULL) == 0);
    out = sb_native_output(&n);
    CHECK(n == 30 && memcmp(out, "{\"success\":true,\"result\":null}", n) == 0);
    CHECK(sb_fail("name is \"empty\"\n") == 0);
    out = sb_native_output(&n);
    CHECK(n == strlen("{\"success\":false,\"error\":\"name is \\\"empty\\\"\\n\"}"));
    CHECK(memcmp(out, "{\"success\":false,\"error\":\"name is \\\"empty\\\"\\n\"}", n) == 0);
    CHECK(sb_fail(NULL) == 0);
    out = sb_native_output(&n);
    CHECK(n == 28 && memcmp(out, "{\"success\":false,\"error\":\"\"}", n) == 0);

    sb_json_begin_array(&b);
    sb_json_int(&b, 1);
    sb_json_end_array(&b);
    CHECK(sb_ok_buf(&b) == 0 && b.data == NULL);
    out = sb_native_output(&n);
    CHECK(n == 29 && memcmp(out, "{\"success\":true,\"result\":[1]}", n) == 0);
    b.failed = 1;
    CHECK(sb_ok_buf(&b) == 0);
    out = sb_native_output(&n);
    CHECK(memcmp(out, "{\"success\":false,\"error\":\"out of memory building the result\"}", n) == 0);

    CHECK(sb_output("raw", 3) == 0);
    out = sb_native_output(&n);
    CHECK(n == 3 && memcmp(out, "raw", 3) == 0);
    sb_set_error("boom");
    /* Each output leaves one live block (the host reads it after return); nothing else. */
    CHECK(sb_native_live_blocks() == 8);
    CHECK(sb_native_bad_frees() == 0);
}

int main(void) {
    test_quote();
    test_builder();
    test_read();
    test_split_reply();
    test_decode_response();
    test_fetch();
    test_env_files_log();
    test_no_host();
    test_io();
    sb_native_reset();
    sb_buf_free(&trace);
    if (failures) {
        fprintf(stderr, "FAIL: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("ok: %d checks\n", checks);
    return 0;
}
