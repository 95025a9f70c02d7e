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
	// detail is what the probe that found the gap said (a compiler's error line), if any.
	detail string
}

func (e *missingToolchain) Error() string {
	msg := fmt.Sprintf("%s skills need %s, which is not installed: %s", e.lang, e.tool, e.install)
	if e.detail != "" {
		msg += " (" + e.detail + ")"
	}
	return msg
}

// toolchain is what a language's build runs, as found on PATH.
type toolchain struct {
	bin    string // the compiler or build driver: go, tinygo, cargo, npm or clang
	rustc  string // rust: the rustc cargo must use
	target string // rust: the WASI target that rustc has a standard library for
}

// findToolchain finds lang's toolchain on PATH, and only there, without reading any source: so
// `build` can say which tool is missing before it runs anything, and a test can tell "not
// installed" (skip) from "the build failed" (fail). Every gap is a *missingToolchain.
func findToolchain(lang language) (toolchain, error) {
	if lang.runtime != "" {
		return toolchain{}, nil // a script skill runs its source: nothing to find
	}
	switch lang.name {
	case "go":
		gobin, err := lookPath(lang, "go")
		return toolchain{bin: gobin}, err
	case "tinygo":
		tg, err := lookPath(lang, "tinygo")
		if err != nil {
			return toolchain{}, err
		}
		// TinyGo runs `go list` to load packages.
		if _, err := lookPath(lang, "go"); err != nil {
			return toolchain{}, err
		}
		return toolchain{bin: tg}, nil
	case "rust":
		return findRust(lang)
	case "assemblyscript":
		npm, err := lookPath(lang, "npm")
		if err != nil {
			return toolchain{}, err
		}
		// npm is a Node.js script.
		if _, err := lookPath(lang, "node"); err != nil {
			return toolchain{}, err
		}
		return toolchain{bin: npm}, nil
	case "c":
		clang, err := lookPath(lang, "clang")
		if err != nil {
			return toolchain{}, err
		}
		return toolchain{bin: clang}, probeClang(lang, clang)
	}
	return toolchain{}, fmt.Errorf("no build for %s", lang.name)
}

func lookPath(lang language, tool string) (string, error) {
	p, err := exec.LookPath(tool)
	if err != nil {
		return "", &missingToolchain{lang: lang.name, tool: tool, install: lang.install}
	}
	return p, nil
}

// lookPathAll returns every executable named name in PATH's absolute directories, in order: the
// first rustc on PATH is often rustup's, without a wasm32 standard library, shadowing Debian's.
func lookPathAll(name string) []string {
	var found []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if !filepath.IsAbs(dir) {
			continue // "" and relative entries would run whatever the current directory holds
		}
		if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			found = append(found, p)
		}
	}
	return found
}

// probeClang links an empty wasm32-wasi reactor: clang alone is not enough, it also needs
// wasm-ld, wasi-libc and compiler-rt for wasm32, and only linking shows they are all there.
func probeClang(lang language, clang string) error {
	dir, err := os.MkdirTemp("", "skillbox-clang-probe")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command(clang, "--target=wasm32-wasi", "-mexec-model=reactor", "-o", filepath.Join(dir, "probe.wasm"), "-x", "c", "-")
	cmd.Stdin = strings.NewReader("int x;\n")
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil
	}
	return &missingToolchain{lang: lang.name, tool: "a clang that links wasm32-wasi modules (wasm-ld, wasi-libc, compiler-rt for wasm32)",
		install: lang.install, detail: "clang: " + firstErrorLine(out, err)}
}

// firstErrorLine is the first line of a tool's output that says "error", for a one-line reason.
func firstErrorLine(out []byte, err error) string {
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "error") {
			return truncate(strings.TrimSpace(l), 200)
		}
	}
	return err.Error()
}

// step is one command of a build.
type step struct {
	dir  string
	env  []string
	argv []string
}

// goWorkOff builds a Go skill as the module its go.mod describes, alone: a go.work in a
// directory above it (a skill made inside someone's Go workspace) would otherwise take over the
// build and refuse a module it does not list. TinyGo loads packages with the go command too.
const goWorkOff = "GOWORK=off"

// buildPlan returns the commands that compile src into out (an absolute path), and, for
// toolchains that write elsewhere, the file to copy to out afterwards.
func buildPlan(lang language, src, out string) (steps []step, produced string, err error) {
	tc, err := findToolchain(lang)
	if err != nil {
		return nil, "", err
	}
	switch lang.name {
	case "go":
		return []step{{dir: src, env: []string{"GOOS=wasip1", "GOARCH=wasm", goWorkOff},
			argv: []string{tc.bin, "build", "-trimpath", "-buildvcs=false", "-buildmode=c-shared", "-o", out, "."}}}, "", nil
	case "tinygo":
		// -no-debug: TinyGo has no -trimpath, and its debug info would carry the builder's paths
		// (and make the module 2.7x larger); panics still print their message.
		argv := append([]string{tc.bin, "build", "-target=wasip1", "-buildmode=c-shared", "-no-debug"}, lang.flags...)
		return []step{{dir: src, env: []string{goWorkOff}, argv: append(argv, "-o", out, ".")}}, "", nil
	case "rust":
		return rustPlan(tc, src)
	case "assemblyscript":
		var steps []step
		if _, err := os.Stat(filepath.Join(src, "node_modules")); err != nil {
			install := "install"
			if _, err := os.Stat(filepath.Join(src, "package-lock.json")); err == nil {
				install = "ci"
			}
			steps = append(steps, step{dir: src, argv: []string{tc.bin, install, "--no-audit", "--no-fund"}})
		}
		// The template's package.json has a "build" script that writes ../execute.wasm.
		steps = append(steps, step{dir: src, argv: []string{tc.bin, "run", "--silent", "build"}})
		return steps, filepath.Join(filepath.Dir(src), "execute.wasm"), nil
	case "c":
		cs, _ := filepath.Glob(filepath.Join(src, "*.c"))
		// --strip-debug: wasi-libc's debug info is most of a small module; names stay for traps.
		argv := []string{tc.bin, "--target=wasm32-wasi", "-O2", "-mexec-model=reactor", "-Wl,--strip-debug"}
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

// findRust picks the first rustc on PATH that has a wasm32 standard library — rustup's
// toolchains often have none, Debian's rustc has wasm32-wasi — with the cargo beside it and a
// rust-lld to link with.
func findRust(lang language) (toolchain, error) {
	noLinker := false
	for _, rustc := range lookPathAll("rustc") {
		target, sysroot := wasmTarget(rustc)
		if target == "" {
			continue
		}
		cargo, err := exec.LookPath(filepath.Join(filepath.Dir(rustc), "cargo"))
		if err != nil {
			if cargo, err = exec.LookPath("cargo"); err != nil {
				continue
			}
		}
		// rustc links wasm with rust-lld: rustup ships it in the sysroot; Debian's is on PATH
		// (/usr/bin/rust-lld, a link to lld-14, which the rustc package only recommends).
		if !hasRustLLD(sysroot) {
			noLinker = true
			continue
		}
		return toolchain{bin: cargo, rustc: rustc, target: target}, nil
	}
	if noLinker {
		return toolchain{}, &missingToolchain{lang: lang.name, tool: "rust-lld (Debian: lld-14) to link wasm32 modules", install: lang.install + "; on Debian also apt-get install lld-14"}
	}
	return toolchain{}, &missingToolchain{lang: lang.name, tool: "a rustc with a wasm32-wasip1 or wasm32-wasi standard library, and cargo", install: lang.install}
}

// hasRustLLD reports whether rustc finds its wasm linker: in its sysroot or on PATH.
func hasRustLLD(sysroot string) bool {
	if m, _ := filepath.Glob(filepath.Join(sysroot, "lib", "rustlib", "*", "bin", "rust-lld")); len(m) > 0 {
		return true
	}
	_, err := exec.LookPath("rust-lld")
	return err == nil
}

// rustPlan builds src's crate with tc's cargo and rustc.
func rustPlan(tc toolchain, src string) ([]step, string, error) {
	toml, err := os.ReadFile(filepath.Join(src, "Cargo.toml"))
	if err != nil {
		return nil, "", err
	}
	m := crateName.FindSubmatch(toml)
	if m == nil {
		return nil, "", fmt.Errorf("%s: no package name", filepath.Join(src, "Cargo.toml"))
	}
	crate := strings.ReplaceAll(string(m[1]), "-", "_")
	argv := []string{tc.bin, "build", "--release", "--target", tc.target}
	if filepath.Dir(tc.rustc) == "/usr/bin" {
		argv = append(argv, "--offline") // Debian's crates are vendored; crates.io may be unreachable
	}
	return []step{{dir: src, env: []string{"RUSTC=" + tc.rustc}, argv: argv}},
		filepath.Join(src, "target", tc.target, "release", crate+".wasm"), nil
}

// wasmTarget returns the WASI target rustc has a standard library for, or "", and rustc's sysroot.
func wasmTarget(rustc string) (target, sysroot string) {
	out, err := exec.Command(rustc, "--print", "sysroot").Output()
	if err != nil {
		return "", ""
	}
	sysroot = strings.TrimSpace(string(out))
	for _, t := range []string{"wasm32-wasip1", "wasm32-wasi"} {
		if st, err := os.Stat(filepath.Join(sysroot, "lib", "rustlib", t, "lib")); err == nil && st.IsDir() {
			return t, sysroot
		}
	}
	return "", sysroot
}

// runSteps runs a plan, its output going to a person's terminal w, escaped by terminalWriter:
// a compiler quotes the skill's source.
func runSteps(ctx context.Context, steps []step, out io.Writer) error {
	w := &terminalWriter{w: out}
	defer w.Flush()
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
