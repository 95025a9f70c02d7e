package runtime

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/bundle"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	iregistry "github.com/skillbox-dev/skillbox/runtime/internal/registry"
)

// packSkill packs the first-party skill id and returns the bundle's bytes.
func packSkill(t *testing.T, id string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := bundle.Pack(context.Background(), filepath.Join("..", "skills", id), &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func newKey(t *testing.T) (ed25519.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	must(t, err)
	return pub, priv
}

func signBundle(t *testing.T, data []byte, priv ed25519.PrivateKey) []byte {
	t.Helper()
	b, err := bundle.Read(bytes.NewReader(data), bundle.Limits{})
	must(t, err)
	var out bytes.Buffer
	must(t, b.Sign(priv, &out))
	return out.Bytes()
}

// A signed bundle of each first-party skill (bundle TestBundleRoundTrip packs, signs, verifies
// and unpacks them) installs under a policy that requires a trusted signature, with its folder's
// digest and without the bundle's own entries, and runs from where it was installed.
func TestSignedBundleInstallsAndRuns(t *testing.T) {
	pub, priv := newKey(t)
	dir := t.TempDir()
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Policy: &policy.Policy{Bundles: policy.Bundles{RequireSigned: true, TrustedKeys: []ed25519.PublicKey{pub}}}})
	ctx := context.Background()
	for id, args := range map[string]string{"word-count": `{"text":"to be or not to be"}`, "csv-stats": `{"csv":"a,b\n1,x\n3,y\n"}`} {
		t.Run(id, func(t *testing.T) {
			b, err := bundle.Read(bytes.NewReader(signBundle(t, packSkill(t, id), priv)), bundle.Limits{})
			must(t, err)
			want, err := (*iregistry.Digester)(nil).TreeDigest(filepath.Join("..", "skills", id))
			must(t, err)
			s, err := rt.Install(ctx, id, b.Package(), InstallOptions{Who: testAdmin})
			if err != nil {
				t.Fatal(err)
			}
			if s.Digest() != want {
				t.Fatalf("installed digest %s, want %s", s.Digest(), want)
			}
			if _, err := os.Stat(filepath.Join(dir, id, ".bundle")); err == nil {
				t.Fatal("the bundle's own entries were installed")
			}
			res, err := rt.Run(ctx, run.Request{Skill: id, Args: []byte(args), Who: testAdmin})
			if err != nil || !res.Success {
				t.Fatalf("run: %v %+v", err, res)
			}
		})
	}
}

// entry is one tar entry of a hand-made archive.
type entry struct {
	name string
	data []byte
	typ  byte
}

// tarGz builds an archive of entries as given: what a hostile or careless packer could send.
func tarGz(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.data)), Typeflag: e.typ}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		switch h.Typeflag {
		case tar.TypeSymlink:
			h.Linkname, h.Size = "/etc/passwd", 0
		case tar.TypeChar, tar.TypeDir:
			h.Size = 0
		}
		must(t, tw.WriteHeader(h))
		if _, err := tw.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	must(t, tw.Close())
	must(t, gz.Close())
	return buf.Bytes()
}

// unpackEntries reads a bundle's raw entries, in order.
func unpackEntries(t *testing.T, data []byte) []entry {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(data))
	must(t, err)
	tr := tar.NewReader(gz)
	var out []entry
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		var b bytes.Buffer
		_, _ = b.ReadFrom(tr)
		out = append(out, entry{name: h.Name, data: b.Bytes()})
	}
	return out
}

// edit returns entries with f applied to the one named name (removed when f returns nil).
func edit(entries []entry, name string, f func([]byte) []byte) []entry {
	var out []entry
	for _, e := range entries {
		if e.name == name {
			if e.data = f(bytes.Clone(e.data)); e.data == nil {
				continue
			}
		}
		out = append(out, e)
	}
	return out
}

// Install refuses what the policy's bundles field says to (policy TestBundlePolicy: the field
// parses strictly): under requireSigned, a plain package, an unsigned bundle and one signed by an
// untrusted key; without it, a bundle whose signature is broken.
func TestInstallFollowsTheBundlePolicy(t *testing.T) {
	pub, priv := newKey(t)
	_, otherPriv := newKey(t)
	dir := t.TempDir()
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Policy: &policy.Policy{Bundles: policy.Bundles{RequireSigned: true, TrustedKeys: []ed25519.PublicKey{pub}}}})
	ctx := context.Background()
	plain := pkg(t, simple("greet", ""), "hello")
	if _, err := rt.Install(ctx, "greet", plain, InstallOptions{Who: testAdmin}); !errors.Is(err, bundle.ErrUntrusted) || !strings.Contains(err.Error(), "bundles.requireSigned") {
		t.Fatalf("a plain package under requireSigned: %v", err)
	}
	install := func(data []byte) error {
		b, err := bundle.Read(bytes.NewReader(data), bundle.Limits{})
		must(t, err)
		_, err = rt.Install(ctx, "word-count", b.Package(), InstallOptions{Who: testAdmin})
		return err
	}
	unsigned := packSkill(t, "word-count")
	if err := install(unsigned); !errors.Is(err, bundle.ErrUntrusted) {
		t.Fatalf("unsigned bundle: %v", err)
	}
	if err := install(signBundle(t, unsigned, otherPriv)); !errors.Is(err, bundle.ErrUntrusted) {
		t.Fatalf("bundle by an untrusted key: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a refused install left %v", entries)
	}
	if err := install(signBundle(t, unsigned, priv)); err != nil {
		t.Fatal(err)
	}
	// Without requireSigned a plain package installs, and a bundle whose signature is broken
	// does not, whoever signed it.
	open := newRuntime(t, Config{SkillDirs: []string{t.TempDir()}})
	if _, err := open.Install(ctx, "greet", plain, InstallOptions{Who: testAdmin}); err != nil {
		t.Fatal(err)
	}
	broken := edit(unpackEntries(t, signBundle(t, unsigned, otherPriv)), bundle.ManifestPath, func(b []byte) []byte { return append(b, ' ') })
	pr := bundle.NewReader(bundle.Limits{})
	must(t, pr.AddTarGz(bytes.NewReader(tarGz(t, broken...))))
	if _, err := open.Install(ctx, "word-count", pr.Files(), InstallOptions{Who: testAdmin}); !errors.Is(err, bundle.ErrInvalid) || !strings.Contains(err.Error(), "does not verify") {
		t.Fatalf("broken signature without requireSigned: %v", err)
	}
}
