//go:build soak

package soak

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
)

// makeGzipBomb returns a .tar.gz whose one entry, execute.wasm, is n bytes of zeros: the tar
// header in one gzip member, then the same compressed MiB of zeros repeated (gzip readers read
// concatenated members as one stream), so a gigabyte costs about a megabyte to send.
func makeGzipBomb(n int64) []byte {
	var out bytes.Buffer
	var head bytes.Buffer
	tw := tar.NewWriter(&head)
	_ = tw.WriteHeader(&tar.Header{Name: "execute.wasm", Mode: 0o644, Size: n, Typeflag: tar.TypeReg})
	member := func(data []byte) {
		zw := gzip.NewWriter(&out)
		_, _ = zw.Write(data)
		_ = zw.Close()
	}
	member(head.Bytes())
	var zeros bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&zeros, gzip.BestCompression)
	_, _ = zw.Write(make([]byte, 1<<20))
	_ = zw.Close()
	for range n >> 20 {
		out.Write(zeros.Bytes())
	}
	return out.Bytes()
}

// compileBomb is a module whose one function costs wazero's compiler memory by the square of its
// size (a chain of loads, then empty blocks): 32 KiB of it takes ~720 MiB to compile, more than a
// compilation may hold, so its child is stopped.
func compileBomb() []byte {
	body := []byte{0x00, 0x41, 0x00}
	for len(body)+3 <= 16<<10 {
		body = append(body, 0x28, 0x02, 0x00)
	}
	body = append(body, 0x1a)
	for len(body)+4 <= 32<<10 {
		body = append(body, 0x02, 0x40, 0x0b)
	}
	body = append(body, 0x0b)
	uleb := func(b []byte, v uint64) []byte {
		for {
			c := byte(v & 0x7f)
			v >>= 7
			if v == 0 {
				return append(b, c)
			}
			b = append(b, c|0x80)
		}
	}
	out := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	section := func(id byte, data []byte) {
		out = append(uleb(append(out, id), uint64(len(data))), data...)
	}
	section(1, []byte{0x01, 0x60, 0x00, 0x00})
	section(3, []byte{0x01, 0x00})
	section(5, []byte{0x01, 0x00, 0x01})
	section(7, append([]byte{0x01, 0x07}, append([]byte("execute"), 0x00, 0x00)...))
	section(10, append(uleb([]byte{0x01}, uint64(len(body))), body...))
	return out
}
