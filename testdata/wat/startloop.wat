;; startloop: has a start function, so it cannot be instrumented (the start function would run
;; during instantiation, before the host could stop it), and never returns from execute. The run
;; must still end at its timeout: the module runs under wazero's own interruption.
(module
  (func $start)
  (start $start)
  (func (export "execute") (result i32)
    (loop $forever (br $forever))
    (i32.const 0)))
