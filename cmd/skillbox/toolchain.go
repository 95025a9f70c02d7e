package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// detectLanguage tells a skill source directory's language by its build files.
func detectLanguage(src string) (language, error) {
	has := func(name string) bool {
		_, err := os.Stat(filepath.Join(src, name))
		return err == nil
	}
	switch {
	case has("go.mod"):
		mod, _ := os.ReadFile(filepath.Join(src, "go.mod"))
		// "// skillbox:build tinygo [flags]" picks TinyGo, with extra build flags.
		if m := tinygoMarker.FindSubmatch(mod); m != nil {
			lang := languages["tinygo"]
			lang.flags = strings.Fields(string(m[1]))
			return lang, nil
		}
		return languages["go"], nil
	case has("Cargo.toml"):
		return languages["rust"], nil
	case has("package.json") || has("asconfig.json"):
		return languages["assemblyscript"], nil
	}
	if cs, _ := filepath.Glob(filepath.Join(src, "*.c")); len(cs) > 0 {
		return languages["c"], nil
	}
	return language{}, fmt.Errorf("%w in %s: expected go.mod, Cargo.toml, package.json or *.c", errNoLanguage, src)
}

// missingToolchain is a toolchain that is not installed, with how to install it.
type missingToolchain struct {
	lang, tool, install string
}

func (e *missingToolchain) Error() string {
	return fmt.Sprintf("%s skills need %s, which is not installed: %s", e.lang, e.tool, e.install)
}

func lookPath(lang language, tool string) (string, error) {
	p, err := exec.LookPath(tool)
	if err != nil {
		return "", &missingToolchain{lang.name, tool, lang.install}
	}
	return p, nil
}

// step is one command of a build.
type step struct {
	dir  string
	env  []string
	argv []string
}

// buildPlan returns the commands that compile src into out (an absolute path), and, for
// toolchains that write elsewhere, the file to copy to out afterwards.
func buildPlan(lang language, src, out string) (steps []step, produced string, err error) {
	switch lang.name {
	case "go":
		gobin, err := lookPath(lang, "go")
		if err != nil {
			return nil, "", err
		}
		return []step{{dir: src, env: []string{"GOOS=wasip1", "GOARCH=wasm"},
			argv: []string{gobin, "build", "-trimpath", "-buildvcs=false", "-buildmode=c-shared", "-o", out, "."}}}, "", nil
	case "tinygo":
		tg, err := lookPath(lang, "tinygo")
		if err != nil {
			return nil, "", err
		}
		// -no-debug: TinyGo has no -trimpath, and its debug info would carry the builder's paths
		// (and make the module 2.7x larger); panics still print their message.
		argv := append([]string{tg, "build", "-target=wasip1", "-buildmode=c-shared", "-no-debug"}, lang.flags...)
		return []step{{dir: src, argv: append(argv, "-o", out, ".")}}, "", nil
	case "rust":
		return rustPlan(lang, src)
	case "assemblyscript":
		npm, err := lookPath(lang, "npm")
		if err != nil {
			return nil, "", err
		}
		var steps []step
		if _, err := os.Stat(filepath.Join(src, "node_modules")); err != nil {
			install := "install"
			if _, err := os.Stat(filepath.Join(src, "package-lock.json")); err == nil {
				install = "ci"
			}
			steps = append(steps, step{dir: src, argv: []string{npm, install, "--no-audit", "--no-fund"}})
		}
		// The template's package.json has a "build" script that writes ../execute.wasm.
		steps = append(steps, step{dir: src, argv: []string{npm, "run", "--silent", "build"}})
		return steps, filepath.Join(filepath.Dir(src), "execute.wasm"), nil
	case "c":
		clang, err := lookPath(lang, "clang")
		if err != nil {
			return nil, "", err
		}
		cs, _ := filepath.Glob(filepath.Join(src, "*.c"))
		// --strip-debug: wasi-libc's debug info is most of a small module; names stay for traps.
		argv := []string{clang, "--target=wasm32-wasi", "-O2", "-mexec-model=reactor", "-Wl,--strip-debug"}
		argv = append(argv, compileFlags(src)...)
		argv = append(argv, "-o", out)
		for _, c := range cs {
			argv = append(argv, filepath.Base(c))
		}
		return []step{{dir: src, argv: argv}}, "", nil
	}
	return nil, "", fmt.Errorf("no build for %s", lang.name)
}

// compileFlags reads clangd's compile_flags.txt (one flag a line), which `new` writes with the
// SDK's include path, leaving out a --target that the build sets itself.
func compileFlags(src string) []string {
	f, err := os.Open(filepath.Join(src, "compile_flags.txt"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var flags []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l != "" && !strings.HasPrefix(l, "--target") {
			flags = append(flags, l)
		}
	}
	return flags
}

var tinygoMarker = regexp.MustCompile(`(?m)^//\s*skillbox:build tinygo\b(.*)$`)

var crateName = regexp.MustCompile(`(?m)^\s*name\s*=\s*"([^"]+)"`)

// rustPlan picks a rustc that has a wasm32 standard library — rustup's toolchains often have
// none, Debian's rustc has wasm32-wasi — and builds with its cargo.
func rustPlan(lang language, src string) ([]step, string, error) {
	toml, err := os.ReadFile(filepath.Join(src, "Cargo.toml"))
	if err != nil {
		return nil, "", err
	}
	m := crateName.FindSubmatch(toml)
	if m == nil {
		return nil, "", fmt.Errorf("%s: no package name", filepath.Join(src, "Cargo.toml"))
	}
	crate := strings.ReplaceAll(string(m[1]), "-", "_")
	var candidates []string
	if p, err := exec.LookPath("rustc"); err == nil {
		candidates = append(candidates, p)
	}
	candidates = append(candidates, "/usr/bin/rustc")
	for _, rustc := range candidates {
		target := wasmTarget(rustc)
		if target == "" {
			continue
		}
		cargo := filepath.Join(filepath.Dir(rustc), "cargo")
		if _, err := os.Stat(cargo); err != nil {
			if cargo, err = exec.LookPath("cargo"); err != nil {
				continue
			}
		}
		argv := []string{cargo, "build", "--release", "--target", target}
		if filepath.Dir(rustc) == "/usr/bin" {
			argv = append(argv, "--offline") // Debian's crates are vendored; crates.io may be unreachable
		}
		return []step{{dir: src, env: []string{"RUSTC=" + rustc}, argv: argv}},
			filepath.Join(src, "target", target, "release", crate+".wasm"), nil
	}
	return nil, "", &missingToolchain{lang.name, "a rustc with a wasm32-wasip1 or wasm32-wasi standard library", lang.install}
}

// wasmTarget returns the WASI target rustc has a standard library for, or "".
func wasmTarget(rustc string) string {
	out, err := exec.Command(rustc, "--print", "sysroot").Output()
	if err != nil {
		return ""
	}
	sysroot := strings.TrimSpace(string(out))
	for _, t := range []string{"wasm32-wasip1", "wasm32-wasi"} {
		if st, err := os.Stat(filepath.Join(sysroot, "lib", "rustlib", t, "lib")); err == nil && st.IsDir() {
			return t
		}
	}
	return ""
}

// runSteps runs a plan, its output going to w.
func runSteps(ctx context.Context, steps []step, w io.Writer) error {
	for _, s := range steps {
		fmt.Fprintf(w, "$ %s\n", strings.Join(append(append([]string{}, s.env...), s.argv...), " "))
		cmd := exec.CommandContext(ctx, s.argv[0], s.argv[1:]...)
		cmd.Dir = s.dir
		cmd.Env = append(os.Environ(), s.env...)
		cmd.Stdout, cmd.Stderr = w, w
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(s.argv[0]), err)
		}
	}
	return nil
}
