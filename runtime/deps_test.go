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
	{"github.com/nats-io", "NATS, cluster mode's"},
	{"github.com/skillbox-dev/skillbox/cluster", "cluster mode"},
}

// The runtime and the agent toolset stay light for embedders: `go list -deps` of each names
// none of heavyImports. A failure names the package and the import chain that brought it in.
func TestEmbeddersDoNotLinkTheFaces(t *testing.T) {
	noneLinks(t, heavyImports, "keep that import in the face or the CLI that needs it, out of the library packages",
		"github.com/skillbox-dev/skillbox/runtime", "github.com/skillbox-dev/skillbox/agent")
}

// engineImports are what runs skills: the engine, the guest ABI, the script bundler, and the
// runtime that links them.
var engineImports = []struct{ prefix, what string }{
	{"github.com/tetratelabs/wazero", "the WebAssembly engine"},
	{"github.com/extism/go-sdk", "the Extism host SDK"},
	{"github.com/evanw/esbuild", "the script bundler"},
	{"github.com/skillbox-dev/skillbox/runtime", "the runtime"},
	{"github.com/skillbox-dev/skillbox/internal/jsbundle", "the script bundler"},
}

// leafPackages describe skills, policies, versions, runs and their records; a store keeps them,
// and tool definitions and search read a catalog of them. None needs the engine to say what a
// Version or a Schema is, so none links it: they build without wazero or esbuild.
var leafPackages = []string{
	"github.com/skillbox-dev/skillbox/access",
	"github.com/skillbox-dev/skillbox/artifact",
	"github.com/skillbox-dev/skillbox/catalog",
	"github.com/skillbox-dev/skillbox/bundle",
	"github.com/skillbox-dev/skillbox/history",
	"github.com/skillbox-dev/skillbox/policy",
	"github.com/skillbox-dev/skillbox/run",
	"github.com/skillbox-dev/skillbox/spec",
	"github.com/skillbox-dev/skillbox/version",
	"github.com/skillbox-dev/skillbox/store",
	"github.com/skillbox-dev/skillbox/store/sqlite",
	"github.com/skillbox-dev/skillbox/store/postgres",
	"github.com/skillbox-dev/skillbox/agent/tooldef",
	"github.com/skillbox-dev/skillbox/agent/search",
}

// clusterImports are cluster mode's: only serve --cluster runs them, and only the CLI links them.
var clusterImports = []struct{ prefix, what string }{
	{"github.com/nats-io", "NATS"},
	{"github.com/skillbox-dev/skillbox/cluster", "cluster mode"},
}

// A program that mounts the HTTP or MCP face, or keeps a store, links no NATS: the faces take
// the cluster as an interface (server.Cluster), not its package.
func TestOnlyTheCLILinksTheCluster(t *testing.T) {
	noneLinks(t, clusterImports, "take what the face needs of the cluster as an interface or a function, not the cluster package",
		"github.com/skillbox-dev/skillbox/server", "github.com/skillbox-dev/skillbox/mcpserver", "github.com/skillbox-dev/skillbox/store/postgres")
}

func TestLeavesDoNotLinkTheEngine(t *testing.T) {
	noneLinks(t, engineImports, "a leaf must not import the runtime or its machinery: move what it needs into a leaf", leafPackages...)
}

// noneLinks fails for each package of avoid that a root links, naming the chain of imports.
func noneLinks(t *testing.T, avoid []struct{ prefix, what string }, fix string, roots ...string) {
	t.Helper()
	gocmd := goCommand(t)
	for _, root := range roots {
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
			if heavy(avoid, pkg) == "" {
				continue
			}
			chain := importChain(imports, root, pkg)
			for i, p := range chain {
				if heavy(avoid, p) != "" {
					entries[p] = chain[:i+1]
					break
				}
			}
		}
		for _, pkg := range slices.Sorted(maps.Keys(entries)) {
			t.Errorf("%s links %s (%s), through %s: %s",
				root, pkg, heavy(avoid, pkg), strings.Join(entries[pkg], " -> "), fix)
		}
	}
}

// heavy says what pkg is if list names it, or "".
func heavy(list []struct{ prefix, what string }, pkg string) string {
	for _, h := range list {
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
