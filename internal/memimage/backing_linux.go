package memimage

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

var errClosed = errors.New("memimage: the image is closed")

// backing is a sealed memfd holding an image.
type backing struct{ fd int }

// newBacking writes data to a new memory file and seals it: from then on nobody, this process
// included, can write, grow or shrink it, so no mapping of it can see another's bytes.
func newBacking(data []byte) (*backing, error) {
	fd, err := unix.MemfdCreate("skillbox-memimage", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("memimage: memfd_create: %w", err)
	}
	b := &backing{fd: fd}
	for off := 0; off < len(data); {
		n, err := unix.Pwrite(fd, data[off:], int64(off))
		if err != nil {
			_ = b.close()
			return nil, fmt.Errorf("memimage: write the image: %w", err)
		}
		off += n
	}
	seals := unix.F_SEAL_WRITE | unix.F_SEAL_GROW | unix.F_SEAL_SHRINK | unix.F_SEAL_SEAL
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
		_ = b.close()
		return nil, fmt.Errorf("memimage: seal the image: %w", err)
	}
	return b, nil
}

// mapOver maps the file's n bytes over region's start, private and writable (MAP_FIXED replaces
// what was mapped there).
func (b *backing) mapOver(region []byte, n int) error {
	if n == 0 {
		return nil
	}
	if len(region) < n || uintptr(unsafe.Pointer(&region[0]))%uintptr(unix.Getpagesize()) != 0 {
		return fmt.Errorf("memimage: a region of %d bytes cannot take an image of %d", len(region), n)
	}
	_, err := unix.MmapPtr(b.fd, 0, unsafe.Pointer(&region[0]), uintptr(n),
		unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_FIXED|unix.MAP_NORESERVE)
	if err != nil {
		return fmt.Errorf("memimage: map the image: %w", err)
	}
	return nil
}

func (b *backing) close() error { return unix.Close(b.fd) }

// reserve maps n bytes of zeroed, private memory that the kernel commits page by page as it is
// touched (MAP_NORESERVE: reserving a run's whole maximum costs no commit charge).
func reserve(n uint64) ([]byte, error) {
	if n == 0 || n > 1<<32 {
		return nil, fmt.Errorf("memimage: no region of %d bytes", n)
	}
	return unix.Mmap(-1, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
}

func release(r []byte) { _ = unix.Munmap(r) }
