package runtime

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Language is what runs an executable skill: its compiled module, or the interpreter of its
// script. Every kind runs in the same sandbox, with the same grant, limits, accounting, events
// and error kinds.
type Language string

const (
	// LangWasm is a compiled module, execute.wasm, called through the Extism guest ABI.
	LangWasm Language = "wasm"
	// LangPython is execute.py: def execute(args, ctx), in CPython compiled to WebAssembly.
	LangPython Language = "python"
	// LangJavaScript is execute.js: export function execute(args, ctx), in QuickJS.
	LangJavaScript Language = "javascript"
	// LangTypeScript is execute.ts, its types stripped (and its imports bundled) by esbuild,
	// then run as JavaScript.
	LangTypeScript Language = "typescript"
)

// codeFiles names the file each language runs.
var codeFiles = map[Language]string{
	LangWasm:       ModuleFile,
	LangPython:     "execute.py",
	LangJavaScript: "execute.js",
	LangTypeScript: "execute.ts",
}

// languages in the order a problem lists them.
var languages = []Language{LangWasm, LangPython, LangJavaScript, LangTypeScript}

// Script reports whether the language is run by an interpreter rather than compiled.
func (l Language) Script() bool { return l == LangPython || l == LangJavaScript || l == LangTypeScript }

// CodeFile is the file a skill of this language runs ("execute.py"), "" for an unknown one.
func (l Language) CodeFile() string { return codeFiles[l] }

// codeFileNames are every language's code file: a package may hold them.
func isCodeFile(name string) bool {
	for _, f := range codeFiles {
		if name == f {
			return true
		}
	}
	return false
}

// pickLanguage decides what runs the executable skill s, whose manifest m parsed: the manifest's
// runtime when it names one, else the one code file the directory holds. A missing or ambiguous
// file is a problem of the load; the language is then the best guess (wasm when nothing says
// otherwise), so that the check reports the rest.
func (s *Skill) pickLanguage(m *Manifest, manifestPath string) {
	var present []Language
	for _, l := range languages {
		if isRegular(s.dir, s.listing, codeFiles[l]) {
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
			names[i] = codeFiles[l]
		}
		s.lang = present[0]
		s.fail(&ManifestError{Path: manifestPath, Field: "runtime",
			Msg:  fmt.Sprintf("the directory holds %s: which one runs is not said", strings.Join(names, " and ")),
			Hint: fmt.Sprintf("set \"runtime\" to one of %s, or remove the others", langList(present))})
	default:
		s.lang = LangWasm // the module's "missing" problem, with its build hint, says the rest
	}
}

func langList(ls []Language) string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = string(l)
	}
	return strings.Join(out, ", ")
}

// codePath is the host path of the file s runs.
func (s *Skill) codePath() string { return filepath.Join(s.dir, s.lang.CodeFile()) }

// packageDirs are the directories a skill package may hold: resources for its instructions, a
// script skill's vendored packages, and the programs a SKILL.md names.
var packageDirs = []string{"resources", "lib", "scripts"}

// packageDir returns the package directory the package path name is under ("lib"), or "".
func packageDir(name string) string {
	top, _, ok := strings.Cut(name, "/")
	if ok && slices.Contains(packageDirs, top) {
		return top
	}
	return ""
}

// scriptSources are the extensions of a script skill's own modules, which sit beside its
// execute file.
var scriptSources = []string{".py", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".json"}

// isScriptSource reports whether the package path name is a top-level module of a script skill.
func isScriptSource(name string) bool {
	return !strings.Contains(name, "/") && slices.Contains(scriptSources, filepath.Ext(name))
}
