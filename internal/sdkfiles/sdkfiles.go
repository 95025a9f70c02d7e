// Package sdkfiles holds the guest SDKs (the repository's sdk/<lang>) inside the skillbox binary,
// so that `skillbox new` can give a skill its own copy of the SDK anywhere, with no checkout.
//
// An embed directive cannot reach ../../sdk, and sdk/go is a module of its own (embedding refuses
// another module's files), so the SDKs are kept here as a generated, committed archive, sdks.zip. Its
// generator (./generate, run by `make sdks` or `go generate ./internal/sdkfiles`) and the test
// that fails when the archive is stale against sdk/ both select files with [Collect], so the
// archive holds exactly what the rule picks.
package sdkfiles

import (
	"archive/zip"
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

//go:generate go run ./generate ../../sdk sdks.zip

// archive is sdks.zip: each SDK's files under <name>/, sorted, with a fixed time.
//
//go:embed sdks.zip
var archive []byte

// Names are the SDKs, each a directory under the repository's sdk/.
var Names = []string{"assemblyscript", "c", "go", "rust"}

// Bounds on what is read, from the archive or from sdk/: the SDKs are a few hundred kilobytes,
// and a file or a total far above that is a mistake (a build output swept in), not a source.
const (
	MaxFileBytes  = 1 << 20
	MaxTotalBytes = 8 << 20
	MaxFiles      = 512
)

// ErrTooLarge is matched by the error of a read that would pass one of the bounds above.
var ErrTooLarge = errors.New("over the bound for SDK files")

// File is one file of an SDK.
type File struct {
	// Path is the file's slash-separated path inside its SDK's directory ("src/lib.rs").
	Path string
	Data []byte
}

// skipDirs are directories that hold no source a skill builds with: tests and their data, and
// what package managers and compilers write.
var skipDirs = map[string]bool{"test": true, "tests": true, "testdata": true, "node_modules": true, "target": true}

// skipFiles are files a skill's build never reads: the SDK's own test runner and lock files (a
// dependency's lock file is not used; the skill has its own).
var skipFiles = map[string]bool{"test.sh": true, "package-lock.json": true, "Cargo.lock": true}

// Include reports whether the entry at rel (a slash path inside an SDK's directory) is part of
// what a skill needs to build against the SDK: its source, manifest and README. It leaves out
// tests (skipDirs, *_test.go, skipFiles) and hidden entries (".git", ".gitignore", "_" dirs).
func Include(rel string, isDir bool) bool {
	base := path.Base(rel)
	if strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") {
		return false
	}
	if isDir {
		return !skipDirs[base]
	}
	return !skipFiles[base] && !strings.HasSuffix(base, "_test.go")
}

// Collect reads the SDK name from root/name (root is the repository's sdk/), the files Include
// picks, sorted by path. Symlinks and other non-regular files are refused, not followed.
func Collect(root, name string) ([]File, error) {
	dir := filepath.Join(root, name)
	var files []File
	total := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !Include(rel, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file (%s): an SDK's files are copied into skills, links are not followed", p, d.Type())
		}
		data, err := readBounded(p, &total)
		if err != nil {
			return err
		}
		if len(files) == MaxFiles {
			return fmt.Errorf("%s: more than %d files: %w", dir, MaxFiles, ErrTooLarge)
		}
		files = append(files, File{Path: rel, Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("collect SDK %s: %w", name, err)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}

// readBounded reads the file at p, adding its size to *total, within MaxFileBytes and
// MaxTotalBytes.
func readBounded(p string, total *int) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(p, f, total)
}

func readLimited(name string, r io.Reader, total *int) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s: more than %d bytes: %w", name, MaxFileBytes, ErrTooLarge)
	}
	*total += len(data)
	if *total > MaxTotalBytes {
		return nil, fmt.Errorf("%s: the SDK files pass %d bytes in all: %w", name, MaxTotalBytes, ErrTooLarge)
	}
	return data, nil
}

// epoch is every entry's modification time, so the same files make the same archive.
var epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Write writes an archive of the SDKs to w: sdks maps an SDK's name to its files; entries are
// <name>/<path>, in sorted order, deflated, with a fixed time, so that the same files make the
// same bytes (with the same compress/flate).
func Write(w io.Writer, sdks map[string][]File) error {
	names := make([]string, 0, len(sdks))
	for n := range sdks {
		names = append(names, n)
	}
	sort.Strings(names)
	zw := zip.NewWriter(w)
	for _, n := range names {
		files := append([]File(nil), sdks[n]...)
		sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
		for _, f := range files {
			h := &zip.FileHeader{Name: n + "/" + f.Path, Method: zip.Deflate, Modified: epoch}
			h.SetMode(0o644)
			fw, err := zw.CreateHeader(h)
			if err != nil {
				return err
			}
			if _, err := fw.Write(f.Data); err != nil {
				return err
			}
		}
	}
	return zw.Close()
}

// Files returns the embedded files of the SDK name, sorted by path.
//
// # Errors
//
// An unknown name; an archive entry with a path that is not clean and relative, or one past the
// bounds (ErrTooLarge).
func Files(name string) ([]File, error) {
	return read(archive, name)
}

// read returns the files of SDK name in the zip archive data.
func read(data []byte, name string) ([]File, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("embedded SDKs: %w", err)
	}
	prefix := name + "/"
	var files []File
	total := 0
	for _, zf := range zr.File {
		rel, ok := strings.CutPrefix(zf.Name, prefix)
		if !ok || strings.HasSuffix(zf.Name, "/") {
			continue
		}
		if !fs.ValidPath(rel) || strings.Contains(rel, `\`) {
			return nil, fmt.Errorf("embedded SDK %s: entry %q is not a clean relative path", name, zf.Name)
		}
		if len(files) == MaxFiles {
			return nil, fmt.Errorf("embedded SDK %s: more than %d files: %w", name, MaxFiles, ErrTooLarge)
		}
		rc, err := zf.Open()
		if err != nil {
			return nil, fmt.Errorf("embedded SDK %s: %w", name, err)
		}
		body, err := readLimited(zf.Name, rc, &total)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("embedded SDK %s: %w", name, err)
		}
		files = append(files, File{Path: rel, Data: body})
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no SDK %q in this build of skillbox (it has %s)", name, strings.Join(Names, ", "))
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}
