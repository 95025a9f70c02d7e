package spec

import "slices"

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
func IsCodeFile(name string) bool {
	for _, f := range codeFiles {
		if name == f {
			return true
		}
	}
	return false
}

// Languages are every language a skill may be written in, in the order a problem lists them.
func Languages() []Language { return slices.Clone(languages) }
