;; hello: the smallest Extism skill. Writes a constant SkillResult envelope as its output.
;; Used by tests and by the benchmarks as the "trivial skill".
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"success\":true,\"result\":{\"greeting\":\"hi\"}}")
  (global $len i32 (i32.const 43))
  (func (export "execute") (result i32)
    (local $blk i64) (local $i i32)
    (local.set $blk (call $alloc (i64.extend_i32_u (global.get $len))))
    (block $done
      (loop $copy
        (br_if $done (i32.ge_u (local.get $i) (global.get $len)))
        (call $store_u8 (i64.add (local.get $blk) (i64.extend_i32_u (local.get $i)))
                        (i32.load8_u (local.get $i)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $copy)))
    (call $output_set (local.get $blk) (i64.extend_i32_u (global.get $len)))
    (i32.const 0)))
