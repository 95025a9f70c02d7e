package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/artifact"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
)

// outputManifest is a manifest of the output fixture that asks for /output (or, with files
// given, for those).
func outputManifest(id, files string) string {
	if files == "" {
		files = `[{"path":"/output","access":"read-write"}]`
	}
	return simple(id, `"parameters":{"spec":{"type":"string","required":true}},"permissions":{"files":`+files+`}`)
}

// runSpec runs the output fixture skill id with spec, collecting its events.
func runSpec(t *testing.T, rt *Runtime, id, spec string) (*run.Result, []run.Event, error) {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"spec": spec})
	var events []run.Event
	res, err := rt.Run(context.Background(), run.Request{Skill: id, Args: args, OnEvent: func(e run.Event) { events = append(events, e) }, Who: testAdmin})
	return res, events, err
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func readArtifact(t *testing.T, rt *Runtime, run, name string) (string, artifact.Artifact) {
	t.Helper()
	rc, a, err := rt.OpenArtifact(context.Background(), testAdmin, run, name)
	if err != nil {
		t.Fatalf("open %s of %s: %v", name, run, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(data), a
}

// A compiled skill writes below /output through the SkillContext; each bound of the policy's
// artifacts section fails the write that crosses it inside the guest (LIMIT), and what the run
// left is collected after it: listed in the result, announced by a "file" event each before the
// result, byte for byte readable (here from the runtime's own keeper), and the run's directory
// is gone.
func TestArtifactsOfACompiledSkill(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := t.TempDir()
	fixture(t, dir, "out", outputManifest("out", ""), "output")
	p := &policy.Policy{Artifacts: policy.Artifacts{MaxFiles: 3, MaxFileBytes: 100, MaxTotalBytes: 150}}
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Policy: p})
	s, _ := rt.Skill("out")
	if g := s.Grant(); g.Artifacts == nil || *g.Artifacts != (policy.ArtifactLimits{MaxFiles: 3, MaxFileBytes: 100, MaxTotalBytes: 150}) || len(g.Refused) != 0 {
		t.Fatalf("grant %+v", g)
	}
	// a, b fit; big passes maxFileBytes; c would pass maxTotalBytes; d is the third file; e a
	// fourth.
	res, events, err := runSpec(t, rt, "out", "a.txt*5;dir/b.bin*100;big*101;c*50;d*1;e*0")
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Result) != `"S004404"` {
		t.Fatalf("statuses %s, want S004404", res.Result)
	}
	x := func(n int) string { return strings.Repeat("x", n) }
	want := []artifact.Artifact{
		{Name: "a.txt", Size: 5, SHA256: sha(x(5)), MediaType: "text/plain; charset=utf-8"},
		{Name: "d", Size: 1, SHA256: sha(x(1)), MediaType: "text/plain; charset=utf-8"}, // sniffed
		{Name: "dir/b.bin", Size: 100, SHA256: sha(x(100))},
	}
	if len(res.Artifacts) != len(want) {
		t.Fatalf("artifacts %+v", res.Artifacts)
	}
	for i, a := range res.Artifacts {
		if a.Name != want[i].Name || a.Size != want[i].Size || a.SHA256 != want[i].SHA256 || (want[i].MediaType != "" && a.MediaType != want[i].MediaType) {
			t.Errorf("artifact %d = %+v, want %+v", i, a, want[i])
		}
	}
	var types []string
	for _, e := range events {
		types = append(types, e.Type)
	}
	if got := strings.Join(types, ","); got != "status,status,file,file,file,result" {
		t.Fatalf("events %s", got)
	}
	for i, e := range events[2:5] {
		if *e.File != res.Artifacts[i] || e.RunID != res.RunID {
			t.Errorf("file event %d = %+v", i, e)
		}
	}
	for _, a := range res.Artifacts {
		data, meta := readArtifact(t, rt, res.RunID, a.Name)
		if data != x(int(a.Size)) || meta != a {
			t.Errorf("%s reads %d bytes, meta %+v", a.Name, len(data), meta)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "skillbox-output-*")); len(left) != 0 {
		t.Errorf("output directories left behind: %v", left)
	}
	if _, _, err := rt.OpenArtifact(context.Background(), testAdmin, res.RunID, "big"); !errors.Is(err, artifact.ErrNoArtifact) {
		t.Errorf("the refused file: %v, want ErrNoArtifact", err)
	}
	if _, _, err := rt.OpenArtifact(context.Background(), testAdmin, "run_nosuch", "a.txt"); !errors.Is(err, artifact.ErrNoRun) {
		t.Errorf("an unknown run: %v, want ErrNoRun", err)
	}
}

// No /output without asking for it, asking for it other than whole and for writing, or under
// a policy that turns it off (policy TestArtifactsPolicy: a policy cannot mount a directory of
// the host there).
func TestOutputNeedsItsPermission(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "none", outputManifest("none", "[]"), "output")
	fixture(t, dir, "sub", outputManifest("sub", `[{"path":"/output/x","access":"read-write"}]`), "output")
	fixture(t, dir, "ro", outputManifest("ro", `[{"path":"/output","access":"read-only"}]`), "output")
	fixture(t, dir, "off", outputManifest("off", ""), "output")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Policy: &policy.Policy{Artifacts: policy.Artifacts{Disabled: true}}})
	refusals := map[string]string{
		"none": "",
		"sub":  "files /output/x: the output directory is granted whole: ask for /output",
		"ro":   "files /output: the output directory is for writing: ask for read-write",
		"off":  "files /output: the policy turns the output directory off (artifacts.enabled: false)",
	}
	for id, refusal := range refusals {
		s, _ := rt.Skill(id)
		if got := strings.Join(s.Grant().Refused, "; "); got != refusal || s.Grant().Artifacts != nil {
			t.Errorf("%s: refused %q, want %q", id, got, refusal)
		}
		res, _, err := runSpec(t, rt, id, "a*1")
		if err != nil || string(res.Result) != `"S2"` || len(res.Artifacts) != 0 {
			t.Errorf("%s: %s %+v %v; want the write denied and no artifacts", id, res.Result, res.Artifacts, err)
		}
	}
}

// A hostile guest: paths out of /output and too deep are refused; a flood of tiny files stops
// at maxFiles, well before the run's write count, and none of it outlives the run.
func TestOutputHostileGuest(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "out", outputManifest("out", ""), "output")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	deep := strings.Repeat("d/", 32) + "f*1"
	flood := make([]string, 40)
	for i := range flood {
		flood[i] = "f" + strings.Repeat("i", i) + "*0"
	}
	res, _, err := runSpec(t, rt, "out", "../escape*1;"+deep+";"+strings.Join(flood, ";"))
	if err != nil {
		t.Fatal(err)
	}
	want := "S33" + strings.Repeat("0", policy.DefaultArtifactFiles) + strings.Repeat("4", 40-policy.DefaultArtifactFiles)
	if string(res.Result) != `"`+want+`"` {
		t.Fatalf("statuses %s, want %s", res.Result, want)
	}
	if len(res.Artifacts) != policy.DefaultArtifactFiles {
		t.Errorf("%d artifacts, want %d", len(res.Artifacts), policy.DefaultArtifactFiles)
	}
}

// Collection takes regular files only and stops at the bounds, whatever it finds: here a
// directory planted with what no guest API makes (a symlink out, a FIFO, a name no header can
// carry, a file past maxFileBytes, more files than maxFiles).
func TestCollectTrustsNothing(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret")
	must(t, os.WriteFile(outside, []byte("secret"), 0o600))
	must(t, os.Symlink(outside, filepath.Join(dir, "link")))
	must(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
	must(t, os.WriteFile(filepath.Join(dir, "bad\nname"), []byte("x"), 0o600))
	must(t, os.WriteFile(filepath.Join(dir, "huge"), make([]byte, 11), 0o600))
	must(t, os.MkdirAll(filepath.Join(dir, "a", "b"), 0o700))
	for _, n := range []string{"a/b/1", "a/2", "3", "4"} {
		must(t, os.WriteFile(filepath.Join(dir, filepath.FromSlash(n)), []byte(n), 0o600))
	}
	o := &output{dir: dir, limits: policy.ArtifactLimits{MaxFiles: 3, MaxFileBytes: 10, MaxTotalBytes: 100}}
	files, notes, err := o.collect()
	if err != nil {
		t.Fatal(err)
	}
	defer o.root.Close()
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(rc)
		rc.Close()
		if string(data) != f.Name && !strings.HasSuffix(f.Name, string(data)) {
			t.Errorf("%s reads %q", f.Name, data)
		}
	}
	if len(names) != 3 || slices.Contains(names, "link") || slices.Contains(names, "fifo") || slices.Contains(names, "huge") {
		t.Errorf("collected %q", names)
	}
	joined := strings.Join(notes, "\n")
	for _, want := range []string{"/output/link: not a regular file", "/output/fifo: not a regular file", `"bad\nname": not a valid artifact name`,
		"/output/huge: more than maxFileBytes (10)", "past maxFiles (3)"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
}

// Without an artifact.Store the runtime keeps the artifacts of its most recent runs only, and
// none after Close; a run it no longer keeps is known by its record, so the file is what is
// missing.
func TestKeptArtifactsAreBounded(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "out", outputManifest("out", ""), "output")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, KeptArtifacts: KeptArtifacts{MaxRuns: 2}})
	var runs []string
	for range 3 {
		res, _, err := runSpec(t, rt, "out", "r*3")
		if err != nil || len(res.Artifacts) != 1 {
			t.Fatalf("%+v %v", res, err)
		}
		runs = append(runs, res.RunID)
	}
	if _, _, err := rt.OpenArtifact(context.Background(), testAdmin, runs[0], "r"); !errors.Is(err, artifact.ErrNoArtifact) {
		t.Errorf("the oldest run's file: %v, want ErrNoArtifact", err)
	}
	for _, id := range runs[1:] {
		if data, _ := readArtifact(t, rt, id, "r"); data != "xxx" {
			t.Errorf("%s: %q", id, data)
		}
	}
	keptDir := rt.kept.dir
	must(t, rt.Close(context.Background()))
	if _, err := os.Stat(keptDir); !os.IsNotExist(err) {
		t.Errorf("the kept artifacts outlive Close: %v", err)
	}
	if _, _, err := rt.OpenArtifact(context.Background(), testAdmin, runs[2], "r"); !errors.Is(err, run.ErrClosed) {
		t.Errorf("after Close: %v, want ErrClosed", err)
	}
}

// A Python skill writes its output with open() (the WASI mount, held to the same bounds) and
// with ctx.write_file (the SkillContext); it cannot make a symlink there, and a file that
// would pass maxFileBytes fails in the guest as an OSError.
func TestArtifactsOfAPythonSkill(t *testing.T) {
	dir := t.TempDir()
	scriptFixture(t, dir, "report", simple("report", `"permissions":{"files":[{"path":"/output","access":"read-write"}]}`), map[string]string{
		"execute.py": `import os, json

def execute(args, ctx):
    os.makedirs("/output/charts", exist_ok=True)
    with open("/output/charts/report.csv", "w") as f:
        f.write("a,b\n1,2\n")
    ctx.write_file("/output/data.json", json.dumps({"ok": True}))
    out = {}
    try:
        with open("/output/big.bin", "wb") as f:
            f.write(b"x" * 2000)
        out["big"] = "written"
    except OSError:
        out["big"] = "refused"
    try:
        ctx.write_file("/output/big2.bin", "y" * 1001)
        out["big2"] = "written"
    except Exception as e:
        out["big2"] = type(e).__name__
    try:
        os.symlink("/etc/passwd", "/output/link")
        out["symlink"] = "made"
    except OSError:
        out["symlink"] = "refused"
    return out
`})
	p := &policy.Policy{Artifacts: policy.Artifacts{MaxFiles: 8, MaxFileBytes: 1000, MaxTotalBytes: 4000}}
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Policy: p})
	res, err := rt.Run(context.Background(), run.Request{Skill: "report", Who: testAdmin})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Result) != `{"big":"refused","big2":"LimitExceeded","symlink":"refused"}` {
		t.Fatalf("result %s", res.Result)
	}
	byName := map[string]artifact.Artifact{}
	for _, a := range res.Artifacts {
		byName[a.Name] = a
	}
	if a := byName["charts/report.csv"]; a.Size != 8 || a.MediaType != "text/csv; charset=utf-8" || a.SHA256 != sha("a,b\n1,2\n") {
		t.Errorf("report.csv: %+v (all: %+v)", a, res.Artifacts)
	}
	if a := byName["data.json"]; a.MediaType != "application/json" {
		t.Errorf("data.json: %+v", a)
	}
	if a, ok := byName["big.bin"]; ok && a.Size > 1000 {
		t.Errorf("big.bin kept at %d bytes, past maxFileBytes", a.Size)
	}
	if _, ok := byName["link"]; ok {
		t.Error("a symlink was collected")
	}
	if data, _ := readArtifact(t, rt, res.RunID, "data.json"); data != `{"ok": true}` {
		t.Errorf("data.json reads %q", data)
	}
}

// A run's files are seen as the run is (the runtime's own keeper here; storetest's Visibility
// holds a store to the same): the files of a run of alice's own skill are alice's and the
// admins', and no one else's, whose read says there is no such run.
func TestArtifactsAreSeenAsTheirRun(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	rt := newRuntime(t, Config{SkillDirs: []string{t.TempDir()}})
	ctx := context.Background()
	alice := access.Principal{User: "alice", Key: "k1", Role: access.RoleAuthor}
	view, err := rt.User(ctx, "alice")
	must(t, err)
	if _, err := view.Install(ctx, "out", pkg(t, outputManifest("out", ""), "output"), InstallOptions{Visibility: access.VisibilityUser, Who: alice}); err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"spec": "a.txt*3"})
	res, err := view.Run(ctx, run.Request{Skill: "out", Args: args, Who: alice})
	if err != nil || len(res.Artifacts) != 1 {
		t.Fatalf("run: %+v %v", res, err)
	}
	for _, c := range []struct {
		who  access.Principal
		sees bool
	}{
		{alice, true},
		{access.Principal{Key: "ops", Role: access.RoleAdmin}, true},
		{access.Principal{User: "bob", Key: "k2", Role: access.RolePublisher}, false},
		{access.Principal{Key: "nameless", Role: access.RoleRunner}, false},
	} {
		for name, r := range map[string]*Runtime{"alice's view": view, "the tenant": rt} {
			rc, _, err := r.OpenArtifact(ctx, c.who, res.RunID, "a.txt")
			switch {
			case c.sees && err != nil:
				t.Errorf("%s, %s: %v", name, c.who.Caller(), err)
			case !c.sees && !errors.Is(err, artifact.ErrNoRun):
				t.Errorf("%s, %s: %v, want ErrNoRun", name, c.who.Caller(), err)
			}
			if rc != nil {
				rc.Close()
			}
		}
	}
}

// fullStore is an artifact store on a full disk: every put fails as the kernel says so.
type fullStore struct{}

func (fullStore) PutArtifacts(context.Context, string, []artifact.File) error {
	return fmt.Errorf("keep the artifacts: %w", &os.PathError{Op: "write", Path: "/data/blobs/x", Err: syscall.ENOSPC})
}

func (fullStore) OpenArtifact(context.Context, string, string, string) (io.ReadCloser, artifact.Artifact, error) {
	return nil, artifact.Artifact{}, artifact.ErrNoArtifact
}

// A run whose files cannot be kept because the disk is full succeeds, lists none of them, and
// says in its log that there was no space left.
func TestArtifactsOnAFullDisk(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "out", outputManifest("out", ""), "output")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Artifacts: fullStore{}})
	res, _, err := runSpec(t, rt, "out", "a.txt*5")
	if err != nil || !res.Success {
		t.Fatalf("%v %+v", err, res)
	}
	if len(res.Artifacts) != 0 {
		t.Fatalf("the result lists files that were not kept: %+v", res.Artifacts)
	}
	var said bool
	for _, l := range res.Logs {
		said = said || (l.Source == "host" && strings.Contains(l.Message, "no space left on the device"))
	}
	if !said {
		t.Fatalf("the log does not say the disk is full: %+v", res.Logs)
	}
}
