// The entry point's plumbing: the call's input, the SkillResult envelope, run().

import { Host } from "@extism/as-pdk";
import { parseJson, quote, JsonValue } from "./json";
import { utf8 } from "./host";

/**
 * The SkillResult envelope a skill returns:
 *   {"success":true,"result":<JSON>}   from succeed(json)
 *   {"success":false,"error":"..."}    from fail(message)
 */
export class SkillResult {
  /** Whether the call succeeded. */
  success: bool;
  /** The encoded result JSON on success; the error message (not encoded) on failure. */
  payload: string;

  constructor(success: bool, payload: string) {
    this.success = success;
    this.payload = payload;
  }

  /** The envelope as JSON text. */
  toString(): string {
    if (this.success) return "{\"success\":true,\"result\":" + this.payload + "}";
    return "{\"success\":false,\"error\":" + quote(this.payload) + "}";
  }
}

/**
 * A successful result. rawJsonResult is already-encoded JSON (use JsonBuilder, quote,
 * jsonNumber, JsonValue.toString()); it is inserted as is, not checked. "" means null.
 */
export function succeed(rawJsonResult: string): SkillResult {
  return new SkillResult(true, rawJsonResult.length > 0 ? rawJsonResult : "null");
}

/** A failed result; message is escaped as a JSON string, for the model to read. */
export function fail(message: string): SkillResult {
  return new SkillResult(false, message);
}

/** The call's input: the skill's arguments as JSON text ("" when there is none). */
export function inputText(): string {
  return String.UTF8.decode(Host.input().buffer);
}

/** Sets the call's output to the UTF-8 encoding of s. */
export function outputText(s: string): void {
  Host.output(utf8(s));
}

/** Sets the call's output to the envelope r. */
export function output(r: SkillResult): void {
  outputText(r.toString());
}

/** A skill's handler: the parsed arguments (always a JSON object) in, an envelope out. */
export type Handler = (args: JsonValue) => SkillResult;

/**
 * The body of a skill's entry point: parses the call's arguments (empty input is {}),
 * calls handler, writes its envelope as the output, and returns 0, the code to return
 * from `execute`. Arguments that are not a JSON object become
 * {"success":false,"error":"decode arguments: ..."} without calling handler.
 *
 * A failure belongs in the envelope (fail(...)), where the model reads it. An abort
 * (a failed assertion, an out-of-range index, `!` on null) cannot be caught in
 * AssemblyScript: it traps the run (see skillboxAbort).
 */
export function run(handler: Handler): i32 {
  let text = inputText();
  if (text.length == 0) text = "{}";
  const parsed = parseJson(text);
  const args = parsed.value;
  let result: SkillResult;
  if (!parsed.ok || args === null) {
    result = fail("decode arguments: " + parsed.message);
  } else if (!args.isObject) {
    result = fail("decode arguments: the arguments are not a JSON object");
  } else {
    result = handler(args);
  }
  output(result);
  return 0;
}
