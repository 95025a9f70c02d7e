;; simd: a loop over v128 operations of every immediate shape: memarg loads and stores, lane
;; loads and stores (memarg and a lane byte), extract/replace lane, v128.const and i8x16.shuffle
;; (16 bytes), and sub-opcodes from 0x80 up (two bytes in the binary: i16x8.abs, i32x4.add,
;; f32x4.convert_i32x4_s, i32x4.trunc_sat_f32x4_s). Returns a checksum.
(module
  (memory 1)
  (func (export "execute") (param $n i32) (result i32)
    (local $v v128) (local $w v128) (local $i i32) (local $acc i32)
    (v128.store (i32.const 0) (v128.const i32x4 1 -2 3 -4))
    (v128.store offset=16 align=8 (i32.const 0) (v128.const i64x2 0x1122334455667788 -9))
    (local.set $v (v128.load (i32.const 0)))
    (loop $l
      (local.set $v (i32x4.add (local.get $v) (v128.const i32x4 1 1 1 1)))
      (local.set $w (i16x8.abs (local.get $v)))
      (local.set $v (i8x16.shuffle 4 5 6 7 0 1 2 3 12 13 14 15 8 9 10 11 (local.get $v) (local.get $w)))
      (local.set $v (i32x4.replace_lane 2 (local.get $v) (local.get $i)))
      (local.set $v (v128.load32_lane offset=4 1 (i32.const 16) (local.get $v)))
      (v128.store64_lane 1 (i32.const 32) (local.get $v))
      (local.set $w (v128.load8x8_s (i32.const 32)))
      (local.set $v (v128.xor (local.get $v) (v128.load32_zero (i32.const 8))))
      (local.set $v (i32x4.trunc_sat_f32x4_s (f32x4.convert_i32x4_s (local.get $v))))
      (local.set $acc (i32.add (local.get $acc)
        (i32.add (i32x4.extract_lane 1 (local.get $v)) (i16x8.extract_lane_u 3 (local.get $w)))))
      (local.set $acc (i32.add (local.get $acc) (i8x16.bitmask (local.get $w))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
    (i32.add (local.get $acc) (i32x4.extract_lane 0 (local.get $v)))))
