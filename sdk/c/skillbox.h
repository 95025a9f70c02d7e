/*
 * skillbox.h: the Skillbox guest SDK for C and C++ (ABI skillbox/v1).
 *
 * One header, no library: every function is static inline, so a skill pays only for
 * what it calls. C99 or later, or C++. Build a skill with
 *
 *     clang --target=wasm32-wasi -O2 -mexec-model=reactor -I<this dir> -o execute.wasm *.c
 *
 * and export the entry function with SB_EXPORT("execute"). docs/abi.md is the contract
 * this header implements; README.md next to it describes the API.
 *
 * Ownership, in one rule: a pointer a function returns through a `char **`, a
 * `sb_response` or as its result is the caller's, to release with free() (or
 * sb_response_free / sb_buf_free where named); pointers the caller passes in are only
 * read, never kept. The exceptions are noted on the function (sb_last_error,
 * sb_response_header, sb_json_get_raw).
 *
 * Outside WebAssembly (no __wasm__), the kernel and host imports are replaced by an
 * in-process fake (see "Native fake" at the end) so that skill logic and this header
 * can be unit-tested with the host's compiler.
 */
#ifndef SKILLBOX_H
#define SKILLBOX_H

#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SKILLBOX_ABI "skillbox/v1"

/* SB_EXPORT("execute") marks the entry function: int execute(void). */
#ifdef __wasm__
#define SB_EXPORT(name) __attribute__((export_name(name)))
#else
#define SB_EXPORT(name)
#endif

/* Shared state must be one object across translation units: a weak definition. */
#define SB__SHARED __attribute__((weak))

/* ---------------------------------------------------------------------------------
 * Status and errors
 * ------------------------------------------------------------------------------- */

/* The status byte of every host reply (docs/abi.md section 3). */
typedef enum sb_status {
    SB_OK = 0,        /* done */
    SB_NOT_FOUND = 1, /* the variable is unset, the file does not exist */
    SB_DENIED = 2,    /* the run's grant does not allow it */
    SB_INVALID = 3,   /* malformed request: bad JSON, URL or path, oversized argument */
    SB_LIMIT = 4,     /* a per-run quota was reached */
    SB_FAILED = 5,    /* allowed, but it failed: connection refused, DNS, I/O */
    SB__STATUS_MAX = 255 /* a later host may send other values */
} sb_status;

/* Log levels for sb_log. */
typedef enum sb_level { SB_DEBUG = 0, SB_INFO = 1, SB_WARN = 2, SB_ERROR = 3 } sb_level;

/* sb_status_name returns the ABI's lower-case name: "ok", "not_found", "denied",
 * "invalid", "limit", "failed", or "unknown" for a status this header does not know.
 * Static storage. */
static inline const char *sb_status_name(sb_status s) {
    switch ((int)s) {
    case SB_OK: return "ok";
    case SB_NOT_FOUND: return "not_found";
    case SB_DENIED: return "denied";
    case SB_INVALID: return "invalid";
    case SB_LIMIT: return "limit";
    case SB_FAILED: return "failed";
    }
    return "unknown";
}

struct sb__native;

typedef struct sb__state {
    sb_status status; /* of the last host call */
    char *error;      /* "op: kind: message", malloc'd, or NULL */
    size_t message;   /* where the host's message starts in error */
#ifndef __wasm__
    struct sb__native *native;
#endif
} sb__state;

SB__SHARED sb__state sb__g;

/* sb_last_status is the status of the most recent sb_fetch, sb_get, sb_env,
 * sb_read_file or sb_write_file call (SB_OK after a success). */
static inline sb_status sb_last_status(void) { return sb__g.status; }

/* sb_last_error describes the most recent failed call the way the Go SDK does,
 * "op: kind: message" (`fetch: denied: host "x" is not on the grant`), or "" after a
 * success. Owned by the SDK: valid until the next host call; copy it to keep it. */
static inline const char *sb_last_error(void) { return sb__g.error ? sb__g.error : ""; }

/* sb_last_message is just the host's message of the most recent failed call (may be
 * ""). Same lifetime as sb_last_error. */
static inline const char *sb_last_message(void) {
    return sb__g.error ? sb__g.error + sb__g.message : "";
}

/* ---------------------------------------------------------------------------------
 * sb_buf: a growable byte buffer, always NUL-terminated once anything was appended.
 * Start with sb_buf b = SB_BUF_INIT; release with sb_buf_free. If an allocation fails
 * the buffer stops growing and `failed` is set; appends become no-ops.
 * ------------------------------------------------------------------------------- */

typedef struct sb_buf {
    char *data; /* the bytes, NUL-terminated; NULL while empty */
    size_t len; /* bytes used, without the NUL */
    size_t cap; /* bytes allocated */
    int failed; /* an allocation failed; the contents are truncated */
    int sep_;   /* internal: a JSON value was just written, the next needs a comma */
} sb_buf;

#define SB_BUF_INIT {NULL, 0, 0, 0, 0}

static inline int sb__buf_grow(sb_buf *b, size_t more) {
    size_t need, cap;
    char *p;
    if (b->failed) return 0;
    if (more > (size_t)-1 - b->len - 1) { b->failed = 1; return 0; }
    need = b->len + more + 1;
    if (need <= b->cap) return 1;
    cap = b->cap ? b->cap : 64;
    while (cap < need) cap = cap > (size_t)-1 / 2 ? need : cap * 2;
    p = (char *)realloc(b->data, cap);
    if (!p) { b->failed = 1; return 0; }
    b->data = p;
    b->cap = cap;
    return 1;
}

/* sb_buf_append appends n bytes (binary-safe). */
static inline void sb_buf_append(sb_buf *b, const void *p, size_t n) {
    if (!sb__buf_grow(b, n)) return;
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = 0;
}

/* sb_buf_puts appends a NUL-terminated string (NULL appends nothing). */
static inline void sb_buf_puts(sb_buf *b, const char *s) {
    if (s) sb_buf_append(b, s, strlen(s));
}

/* sb_buf_putc appends one byte. */
static inline void sb_buf_putc(sb_buf *b, char c) { sb_buf_append(b, &c, 1); }

/* sb_buf_cstr returns the contents as a string: "" while empty. Owned by b. */
static inline const char *sb_buf_cstr(const sb_buf *b) { return b->data ? b->data : ""; }

/* sb_buf_reset empties b, keeping its memory and clearing `failed`. */
static inline void sb_buf_reset(sb_buf *b) {
    b->len = 0;
    b->failed = 0;
    b->sep_ = 0;
    if (b->data) b->data[0] = 0;
}

/* sb_buf_free releases b's memory and leaves it empty (SB_BUF_INIT). */
static inline void sb_buf_free(sb_buf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = b->sep_ = 0;
}

/* sb_buf_take hands b's contents to the caller (free() them; "" is returned as a
 * malloc'd empty string, NULL only if b failed or memory is exhausted) and leaves b
 * empty. */
static inline char *sb_buf_take(sb_buf *b) {
    char *s;
    if (b->failed) { sb_buf_free(b); return NULL; }
    if (!b->data) return (char *)calloc(1, 1);
    s = b->data;
    b->data = NULL;
    b->len = b->cap = 0;
    b->sep_ = 0;
    return s;
}

/* ---------------------------------------------------------------------------------
 * JSON writing, into an sb_buf. Commas are inserted automatically: write keys and
 * values in order and they come out separated.
 *
 *     sb_buf b = SB_BUF_INIT;
 *     sb_json_begin_object(&b);
 *     sb_json_key(&b, "greeting"); sb_json_string(&b, "Hello");
 *     sb_json_key(&b, "n");        sb_json_int(&b, 3);
 *     sb_json_end_object(&b);      // {"greeting":"Hello","n":3}
 * ------------------------------------------------------------------------------- */

static inline void sb__json_sep(sb_buf *b) {
    if (b->sep_) sb_buf_putc(b, ',');
    b->sep_ = 0;
}

static inline void sb_json_begin_object(sb_buf *b) { sb__json_sep(b); sb_buf_putc(b, '{'); }
static inline void sb_json_end_object(sb_buf *b) { sb_buf_putc(b, '}'); b->sep_ = 1; }
static inline void sb_json_begin_array(sb_buf *b) { sb__json_sep(b); sb_buf_putc(b, '['); }
static inline void sb_json_end_array(sb_buf *b) { sb_buf_putc(b, ']'); b->sep_ = 1; }

/* sb__utf8_len returns the length of the valid UTF-8 sequence at s (at most n bytes),
 * or 0 if it is not valid (overlong, surrogate, beyond U+10FFFF, truncated). */
static inline size_t sb__utf8_len(const unsigned char *s, size_t n) {
    unsigned char c = s[0], lo = 0x80, hi = 0xBF;
    size_t len, i;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else return 0;
    if (n < len) return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return len;
}

/* sb_json_quote appends s[0..n) as a quoted JSON string, escaping '"', '\' and control
 * characters; invalid UTF-8 bytes become U+FFFD, so the output is always valid JSON.
 * It does not insert a comma: it is the primitive under sb_json_string_n. */
static inline void sb_json_quote(sb_buf *b, const char *str, size_t n) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0, run = 0;
    sb_buf_putc(b, '"');
    while (i < n) {
        unsigned char c = s[i];
        char esc[6];
        size_t elen = 2;
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) { i++; continue; }
        if (c >= 0x80) {
            size_t k = sb__utf8_len(s + i, n - i);
            if (k) { i += k; continue; }
        }
        sb_buf_append(b, s + run, i - run);
        esc[0] = '\\';
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        default:
            if (c >= 0x80) { /* an invalid UTF-8 byte */
                memcpy(esc, "\xEF\xBF\xBD", 3);
                elen = 3;
            } else {
                esc[1] = 'u'; esc[2] = '0'; esc[3] = '0';
                esc[4] = hex[c >> 4]; esc[5] = hex[c & 15];
                elen = 6;
            }
        }
        sb_buf_append(b, esc, elen);
        run = ++i;
    }
    sb_buf_append(b, s + run, n - run);
    sb_buf_putc(b, '"');
}

/* sb_json_key writes an object key and its colon. */
static inline void sb_json_key(sb_buf *b, const char *key) {
    sb__json_sep(b);
    sb_json_quote(b, key ? key : "", key ? strlen(key) : 0);
    sb_buf_putc(b, ':');
}

/* sb_json_string_n writes s[0..n) as a JSON string value (binary-safe, see
 * sb_json_quote). */
static inline void sb_json_string_n(sb_buf *b, const char *s, size_t n) {
    sb__json_sep(b);
    sb_json_quote(b, s ? s : "", s ? n : 0);
    b->sep_ = 1;
}

/* sb_json_string writes a NUL-terminated string value; NULL writes null. */
static inline void sb_json_string(sb_buf *b, const char *s) {
    if (!s) {
        sb__json_sep(b);
        sb_buf_append(b, "null", 4);
        b->sep_ = 1;
        return;
    }
    sb_json_string_n(b, s, strlen(s));
}

/* sb_json_int writes an integer. */
static inline void sb_json_int(sb_buf *b, long long v) {
    char tmp[24];
    size_t i = sizeof tmp;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do { tmp[--i] = (char)('0' + u % 10); u /= 10; } while (u);
    if (v < 0) tmp[--i] = '-';
    sb__json_sep(b);
    sb_buf_append(b, tmp + i, sizeof tmp - i);
    b->sep_ = 1;
}

/* sb_json_bool writes true (v != 0) or false. */
static inline void sb_json_bool(sb_buf *b, int v) {
    sb__json_sep(b);
    sb_buf_puts(b, v ? "true" : "false");
    b->sep_ = 1;
}

/* sb_json_null writes null. */
static inline void sb_json_null(sb_buf *b) { sb_json_string(b, NULL); }

/* sb_json_raw writes an already-encoded JSON value as it is (NULL or "" writes null).
 * Nothing checks that it is valid JSON. */
static inline void sb_json_raw(sb_buf *b, const char *json) {
    if (!json || !*json) { sb_json_null(b); return; }
    sb__json_sep(b);
    sb_buf_puts(b, json);
    b->sep_ = 1;
}

/* ---------------------------------------------------------------------------------
 * JSON reading: fields of one JSON object, given as (json, len). Members whose values
 * are objects or arrays are skipped over, so only top-level keys match; to descend,
 * take the nested object with sb_json_get_raw and read fields from it. When a key
 * appears twice the last one counts, as in Go's encoding/json. Lenient: it finds
 * fields, it does not validate.
 * ------------------------------------------------------------------------------- */

static inline const char *sb__json_ws(const char *p, const char *e) {
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

/* p at '"': returns the position after the closing quote, or NULL. */
static inline const char *sb__json_skip_string(const char *p, const char *e) {
    for (p++; p < e; p++) {
        if (*p == '\\') {
            if (++p >= e) return NULL;
        } else if (*p == '"') {
            return p + 1;
        }
    }
    return NULL;
}

/* sb__json_skip returns the position after the value at p (after whitespace), or NULL. */
static inline const char *sb__json_skip(const char *p, const char *e) {
    const char *q;
    p = sb__json_ws(p, e);
    if (p >= e) return NULL;
    if (*p == '"') return sb__json_skip_string(p, e);
    if (*p == '{' || *p == '[') {
        int depth = 0;
        while (p < e) {
            char c = *p;
            if (c == '"') {
                if (!(p = sb__json_skip_string(p, e))) return NULL;
                continue;
            }
            if (c == '{' || c == '[') depth++;
            else if ((c == '}' || c == ']') && --depth == 0) return p + 1;
            p++;
        }
        return NULL;
    }
    for (q = p; q < e; q++) {
        char c = *q;
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              c == '-' || c == '+' || c == '.'))
            break;
    }
    return q == p ? NULL : q;
}

static inline size_t sb__utf8_put(char *o, unsigned long cp) {
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* The 4 hex digits at s (s has at least 4 bytes), or -1. */
static inline long sb__hex4(const char *s) {
    long v = 0;
    int i;
    for (i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= c - '0';
        else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
        else return -1;
    }
    return v;
}

/* sb__json_unescape decodes the n bytes between a JSON string's quotes into out, which
 * has room for n bytes (decoding never grows). Returns the decoded length. A lone
 * surrogate becomes U+FFFD, as in Go; a malformed \u escape or an unknown escape keeps
 * its character ("\u12G4" is "u12G4"). */
static inline size_t sb__json_unescape(const char *s, size_t n, char *out) {
    const char *e = s + n;
    char *o = out;
    while (s < e) {
        long cp;
        if (*s != '\\' || s + 1 >= e) { *o++ = *s++; continue; }
        s++;
        switch (*s) {
        case 'n': *o++ = '\n'; s++; continue;
        case 't': *o++ = '\t'; s++; continue;
        case 'r': *o++ = '\r'; s++; continue;
        case 'b': *o++ = '\b'; s++; continue;
        case 'f': *o++ = '\f'; s++; continue;
        case 'u': break;
        default: *o++ = *s++; continue; /* \" \\ \/ and anything else */
        }
        if (e - s < 5 || (cp = sb__hex4(s + 1)) < 0) { /* a malformed \u: keep the 'u' */
            *o++ = *s++;
            continue;
        }
        s += 5;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            long lo = -1;
            if (e - s >= 6 && s[0] == '\\' && s[1] == 'u') lo = sb__hex4(s + 2);
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                s += 6;
            } else {
                cp = 0xFFFD;
            }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            cp = 0xFFFD;
        }
        o += sb__utf8_put(o, (unsigned long)cp);
    }
    return (size_t)(o - out);
}

/* sb_json_decode_string decodes one JSON string value, raw[0..rawlen) including its
 * quotes (as sb_json_get_raw returns it). Returns a malloc'd, NUL-terminated copy (the
 * caller frees it) and its length in *out_len (may be NULL; the value may contain NUL
 * bytes), or NULL if raw is not a string or memory is exhausted. */
static inline char *sb_json_decode_string(const char *raw, size_t rawlen, size_t *out_len) {
    char *out;
    size_t n;
    if (!raw || rawlen < 2 || raw[0] != '"' || sb__json_skip_string(raw, raw + rawlen) != raw + rawlen)
        return NULL;
    out = (char *)malloc(rawlen - 1);
    if (!out) return NULL;
    n = sb__json_unescape(raw + 1, rawlen - 2, out);
    out[n] = 0;
    if (out_len) *out_len = n;
    return out;
}

/* Object iteration. sb__json_open returns the position after the object's '{', or NULL
 * if json does not hold an object. sb__json_member reads the next member: 1 with the key
 * (between the quotes, still escaped) and the raw value, 0 at the closing '}', -1 if
 * malformed. */
static inline const char *sb__json_open(const char *json, size_t len) {
    const char *p;
    if (!json) return NULL;
    p = sb__json_ws(json, json + len);
    return p < json + len && *p == '{' ? p + 1 : NULL;
}

static inline int sb__json_member(const char **pp, const char *e, const char **k, size_t *klen,
                                  const char **v, size_t *vlen) {
    const char *p = sb__json_ws(*pp, e), *q;
    if (p < e && *p == ',') p = sb__json_ws(p + 1, e);
    if (p >= e) return -1;
    if (*p == '}') return 0;
    if (*p != '"' || !(q = sb__json_skip_string(p, e))) return -1;
    *k = p + 1;
    *klen = (size_t)(q - p - 2);
    p = sb__json_ws(q, e);
    if (p >= e || *p != ':') return -1;
    p = sb__json_ws(p + 1, e);
    if (!(q = sb__json_skip(p, e))) return -1;
    *v = p;
    *vlen = (size_t)(q - p);
    *pp = q;
    return 1;
}

/* Does the escaped key k[0..klen) decode to key? */
static inline int sb__json_key_is(const char *k, size_t klen, const char *key) {
    size_t want = strlen(key), n;
    char *tmp;
    int eq;
    if (!memchr(k, '\\', klen)) return klen == want && memcmp(k, key, klen) == 0;
    if (want > klen || !(tmp = (char *)malloc(klen ? klen : 1))) return 0;
    n = sb__json_unescape(k, klen, tmp);
    eq = n == want && memcmp(tmp, key, n) == 0;
    free(tmp);
    return eq;
}

/* sb_json_get_raw finds key among the members of the object in json[0..len) and returns
 * a pointer to its raw value inside json (not a copy, not NUL-terminated), with its
 * length in *out_len (may be NULL). NULL if the key is absent or json is not an object.
 * A string value is returned with its quotes: decode it with sb_json_decode_string. */
static inline const char *sb_json_get_raw(const char *json, size_t len, const char *key,
                                          size_t *out_len) {
    const char *e, *p = sb__json_open(json, len), *k, *v, *found = NULL;
    size_t klen, vlen, flen = 0;
    if (!p || !key) return NULL;
    e = json + len;
    while (sb__json_member(&p, e, &k, &klen, &v, &vlen) == 1) {
        if (sb__json_key_is(k, klen, key)) { found = v; flen = vlen; }
    }
    if (found && out_len) *out_len = flen;
    return found;
}

/* sb_json_get_string returns the string value of key, decoded (escapes, \u surrogate
 * pairs), malloc'd and NUL-terminated: the caller frees it. Its length goes to *out_len
 * (may be NULL). NULL if the key is absent, its value is not a string (null included),
 * or memory is exhausted. */
static inline char *sb_json_get_string(const char *json, size_t len, const char *key,
                                       size_t *out_len) {
    size_t vlen;
    const char *v = sb_json_get_raw(json, len, key, &vlen);
    return v ? sb_json_decode_string(v, vlen, out_len) : NULL;
}

/* sb_json_get_int stores the integer value of key in *out and returns 1; returns 0 (and
 * leaves *out alone) if the key is absent, or its value is not an integer (a fraction,
 * an exponent, a string) or does not fit a long long. */
static inline int sb_json_get_int(const char *json, size_t len, const char *key, long long *out) {
    size_t vlen, i = 0;
    const char *v = sb_json_get_raw(json, len, key, &vlen);
    unsigned long long u = 0, lim;
    int neg = 0;
    if (!v || !vlen) return 0;
    if (v[0] == '-') { neg = 1; i = 1; }
    if (i == vlen) return 0;
    lim = neg ? (unsigned long long)(-(LLONG_MIN + 1)) + 1 : (unsigned long long)LLONG_MAX;
    for (; i < vlen; i++) {
        if (v[i] < '0' || v[i] > '9') return 0;
        if (u > (lim - (unsigned long long)(v[i] - '0')) / 10) return 0;
        u = u * 10 + (unsigned long long)(v[i] - '0');
    }
    if (out) *out = neg ? (u ? -(long long)(u - 1) - 1 : 0) : (long long)u;
    return 1;
}

/* sb_json_get_bool stores 1 (true) or 0 (false) in *out and returns 1; returns 0 if the
 * key is absent or not a boolean. */
static inline int sb_json_get_bool(const char *json, size_t len, const char *key, int *out) {
    size_t vlen;
    const char *v = sb_json_get_raw(json, len, key, &vlen);
    if (v && vlen == 4 && memcmp(v, "true", 4) == 0) { if (out) *out = 1; return 1; }
    if (v && vlen == 5 && memcmp(v, "false", 5) == 0) { if (out) *out = 0; return 1; }
    return 0;
}

/* ---------------------------------------------------------------------------------
 * The imports. Every offset is an Extism memory block offset, not a pointer.
 * ------------------------------------------------------------------------------- */

#ifdef __wasm__
#define SB__IMPORT(mod, name) __attribute__((import_module(mod), import_name(name)))
/* extism:host/env: the Extism kernel. */
SB__IMPORT("extism:host/env", "alloc") uint64_t sb_extism_alloc(uint64_t len);
SB__IMPORT("extism:host/env", "free") void sb_extism_free(uint64_t off);
SB__IMPORT("extism:host/env", "length") uint64_t sb_extism_length(uint64_t off);
SB__IMPORT("extism:host/env", "load_u8") uint8_t sb_extism_load_u8(uint64_t addr);
SB__IMPORT("extism:host/env", "load_u64") uint64_t sb_extism_load_u64(uint64_t addr);
SB__IMPORT("extism:host/env", "store_u8") void sb_extism_store_u8(uint64_t addr, uint8_t v);
SB__IMPORT("extism:host/env", "store_u64") void sb_extism_store_u64(uint64_t addr, uint64_t v);
SB__IMPORT("extism:host/env", "input_length") uint64_t sb_extism_input_length(void);
SB__IMPORT("extism:host/env", "input_load_u8") uint8_t sb_extism_input_load_u8(uint64_t i);
SB__IMPORT("extism:host/env", "input_load_u64") uint64_t sb_extism_input_load_u64(uint64_t i);
SB__IMPORT("extism:host/env", "output_set") void sb_extism_output_set(uint64_t off, uint64_t len);
SB__IMPORT("extism:host/env", "error_set") void sb_extism_error_set(uint64_t off);
/* extism:host/user: the Skillbox host functions (docs/abi.md section 4). Each returns
 * a reply block the guest must free; arguments are blocks the guest allocated and
 * frees; 0 means absent. */
SB__IMPORT("extism:host/user", "skillbox_fetch") uint64_t sb_host_fetch(uint64_t request, uint64_t body);
SB__IMPORT("extism:host/user", "skillbox_env") uint64_t sb_host_env(uint64_t name);
SB__IMPORT("extism:host/user", "skillbox_read_file") uint64_t sb_host_read_file(uint64_t path);
SB__IMPORT("extism:host/user", "skillbox_write_file") uint64_t sb_host_write_file(uint64_t path, uint64_t data);
SB__IMPORT("extism:host/user", "skillbox_log") void sb_host_log(int32_t level, uint64_t message);
#else
/* Defined at the end of this file: an in-process fake of the kernel and the host. */
static inline uint64_t sb_extism_alloc(uint64_t len);
static inline void sb_extism_free(uint64_t off);
static inline uint64_t sb_extism_length(uint64_t off);
static inline uint8_t sb_extism_load_u8(uint64_t addr);
static inline uint64_t sb_extism_load_u64(uint64_t addr);
static inline void sb_extism_store_u8(uint64_t addr, uint8_t v);
static inline void sb_extism_store_u64(uint64_t addr, uint64_t v);
static inline uint64_t sb_extism_input_length(void);
static inline uint8_t sb_extism_input_load_u8(uint64_t i);
static inline uint64_t sb_extism_input_load_u64(uint64_t i);
static inline void sb_extism_output_set(uint64_t off, uint64_t len);
static inline void sb_extism_error_set(uint64_t off);
static inline uint64_t sb_host_fetch(uint64_t request, uint64_t body);
static inline uint64_t sb_host_env(uint64_t name);
static inline uint64_t sb_host_read_file(uint64_t path);
static inline uint64_t sb_host_write_file(uint64_t path, uint64_t data);
static inline void sb_host_log(int32_t level, uint64_t message);
#endif

/* ---------------------------------------------------------------------------------
 * Blocks
 * ------------------------------------------------------------------------------- */

/* sb__store copies n bytes into guest memory at addr, 8 bytes per kernel call. */
static inline void sb__store(uint64_t addr, const void *p, size_t n) {
    const unsigned char *s = (const unsigned char *)p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        sb_extism_store_u64(addr + i, w);
    }
    for (; i < n; i++) sb_extism_store_u8(addr + i, s[i]);
}

/* sb__load copies n bytes from the block memory at addr. */
static inline void sb__load(uint64_t addr, void *p, size_t n) {
    unsigned char *d = (unsigned char *)p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = sb_extism_load_u64(addr + i);
        memcpy(d + i, &w, 8);
    }
    for (; i < n; i++) d[i] = sb_extism_load_u8(addr + i);
}

/* sb__block returns a new block holding p[0..n), or 0 when n is 0 (absent) or the
 * kernel is out of memory. The caller frees it with sb__release. */
static inline uint64_t sb__block(const void *p, size_t n) {
    uint64_t off;
    if (!n) return 0;
    off = sb_extism_alloc(n);
    if (off) sb__store(off, p, n);
    return off;
}

static inline void sb__release(uint64_t off) {
    if (off) sb_extism_free(off);
}

/* sb__take copies a reply block into malloc'd memory with room for a NUL after it,
 * frees the block, and returns the copy (NULL for offset 0 or no memory). */
static inline unsigned char *sb__take(uint64_t off, size_t *n) {
    unsigned char *b;
    uint64_t len;
    *n = 0;
    if (!off) return NULL;
    len = sb_extism_length(off);
    b = len < (uint64_t)((size_t)-1) ? (unsigned char *)malloc((size_t)len + 1) : NULL;
    if (b) {
        sb__load(off, b, (size_t)len);
        b[len] = 0;
        *n = (size_t)len;
    }
    sb_extism_free(off);
    return b;
}

/* ---------------------------------------------------------------------------------
 * Replies
 * ------------------------------------------------------------------------------- */

/* sb__set_error records the outcome of a host call for sb_last_*. */
static inline sb_status sb__set_error(const char *op, sb_status st, const char *msg, size_t mlen) {
    static const char *const kinds[] = {"ok", "not found", "denied", "invalid", "limit", "failed"};
    sb_buf b = SB_BUF_INIT;
    size_t at;
    free(sb__g.error);
    sb__g.error = NULL;
    sb__g.message = 0;
    sb__g.status = st;
    if (st == SB_OK) return st;
    sb_buf_puts(&b, op);
    sb_buf_puts(&b, ": ");
    if ((unsigned)st < sizeof kinds / sizeof kinds[0]) {
        sb_buf_puts(&b, kinds[st]);
    } else {
        char num[4];
        unsigned v = (unsigned)st & 255, i = sizeof num;
        do { num[--i] = (char)('0' + v % 10); v /= 10; } while (v);
        sb_buf_puts(&b, "status(");
        sb_buf_append(&b, num + i, sizeof num - i);
        sb_buf_putc(&b, ')');
    }
    at = b.len;
    if (mlen) {
        sb_buf_puts(&b, ": ");
        at = b.len;
        sb_buf_append(&b, msg, mlen);
    }
    sb__g.error = sb_buf_take(&b);
    sb__g.message = sb__g.error ? at : 0;
    return st;
}

static inline sb_status sb__err(const char *op, sb_status st, const char *msg) {
    return sb__set_error(op, st, msg, strlen(msg));
}

/* sb__split_reply splits a reply (status byte, payload) held in buf[0..n), malloc'd
 * with room for n+1 bytes, and takes ownership of buf. On SB_OK it moves the payload to
 * the front, NUL-terminates it and hands it back in *payload / *plen (the caller frees
 * it); otherwise it records the error and frees buf. An empty reply is SB_FAILED. */
static inline sb_status sb__split_reply(const char *op, unsigned char *buf, size_t n,
                                        unsigned char **payload, size_t *plen) {
    sb_status st;
    *payload = NULL;
    *plen = 0;
    if (!buf || !n) {
        free(buf);
        return sb__err(op, SB_FAILED, "empty reply from host");
    }
    st = (sb_status)buf[0];
    if (st != SB_OK) {
        sb__set_error(op, st, (const char *)buf + 1, n - 1);
        free(buf);
        return st;
    }
    memmove(buf, buf + 1, n - 1);
    buf[n - 1] = 0;
    *payload = buf;
    *plen = n - 1;
    return sb__set_error(op, SB_OK, NULL, 0);
}

/* sb__call finishes a host call: takes the reply block and splits it. */
static inline sb_status sb__call(const char *op, uint64_t reply, unsigned char **payload, size_t *plen) {
    size_t n;
    unsigned char *b = sb__take(reply, &n);
    if (reply && !b) {
        *payload = NULL;
        *plen = 0;
        return sb__err(op, SB_FAILED, "out of memory reading the reply");
    }
    return sb__split_reply(op, b, n, payload, plen);
}

/* ---------------------------------------------------------------------------------
 * Input and output
 * ------------------------------------------------------------------------------- */

/* sb_input returns the call's input, the skill's arguments as a JSON object, as a
 * malloc'd copy with a NUL after it (the caller frees it); its length goes to *len (may
 * be NULL). An empty input is returned as "". NULL only when memory is exhausted. */
static inline char *sb_input(size_t *len) {
    uint64_t n = sb_extism_input_length(), i = 0;
    char *b = n < (uint64_t)((size_t)-1) ? (char *)malloc((size_t)n + 1) : NULL;
    if (len) *len = 0;
    if (!b) return NULL;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = sb_extism_input_load_u64(i);
        memcpy(b + i, &w, 8);
    }
    for (; i < n; i++) b[i] = (char)sb_extism_input_load_u8(i);
    b[n] = 0;
    if (len) *len = (size_t)n;
    return b;
}

/* sb_output sets the call's output to p[0..n), replacing any earlier output. A
 * SkillResult envelope is taken as such; anything else is the result value. Returns 0,
 * or 1 if the kernel is out of memory (return it from execute: the run fails). */
static inline int sb_output(const void *p, size_t n) {
    uint64_t off = n ? sb_extism_alloc(n) : 0;
    if (n && !off) return 1;
    sb__store(off, p, n);
    sb_extism_output_set(off, n); /* the block stays alive: the host reads it after return */
    return 0;
}

/* sb_ok_json_n is sb_ok_json for a result of n bytes. */
static inline int sb_ok_json_n(const char *raw, size_t n) {
    static const char head[] = "{\"success\":true,\"result\":";
    size_t h = sizeof head - 1, total;
    uint64_t off;
    if (!raw || !n) { raw = "null"; n = 4; }
    total = h + n + 1;
    off = sb_extism_alloc(total);
    if (!off) return 1;
    sb__store(off, head, h);
    sb__store(off + h, raw, n);
    sb_extism_store_u8(off + h + n, '}');
    sb_extism_output_set(off, total);
    return 0;
}

/* sb_ok_json sets the output to {"success":true,"result":<raw_json_result>}. The result
 * must be one JSON value, already encoded (see sb_buf and sb_json_*); NULL or "" is
 * null. Returns 0, the code for execute to return (1 if out of memory). */
static inline int sb_ok_json(const char *raw_json_result) {
    return sb_ok_json_n(raw_json_result, raw_json_result ? strlen(raw_json_result) : 0);
}

/* sb_fail sets the output to {"success":false,"error":"<message>"}, the message escaped
 * for JSON (NULL is ""). The model reads it. Returns 0 (the run itself succeeded: the
 * skill reported a failure), or 1 if out of memory. */
static inline int sb_fail(const char *message) {
    sb_buf b = SB_BUF_INIT;
    int rc;
    sb_buf_puts(&b, "{\"success\":false,\"error\":");
    sb_json_quote(&b, message ? message : "", message ? strlen(message) : 0);
    sb_buf_putc(&b, '}');
    rc = b.failed ? 1 : sb_output(b.data, b.len);
    sb_buf_free(&b);
    return rc;
}

/* sb_ok_buf is sb_ok_json with the JSON in b, which it frees. If b ran out of memory it
 * writes sb_fail("out of memory") instead. */
static inline int sb_ok_buf(sb_buf *b) {
    int rc = b->failed ? sb_fail("out of memory building the result") : sb_ok_json_n(b->data, b->len);
    sb_buf_free(b);
    return rc;
}

/* sb_set_error sets the Extism error message: with a non-zero return from execute, it
 * becomes the run's skill_error message. Most skills use sb_fail instead. */
static inline void sb_set_error(const char *message) {
    uint64_t off = sb__block(message, message ? strlen(message) : 0);
    if (off) sb_extism_error_set(off);
}

/* ---------------------------------------------------------------------------------
 * Logging
 * ------------------------------------------------------------------------------- */

/* sb_log appends message to the run's logs at level (SB_DEBUG .. SB_ERROR). It never
 * fails; messages past the run's log budget are dropped by the host. */
static inline void sb_log_n(sb_level level, const char *message, size_t n) {
    uint64_t off = sb__block(message, n);
    sb_host_log((int32_t)level, off);
    sb__release(off);
}

static inline void sb_log(sb_level level, const char *message) {
    sb_log_n(level, message, message ? strlen(message) : 0);
}

/* sb_logf logs a printf-formatted message. It links vsnprintf: ~20-40 KiB of wasi-libc
 * stdio the other functions do not need. */
static inline void sb_logf(sb_level level, const char *format, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static inline void sb_logf(sb_level level, const char *format, ...) {
    char small[256];
    va_list ap;
    int n;
    va_start(ap, format);
    n = vsnprintf(small, sizeof small, format, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) {
        sb_log_n(level, small, (size_t)n);
    } else {
        char *big = (char *)malloc((size_t)n + 1);
        if (!big) return;
        va_start(ap, format);
        vsnprintf(big, (size_t)n + 1, format, ap);
        va_end(ap);
        sb_log_n(level, big, (size_t)n);
        free(big);
    }
}

/* ---------------------------------------------------------------------------------
 * Environment and files
 * ------------------------------------------------------------------------------- */

/* sb_env looks up a granted environment variable. SB_OK: *value is a malloc'd,
 * NUL-terminated copy (the caller frees it). Otherwise *value is NULL and the status is
 * SB_NOT_FOUND for a variable that is unset or not granted (the host does not tell them
 * apart). value may be NULL to test for presence only. */
static inline sb_status sb_env(const char *name, char **value) {
    uint64_t n = sb__block(name, name ? strlen(name) : 0);
    unsigned char *p;
    size_t len;
    sb_status st = sb__call("env", sb_host_env(n), &p, &len);
    sb__release(n);
    if (value) *value = (char *)p;
    else free(p);
    return st;
}

/* sb_read_file reads a file under a granted mount or /skill. SB_OK: *data is a
 * malloc'd copy of the contents with a NUL after them (the caller frees it), *len its
 * length (len may be NULL; the contents may hold NUL bytes). Otherwise *data is NULL:
 * SB_NOT_FOUND, SB_DENIED (outside the mounts), SB_INVALID (relative path, ".."),
 * SB_LIMIT (larger than maxFileBytes), SB_FAILED (I/O). */
static inline sb_status sb_read_file(const char *path, char **data, size_t *len) {
    uint64_t p = sb__block(path, path ? strlen(path) : 0);
    unsigned char *b;
    size_t n;
    sb_status st = sb__call("read_file", sb_host_read_file(p), &b, &n);
    sb__release(p);
    if (data) *data = (char *)b;
    else free(b);
    if (len) *len = n;
    return st;
}

/* sb_write_file creates or replaces the file at path with data[0..len) (binary-safe;
 * len 0 writes an empty file), creating parent directories inside the mount. Returns
 * SB_OK, SB_DENIED (read-only mount, outside the mounts), SB_INVALID (bad path),
 * SB_LIMIT (maxWriteBytes or 256 files), SB_FAILED (I/O). */
static inline sb_status sb_write_file(const char *path, const void *data, size_t len) {
    uint64_t p = sb__block(path, path ? strlen(path) : 0);
    uint64_t d = sb__block(data, data ? len : 0);
    unsigned char *b;
    size_t n;
    sb_status st;
    if (data && len && !d) {
        sb__release(p);
        return sb__err("write_file", SB_FAILED, "out of memory");
    }
    st = sb__call("write_file", sb_host_write_file(p, d), &b, &n);
    sb__release(p);
    sb__release(d);
    free(b);
    return st;
}

/* ---------------------------------------------------------------------------------
 * HTTP
 * ------------------------------------------------------------------------------- */

/* A header: a name and one value. */
typedef struct sb_header {
    const char *name;
    const char *value;
} sb_header;

/* An outgoing request. Only url is required. Nothing here is kept after sb_fetch. */
typedef struct sb_request {
    const char *method;       /* NULL or "" means GET */
    const char *url;          /* http or https; its host must be on the grant */
    const sb_header *headers; /* header_count headers, or NULL */
    size_t header_count;
    const void *body; /* body_len bytes, or NULL for none */
    size_t body_len;
} sb_request;

/* A response. Everything in it is owned by it: release with sb_response_free. */
typedef struct sb_response {
    int status;           /* HTTP status code */
    char *url;            /* the final URL, after redirects */
    sb_header *headers;   /* header_count headers: lower-case names, repeats joined ", " */
    size_t header_count;
    char *body;           /* body_len bytes, raw, with a NUL after them for text use */
    size_t body_len;
    unsigned char *raw_;  /* internal: the reply payload the body points into */
} sb_response;

/* sb_response_free releases everything r holds and zeroes it. Safe on a zeroed or
 * already freed response. */
static inline void sb_response_free(sb_response *r) {
    size_t i;
    if (!r) return;
    for (i = 0; i < r->header_count; i++) {
        free((void *)(uintptr_t)r->headers[i].name); /* the response's own copies */
        free((void *)(uintptr_t)r->headers[i].value);
    }
    free(r->headers);
    free(r->url);
    free(r->raw_);
    memset(r, 0, sizeof *r);
}

/* sb_response_header returns the value of the header with this name (compared without
 * regard to ASCII case), or NULL. Owned by r. */
static inline const char *sb_response_header(const sb_response *r, const char *name) {
    size_t i;
    for (i = 0; r && name && i < r->header_count; i++) {
        const char *a = r->headers[i].name, *b = name;
        while (*a && *b) {
            char x = *a, y = *b;
            if (x >= 'A' && x <= 'Z') x = (char)(x - 'A' + 'a');
            if (y >= 'A' && y <= 'Z') y = (char)(y - 'A' + 'a');
            if (x != y) break;
            a++, b++;
        }
        if (!*a && !*b) return r->headers[i].value;
    }
    return NULL;
}

/* sb__encode_request writes the request head the host expects:
 * {"method":"POST","url":"...","headers":{"X-Test":"1"}} (method and headers omitted
 * when empty, as the Go SDK does). */
static inline void sb__encode_request(sb_buf *b, const sb_request *req) {
    size_t i;
    sb_json_begin_object(b);
    if (req->method && *req->method) {
        sb_json_key(b, "method");
        sb_json_string(b, req->method);
    }
    sb_json_key(b, "url");
    sb_json_string(b, req->url ? req->url : "");
    if (req->headers && req->header_count) {
        sb_json_key(b, "headers");
        sb_json_begin_object(b);
        for (i = 0; i < req->header_count; i++) {
            sb_json_key(b, req->headers[i].name);
            sb_json_string(b, req->headers[i].value ? req->headers[i].value : "");
        }
        sb_json_end_object(b);
    }
    sb_json_end_object(b);
}

static inline sb_status sb__malformed(sb_response *r, const char *msg) {
    sb_buf b = SB_BUF_INIT;
    sb_status st;
    sb_buf_puts(&b, "malformed reply: ");
    sb_buf_puts(&b, msg);
    sb_response_free(r);
    st = sb__set_error("fetch", SB_FAILED, sb_buf_cstr(&b), b.len);
    sb_buf_free(&b);
    return st;
}

/* sb__decode_response decodes the OK payload of skillbox_fetch (u32 LE head length, JSON
 * head, raw body) held in p[0..n), malloc'd with room for n+1 bytes; it takes ownership
 * of p. Fills r on SB_OK; on a malformed payload r is zeroed and the result is
 * SB_FAILED. */
static inline sb_status sb__decode_response(unsigned char *p, size_t n, sb_response *r) {
    size_t hlen, vlen, klen, count = 0;
    const char *head, *hv, *it, *k, *v;
    long long status = 0;
    memset(r, 0, sizeof *r);
    r->raw_ = p;
    if (!p || n < 4) return sb__malformed(r, "payload has no head length");
    hlen = (size_t)p[0] | (size_t)p[1] << 8 | (size_t)p[2] << 16 | (size_t)p[3] << 24;
    if (hlen > n - 4) return sb__malformed(r, "head length exceeds the payload");
    head = (const char *)p + 4;
    if (!sb__json_open(head, hlen)) return sb__malformed(r, "head is not a JSON object");
    sb_json_get_int(head, hlen, "status", &status);
    r->status = (int)status;
    r->url = sb_json_get_string(head, hlen, "url", NULL);
    if (!r->url && !(r->url = (char *)calloc(1, 1))) return sb__malformed(r, "out of memory");
    hv = sb_json_get_raw(head, hlen, "headers", &vlen);
    if (hv && (it = sb__json_open(hv, vlen)) != NULL) {
        const char *e = hv + vlen, *q = it;
        while (sb__json_member(&q, e, &k, &klen, &v, &vlen) == 1) count++;
        if (count) {
            r->headers = (sb_header *)calloc(count, sizeof(sb_header));
            if (!r->headers) return sb__malformed(r, "out of memory");
        }
        while (r->header_count < count && sb__json_member(&it, e, &k, &klen, &v, &vlen) == 1) {
            char *name, *value = sb_json_decode_string(v, vlen, NULL);
            if (!value) continue; /* not a string: not a header the host sends */
            name = (char *)malloc(klen + 1);
            if (!name) { free(value); return sb__malformed(r, "out of memory"); }
            name[sb__json_unescape(k, klen, name)] = 0;
            r->headers[r->header_count].name = name;
            r->headers[r->header_count].value = value;
            r->header_count++;
        }
    }
    r->body = (char *)p + 4 + hlen;
    r->body_len = n - 4 - hlen;
    r->body[r->body_len] = 0; /* p has room for n+1 bytes */
    return SB_OK;
}

/* sb_fetch makes an HTTP request through the host. SB_OK: *resp is filled (release it
 * with sb_response_free), whatever the HTTP status. Otherwise *resp is zeroed (freeing
 * it is harmless) and sb_last_error() says why: SB_DENIED (host not granted, private
 * address), SB_INVALID (bad URL, method or header), SB_LIMIT (maxFetches, maxFetchBytes),
 * SB_FAILED (DNS, refused, timeout). */
static inline sb_status sb_fetch(const sb_request *req, sb_response *resp) {
    sb_buf head = SB_BUF_INIT;
    uint64_t h, body;
    unsigned char *p;
    size_t n;
    sb_status st;
    memset(resp, 0, sizeof *resp);
    if (!req) return sb__err("fetch", SB_INVALID, "no request");
    sb__encode_request(&head, req);
    if (head.failed) {
        sb_buf_free(&head);
        return sb__err("fetch", SB_FAILED, "out of memory");
    }
    h = sb__block(head.data, head.len);
    sb_buf_free(&head);
    body = sb__block(req->body, req->body ? req->body_len : 0);
    if (!h || (req->body && req->body_len && !body)) {
        sb__release(h);
        sb__release(body);
        return sb__err("fetch", SB_FAILED, "out of memory");
    }
    st = sb__call("fetch", sb_host_fetch(h, body), &p, &n);
    sb__release(h);
    sb__release(body);
    if (st != SB_OK) return st;
    return sb__decode_response(p, n, resp);
}

/* sb_get is sb_fetch for a plain GET of url. */
static inline sb_status sb_get(const char *url, sb_response *resp) {
    sb_request req;
    memset(&req, 0, sizeof req);
    req.method = "GET";
    req.url = url;
    return sb_fetch(&req, resp);
}

/* ---------------------------------------------------------------------------------
 * Native fake (only without __wasm__): the kernel and the host, in process, so that the
 * SDK and skill logic run under the host's compiler. Blocks live in one growable arena
 * and are never reused. Without a handler every host call answers SB_FAILED "not running
 * in a Skillbox WebAssembly guest" and logs are dropped.
 *
 *     static void host(const sb_native_call *c, sb_buf *reply, void *ctx) {
 *         if (strcmp(c->fn, "env") == 0) sb_buf_append(reply, "\0hej", 4);
 *     }
 *     sb_native_set_handler(host, NULL);
 *     sb_native_set_input("{\"name\":\"Ada\"}", 14);
 *     execute();
 *     const char *out = sb_native_output(&n);
 *
 * The state is shared by all translation units; it is not thread-safe.
 * ------------------------------------------------------------------------------- */
#ifndef __wasm__

/* One host call as the fake host sees it: its name and its arguments' bytes (NULL and
 * 0 for an absent argument, offset 0). */
typedef struct sb_native_call {
    const char *fn; /* "fetch", "env", "read_file", "write_file" or "log" */
    int level;      /* log only */
    const unsigned char *arg[2];
    size_t len[2];
} sb_native_call;

/* A handler appends the reply block's bytes (status byte, payload) to reply; leaving it
 * empty answers with offset 0. For "log" the reply is ignored. */
typedef void (*sb_native_handler)(const sb_native_call *call, sb_buf *reply, void *ctx);

typedef struct sb__native_block {
    uint64_t off, len;
    int live;
} sb__native_block;

typedef struct sb__native {
    unsigned char *mem;
    uint64_t top, cap;
    sb__native_block *blocks;
    size_t nblocks, capblocks;
    long bad_frees;
    unsigned char *input;
    size_t input_len;
    uint64_t output, output_len, error;
    sb_native_handler handler;
    void *ctx;
} sb__native;

static inline sb__native *sb__nat(void) {
    if (!sb__g.native) {
        sb__g.native = (sb__native *)calloc(1, sizeof(sb__native));
        if (!sb__g.native) abort();
        sb__g.native->top = 8; /* offset 0 is "absent" */
    }
    return sb__g.native;
}

static inline sb__native_block *sb__nat_find(uint64_t off) {
    sb__native *s = sb__nat();
    size_t i;
    for (i = 0; i < s->nblocks; i++)
        if (s->blocks[i].off == off && s->blocks[i].live) return &s->blocks[i];
    return NULL;
}

/* sb_native_reset frees the fake's memory, input, output and handler. */
static inline void sb_native_reset(void) {
    if (sb__g.native) {
        free(sb__g.native->mem);
        free(sb__g.native->blocks);
        free(sb__g.native->input);
        free(sb__g.native);
        sb__g.native = NULL;
    }
    sb__set_error("", SB_OK, NULL, 0);
}

static inline void sb_native_set_handler(sb_native_handler h, void *ctx) {
    sb__nat()->handler = h;
    sb__nat()->ctx = ctx;
}

/* sb_native_set_input sets the input sb_input returns (copied). */
static inline void sb_native_set_input(const void *p, size_t n) {
    sb__native *s = sb__nat();
    free(s->input);
    s->input = (unsigned char *)malloc(n ? n : 1);
    if (!s->input) abort();
    if (n) memcpy(s->input, p, n);
    s->input_len = n;
}

/* sb_native_output returns the last output (valid until the next allocation), its length
 * in *n; NULL if none was set. */
static inline const char *sb_native_output(size_t *n) {
    sb__native *s = sb__nat();
    if (n) *n = (size_t)s->output_len;
    return s->output ? (const char *)s->mem + s->output : NULL;
}

/* sb_native_live_blocks counts the blocks allocated and not freed, the output's
 * included; sb_native_bad_frees counts frees of offsets that were not live blocks. */
static inline size_t sb_native_live_blocks(void) {
    sb__native *s = sb__nat();
    size_t i, n = 0;
    for (i = 0; i < s->nblocks; i++) n += s->blocks[i].live != 0;
    return n;
}
static inline long sb_native_bad_frees(void) { return sb__nat()->bad_frees; }

static inline uint64_t sb_extism_alloc(uint64_t len) {
    sb__native *s = sb__nat();
    uint64_t off;
    if (!len) return 0;
    if (s->top + len > s->cap) {
        uint64_t cap = s->cap ? s->cap : 4096;
        unsigned char *m;
        while (cap < s->top + len) cap *= 2;
        if (!(m = (unsigned char *)realloc(s->mem, (size_t)cap))) return 0;
        s->mem = m;
        s->cap = cap;
    }
    if (s->nblocks == s->capblocks) {
        size_t c = s->capblocks ? s->capblocks * 2 : 16;
        sb__native_block *b = (sb__native_block *)realloc(s->blocks, c * sizeof *b);
        if (!b) return 0;
        s->blocks = b;
        s->capblocks = c;
    }
    off = s->top;
    s->top += (len + 7) & ~(uint64_t)7;
    s->blocks[s->nblocks].off = off;
    s->blocks[s->nblocks].len = len;
    s->blocks[s->nblocks].live = 1;
    s->nblocks++;
    memset(s->mem + off, 0, (size_t)len);
    return off;
}

static inline void sb_extism_free(uint64_t off) {
    sb__native_block *b = sb__nat_find(off);
    if (b) b->live = 0;
    else sb__nat()->bad_frees++;
}

static inline uint64_t sb_extism_length(uint64_t off) {
    sb__native_block *b = sb__nat_find(off);
    return b ? b->len : 0;
}

static inline uint8_t sb_extism_load_u8(uint64_t addr) {
    sb__native *s = sb__nat();
    return addr < s->top ? s->mem[addr] : 0;
}

static inline uint64_t sb_extism_load_u64(uint64_t addr) {
    sb__native *s = sb__nat();
    uint64_t v = 0;
    if (addr + 8 <= s->top) memcpy(&v, s->mem + addr, 8);
    return v;
}

static inline void sb_extism_store_u8(uint64_t addr, uint8_t v) {
    sb__native *s = sb__nat();
    if (addr < s->top) s->mem[addr] = v;
}

static inline void sb_extism_store_u64(uint64_t addr, uint64_t v) {
    sb__native *s = sb__nat();
    if (addr + 8 <= s->top) memcpy(s->mem + addr, &v, 8);
}

static inline uint64_t sb_extism_input_length(void) { return sb__nat()->input_len; }

static inline uint8_t sb_extism_input_load_u8(uint64_t i) {
    sb__native *s = sb__nat();
    return i < s->input_len ? s->input[i] : 0;
}

static inline uint64_t sb_extism_input_load_u64(uint64_t i) {
    sb__native *s = sb__nat();
    uint64_t v = 0;
    if (i + 8 <= s->input_len) memcpy(&v, s->input + i, 8);
    return v;
}

static inline void sb_extism_output_set(uint64_t off, uint64_t len) {
    sb__nat()->output = off;
    sb__nat()->output_len = len;
}

static inline void sb_extism_error_set(uint64_t off) { sb__nat()->error = off; }

/* sb__nat_call runs the handler on the arguments' bytes and returns the reply block. */
static inline uint64_t sb__nat_call(const char *fn, int level, uint64_t a, uint64_t b) {
    sb__native *s = sb__nat();
    sb_native_call c;
    sb_buf reply = SB_BUF_INIT;
    uint64_t args[2], off = 0;
    int i;
    args[0] = a;
    args[1] = b;
    memset(&c, 0, sizeof c);
    c.fn = fn;
    c.level = level;
    for (i = 0; i < 2; i++) {
        sb__native_block *blk = args[i] ? sb__nat_find(args[i]) : NULL;
        if (args[i] && !blk) abort(); /* the real host traps: not a live memory block */
        c.arg[i] = blk ? s->mem + blk->off : NULL;
        c.len[i] = blk ? (size_t)blk->len : 0;
    }
    if (s->handler) s->handler(&c, &reply, s->ctx);
    else if (strcmp(fn, "log") != 0) sb_buf_puts(&reply, "\x05not running in a Skillbox WebAssembly guest");
    if (reply.len && strcmp(fn, "log") != 0) off = sb__block(reply.data, reply.len);
    sb_buf_free(&reply);
    return off;
}

static inline uint64_t sb_host_fetch(uint64_t request, uint64_t body) { return sb__nat_call("fetch", 0, request, body); }
static inline uint64_t sb_host_env(uint64_t name) { return sb__nat_call("env", 0, name, 0); }
static inline uint64_t sb_host_read_file(uint64_t path) { return sb__nat_call("read_file", 0, path, 0); }
static inline uint64_t sb_host_write_file(uint64_t path, uint64_t data) { return sb__nat_call("write_file", 0, path, data); }
static inline void sb_host_log(int32_t level, uint64_t message) { sb__nat_call("log", level, message, 0); }

#endif /* !__wasm__ */

#ifdef __cplusplus
}
#endif

#endif /* SKILLBOX_H */
