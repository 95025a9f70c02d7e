package engine

import (
	"context"
	"fmt"

	"github.com/skillbox-dev/skillbox/internal/interrupt"
	"github.com/skillbox-dev/skillbox/internal/wazevoframes"
)

// A module's wasm call stack is bounded by the count interrupt.Instrument adds, each call
// weighed by an estimate of its frame. The estimate bounds the depth, but not the bytes: a module
// can be written so that its frames outgrow it, so a run of it is charged the whole stack wazero
// allows (StackReserve). Only the compiled code says how large each frame is. So the engine
// compiles a stoppable module twice, once: as instrumented with the estimates, to read its frames
// (package wazevoframes), then instrumented again with those frames (and a margin) as its
// weights, the frames of that code checked against them. Its runs are then charged the bounded
// stack (interrupt.StackCharge). The second compile goes to the cache, and the weights are kept
// in the module's mark (compilechild.go), so a later process compiles it no more.

// frameSource weighs src (wazevoframes.Weigh): its frames measured as it is instrumented, the
// module instrumented again with them as its weights and compiled into cacheDir, every frame
// checked against its weight. It returns the framed source and its weights; on any error the
// caller keeps src.
func frameSource(ctx context.Context, cacheDir string, pages uint32, src Source) (Source, []uint32, error) {
	if !src.Stoppable || src.Orig == nil || cacheDir == "" {
		return src, nil, fmt.Errorf("frames: the module is not instrumented, or there is no cache")
	}
	// src.Wasm is already the module instrumented with the estimates: not made again.
	inst := func(wasm []byte, frames []uint32) ([]byte, error) {
		if frames == nil {
			return src.Wasm, nil
		}
		return interrupt.InstrumentShipped(wasm, frames)
	}
	weights, out, err := wazevoframes.Weigh(ctx, CompileConfig(pages, true), src.Orig, inst, cacheDir)
	if err != nil {
		return src, nil, fmt.Errorf("frames: %w", err)
	}
	return src.framed(out), weights, nil
}

// withWeights is src's module instrumented with weights: the stack each of its functions takes.
func (src Source) withWeights(weights []uint32) (Source, error) {
	out, err := interrupt.InstrumentShipped(src.Orig, weights)
	if err != nil {
		return src, fmt.Errorf("frames: instrument: %w", err)
	}
	return src.framed(out), nil
}

// framed is src's module as out, instrumented with measured weights.
func (src Source) framed(out []byte) Source {
	return Source{Wasm: out, Orig: src.Orig, Stoppable: true, Framed: true}
}

// framedBy is src with the weights of table, a mark's content made for src: src itself when the
// table is empty (the frames could not be measured) or not src's.
func (src Source) framedBy(table []byte) Source {
	if len(table) == 0 || !src.Stoppable {
		return src
	}
	weights, err := wazevoframes.Decode(table, src.Wasm)
	if err != nil {
		return src
	}
	framed, err := src.withWeights(weights)
	if err != nil {
		return src
	}
	return framed
}
