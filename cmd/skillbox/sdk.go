package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/skillbox-dev/skillbox/internal/safefile"
	"github.com/skillbox-dev/skillbox/internal/sdkfiles"
)

// vendorSDK writes the SDK embedded in this binary for lang into the skill source directory src,
// under lang.vendor, so the skill builds wherever it is moved. C's SDK is one header: it goes
// beside the source, where `#include "skillbox.h"` finds it (its README stays out of src/).
func vendorSDK(src string, lang language) error {
	files, err := sdkfiles.Files(lang.sdk)
	if err != nil {
		return err
	}
	for _, f := range files {
		if lang.vendor == "" && path.Ext(f.Path) != ".h" {
			continue
		}
		dst := filepath.Join(src, lang.vendor, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o777); err != nil {
			return err
		}
		if err := os.WriteFile(dst, f.Data, 0o666); err != nil {
			return err
		}
	}
	return nil
}

// sdkRef is how the files a template renders refer to the SDK at rel (a slash path relative to
// src/): a go.mod replace takes a directory only as a path that starts with ./ or ../.
func sdkRef(lang language, rel string) string {
	rel = filepath.ToSlash(rel)
	if lang.sdk == "go" && rel != "." && !strings.HasPrefix(rel, "../") && !path.IsAbs(rel) {
		return "./" + rel
	}
	return rel
}

// sdkMark is what tells a language's SDK directory apart: a file in it and, unless ident is nil
// (the file's presence is enough), the name that file must declare.
type sdkMark struct {
	file string
	want string // what is expected, for the error
	// ident returns the name data (the file) declares, "" for none; it must be is.
	ident func(data []byte) string
	is    string
}

// goModule is the Go SDK's module path, which a skill's go.mod requires and replaces.
const goModule = "github.com/skillbox-dev/skillbox/sdk/go"

var goModuleLine = regexp.MustCompile(`(?m)^\s*module\s+"?([^\s"]+)"?`)

var sdkMarks = map[string]sdkMark{
	"go": {file: "go.mod", want: "a go.mod declaring module " + goModule, is: goModule,
		ident: func(b []byte) string { return submatch(goModuleLine, b) }},
	"rust": {file: "Cargo.toml", want: `a Cargo.toml for the crate named "skillbox"`, is: "skillbox",
		ident: func(b []byte) string { return submatch(crateName, b) }},
	"assemblyscript": {file: "package.json", want: `a package.json named "@skillbox/sdk"`, is: "@skillbox/sdk",
		ident: func(b []byte) string {
			var p struct{ Name string }
			_ = json.Unmarshal(b, &p)
			return p.Name
		}},
	"c": {file: "skillbox.h", want: "skillbox.h"},
}

func submatch(re *regexp.Regexp, b []byte) string {
	if m := re.FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return ""
}

// maxMarkBytes bounds the read of an SDK's marker file: a go.mod, Cargo.toml or package.json is
// a few hundred bytes.
const maxMarkBytes = 64 << 10

// errNotSDK is matched by checkSDK's error for a directory that is not the language's SDK.
var errNotSDK = errors.New("not the SDK")

// checkSDK checks that dir, given to new's --sdk, is lang's SDK: it exists and holds the
// language's marker file declaring the SDK's name. The error names the flag, the path and what
// was expected.
func checkSDK(lang language, dir string) error {
	mark := sdkMarks[lang.sdk]
	fail := func(format string, a ...any) error {
		return fmt.Errorf("--sdk %s: %w: %s (expected the %s SDK: %s)", dir, errNotSDK, fmt.Sprintf(format, a...), lang.sdk, mark.want)
	}
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fail("no such directory")
		}
		return fail("%v", err)
	}
	if !st.IsDir() {
		return fail("not a directory")
	}
	f, _, err := safefile.Open(filepath.Join(dir, mark.file))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fail("no %s in it", mark.file)
		}
		return fail("%s: %v", mark.file, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxMarkBytes))
	if err != nil {
		return fail("%s: %v", mark.file, err)
	}
	if mark.ident == nil {
		return nil
	}
	if got := mark.ident(data); got != mark.is {
		if got == "" {
			return fail("%s declares no name", mark.file)
		}
		return fail("%s declares %q", mark.file, got)
	}
	return nil
}
