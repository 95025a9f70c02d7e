;; loop: never returns. The run's timeout must interrupt it.
(module
  (func (export "execute") (result i32)
    (loop $forever (br $forever))
    (i32.const 0)))
