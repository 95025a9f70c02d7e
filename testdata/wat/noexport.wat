;; noexport: exports "run" instead of "execute": a manifest must name it as its entrypoint.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (func (export "run") (result i32)
    (local $blk i64)
    (local.set $blk (call $alloc (i64.const 1)))
    (call $store_u8 (local.get $blk) (i32.const 55))
    (call $output_set (local.get $blk) (i64.const 1))
    (i32.const 0)))
