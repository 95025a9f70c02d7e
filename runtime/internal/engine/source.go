package engine

import (
	"context"
	"log/slog"

	"github.com/skillbox-dev/skillbox/internal/interrupt"
)

// Source is what the engine compiles for a skill: its module, checked, and for the native engine
// instrumented (package internal/interrupt) so that a run is stopped at its deadline by checks in
// the guest's own code instead of wazero's interruption, which costs a CPU-bound guest ~20x.
//
// stoppable says the bytes are instrumented: they compile without wazero's interruption, and
// every instance must be stopped with interrupt.Stop when its run's context ends. A module the
// instrumenter leaves alone (it does not know every byte of it, or the module has a start
// function) and every module of the Extism engine (the reference, run as it is) are not: they
// compile with wazero's interruption on.
//
// A stoppable source's call stack is bounded too; Framed says its weights are its measured
// frames (framed.go), not estimates, so that its runs are charged the bounded stack. Orig is the
// module before it was instrumented, to instrument it again with them.
type Source struct {
	Wasm      []byte
	Orig      []byte
	Stoppable bool
	Framed    bool
}

// Source reads m (re-verified: see Module.Wasm) and makes it the engine's source.
func (e *Engine) Source(m *Module) (Source, error) {
	wasm, err := m.Wasm.ReadWasm()
	if err != nil {
		return Source{}, err
	}
	return sourceFor(e.kind, wasm, e.logger, m.ID), nil
}

// sourceFor makes wasm the source an engine of kind compiles.
func sourceFor(kind Kind, wasm []byte, logger *slog.Logger, id string) Source {
	if kind != Native {
		return Source{Wasm: wasm}
	}
	out, ok, err := interrupt.Instrument(wasm)
	if !ok {
		if err != nil {
			// The instrumenter's check of its own output failed: its bug, never the module's.
			logger.Warn("module runs under wazero's interruption: instrumenting it failed", "skill", id, "err", err)
		} else if logger.Enabled(context.Background(), slog.LevelDebug) {
			// Explain instruments again to find the reason: only when someone reads it.
			logger.Debug("module runs under wazero's interruption", "skill", id, "why", interrupt.Explain(wasm))
		}
		return Source{Wasm: wasm}
	}
	return Source{Wasm: out, Orig: wasm, Stoppable: true}
}
