// A small JSON reader (parseJson -> JsonValue) and writer (quote, JsonBuilder) for
// skill arguments, fetch bodies and the SkillResult envelope. No dependencies.

import { Result, Status } from "./status";

/** What a JsonValue holds. */
export enum JsonKind {
  Null = 0,
  Bool = 1,
  Number = 2,
  String = 3,
  Array = 4,
  Object = 5,
}

/**
 * A parsed JSON value. The typed getters never fail: a missing key, a JSON null or a
 * value of another type gives the default, so `args.getString("name", "world")` is safe
 * on any input (the host has already validated the arguments against the manifest).
 */
export class JsonValue {
  kind: JsonKind = JsonKind.Null;
  private b: bool = false;
  private n: f64 = 0;
  private s: string = "";
  private items: Array<JsonValue> | null = null;
  private names: Array<string> | null = null;
  private fields: Map<string, JsonValue> | null = null;

  static newNull(): JsonValue {
    return new JsonValue();
  }

  static fromBool(b: bool): JsonValue {
    const v = new JsonValue();
    v.kind = JsonKind.Bool;
    v.b = b;
    return v;
  }

  static fromNumber(n: f64): JsonValue {
    const v = new JsonValue();
    v.kind = JsonKind.Number;
    v.n = n;
    return v;
  }

  static fromString(s: string): JsonValue {
    const v = new JsonValue();
    v.kind = JsonKind.String;
    v.s = s;
    return v;
  }

  static fromArray(items: Array<JsonValue>): JsonValue {
    const v = new JsonValue();
    v.kind = JsonKind.Array;
    v.items = items;
    return v;
  }

  /** An empty object; add members with set(). */
  static newObject(): JsonValue {
    const v = new JsonValue();
    v.kind = JsonKind.Object;
    v.names = new Array<string>();
    v.fields = new Map<string, JsonValue>();
    return v;
  }

  get isNull(): bool { return this.kind == JsonKind.Null; }
  get isBool(): bool { return this.kind == JsonKind.Bool; }
  get isNumber(): bool { return this.kind == JsonKind.Number; }
  get isString(): bool { return this.kind == JsonKind.String; }
  get isArray(): bool { return this.kind == JsonKind.Array; }
  get isObject(): bool { return this.kind == JsonKind.Object; }

  /** The boolean, or def when this is not a boolean. */
  asBool(def: bool = false): bool {
    return this.kind == JsonKind.Bool ? this.b : def;
  }

  /** The number, or def when this is not a number. */
  asNumber(def: f64 = 0): f64 {
    return this.kind == JsonKind.Number ? this.n : def;
  }

  /** The number truncated to an integer, or def when this is not a finite number. */
  asInt(def: i64 = 0): i64 {
    return this.kind == JsonKind.Number && isFinite(this.n) ? <i64>this.n : def;
  }

  /** The string, or def when this is not a string. */
  asString(def: string = ""): string {
    return this.kind == JsonKind.String ? this.s : def;
  }

  /** The elements of an array; an empty array for other kinds. */
  asArray(): Array<JsonValue> {
    const items = this.items;
    return items !== null ? items : new Array<JsonValue>();
  }

  /** The number of elements of an array or members of an object; 0 otherwise. */
  get length(): i32 {
    const items = this.items;
    if (items !== null) return items.length;
    const names = this.names;
    return names !== null ? names.length : 0;
  }

  /** The element at index i of an array, or null. */
  at(i: i32): JsonValue | null {
    const items = this.items;
    if (items === null || i < 0 || i >= items.length) return null;
    return items[i];
  }

  /** The member names of an object in document order (later duplicates replace values). */
  keys(): Array<string> {
    const names = this.names;
    return names !== null ? names.slice(0) : new Array<string>();
  }

  /** Whether an object has the member key. */
  has(key: string): bool {
    const fields = this.fields;
    return fields !== null && fields.has(key);
  }

  /** The member key of an object, or null when absent or when this is not an object. */
  get(key: string): JsonValue | null {
    const fields = this.fields;
    if (fields === null || !fields.has(key)) return null;
    return fields.get(key);
  }

  /** Sets the member key of an object (a no-op on other kinds); returns this. */
  set(key: string, value: JsonValue): JsonValue {
    const fields = this.fields;
    const names = this.names;
    if (fields === null || names === null) return this;
    if (!fields.has(key)) names.push(key);
    fields.set(key, value);
    return this;
  }

  getString(key: string, def: string = ""): string {
    const v = this.get(key);
    return v !== null ? v.asString(def) : def;
  }

  getNumber(key: string, def: f64 = 0): f64 {
    const v = this.get(key);
    return v !== null ? v.asNumber(def) : def;
  }

  getInt(key: string, def: i64 = 0): i64 {
    const v = this.get(key);
    return v !== null ? v.asInt(def) : def;
  }

  getBool(key: string, def: bool = false): bool {
    const v = this.get(key);
    return v !== null ? v.asBool(def) : def;
  }

  /** The member key when it is an object, else null. */
  getObject(key: string): JsonValue | null {
    const v = this.get(key);
    return v !== null && v.isObject ? v : null;
  }

  /** The elements of the member key when it is an array, else an empty array. */
  getArray(key: string): Array<JsonValue> {
    const v = this.get(key);
    return v !== null ? v.asArray() : new Array<JsonValue>();
  }

  /** The value as compact JSON. */
  toString(): string {
    switch (this.kind) {
      case JsonKind.Bool: return this.b ? "true" : "false";
      case JsonKind.Number: return jsonNumber(this.n);
      case JsonKind.String: return quote(this.s);
      case JsonKind.Array: {
        const items = this.asArray();
        const parts = new Array<string>(items.length);
        for (let i = 0; i < items.length; i++) parts[i] = items[i].toString();
        return "[" + parts.join(",") + "]";
      }
      case JsonKind.Object: {
        const names = this.keys();
        const parts = new Array<string>(names.length);
        for (let i = 0; i < names.length; i++) {
          parts[i] = quote(names[i]) + ":" + this.get(names[i])!.toString();
        }
        return "{" + parts.join(",") + "}";
      }
    }
    return "null";
  }
}

/**
 * Parses text as one JSON value (RFC 8259; surrounding whitespace allowed). On a syntax
 * error the result is not ok: status Status.Invalid, op "json", and a message naming
 * the problem and its offset (in UTF-16 code units).
 */
export function parseJson(text: string): Result<JsonValue> {
  const p = new Parser(text);
  p.space();
  const v = p.value(0);
  if (v !== null) {
    p.space();
    if (p.i < text.length) p.fail("unexpected data after the value");
  }
  if (p.err.length > 0 || v === null) {
    return new Result<JsonValue>("json", Status.Invalid, p.err, null);
  }
  return new Result<JsonValue>("json", Status.OK, "", v);
}

const MAX_DEPTH = 256;

class Parser {
  s: string;
  i: i32 = 0;
  err: string = "";

  constructor(s: string) {
    this.s = s;
  }

  fail(msg: string): JsonValue | null {
    if (this.err.length == 0) this.err = msg + " at offset " + this.i.toString();
    return null;
  }

  space(): void {
    const s = this.s;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c != 0x20 && c != 0x09 && c != 0x0a && c != 0x0d) break;
      this.i++;
    }
  }

  literal(word: string): bool {
    if (this.s.substr(this.i, word.length) != word) return false;
    this.i += word.length;
    return true;
  }

  value(depth: i32): JsonValue | null {
    if (depth > MAX_DEPTH) return this.fail("nested too deeply");
    const s = this.s;
    if (this.i >= s.length) return this.fail("unexpected end of JSON input");
    const c = s.charCodeAt(this.i);
    if (c == 0x7b) return this.object(depth);
    if (c == 0x5b) return this.array(depth);
    if (c == 0x22) {
      const str = this.string();
      return str !== null ? JsonValue.fromString(str) : null;
    }
    if (c == 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
    if (c == 0x74 && this.literal("true")) return JsonValue.fromBool(true);
    if (c == 0x66 && this.literal("false")) return JsonValue.fromBool(false);
    if (c == 0x6e && this.literal("null")) return JsonValue.newNull();
    return this.fail("invalid character " + quote(s.charAt(this.i)));
  }

  object(depth: i32): JsonValue | null {
    const obj = JsonValue.newObject();
    const s = this.s;
    this.i++; // {
    this.space();
    if (this.i < s.length && s.charCodeAt(this.i) == 0x7d) {
      this.i++;
      return obj;
    }
    while (true) {
      if (this.i >= s.length) return this.fail("unexpected end of JSON input");
      if (s.charCodeAt(this.i) != 0x22) return this.fail("expected a member name");
      const key = this.string();
      if (key === null) return null;
      this.space();
      if (this.i >= s.length || s.charCodeAt(this.i) != 0x3a) return this.fail("expected ':'");
      this.i++;
      this.space();
      const v = this.value(depth + 1);
      if (v === null) return null;
      obj.set(key, v);
      this.space();
      if (this.i >= s.length) return this.fail("unexpected end of JSON input");
      const c = s.charCodeAt(this.i);
      this.i++;
      if (c == 0x7d) return obj;
      if (c != 0x2c) {
        this.i--;
        return this.fail("expected ',' or '}'");
      }
      this.space();
    }
    return null;
  }

  array(depth: i32): JsonValue | null {
    const items = new Array<JsonValue>();
    const s = this.s;
    this.i++; // [
    this.space();
    if (this.i < s.length && s.charCodeAt(this.i) == 0x5d) {
      this.i++;
      return JsonValue.fromArray(items);
    }
    while (true) {
      this.space();
      const v = this.value(depth + 1);
      if (v === null) return null;
      items.push(v);
      this.space();
      if (this.i >= s.length) return this.fail("unexpected end of JSON input");
      const c = s.charCodeAt(this.i);
      this.i++;
      if (c == 0x5d) return JsonValue.fromArray(items);
      if (c != 0x2c) {
        this.i--;
        return this.fail("expected ',' or ']'");
      }
    }
    return null;
  }

  digits(): i32 {
    const s = this.s;
    const start = this.i;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c < 0x30 || c > 0x39) break;
      this.i++;
    }
    return this.i - start;
  }

  number(): JsonValue | null {
    const s = this.s;
    const start = this.i;
    if (s.charCodeAt(this.i) == 0x2d) this.i++;
    if (this.i < s.length && s.charCodeAt(this.i) == 0x30) {
      this.i++;
    } else if (this.digits() == 0) {
      return this.fail("invalid number");
    }
    if (this.i < s.length && s.charCodeAt(this.i) == 0x2e) {
      this.i++;
      if (this.digits() == 0) return this.fail("invalid number");
    }
    if (this.i < s.length && (s.charCodeAt(this.i) | 0x20) == 0x65) {
      this.i++;
      if (this.i < s.length && (s.charCodeAt(this.i) == 0x2b || s.charCodeAt(this.i) == 0x2d)) this.i++;
      if (this.digits() == 0) return this.fail("invalid number");
    }
    return JsonValue.fromNumber(parseFloat(s.substring(start, this.i)));
  }

  /** Reads a string token starting at its opening quote. */
  string(): string | null {
    const s = this.s;
    this.i++; // "
    let start = this.i;
    let parts: Array<string> | null = null;
    while (true) {
      if (this.i >= s.length) {
        this.fail("unexpected end of JSON input");
        return null;
      }
      const c = s.charCodeAt(this.i);
      if (c == 0x22) {
        const tail = s.substring(start, this.i);
        this.i++;
        if (parts === null) return tail;
        parts.push(tail);
        return parts.join("");
      }
      if (c < 0x20) {
        this.fail("control character in string");
        return null;
      }
      if (c != 0x5c) {
        this.i++;
        continue;
      }
      // An escape: flush what came before it.
      if (parts === null) parts = new Array<string>();
      parts.push(s.substring(start, this.i));
      this.i++;
      if (this.i >= s.length) {
        this.fail("unexpected end of JSON input");
        return null;
      }
      const e = s.charCodeAt(this.i);
      this.i++;
      switch (e) {
        case 0x22: parts.push("\""); break;
        case 0x5c: parts.push("\\"); break;
        case 0x2f: parts.push("/"); break;
        case 0x62: parts.push("\b"); break;
        case 0x66: parts.push("\f"); break;
        case 0x6e: parts.push("\n"); break;
        case 0x72: parts.push("\r"); break;
        case 0x74: parts.push("\t"); break;
        case 0x75: {
          let code = 0;
          for (let k = 0; k < 4; k++) {
            const h = this.i < s.length ? hexValue(s.charCodeAt(this.i)) : -1;
            if (h < 0) {
              this.fail("invalid \\u escape");
              return null;
            }
            code = (code << 4) | h;
            this.i++;
          }
          parts.push(String.fromCharCode(code));
          break;
        }
        default:
          this.i--;
          this.fail("invalid escape");
          return null;
      }
      start = this.i;
    }
    return null;
  }
}

function hexValue(c: i32): i32 {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  return -1;
}

const HEX = "0123456789abcdef";

function unicodeEscape(c: i32): string {
  return "\\u" + HEX.charAt((c >> 12) & 15) + HEX.charAt((c >> 8) & 15) +
    HEX.charAt((c >> 4) & 15) + HEX.charAt(c & 15);
}

/** The escape of code unit c inside a JSON string, or null when it needs none. */
function escapeOf(c: i32): string | null {
  switch (c) {
    case 0x22: return "\\\"";
    case 0x5c: return "\\\\";
    case 0x0a: return "\\n";
    case 0x0d: return "\\r";
    case 0x09: return "\\t";
    case 0x08: return "\\b";
    case 0x0c: return "\\f";
  }
  if (c < 0x20) return unicodeEscape(c);
  return null;
}

/**
 * s as a JSON string literal, quotes included: `"`, `\` and control characters are
 * escaped, and so is a lone UTF-16 surrogate (as \uXXXX), so the output is always valid
 * JSON in valid UTF-8.
 */
export function quote(s: string): string {
  const n = s.length;
  let parts: Array<string> | null = null;
  let start = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    let esc: string | null = null;
    if (c < 0x20 || c == 0x22 || c == 0x5c) {
      esc = escapeOf(c);
    } else if (c >= 0xd800 && c <= 0xdfff) {
      if (c <= 0xdbff && i + 1 < n) {
        const d = s.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          i++; // a valid pair: copied as is
          continue;
        }
      }
      esc = unicodeEscape(c);
    }
    if (esc === null) continue;
    if (parts === null) parts = new Array<string>();
    parts.push(s.substring(start, i));
    parts.push(esc);
    start = i + 1;
  }
  if (parts === null) return "\"" + s + "\"";
  parts.push(s.substring(start));
  return "\"" + parts.join("") + "\"";
}

/**
 * n as a JSON number: integers without a fraction ("200", not "200.0"), others in the
 * shortest form that reads back the same. JSON has no NaN or Infinity: they are "null".
 */
export function jsonNumber(n: f64): string {
  if (!isFinite(n)) return "null";
  if (n == Math.floor(n) && Math.abs(n) < 1e15) return (<i64>n).toString();
  return n.toString();
}

/**
 * Writes a JSON object member by member, in order:
 *
 *   new JsonBuilder().setString("greeting", "Hello").setInteger("count", 2).toString()
 *   // {"greeting":"Hello","count":2}
 *
 * setRaw and setObject insert JSON that is already encoded; the builder does not check it.
 */
export class JsonBuilder {
  private parts: Array<string> = new Array<string>();

  private key(k: string): void {
    if (this.parts.length > 0) this.parts.push(",");
    this.parts.push(quote(k));
    this.parts.push(":");
  }

  setString(key: string, value: string): JsonBuilder {
    this.key(key);
    this.parts.push(quote(value));
    return this;
  }

  setNumber(key: string, value: f64): JsonBuilder {
    this.key(key);
    this.parts.push(jsonNumber(value));
    return this;
  }

  setInteger(key: string, value: i64): JsonBuilder {
    this.key(key);
    this.parts.push(value.toString());
    return this;
  }

  setBool(key: string, value: bool): JsonBuilder {
    this.key(key);
    this.parts.push(value ? "true" : "false");
    return this;
  }

  setNull(key: string): JsonBuilder {
    this.key(key);
    this.parts.push("null");
    return this;
  }

  /** Inserts already-encoded JSON (e.g. from jsonArray or JsonValue.toString()). */
  setRaw(key: string, json: string): JsonBuilder {
    this.key(key);
    this.parts.push(json);
    return this;
  }

  setObject(key: string, value: JsonBuilder): JsonBuilder {
    return this.setRaw(key, value.toString());
  }

  setValue(key: string, value: JsonValue): JsonBuilder {
    return this.setRaw(key, value.toString());
  }

  /** The object as JSON text. */
  toString(): string {
    return "{" + this.parts.join("") + "}";
  }
}

/** A JSON array of already-encoded elements: jsonArray([quote("a"), "1"]) is `["a",1]`. */
export function jsonArray(elements: Array<string>): string {
  return "[" + elements.join(",") + "]";
}

/** A JSON array of strings: jsonStrings(["a", "b"]) is `["a","b"]`. */
export function jsonStrings(values: Array<string>): string {
  const parts = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) parts[i] = quote(values[i]);
  return jsonArray(parts);
}
