package registry

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/skillbox-dev/skillbox/spec"
)

// The flat listing a load makes gives the digest the walk does.
func TestFlatDigestIsTheWalks(t *testing.T) {
	sd := t.TempDir()
	for name, data := range map[string]string{
		"skill.json":    `{"id":"s","name":"s","description":"test skill s"}`,
		spec.ModuleFile: "\x00asm\x01\x00\x00\x00",
		"SKILL.md":      "---\nname: s\ndescription: d\n---\n",
		".env":          "hidden",
	} {
		must(t, os.WriteFile(filepath.Join(sd, name), []byte(data), 0o644))
	}
	must(t, os.MkdirAll(filepath.Join(sd, "src"), 0o755))
	d := NewDigester()
	walked, err := d.Walk(sd, false)
	must(t, err)
	entries, err := os.ReadDir(sd)
	must(t, err)
	flat, ok, err := d.CachedFlat(sd, entries, nil)
	if !ok || err != nil || flat.Digest != walked.Digest || flat.Module != walked.Module || flat.Module == "" {
		t.Errorf("flat %+v %v %v, walked %+v", flat, ok, err, walked)
	}
	must(t, os.MkdirAll(filepath.Join(sd, "resources"), 0o755))
	entries, _ = os.ReadDir(sd)
	if _, ok, _ := d.CachedFlat(sd, entries, nil); ok {
		t.Error("a directory with resources/ is left to the walk")
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
