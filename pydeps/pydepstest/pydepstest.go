// Package pydepstest builds wheels and serves them as a package index on loopback, for the
// tests of skillbox vendor: a real pip resolves from it, and no public index is needed.
package pydepstest

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// BuildWheel builds a wheel as a build backend writes one (PEP 427): its files, then dist-info's
// METADATA (with requires as Requires-Dist), WHEEL with tag, and RECORD.
func BuildWheel(t testing.TB, name, version, tag string, files map[string]string, requires ...string) (string, []byte) {
	t.Helper()
	dist := strings.ReplaceAll(name, "-", "_")
	info := dist + "-" + version + ".dist-info/"
	all := map[string]string{}
	for k, v := range files {
		all[k] = v
	}
	meta := "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n"
	for _, r := range requires {
		meta += "Requires-Dist: " + r + "\n"
	}
	all[info+"METADATA"] = meta
	all[info+"WHEEL"] = "Wheel-Version: 1.0\nGenerator: skillbox-test\nRoot-Is-Purelib: true\nTag: " + tag + "\n"
	names := make([]string, 0, len(all))
	for k := range all {
		names = append(names, k)
	}
	sort.Strings(names)
	var record strings.Builder
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(all[n]))
		sum := sha256.Sum256([]byte(all[n]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", n, base64.RawURLEncoding.EncodeToString(sum[:]), len(all[n]))
	}
	record.WriteString(info + "RECORD,,\n")
	w, _ := zw.Create(info + "RECORD")
	w.Write([]byte(record.String()))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s-%s-%s.whl", dist, version, tag), buf.Bytes()
}

// Index serves wheels as a PEP 503 simple index on loopback, each link with its sha256.
func Index(t testing.TB, wheels map[string][]byte) string {
	t.Helper()
	byProject := map[string][]string{}
	for file := range wheels {
		project := normalize(strings.SplitN(file, "-", 2)[0])
		byProject[project] = append(byProject[project], file)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/simple/{project}/", func(w http.ResponseWriter, r *http.Request) {
		files, ok := byProject[normalize(r.PathValue("project"))]
		if !ok {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, "<!DOCTYPE html><html><body>\n")
		for _, f := range files {
			sum := sha256.Sum256(wheels[f])
			fmt.Fprintf(w, "<a href=\"/files/%s#sha256=%s\">%s</a>\n", f, hex.EncodeToString(sum[:]), f)
		}
		fmt.Fprint(w, "</body></html>\n")
	})
	mux.HandleFunc("/files/{file}", func(w http.ResponseWriter, r *http.Request) {
		data, ok := wheels[r.PathValue("file")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(data)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts.URL + "/simple"
}

// normalize is a project's name as PEP 503 compares names.
func normalize(name string) string {
	return strings.ToLower(regexp.MustCompile(`[-_.]+`).ReplaceAllString(name, "-"))
}

// NeedPip skips t without pip on this machine, unless SKILLBOX_REQUIRE_TOOLCHAINS=1 (CI), when
// it fails.
func NeedPip(t testing.TB) {
	t.Helper()
	if err := exec.Command("python3", "-m", "pip", "--version").Run(); err != nil {
		if os.Getenv("SKILLBOX_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatalf("pip is missing (Debian: apt-get install python3-pip): %v", err)
		}
		t.Skipf("pip is missing: %v", err)
	}
}
