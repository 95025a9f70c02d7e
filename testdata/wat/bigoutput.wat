;; bigoutput: sets a 2 MiB output (zero bytes). Over the default maxOutputBytes of 1 MiB.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (func (export "execute") (result i32)
    (call $output_set (call $alloc (i64.const 2097152)) (i64.const 2097152))
    (i32.const 0)))
