;; controls: a SkillResult whose result holds what must not reach a terminal raw, all of it valid
;; JSON: a bidi override (U+202E), a C1 CSI (U+009B), DEL, bidi isolates (U+2066, U+2069), bidi
;; marks (U+200E, U+200F, U+061C), a zero-width space (U+200B), a tag character beyond the BMP
;; (U+E0001), a line separator (U+2028), a lone 0x9b byte (invalid UTF-8, an 8-bit CSI), already
;; escaped controls, and a key with a bidi override. Output as raw UTF-8, unescaped.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"success\":true,\"result\":{\"name\":\"evil\e2\80\aegnp.exe\",\"csi\":\"\c2\9b2J\",\"del\":\"a\7fb\",\"isolates\":\"\e2\81\a6x\e2\81\a9\",\"marks\":\"\e2\80\8e\e2\80\8f\d8\9c\",\"zero-width\":\"a\e2\80\8bb\",\"tag\":\"\f3\a0\80\81\",\"line-separator\":\"a\e2\80\a8b\",\"invalid-byte\":\"\9b2J\",\"escaped\":\"\\u001b[2J tab\\tnewline\\n\",\"key\e2\80\ae\":\"plain\"}}")
  (global $len i32 (i32.const 250))
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
