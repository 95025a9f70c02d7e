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
