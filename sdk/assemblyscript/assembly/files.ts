// skillbox_env, skillbox_read_file, skillbox_write_file.

import {
  block, blockLength, byteAt, copyOut, release, skillbox_env, skillbox_read_file,
  skillbox_write_file, stringBlock, textOut, utf8,
} from "./host";
import { HostResult, Result, Status } from "./status";
import { free } from "@extism/as-pdk/lib/env";

/** The status of a reply block and, on failure, its message; the block is not freed. */
function replyStatus(reply: u64, len: u64): Status {
  return len == 0 ? Status.Failed : <Status>byteAt(reply);
}

function replyMessage(reply: u64, len: u64): string {
  return len == 0 ? "empty reply from host" : textOut(reply + 1, len - 1);
}

/**
 * The value of the granted environment variable name, or null. A variable outside the
 * grant looks exactly like an unset one, by design: a skill cannot probe the host's
 * environment.
 */
export function env(name: string): string | null {
  const n = stringBlock(name);
  const reply = skillbox_env(n);
  release(n);
  const len = blockLength(reply);
  const st = replyStatus(reply, len);
  let value: string | null = null;
  if (st == Status.OK) value = textOut(reply + 1, len - 1);
  if (reply != 0) free(reply);
  return value;
}

/** env(name), or def when it is unset or not granted. */
export function envOr(name: string, def: string): string {
  const v = env(name);
  return v !== null ? v : def;
}

/**
 * The contents of the file at the absolute virtual path, which lies under a granted
 * mount or under /skill, the skill's own directory. Not ok: Status.NotFound when it does
 * not exist, Status.Denied outside the mounts, Status.Invalid for a relative path or a
 * ".." segment, Status.Limit past the run's file size limit.
 */
export function readFile(path: string): Result<Uint8Array> {
  const p = stringBlock(path);
  const reply = skillbox_read_file(p);
  release(p);
  const len = blockLength(reply);
  const st = replyStatus(reply, len);
  let r: Result<Uint8Array>;
  if (st == Status.OK) {
    r = new Result<Uint8Array>("read_file", st, "", copyOut(reply + 1, len - 1));
  } else {
    r = new Result<Uint8Array>("read_file", st, replyMessage(reply, len), null);
  }
  if (reply != 0) free(reply);
  return r;
}

/** readFile(path) decoded as UTF-8 (invalid sequences become U+FFFD). */
export function readText(path: string): Result<string> {
  const p = stringBlock(path);
  const reply = skillbox_read_file(p);
  release(p);
  const len = blockLength(reply);
  const st = replyStatus(reply, len);
  let r: Result<string>;
  if (st == Status.OK) {
    r = new Result<string>("read_file", st, "", textOut(reply + 1, len - 1));
  } else {
    r = new Result<string>("read_file", st, replyMessage(reply, len), null);
  }
  if (reply != 0) free(reply);
  return r;
}

/**
 * Creates or replaces the file at path with data, creating parent directories inside
 * the mount. Not ok: Status.Denied on a read-only mount or outside the mounts,
 * Status.Invalid for a bad path, Status.Limit when the run's write quota would be
 * exceeded.
 */
export function writeFile(path: string, data: Uint8Array): HostResult {
  const p = stringBlock(path);
  const d = block(data);
  const reply = skillbox_write_file(p, d);
  release(p);
  release(d);
  const len = blockLength(reply);
  const st = replyStatus(reply, len);
  const r = new HostResult("write_file", st, st == Status.OK ? "" : replyMessage(reply, len));
  if (reply != 0) free(reply);
  return r;
}

/** writeFile(path, the UTF-8 encoding of text). */
export function writeText(path: string, text: string): HostResult {
  return writeFile(path, utf8(text));
}
