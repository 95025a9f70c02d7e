package cpython

import (
	"context"
	"encoding/binary"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// clockBase is the origin of the guest's monotonic clock (see nanotime): poll_oneoff needs the
// same clock to turn an absolute deadline into a wait.
var clockBase = time.Now()

// nanotime is the guest's monotonic clock, in nanoseconds since clockBase.
func nanotime() int64 { return int64(time.Since(clockBase)) }

const (
	subscriptionSize = 48
	eventSize        = 32
	eventClock       = 0
	flagAbsTime      = 1
	clockRealtime    = 0
	clockMonotonic   = 1
	errnoSuccess     = 0
	errnoFault       = 21
	errnoInval       = 28
	errnoNotSup      = 58
	maxSubscriptions = 1024
)

// pollOneoff replaces WASI's poll_oneoff, whose wazero implementation has no absolute-time clock
// subscriptions (CPython's time.sleep uses clock_nanosleep with TIMER_ABSTIME, which wasi-libc
// turns into one) and sleeps without watching the run's context.
//
// Clock subscriptions, relative or absolute, on the realtime or monotonic clock, wait for the
// earliest of them, or until the run's context ends: then the run exits as the context's error,
// as wazero's own interruption would. File descriptor subscriptions are reported ready at once
// (stdin is a buffer, stdout and stderr never block), and no clock event is reported with them.
func pollOneoff(ctx context.Context, m api.Module, stack []uint64) {
	in, out, n, resultPtr := uint32(stack[0]), uint32(stack[1]), uint32(stack[2]), uint32(stack[3])
	stack[0] = uint64(poll(ctx, m, in, out, n, resultPtr))
}

func poll(ctx context.Context, m api.Module, in, out, n, resultPtr uint32) uint32 {
	if n == 0 || n > maxSubscriptions {
		return errnoInval
	}
	mem := m.Memory()
	subs, ok := mem.Read(in, n*subscriptionSize)
	if !ok {
		return errnoFault
	}
	events := make([]byte, 0, n*eventSize)
	var wait time.Duration = -1
	var clockUserdata []uint64
	var clockWaits []time.Duration
	for i := uint32(0); i < n; i++ {
		s := subs[i*subscriptionSize : (i+1)*subscriptionSize]
		userdata := binary.LittleEndian.Uint64(s[0:])
		tag := s[8]
		if tag != eventClock {
			// fd_read (1) or fd_write (2): ready, nbytes unknown (0).
			ev := make([]byte, eventSize)
			binary.LittleEndian.PutUint64(ev[0:], userdata)
			ev[10] = tag
			events = append(events, ev...)
			continue
		}
		id := binary.LittleEndian.Uint32(s[16:])
		timeout := int64(binary.LittleEndian.Uint64(s[24:]))
		flags := binary.LittleEndian.Uint16(s[40:])
		d := time.Duration(timeout)
		if flags&flagAbsTime != 0 {
			switch id {
			case clockRealtime:
				d = time.Duration(timeout - time.Now().UnixNano())
			case clockMonotonic:
				d = time.Duration(timeout - nanotime())
			default:
				return errnoNotSup
			}
		} else if id != clockRealtime && id != clockMonotonic {
			return errnoNotSup
		}
		d = max(d, 0)
		clockUserdata = append(clockUserdata, userdata)
		clockWaits = append(clockWaits, d)
		if wait < 0 || d < wait {
			wait = d
		}
	}
	if len(events) == 0 {
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				code := uint32(sys.ExitCodeDeadlineExceeded)
				if ctx.Err() == context.Canceled {
					code = sys.ExitCodeContextCanceled
				}
				_ = m.CloseWithExitCode(context.Background(), code)
				panic(sys.NewExitError(code))
			}
		}
		for i, ud := range clockUserdata {
			if clockWaits[i] > wait {
				continue
			}
			ev := make([]byte, eventSize)
			binary.LittleEndian.PutUint64(ev[0:], ud)
			ev[10] = eventClock
			events = append(events, ev...)
		}
	}
	if !mem.Write(out, events) || !mem.WriteUint32Le(resultPtr, uint32(len(events)/eventSize)) {
		return errnoFault
	}
	return errnoSuccess
}
