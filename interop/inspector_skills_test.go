package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/internal/testcache"
)

// inspectorLauncher is the MCP Inspector's CLI entry point, as npm ci installs it here.
const inspectorLauncher = "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"

// inspectorSkills is a skills directory beside the bundled ones: guide, a skill of several files
// (a binary one, an executable one, one whose name needs escaping in a URI) whose frontmatter
// has fields and values Skillbox's own reader reads differently from a strict one; renamed,
// whose name is not its id; and sloppy, whose YAML only a lenient reader takes. The last two
// break the Agent Skills specification, so the extension does not list them.
func inspectorSkills(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for rel, data := range map[string]string{
		"guide/SKILL.md": "---\nname: guide\ndescription: >\n  How to write a guide. Use it when the user asks for one.\nlicense: Apache-2.0\n" +
			"allowed-tools: Read Grep\nreleased: 2024-01-01\nmetadata:\n  version: \"010\"\n  tags: [docs, writing]\n---\n\n# Guide\n\nSee [the API](references/api.md).\n",
		"guide/references/api.md": "# API\n\nCall it.\n",
		"guide/data/blob.bin":     "\xff\xfe\x00binary",
		"guide/scripts/run.sh":    "#!/bin/sh\necho guide\n",
		"guide/notes/a b.md":      "spaces\n",
		"renamed/SKILL.md":        "---\nname: other-name\ndescription: A skill named unlike its directory.\n---\n",
		"sloppy/SKILL.md":         "---\nname: sloppy\ndescription: Use it: always\n---\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "guide", "scripts", "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// verifyReport is one line of the Inspector's --verify output.
type verifyReport struct {
	URI, Name, Outcome string
	OK                 bool
	Conformance        []map[string]any
	Frontmatter        []map[string]any
	Files              []struct{ URI, Status string }
}

// TestInspectorSkills drives the MCP Inspector CLI (@modelcontextprotocol/inspector, pinned in
// package.json) against skillbox mcp over stdio and skillbox serve's /mcp over streamable HTTP,
// in both protocol eras: its verification mode (--verify) checks every skill skills/list and
// skills/get return against the SEP-2640 rules, reads every file they list with resources/read
// and checks its sha256 digest and size, and compares the frontmatter with the SKILL.md it
// reads. Every skill must come out "verified"; the skills that break the Agent Skills
// specification must not be listed, and skills/get must say why.
func TestInspectorSkills(t *testing.T) {
	installClients(t)
	node, _ := node(t)
	launcher, err := filepath.Abs(inspectorLauncher)
	if err != nil {
		t.Fatal(err)
	}
	bin := buildSkillbox(t)
	skills, err := filepath.Abs("../skills")
	if err != nil {
		t.Fatal(err)
	}
	cacheDir := testcache.Dir()
	extra := inspectorSkills(t)
	home := t.TempDir() // the Inspector keeps a catalog and settings under $HOME

	// inspect runs the Inspector's CLI against target and returns its exit code and output.
	inspect := func(t *testing.T, target []string, args ...string) (int, string, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		argv := append(append([]string{launcher, "--cli"}, args...), target...)
		cmd := exec.CommandContext(ctx, node, argv...)
		cmd.Env = append(os.Environ(), "HOME="+home, "NO_COLOR=1")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("inspector: %v", err)
		}
		return code, stdout.String(), stderr.String()
	}
	reports := func(t *testing.T, stdout string) []verifyReport {
		t.Helper()
		var out []verifyReport
		sc := bufio.NewScanner(strings.NewReader(stdout))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var r verifyReport
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("a line of --verify output is not a report: %q: %v", sc.Text(), err)
			}
			out = append(out, r)
		}
		return out
	}

	check := func(t *testing.T, target []string, era string) {
		era = "--protocol-era=" + era
		code, stdout, stderr := inspect(t, target, era, "--method", "skills/list", "--verify", "--require-digests", "--format", "json")
		if code != 0 {
			t.Fatalf("skills/list --verify: exit %d\n--- stdout:\n%s\n--- stderr:\n%s", code, stdout, stderr)
		}
		var names []string
		for _, r := range reports(t, stdout) {
			names = append(names, r.Name)
			if !r.OK || r.Outcome != "verified" || len(r.Conformance) > 0 || len(r.Frontmatter) > 0 {
				t.Errorf("%s: %+v", r.URI, r)
			}
			for _, f := range r.Files {
				if f.Status != "verified" {
					t.Errorf("%s: %s", f.URI, f.Status)
				}
			}
			if r.Name == "guide" && len(r.Files) != 5 {
				t.Errorf("guide: %d files verified, want SKILL.md and its 4 others", len(r.Files))
			}
		}
		// guide and every bundled skill with a SKILL.md, each of which must follow the specification
		listed := append([]string{"guide"}, bundledWithSkillMD(t)...)
		slices.Sort(listed)
		if !slices.Equal(names, listed) {
			t.Errorf("skills %v, want %v (renamed and sloppy break the Agent Skills specification)", names, listed)
		}
		if !strings.Contains(stderr, "no conformance errors") {
			t.Errorf("summary: %s", stderr)
		}

		code, stdout, stderr = inspect(t, target, era, "--method", "skills/get", "--uri", "skill://guide/SKILL.md", "--verify", "--format", "json")
		if rs := reports(t, stdout); code != 0 || len(rs) != 1 || rs[0].Outcome != "verified" {
			t.Errorf("skills/get --verify: exit %d\n%s\n%s", code, stdout, stderr)
		}
		code, stdout, stderr = inspect(t, target, era, "--method", "skills/get", "--uri", "skill://renamed/SKILL.md", "--format", "json")
		if code == 0 || !strings.Contains(stdout+stderr, `differs from the skill's id`) {
			t.Errorf("skills/get of a skill that breaks the naming rule: exit %d\n%s\n%s", code, stdout, stderr)
		}
		code, stdout, stderr = inspect(t, target, era, "--method", "resources/read", "--uri", "skill://guide/SKILL.md", "--format", "json")
		var read struct {
			Result struct{ Contents []struct{ Text string } }
		}
		want, _ := os.ReadFile(filepath.Join(extra, "guide", "SKILL.md"))
		if err := json.Unmarshal([]byte(stdout), &read); code != 0 || err != nil || len(read.Result.Contents) != 1 || read.Result.Contents[0].Text != string(want) {
			t.Errorf("resources/read of SKILL.md is not the whole file: exit %d, %v\n%s\n%s", code, err, stdout, stderr)
		}
	}

	// Both eras over stdio and over serve's /mcp, which serves 2026-07-28 statelessly and older
	// revisions with sessions; auto negotiates the newest.
	srv := serve(t, bin, "--cache-dir", cacheDir, "--skills", extra, "--skills", skills)
	for _, era := range []string{"legacy", "modern"} {
		t.Run("stdio/"+era, func(t *testing.T) {
			t.Parallel()
			check(t, []string{bin, "mcp", "--skills", extra, "--skills", skills, "--cache-dir", cacheDir, "--data-dir", os.Getenv("SKILLBOX_DATA_DIR")}, era)
		})
	}
	for _, era := range []string{"legacy", "modern", "auto"} {
		t.Run("http/"+era, func(t *testing.T) {
			t.Parallel()
			check(t, []string{"--transport", "http", "--server-url", srv.url + "/mcp"}, era)
		})
	}
}
