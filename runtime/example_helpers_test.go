package runtime_test

import (
	"errors"
	"log"
	"os"
	"path/filepath"

	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
)

// The helpers of the Examples: what each example would otherwise repeat around the API it shows.

// exampleDir makes a temporary directory for an example, which removes it when done.
func exampleDir() string {
	dir, err := os.MkdirTemp("", "skillbox-example-")
	check(err)
	return dir
}

// check stops the example on an error it does not expect.
func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

// writeSkill writes a skill package, files by slash path, as the directory dir/id.
func writeSkill(dir, id string, files map[string]string) {
	for name, content := range files {
		p := filepath.Join(dir, id, filepath.FromSlash(name))
		check(os.MkdirAll(filepath.Dir(p), 0o755))
		check(os.WriteFile(p, []byte(content), 0o644))
	}
}

// packageFiles is a skill package as Runtime.Install takes it: contents by slash path.
func packageFiles(files map[string]string) map[string][]byte {
	out := make(map[string][]byte, len(files))
	for name, content := range files {
		out[name] = []byte(content)
	}
	return out
}

// wasmModule is a compiled skill of the repository's fixtures, testdata/wasm/<name>.wasm
// (hello.wasm returns {"greeting":"hi"}), for a package's execute.wasm.
func wasmModule(name string) string {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", name+".wasm"))
	check(err)
	return string(data)
}

// skillIDs are the ids of the skills rt serves, in order.
func skillIDs(rt *runtime.Runtime) []string {
	var ids []string
	for _, s := range rt.Skills() {
		ids = append(ids, s.ID())
	}
	return ids
}

// errorKind is the kind of a run's error (not_found, pending_approval, ...): what a caller
// branches on. "<nil>" for no error.
func errorKind(err error) string {
	var runErr *run.Error
	switch {
	case err == nil:
		return "<nil>"
	case errors.As(err, &runErr):
		return string(runErr.Kind)
	default:
		return "not a run error: " + err.Error()
	}
}
