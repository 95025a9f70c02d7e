package main

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/skillbox-dev/skillbox/spec"
)

// templates holds one skill template per language (templates/<lang>/), rendered by `new`.
//
//go:embed all:templates
var templates embed.FS

// language is a guest language `new` scaffolds and `build` compiles.
type language struct {
	name string
	// sdk is the SDK's directory under the repository's sdk/, and its name in internal/sdkfiles.
	sdk string
	// vendor is where a new skill's copy of the SDK goes, under src/: "sdk"; "" for C, whose
	// one header goes beside the source.
	vendor string
	// install says how to get the toolchain, for the error when it is missing.
	install string
	// flags are extra build flags a skill's source asks for (TinyGo's go.mod marker line).
	flags []string
	// runtime is a script language's manifest runtime ("typescript"): its skills run their
	// source as it is, with no toolchain, SDK or build; "" for a compiled language.
	runtime spec.Language
}

var languages = map[string]language{
	"go":             {name: "go", sdk: "go", vendor: "sdk", install: "install Go 1.24 or later (https://go.dev/dl/)"},
	"tinygo":         {name: "tinygo", sdk: "go", vendor: "sdk", install: "run scripts/install-tinygo.sh from the Skillbox repository (it builds TinyGo from source against Debian's LLVM 19)"},
	"rust":           {name: "rust", sdk: "rust", vendor: "sdk", install: "on Debian: apt-get install rustc cargo libstd-rust-dev-wasm32; with rustup: rustup target add wasm32-wasip1"},
	"assemblyscript": {name: "assemblyscript", sdk: "assemblyscript", vendor: "sdk", install: "install Node.js and npm (Debian: apt-get install nodejs npm)"},
	"c":              {name: "c", sdk: "c", install: "on Debian: apt-get install clang lld wasi-libc libclang-rt-dev-wasm32"},
	"javascript":     {name: "javascript", runtime: spec.LangJavaScript},
	"python":         {name: "python", runtime: spec.LangPython},
	"typescript":     {name: "typescript", runtime: spec.LangTypeScript},
}

func languageNames() []string { return slices.Sorted(maps.Keys(languages)) }

// templateData is what a template file sees.
type templateData struct {
	ID    string
	Crate string
	// SDK is the path from src/ to the language's SDK, as the build files write it.
	SDK string
}

// scaffold writes a new skill package for lang into skillDir (which must not exist), with its
// source rendered from the language's template in src/. A compiled language's skill gets its own
// copy of the SDK embedded in this binary (see vendorSDK), so it builds wherever it is moved;
// sdkDir, when not "", is an SDK directory to point at instead (SDK development), checked first.
// Every file and directory is created with the umask's permissions, as by any other tool.
func scaffold(skillDir, id string, lang language, sdkDir string) error {
	if _, err := os.Lstat(skillDir); err == nil {
		return fmt.Errorf("%s already exists; pick another id or remove it", skillDir)
	}
	rel := ""
	if lang.runtime == "" {
		var err error
		if rel, err = sdkPath(skillDir, lang, sdkDir); err != nil {
			return err
		}
	}
	data := templateData{ID: id, Crate: strings.ReplaceAll(id, "-", "_"), SDK: sdkRef(lang, rel)}
	root := "templates/" + lang.name
	if _, err := fs.Stat(templates, root); err != nil {
		return fmt.Errorf("no template for %s in this build of skillbox", lang.name)
	}
	// Write everything into a temporary directory and rename it into place: a failed scaffold
	// leaves nothing half-written behind.
	if err := os.MkdirAll(filepath.Dir(skillDir), 0o777); err != nil {
		return err
	}
	tmp, err := mkdirTemp(filepath.Dir(skillDir), "."+id+".new-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "src")
	if lang.runtime != "" {
		src = tmp // a script skill runs its source as it is
	}
	if err := render(root, src, data); err != nil {
		return err
	}
	if lang.runtime == "" && sdkDir == "" {
		if err := vendorSDK(src, lang); err != nil {
			return err
		}
	}
	if lang.name == "c" {
		// clangd's convention, so editors find the SDK too; build reads it for the include path.
		flags := "--target=wasm32-wasi\n-I" + data.SDK + "\n"
		if err := os.WriteFile(filepath.Join(src, "compile_flags.txt"), []byte(flags), 0o666); err != nil {
			return err
		}
	}
	for name, body := range packageFiles(id, lang) {
		if err := os.WriteFile(filepath.Join(tmp, name), body, 0o666); err != nil {
			return err
		}
	}
	return os.Rename(tmp, skillDir)
}

// sdkPath returns where a new skill's src/ finds its SDK, relative to src/: the copy new vendors
// (lang.vendor, or "." for C's header beside the source), or the checked --sdk directory sdkDir.
func sdkPath(skillDir string, lang language, sdkDir string) (string, error) {
	if sdkDir == "" {
		if lang.vendor == "" {
			return ".", nil
		}
		return lang.vendor, nil
	}
	if err := checkSDK(lang, sdkDir); err != nil {
		return "", err
	}
	absSkill, err := filepath.Abs(skillDir)
	if err != nil {
		return "", err
	}
	absSDK, err := filepath.Abs(sdkDir)
	if err != nil {
		return "", err
	}
	return filepath.Rel(filepath.Join(absSkill, "src"), absSDK)
}

// mkdirTemp is os.MkdirTemp with the umask's permissions (0777 &^ umask) rather than 0700: the
// directory is renamed into place as the skill's, and should be like any other mkdir's.
func mkdirTemp(parent, prefix string) (string, error) {
	for range 100 {
		dir := filepath.Join(parent, prefix+strconv.FormatUint(rand.Uint64(), 36))
		err := os.Mkdir(dir, 0o777)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("cannot create a temporary directory in %s", parent)
}

// render writes the language template under root into dst: files ending in .tmpl are executed
// with data (and lose the suffix), the others are copied.
func render(root, dst string, data templateData) error {
	return fs.WalkDir(templates, root, func(p string, d fs.DirEntry, err error) error {
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
		out := filepath.Join(dst, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(out), 0o777); err != nil {
			return err
		}
		mode := os.FileMode(0o666)
		if strings.HasSuffix(rel, ".sh") {
			mode = 0o777
		}
		return os.WriteFile(out, body, mode)
	})
}

// packageFiles are the language-independent files of a new skill: manifest, instructions, and
// an example input.
func packageFiles(id string, lang language) map[string][]byte {
	title := strings.ToUpper(id[:1]) + strings.ReplaceAll(id[1:], "-", " ")
	manifest := map[string]any{
		"id":          id,
		"name":        title,
		"description": spec.PlaceholderDescription,
		"version":     "0.1.0",
		"parameters": map[string]any{
			"name": map[string]any{"type": "string", "description": spec.PlaceholderParamDescription, "default": "world"},
		},
		"result":    map[string]any{"type": "object"},
		"tags":      []string{lang.name},
		"createdBy": "skillbox new",
		"limits":    map[string]any{"timeoutMs": 5000, "memoryMiB": 64},
	}
	// From the skill's own directory, wherever it has been moved.
	try := fmt.Sprintf("skillbox run %s --skills .. --args @example.json", id)
	if lang.runtime == "" {
		try = "skillbox build .\n    " + try
	} else {
		manifest["runtime"] = lang.runtime
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

Try it, from this directory:

    %s
`, id, spec.PlaceholderInstructionsDescription, title, try)
	return map[string][]byte{
		"skill.json":   append(mj, '\n'),
		"SKILL.md":     []byte(skillMD),
		"example.json": []byte(`{"name": "Ada"}` + "\n"),
	}
}

var errNoLanguage = errors.New("cannot tell the skill's language")
