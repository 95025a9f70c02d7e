package registry

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skillbox-dev/skillbox/spec"
)

// pickLanguage decides what runs the executable skill s, whose manifest m parsed: the manifest's
// runtime when it names one, else the one code file the directory holds. A missing or ambiguous
// file is a problem of the load; the language is then the best guess (wasm when nothing says
// otherwise), so that the check reports the rest.
func (s *Skill) pickLanguage(m *spec.Manifest, manifestPath string) {
	var present []spec.Language
	for _, l := range spec.Languages() {
		if isRegular(s.dir, s.listing, l.CodeFile()) {
			present = append(present, l)
		}
	}
	switch {
	case m.Runtime != "":
		s.lang = m.Runtime
		// A missing code file is reported by the check, with the module's hint or the script's.
	case len(present) == 1:
		s.lang = present[0]
	case len(present) > 1:
		names := make([]string, len(present))
		for i, l := range present {
			names[i] = l.CodeFile()
		}
		s.lang = present[0]
		s.fail(&spec.ManifestError{Path: manifestPath, Field: "runtime",
			Msg:  fmt.Sprintf("the directory holds %s: which one runs is not said", strings.Join(names, " and ")),
			Hint: fmt.Sprintf("set \"runtime\" to one of %s, or remove the others", langList(present))})
	default:
		s.lang = spec.LangWasm // the module's "missing" problem, with its build hint, says the rest
	}
}

func langList(ls []spec.Language) string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = string(l)
	}
	return strings.Join(out, ", ")
}

// codePath is the host path of the file s runs.
func (s *Skill) codePath() string { return filepath.Join(s.dir, s.lang.CodeFile()) }

// scriptSources are the extensions of a script skill's own modules, which sit beside its
// execute file.
var scriptSources = []string{".py", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".json"}

// isScriptSource reports whether the package path name is a top-level module of a script skill.
func IsScriptSource(name string) bool {
	return !strings.Contains(name, "/") && slices.Contains(scriptSources, filepath.Ext(name))
}
