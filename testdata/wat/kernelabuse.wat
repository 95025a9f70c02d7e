;; kernelabuse: breaks the kernel ABI in the way its input picks ({"case":"1"}, byte 9):
;; '1' load_u8 far past every block, '2' store_u64 at offset 0, '3' output_set of a range past
;; every block, '4' var_get with a name that is no block, '5' http_request (refused to skills).
(module
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "load_u8" (func $load_u8 (param i64) (result i32)))
  (import "extism:host/env" "store_u64" (func $store_u64 (param i64 i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "extism:host/env" "var_get" (func $var_get (param i64) (result i64)))
  (import "extism:host/env" "http_request" (func $http (param i64 i64) (result i64)))
  (func (export "execute") (result i32)
    (local $which i32) (local $req i64)
    (local.set $which (call $input_load_u8 (i64.const 9)))
    (if (i32.eq (local.get $which) (i32.const 49))
      (then (drop (call $load_u8 (i64.const 1099511627776)))))
    (if (i32.eq (local.get $which) (i32.const 50))
      (then (call $store_u64 (i64.const 0) (i64.const 42))))
    (if (i32.eq (local.get $which) (i32.const 51))
      (then (call $output_set (call $alloc (i64.const 8)) (i64.const 1099511627776))))
    (if (i32.eq (local.get $which) (i32.const 52))
      (then (drop (call $var_get (i64.const 77777)))))
    (if (i32.eq (local.get $which) (i32.const 53))
      (then
        ;; {"url":"http://x/"}: 19 bytes
        (local.set $req (call $alloc (i64.const 19)))
        (call $store_u64 (local.get $req) (i64.const 0x223a226c7275227b))
        (call $store_u64 (i64.add (local.get $req) (i64.const 8)) (i64.const 0x782f2f3a70747468))
        (call $store_u8 (i64.add (local.get $req) (i64.const 16)) (i32.const 47))
        (call $store_u8 (i64.add (local.get $req) (i64.const 17)) (i32.const 34))
        (call $store_u8 (i64.add (local.get $req) (i64.const 18)) (i32.const 125))
        (drop (call $http (local.get $req) (i64.const 0)))))
    (i32.const 0)))
