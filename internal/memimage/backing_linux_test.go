package memimage

import (
	"bytes"
	"testing"

	"golang.org/x/sys/unix"
)

func anonRegion(t *testing.T, n int) []byte {
	t.Helper()
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Munmap(b) })
	return b
}

// Two memories mapped from one image each start with its bytes, and neither sees what the other
// writes; past the image, the region keeps its own zero pages.
func TestMapOverIsCopyOnWrite(t *testing.T) {
	data := bytes.Repeat([]byte("image!"), 2*pageSize/6+1)[:2*pageSize]
	img := &Image{data: data}
	defer img.Close()
	a, b := anonRegion(t, 4*pageSize), anonRegion(t, 4*pageSize)
	a[0] = 'x' // replaced by the image
	for _, r := range [][]byte{a, b} {
		if err := img.MapOver(r); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(a[:len(data)], data) || !bytes.Equal(b[:len(data)], data) {
		t.Fatal("a mapped region does not start with the image")
	}
	copy(a[10:], "written by a")
	a[3*pageSize] = 1
	if !bytes.Equal(b[:len(data)], data) || b[3*pageSize] != 0 {
		t.Error("b sees what a wrote")
	}
	c := anonRegion(t, 2*pageSize)
	if err := img.MapOver(c); err != nil || !bytes.Equal(c, data) {
		t.Errorf("a later mapping does not start with the image: %v", err)
	}
}

// Nothing can write the image's file once the first mapping is made, not even this process.
func TestTheImageFileIsSealed(t *testing.T) {
	img := &Image{data: bytes.Repeat([]byte{7}, pageSize)}
	defer img.Close()
	if err := img.MapOver(anonRegion(t, pageSize)); err != nil {
		t.Fatal(err)
	}
	fd := img.backing.fd
	if _, err := unix.Pwrite(fd, []byte("x"), 0); err == nil {
		t.Error("the image's file took a write")
	}
	if err := unix.Ftruncate(fd, 0); err == nil {
		t.Error("the image's file was truncated")
	}
	if _, err := unix.Mmap(fd, 0, pageSize, unix.PROT_WRITE, unix.MAP_SHARED); err == nil {
		t.Error("the image's file was mapped shared and writable")
	}
}

// A region too short, or not page aligned, is refused, not mapped over what follows it.
func TestMapOverRefusesABadRegion(t *testing.T) {
	img := &Image{data: make([]byte, 2*pageSize)}
	defer img.Close()
	r := anonRegion(t, 4*pageSize)
	if err := img.MapOver(r[:pageSize]); err == nil {
		t.Error("a region shorter than the image was taken")
	}
	if err := img.MapOver(r[1:]); err == nil {
		t.Error("a region that is not page aligned was taken")
	}
	_ = img.Close()
	if err := img.MapOver(r); err == nil {
		t.Error("a closed image mapped")
	}
}
