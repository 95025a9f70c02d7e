package pydeps

import (
	"archive/zip"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/skillbox-dev/skillbox/internal/cpython"
)

// The packages compiled into the interpreter (cpython.Packages: lxml, Pillow) are never vendored:
// a copy in lib/ would come first on sys.path and could not load its C. A requirement of one —
// the skill's, or a dependency's, as python-docx requires lxml — is met by the interpreter's, at
// its version: pip is handed a wheel of that name and version holding nothing but its metadata,
// which it resolves like any other and which is then left out of lib/.

// provide writes the metadata-only wheel of each package of the interpreter into dir, for pip's
// --find-links.
func provide(dir string) error {
	for name, version := range cpython.Packages {
		if err := stubWheel(filepath.Join(dir, fmt.Sprintf("%s-%s-py3-none-any.whl", name, version)), name, version); err != nil {
			return err
		}
	}
	return nil
}

// stubWheel writes a wheel of name and version with its metadata alone.
func stubWheel(file, name, version string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	z := zip.NewWriter(f)
	info := fmt.Sprintf("%s-%s.dist-info/", name, version)
	for _, e := range [][2]string{
		{info + "METADATA", fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: built into Skillbox's Python\n", name, version)},
		{info + "WHEEL", "Wheel-Version: 1.0\nGenerator: skillbox\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
		{info + "RECORD", info + "METADATA,,\n" + info + "WHEEL,,\n" + info + "RECORD,,\n"},
	} {
		w, err := z.Create(e[0])
		if err != nil {
			return err
		}
		if _, err := w.Write([]byte(e[1])); err != nil {
			return err
		}
	}
	if err := z.Close(); err != nil {
		return err
	}
	return f.Close()
}

// builtIn reports whether a wheel pip brought is a package of the interpreter's.
func builtIn(w Wheel) bool {
	_, ok := cpython.Packages[Normalize(w.Name)]
	return ok
}

// requirementName is the project name at the head of a requirement as pip prints it.
var requirementName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*`)

// builtInHint says, of a requirement pip found nothing for, that the interpreter has that
// package at another version; "" when it has not.
func builtInHint(req string) string {
	name := Normalize(requirementName.FindString(req))
	v, ok := cpython.Packages[name]
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s: Skillbox's Python has %s %s built in, and no other version of it can load: require a version %s meets (or a package that does)", req, name, v, v)
}

// builtInNames lists the interpreter's packages, sorted, for messages.
func builtInNames() []string {
	var out []string
	for name, v := range cpython.Packages {
		out = append(out, name+" "+v)
	}
	slices.Sort(out)
	return out
}
