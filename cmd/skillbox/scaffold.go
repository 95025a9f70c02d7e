package main

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"text/template"

	"github.com/skillbox-dev/skillbox/runtime"
)

// templates holds one skill template per language (templates/<lang>/), rendered by `new`.
//
//go:embed all:templates
var templates embed.FS

// language is a guest language `new` scaffolds and `build` compiles.
type language struct {
	name string
	// sdk is the SDK's directory under the repository's sdk/.
	sdk string
	// install says how to get the toolchain, for the error when it is missing.
	install string
	// flags are extra build flags a skill's source asks for (TinyGo's go.mod marker line).
	flags []string
	// runtime is a script language's manifest runtime ("typescript"): its skills run their
	// source as it is, with no toolchain, SDK or build; "" for a compiled language.
	runtime runtime.Language
}

var languages = map[string]language{
	"go":             {name: "go", sdk: "go", install: "install Go 1.24 or later (https://go.dev/dl/)"},
	"tinygo":         {name: "tinygo", sdk: "go", install: "run scripts/install-tinygo.sh from the Skillbox repository (it builds TinyGo from source against Debian's LLVM 19)"},
	"rust":           {name: "rust", sdk: "rust", install: "on Debian: apt-get install rustc cargo libstd-rust-dev-wasm32; with rustup: rustup target add wasm32-wasip1"},
	"assemblyscript": {name: "assemblyscript", sdk: "assemblyscript", install: "install Node.js and npm (Debian: apt-get install nodejs npm)"},
	"c":              {name: "c", sdk: "c", install: "on Debian: apt-get install clang lld wasi-libc libclang-rt-dev-wasm32"},
	"javascript":     {name: "javascript", runtime: runtime.LangJavaScript},
	"python":         {name: "python", runtime: runtime.LangPython},
	"typescript":     {name: "typescript", runtime: runtime.LangTypeScript},
}

func languageNames() []string {
	names := make([]string, 0, len(languages))
	for n := range languages {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// templateData is what a template file sees.
type templateData struct {
	ID    string
	Crate string
	SDK   string
}

// findSDK walks up from dir to the nearest sdk/<name> directory.
func findSDK(dir, name string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		cand := filepath.Join(d, "sdk", name)
		if st, err := os.Stat(cand); err == nil && st.IsDir() {
			return cand, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no sdk/%s directory above %s: create the skill inside a Skillbox checkout, or pass --sdk DIR", name, abs)
		}
	}
}

// scaffold writes a new skill package for lang into skillDir (which must not exist), with its
// source rendered from the language's template in src/. sdkDir is the language's SDK.
func scaffold(skillDir, id string, lang language, sdkDir string) error {
	if _, err := os.Stat(skillDir); err == nil {
		return fmt.Errorf("%s already exists; pick another id or remove it", skillDir)
	}
	absSkill, err := filepath.Abs(skillDir)
	if err != nil {
		return err
	}
	absSDK, err := filepath.Abs(sdkDir)
	if err != nil {
		return err
	}
	relSDK := ""
	if lang.runtime == "" {
		relSDK, err = filepath.Rel(filepath.Join(absSkill, "src"), absSDK)
		if err != nil {
			return err
		}
	}
	data := templateData{ID: id, Crate: strings.ReplaceAll(id, "-", "_"), SDK: filepath.ToSlash(relSDK)}
	root := "templates/" + lang.name
	if _, err := fs.Stat(templates, root); err != nil {
		return fmt.Errorf("no template for %s in this build of skillbox", lang.name)
	}
	// Write everything into a temporary directory and rename it into place: a failed scaffold
	// leaves nothing half-written behind.
	if err := os.MkdirAll(filepath.Dir(skillDir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(skillDir), "."+id+".new-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	err = fs.WalkDir(templates, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := strings.TrimPrefix(p, root+"/")
		body, err := templates.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.HasSuffix(rel, ".tmpl") {
			rel = strings.TrimSuffix(rel, ".tmpl")
			t, err := template.New(path.Base(p)).Option("missingkey=error").Parse(string(body))
			if err != nil {
				return fmt.Errorf("template %s: %w", p, err)
			}
			var out bytes.Buffer
			if err := t.Execute(&out, data); err != nil {
				return fmt.Errorf("template %s: %w", p, err)
			}
			body = out.Bytes()
		}
		dst := filepath.Join(tmp, "src", filepath.FromSlash(rel))
		if lang.runtime != "" {
			dst = filepath.Join(tmp, filepath.FromSlash(rel)) // a script skill runs its source as it is
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(rel, ".sh") {
			mode = 0o755
		}
		return os.WriteFile(dst, body, mode)
	})
	if err != nil {
		return err
	}
	if lang.name == "c" {
		// clangd's convention, so editors find the SDK too; build reads it for the include path.
		flags := "--target=wasm32-wasi\n-I" + data.SDK + "\n"
		if err := os.WriteFile(filepath.Join(tmp, "src", "compile_flags.txt"), []byte(flags), 0o644); err != nil {
			return err
		}
	}
	for name, body := range packageFiles(id, lang) {
		if err := os.WriteFile(filepath.Join(tmp, name), body, 0o644); err != nil {
			return err
		}
	}
	return os.Rename(tmp, skillDir)
}

// packageFiles are the language-independent files of a new skill: manifest, instructions, and
// an example input.
func packageFiles(id string, lang language) map[string][]byte {
	title := strings.ToUpper(id[:1]) + strings.ReplaceAll(id[1:], "-", " ")
	manifest := map[string]any{
		"id":          id,
		"name":        title,
		"description": runtime.PlaceholderDescription,
		"version":     "0.1.0",
		"parameters": map[string]any{
			"name": map[string]any{"type": "string", "description": runtime.PlaceholderParamDescription, "default": "world"},
		},
		"result":    map[string]any{"type": "object"},
		"tags":      []string{lang.name},
		"createdBy": "skillbox new",
		"limits":    map[string]any{"timeoutMs": 5000, "memoryMiB": 64},
	}
	try := fmt.Sprintf("skillbox build skills/%s\n    skillbox run %s --args @skills/%s/example.json", id, id, id)
	if lang.runtime != "" {
		manifest["runtime"] = lang.runtime
		try = fmt.Sprintf("skillbox run %s --args @skills/%s/example.json", id, id)
	}
	mj, _ := json.MarshalIndent(manifest, "", "  ")
	skillMD := fmt.Sprintf(`---
name: %s
description: %s
---

# %s

Use this skill to greet someone. Call it with the person's name:

    {"name": "Ada"}

It returns `+"`{\"greeting\": \"Hello, Ada!\"}`"+`.

Try it:

    %s
`, id, runtime.PlaceholderInstructionsDescription, title, try)
	return map[string][]byte{
		"skill.json":   append(mj, '\n'),
		"SKILL.md":     []byte(skillMD),
		"example.json": []byte(`{"name": "Ada"}` + "\n"),
	}
}

var errNoLanguage = errors.New("cannot tell the skill's language")
