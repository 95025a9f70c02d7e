// Command generate writes the archive of the guest SDKs that package sdkfiles embeds:
//
//	go run ./internal/sdkfiles/generate sdk internal/sdkfiles/sdks.zip
//
// (`make sdks` and `go generate ./internal/sdkfiles` run it). It reads each SDK of
// sdkfiles.Names from the first argument's directory, the files sdkfiles.Include picks, and
// replaces the second argument only once the whole archive is written.
package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/skillbox-dev/skillbox/internal/safefile"
	"github.com/skillbox-dev/skillbox/internal/sdkfiles"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: generate SDK_ROOT OUT.zip")
		os.Exit(2)
	}
	if err := generate(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

func generate(root, out string) error {
	sdks := map[string][]sdkfiles.File{}
	n, size := 0, 0
	for _, name := range sdkfiles.Names {
		files, err := sdkfiles.Collect(root, name)
		if err != nil {
			return err
		}
		sdks[name] = files
		for _, f := range files {
			n++
			size += len(f.Data)
		}
	}
	var buf bytes.Buffer
	if err := sdkfiles.Write(&buf, sdks); err != nil {
		return err
	}
	if err := safefile.WriteAtomic(out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s: %d files of %d SDKs, %d bytes (%d before compression)\n", out, n, len(sdks), buf.Len(), size)
	return nil
}
