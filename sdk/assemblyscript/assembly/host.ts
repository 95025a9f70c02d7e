// The boundary to the host: the skillbox/v1 imports (docs/abi.md §4) and the Extism
// kernel glue that moves bytes in and out of Extism memory blocks. Every u64 here is an
// Extism block offset, not an address in this module's linear memory.

import { Memory } from "@extism/as-pdk";
import { free, length, load_u8 } from "@extism/as-pdk/lib/env";

// @ts-ignore: decorator
@external("extism:host/user", "skillbox_fetch")
export declare function skillbox_fetch(request: u64, body: u64): u64;

// @ts-ignore: decorator
@external("extism:host/user", "skillbox_env")
export declare function skillbox_env(name: u64): u64;

// @ts-ignore: decorator
@external("extism:host/user", "skillbox_read_file")
export declare function skillbox_read_file(path: u64): u64;

// @ts-ignore: decorator
@external("extism:host/user", "skillbox_write_file")
export declare function skillbox_write_file(path: u64, data: u64): u64;

// @ts-ignore: decorator
@external("extism:host/user", "skillbox_log")
export declare function skillbox_log(level: i32, message: u64): void;

/** UTF-8 bytes of s; a lone surrogate becomes U+FFFD, so the host always gets valid UTF-8. */
export function utf8(s: string): Uint8Array {
  return Uint8Array.wrap(String.UTF8.encode(s, false, String.UTF8.ErrorMode.REPLACE));
}

/**
 * Copies data into a new argument block and returns its offset. Empty data is 0, the
 * ABI's "absent", because the kernel cannot allocate an empty block. The caller frees
 * the block with release() after the call: the host reads arguments but never frees them.
 */
export function block(data: Uint8Array | null): u64 {
  if (data === null || data.length == 0) return 0;
  // as-pdk's Memory.store reads from the start of data.buffer: give it an array that
  // starts there (a subarray does not).
  let src: Uint8Array = data;
  if (src.byteOffset != 0) src = data.slice(0);
  const m = Memory.allocate(<u64>src.length);
  m.store(src);
  return m.offset;
}

/** block() of the UTF-8 encoding of s. */
export function stringBlock(s: string): u64 {
  return s.length == 0 ? 0 : block(utf8(s));
}

/** Frees an argument block made by block(); 0 is a no-op. */
export function release(offset: u64): void {
  if (offset != 0) free(offset);
}

/** The total length of the kernel block at offset (0 for offset 0). */
export function blockLength(offset: u64): u64 {
  return offset == 0 ? 0 : length(offset);
}

/** The byte at offset inside a kernel block. */
export function byteAt(offset: u64): u8 {
  return load_u8(offset);
}

/** Copies n bytes of kernel memory starting at offset into a new Uint8Array. */
export function copyOut(offset: u64, n: u64): Uint8Array {
  if (n == 0) return new Uint8Array(0);
  return new Memory(offset, n).toUint8Array();
}

/** Decodes n bytes of kernel memory starting at offset as UTF-8. */
export function textOut(offset: u64, n: u64): string {
  if (n == 0) return "";
  return new Memory(offset, n).toString();
}
