package memimage

import (
	"bytes"
	"testing"
)

// A region a run wrote all over comes back from Recycle as the image and zeros: nothing the run
// wrote reaches the next one, past the image either.
func TestARecycledRegionHoldsNothingOfItsRun(t *testing.T) {
	data := bytes.Repeat([]byte("snapshot"), 2*pageSize/8)
	img := &Image{data: data}
	defer img.Close()
	const n = 8 * pageSize
	r, err := img.Region(n)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(r[:len(data)], data) || bytes.Count(r[len(data):], []byte{0}) != n-len(data) {
		t.Fatal("a new region does not start with the image and zeros")
	}
	touched := 5 * pageSize
	for i := range touched {
		r[i] = 0xa5
	}
	img.Recycle(r, uint64(touched))
	again, err := img.Region(n)
	if err != nil {
		t.Fatal(err)
	}
	if &again[0] != &r[0] {
		t.Fatal("the region was not kept for the next run: the test proves nothing")
	}
	if !bytes.Equal(again[:len(data)], data) || bytes.Count(again[len(data):], []byte{0}) != n-len(data) {
		t.Fatal("a recycled region holds bytes of its run")
	}
}

// At most regionsPerSize regions of a size are kept; one whose run touched more than maxRecycled
// is not; Close drops those kept.
func TestRegionsKeptAreBounded(t *testing.T) {
	img := &Image{data: make([]byte, pageSize)}
	var rs [][]byte
	for range regionsPerSize + 2 {
		r, err := img.Region(2 * pageSize)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	for _, r := range rs {
		img.Recycle(r, pageSize)
	}
	if n := len(img.regions.idle[2*pageSize]); n != regionsPerSize {
		t.Errorf("%d regions kept, want %d", n, regionsPerSize)
	}
	big, err := img.Region(maxRecycled + 2*pageSize)
	if err != nil {
		t.Fatal(err)
	}
	img.Recycle(big, maxRecycled+pageSize)
	if n := len(img.regions.idle[len(big)]); n != 0 {
		t.Errorf("a region whose run touched more than maxRecycled was kept")
	}
	if err := img.Close(); err != nil {
		t.Fatal(err)
	}
	if img.regions.idle != nil {
		t.Error("Close kept the idle regions")
	}
	r, err := img.Region(2 * pageSize)
	if err != nil {
		t.Fatal(err)
	}
	img.Recycle(r, pageSize)
	if img.regions.idle != nil {
		t.Error("a region recycled after Close was kept")
	}
}
