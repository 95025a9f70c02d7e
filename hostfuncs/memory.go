package hostfuncs

import (
	"context"
	"errors"
	"fmt"

	extism "github.com/extism/go-sdk"
)

// ErrGuestFault is matched by every [*GuestFault].
var ErrGuestFault = errors.New("guest fault")

// GuestFault is a guest handing the host an offset that is not a live memory block, or a block
// larger than the function accepts. It stops the run (as a trap): a module that does this is
// broken or hostile, and no answer it could handle would make sense.
type GuestFault struct {
	Func   string
	Offset uint64
	Reason string
}

func (e *GuestFault) Error() string {
	return fmt.Sprintf("host call %s: %s (offset %d)", e.Func, e.Reason, e.Offset)
}

func (e *GuestFault) Is(target error) bool { return target == ErrGuestFault }

// errTooLarge is a live block longer than the call accepts: the guest gets INVALID, not a trap,
// since the block itself is fine.
var errTooLarge = errors.New("argument too large")

// Memory is the part of guest memory a host function touches: Extism blocks. It is an interface so
// the functions can be tested and fuzzed without a module.
type Memory interface {
	// Block returns a copy of the block at offset, or an error if offset is not a live block or
	// the block is longer than max bytes (an error matching errTooLarge). Offset 0 is the empty
	// block.
	Block(ctx context.Context, offset uint64, max int64) ([]byte, error)
	// Alloc copies data into a new block and returns its offset.
	Alloc(ctx context.Context, data []byte) (uint64, error)
}

// pluginMemory is Memory over a running Extism plugin.
type pluginMemory struct{ p *extism.CurrentPlugin }

func (m pluginMemory) Block(ctx context.Context, offset uint64, max int64) ([]byte, error) {
	if offset == 0 {
		return nil, nil
	}
	n, err := m.p.LengthWithContext(ctx, offset)
	if err != nil {
		return nil, err
	}
	// The kernel answers 0 for an offset that does not start a live block; a live block of 0
	// bytes is never handed out (alloc(0) returns 0).
	if n == 0 {
		return nil, errors.New("not a live memory block")
	}
	if int64(n) > max || n > 1<<32 {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", errTooLarge, n, max)
	}
	if offset > 1<<32 {
		return nil, errors.New("offset outside memory")
	}
	b, okRead := m.p.Memory().Read(uint32(offset), uint32(n))
	if !okRead {
		return nil, errors.New("block outside memory")
	}
	return append([]byte(nil), b...), nil
}

func (m pluginMemory) Alloc(ctx context.Context, data []byte) (uint64, error) {
	off, err := m.p.AllocWithContext(ctx, uint64(len(data)))
	if err != nil {
		return 0, err
	}
	if off == 0 && len(data) > 0 {
		return 0, errors.New("guest memory exhausted")
	}
	if len(data) > 0 && !m.p.Memory().Write(uint32(off), data) {
		return 0, errors.New("reply block outside memory")
	}
	return off, nil
}
