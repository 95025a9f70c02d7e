;; residue: proves a run never sees what an earlier run left. It reads a byte of its memory (at
;; 60000) and the first byte of a fresh kernel block, outputs "clean" when both are zero and
;; "dirty" otherwise, then writes 0xAA over both. Run twice in one runtime, both runs must be clean:
;; memories and kernel arenas are reused between runs only after being cleared.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "load_u8" (func $load_u8 (param i64) (result i32)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 1)
  (data (i32.const 0) "\"clean\"\"dirty\"")
  (func (export "execute") (result i32)
    (local $blk i64) (local $dirty i32) (local $out i64) (local $i i32) (local $src i32)
    (local.set $blk (call $alloc (i64.const 4096)))
    (local.set $dirty (i32.or (i32.load8_u (i32.const 60000)) (call $load_u8 (local.get $blk))))
    (i32.store8 (i32.const 60000) (i32.const 170))
    (call $store_u8 (local.get $blk) (i32.const 170))
    (local.set $src (select (i32.const 7) (i32.const 0) (local.get $dirty)))
    (local.set $out (call $alloc (i64.const 7)))
    (block $done
      (loop $copy
        (br_if $done (i32.ge_u (local.get $i) (i32.const 7)))
        (call $store_u8 (i64.add (local.get $out) (i64.extend_i32_u (local.get $i)))
                        (i32.load8_u (i32.add (local.get $src) (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $copy)))
    (call $output_set (local.get $out) (i64.const 7))
    (i32.const 0)))
