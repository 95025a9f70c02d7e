;; output: writes files below /output as its input says, and outputs one status digit per file
;; after an "S" (0 ok, 2 denied, 3 invalid, 4 limit, 5 failed: "S04"). The input is JSON such as
;; {"spec":"a.txt*5;dir/b.bin*100"}: the spec is the first string after the first colon, its
;; entries are separated by ';', each a path below /output, '*', and how many bytes of 'x' to
;; write there. Built for the artifact tests: each bound of the output is crossed by a spec.
(module
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "free" (func $free (param i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "load_u8" (func $load_u8 (param i64) (result i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "extism:host/user" "skillbox_write_file" (func $write (param i64 i64) (result i64)))
  ;; memory[0..8): "/output/"; memory[4096..): the input; memory[32768..): the statuses
  (memory 2)
  (data (i32.const 0) "/output/")
  (func $find (param $from i32) (param $end i32) (param $c i32) (result i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $from) (local.get $end)))
        (br_if $done (i32.eq (i32.load8_u (local.get $from)) (local.get $c)))
        (local.set $from (i32.add (local.get $from) (i32.const 1)))
        (br $next)))
    (local.get $from))
  (func (export "execute") (result i32)
    (local $len i32) (local $i i32) (local $pos i32) (local $end i32) (local $star i32)
    (local $stop i32) (local $n i32) (local $c i32) (local $path i64) (local $plen i32)
    (local $data i64) (local $reply i64) (local $out i32)
    (local.set $len (i32.wrap_i64 (call $input_length)))
    (if (i32.gt_u (local.get $len) (i32.const 28000)) (then (local.set $len (i32.const 28000))))
    (block $copied
      (loop $copy
        (br_if $copied (i32.ge_u (local.get $i) (local.get $len)))
        (i32.store8 (i32.add (i32.const 4096) (local.get $i)) (call $input_load_u8 (i64.extend_i32_u (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $copy)))
    (local.set $end (i32.add (i32.const 4096) (local.get $len)))
    ;; the spec: after the first colon's next quote, up to the quote that closes it
    (local.set $pos (call $find (i32.const 4096) (local.get $end) (i32.const 58)))
    (local.set $pos (i32.add (call $find (local.get $pos) (local.get $end) (i32.const 34)) (i32.const 1)))
    (local.set $end (call $find (local.get $pos) (local.get $end) (i32.const 34)))
    (i32.store8 (i32.const 32768) (i32.const 83))
    (local.set $out (i32.const 32769))
    (block $entries
      (loop $entry
        (br_if $entries (i32.ge_u (local.get $pos) (local.get $end)))
        (local.set $star (call $find (local.get $pos) (local.get $end) (i32.const 42)))
        (local.set $stop (call $find (local.get $star) (local.get $end) (i32.const 59)))
        ;; n: the digits after '*'
        (local.set $n (i32.const 0))
        (local.set $i (i32.add (local.get $star) (i32.const 1)))
        (block $parsed
          (loop $digit
            (br_if $parsed (i32.ge_u (local.get $i) (local.get $stop)))
            (local.set $c (i32.load8_u (local.get $i)))
            (local.set $n (i32.add (i32.mul (local.get $n) (i32.const 10)) (i32.sub (local.get $c) (i32.const 48))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $digit)))
        ;; path: "/output/" and the entry's path
        (local.set $plen (i32.add (i32.const 8) (i32.sub (local.get $star) (local.get $pos))))
        (local.set $path (call $alloc (i64.extend_i32_u (local.get $plen))))
        (local.set $i (i32.const 0))
        (block $pathdone
          (loop $pathbyte
            (br_if $pathdone (i32.ge_u (local.get $i) (local.get $plen)))
            (if (i32.lt_u (local.get $i) (i32.const 8))
              (then (call $store_u8 (i64.add (local.get $path) (i64.extend_i32_u (local.get $i))) (i32.load8_u (local.get $i))))
              (else (call $store_u8 (i64.add (local.get $path) (i64.extend_i32_u (local.get $i)))
                                    (i32.load8_u (i32.add (local.get $pos) (i32.sub (local.get $i) (i32.const 8)))))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $pathbyte)))
        ;; data: n bytes of 'x' (0 writes an empty file)
        (local.set $data (i64.const 0))
        (if (i32.gt_u (local.get $n) (i32.const 0))
          (then
            (local.set $data (call $alloc (i64.extend_i32_u (local.get $n))))
            (local.set $i (i32.const 0))
            (block $datadone
              (loop $databyte
                (br_if $datadone (i32.ge_u (local.get $i) (local.get $n)))
                (call $store_u8 (i64.add (local.get $data) (i64.extend_i32_u (local.get $i))) (i32.const 120))
                (local.set $i (i32.add (local.get $i) (i32.const 1)))
                (br $databyte)))))
        (local.set $reply (call $write (local.get $path) (local.get $data)))
        (i32.store8 (local.get $out) (i32.add (i32.const 48) (call $load_u8 (local.get $reply))))
        (local.set $out (i32.add (local.get $out) (i32.const 1)))
        (call $free (local.get $reply))
        (call $free (local.get $path))
        (if (i64.ne (local.get $data) (i64.const 0)) (then (call $free (local.get $data))))
        (local.set $pos (i32.add (local.get $stop) (i32.const 1)))
        (br $entry)))
    ;; output the statuses
    (local.set $len (i32.sub (local.get $out) (i32.const 32768)))
    (local.set $path (call $alloc (i64.extend_i32_u (local.get $len))))
    (local.set $i (i32.const 0))
    (block $outdone
      (loop $outbyte
        (br_if $outdone (i32.ge_u (local.get $i) (local.get $len)))
        (call $store_u8 (i64.add (local.get $path) (i64.extend_i32_u (local.get $i))) (i32.load8_u (i32.add (i32.const 32768) (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $outbyte)))
    (call $output_set (local.get $path) (i64.extend_i32_u (local.get $len)))
    (i32.const 0)))
