;; cstack: a C stack as clang lays it out above the static data. Global 0 is the stack pointer,
;; starting at 8192 and moved down 256 bytes by each call of $down, which writes a word at the
;; bottom of its frame; the static data is [0, 4096), with a word at 3840 that the 17th frame would
;; overwrite.
(module
  (memory 1)
  (global $sp (mut i32) (i32.const 8192))
  (data (i32.const 3840) "\2a\00\00\00")
  (func $down (export "down") (param $n i32) (result i32)
    (local $frame i32)
    (global.set $sp (local.tee $frame (i32.sub (global.get $sp) (i32.const 256))))
    (i32.store (local.get $frame) (local.get $n))
    (if (i32.gt_s (local.get $n) (i32.const 0))
      (then (drop (call $down (i32.sub (local.get $n) (i32.const 1))))))
    (global.set $sp (i32.add (local.get $frame) (i32.const 256)))
    (local.get $n))
  ;; the word the stack must not reach
  (func (export "data") (result i32) (i32.load (i32.const 3840)))
  (func (export "sp") (result i32) (global.get $sp)))
