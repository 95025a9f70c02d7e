// Command generate builds the console's assets and writes them to a directory:
//
//	go run ./console/generate console/src console/dist
//
// (`make console` and `go generate ./console` run it). It builds every file with build.Dist
// before writing any, replaces each atomically, and prints their sizes, raw and gzipped.
package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skillbox-dev/skillbox/console/build"
	"github.com/skillbox-dev/skillbox/internal/safefile"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: generate SRC_DIR OUT_DIR")
		os.Exit(2)
	}
	if err := generate(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

func generate(src, out string) error {
	files, err := build.Dist(src)
	if err != nil {
		return err
	}
	total, totalGz := 0, 0
	for _, name := range build.Files {
		data := files[name]
		if err := safefile.WriteAtomic(filepath.Join(out, name), data, 0o644); err != nil {
			return err
		}
		gz := gzipSize(data)
		total, totalGz = total+len(data), totalGz+gz
		fmt.Printf("wrote %s: %d bytes (%d gzipped)\n", filepath.Join(out, name), len(data), gz)
	}
	fmt.Printf("console: %d bytes in all (%d gzipped)\n", total, totalGz)
	return nil
}

func gzipSize(data []byte) int {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	w.Write(data)
	w.Close()
	return buf.Len()
}
