;; unreachable: traps at once.
(module
  (func (export "execute") (result i32)
    unreachable))
