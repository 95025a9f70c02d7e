package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"
)

// heavyImports are what a program that embeds Skillbox must not link just by importing the
// runtime (or the agent toolset beside it): the faces' frameworks, the CLI's exporters and the
// like belong to the binaries that want them. Each entry is an import path prefix (a package or
// everything under it) and why it is kept out.
var heavyImports = []struct{ prefix, what string }{
	{"github.com/labstack/echo", "the HTTP face's web framework"},
	{"github.com/modelcontextprotocol/go-sdk", "the MCP SDK"},
	{"github.com/spf13/cobra", "the CLI's command library"},
	{"go.opentelemetry.io/otel/sdk", "the OpenTelemetry SDK (an embedder passes its own TracerProvider)"},
	{"go.opentelemetry.io/otel/exporters", "OpenTelemetry exporters"},
	{"go.opentelemetry.io/contrib", "OpenTelemetry contrib packages"},
	{"google.golang.org/grpc", "gRPC"},
	{"github.com/grpc-ecosystem", "the gRPC gateway"},
	{"github.com/prometheus", "the Prometheus client"},
	{"database/sql", "database drivers"},
	{"github.com/skillbox-dev/skillbox/server", "the HTTP face"},
	{"github.com/skillbox-dev/skillbox/mcpserver", "the MCP face"},
	{"github.com/skillbox-dev/skillbox/cmd", "the CLI"},
}

// The runtime and the agent toolset stay light for embedders: `go list -deps` of each names
// none of heavyImports. A failure names the package and the import chain that brought it in.
func TestEmbeddersDoNotLinkTheFaces(t *testing.T) {
	gocmd := goCommand(t)
	for _, root := range []string{"github.com/skillbox-dev/skillbox/runtime", "github.com/skillbox-dev/skillbox/agent"} {
		cmd := exec.Command(gocmd, "list", "-deps", "-json=ImportPath,Imports", root)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", root, err, stderr.Bytes())
		}
		imports, err := decodeImports(out)
		if err != nil {
			t.Fatalf("go list -deps %s: %v", root, err)
		}
		if _, ok := imports[root]; !ok {
			t.Fatalf("go list -deps %s did not list %s itself", root, root)
		}
		// One error per way in: the first heavy package on each chain, not each package under it.
		entries := map[string][]string{}
		for pkg := range imports {
			if heavy(pkg) == "" {
				continue
			}
			chain := importChain(imports, root, pkg)
			for i, p := range chain {
				if heavy(p) != "" {
					entries[p] = chain[:i+1]
					break
				}
			}
		}
		for _, pkg := range slices.Sorted(maps.Keys(entries)) {
			t.Errorf("%s links %s (%s), through %s: keep that import in the face or the CLI that needs it, out of the library packages",
				root, pkg, heavy(pkg), strings.Join(entries[pkg], " -> "))
		}
	}
}

// heavy says what pkg is if heavyImports names it, or "".
func heavy(pkg string) string {
	for _, h := range heavyImports {
		if pkg == h.prefix || strings.HasPrefix(pkg, h.prefix+"/") {
			return h.what
		}
	}
	return ""
}

// goCommand is the go command: on PATH (go test puts its own GOROOT/bin first), or in the
// GOROOT this test was built with; the test skips when neither has one.
func goCommand(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	//lint:ignore SA1019 the fallback for a test binary run outside go test, where PATH may lack go.
	if root := goruntime.GOROOT(); root != "" {
		if p, err := exec.LookPath(filepath.Join(root, "bin", "go")); err == nil {
			return p
		}
	}
	t.Skip("no go command on PATH or in GOROOT: cannot list the runtime's imports")
	return ""
}

// decodeImports reads the stream of JSON objects `go list -json` prints into a map from each
// package to the packages it imports.
func decodeImports(out []byte) (map[string][]string, error) {
	imports := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return imports, nil
		} else if err != nil {
			return nil, err
		}
		imports[p.ImportPath] = p.Imports
	}
}

// importChain is the shortest chain of imports from root to pkg (breadth first), root and pkg
// included.
func importChain(imports map[string][]string, root, pkg string) []string {
	from := map[string]string{root: ""}
	queue := []string{root}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == pkg {
			chain := []string{}
			for p := pkg; p != ""; p = from[p] {
				chain = append([]string{p}, chain...)
			}
			return chain
		}
		for _, next := range imports[cur] {
			if _, seen := from[next]; !seen {
				from[next] = cur
				queue = append(queue, next)
			}
		}
	}
	return []string{root, "...", pkg}
}
