//go:build !linux

package memimage

import "errors"

var errClosed = errors.New("memimage: the image is closed")

// backing is not available here: memories copy the image.
type backing struct{}

func newBacking([]byte) (*backing, error) {
	return nil, errors.New("memimage: no sealed memory files on this system; the image is copied")
}

func (*backing) mapOver([]byte, int) error { return errors.New("unreachable") }
func (*backing) close() error              { return nil }

// reserve has no regions to give here: the caller makes the memory its own way and copies the
// image in.
func reserve(uint64) ([]byte, error) { return nil, errors.New("memimage: no regions on this system") }

func release([]byte) {}
