package runtime

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/bundle"
	"github.com/skillbox-dev/skillbox/bundle/bundletest"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
)

// A signed bundle of each first-party skill (bundle TestBundleRoundTrip packs, signs, verifies
// and unpacks them) installs under a policy that requires a trusted signature, with its folder's
// digest and without the bundle's own entries, and runs from where it was installed.
func TestSignedBundleInstallsAndRuns(t *testing.T) {
	pub, priv := bundletest.NewKey(t)
	dir := t.TempDir()
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Policy: &policy.Policy{Bundles: policy.Bundles{RequireSigned: true, TrustedKeys: []ed25519.PublicKey{pub}}}})
	ctx := context.Background()
	for id, args := range map[string]string{"word-count": `{"text":"to be or not to be"}`, "csv-stats": `{"csv":"a,b\n1,x\n3,y\n"}`} {
		t.Run(id, func(t *testing.T) {
			b, err := bundle.Read(bytes.NewReader(bundletest.Sign(t, bundletest.Pack(t, filepath.Join("..", "skills", id)), priv)), bundle.Limits{})
			must(t, err)
			want, err := (*registry.Digester)(nil).TreeDigest(filepath.Join("..", "skills", id))
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

// Install refuses what the policy's bundles field says to (policy TestBundlePolicy: the field
// parses strictly): under requireSigned, a plain package, an unsigned bundle and one signed by an
// untrusted key; without it, a bundle whose signature is broken.
func TestInstallFollowsTheBundlePolicy(t *testing.T) {
	pub, priv := bundletest.NewKey(t)
	_, otherPriv := bundletest.NewKey(t)
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
	unsigned := bundletest.Pack(t, filepath.Join("..", "skills", "word-count"))
	if err := install(unsigned); !errors.Is(err, bundle.ErrUntrusted) {
		t.Fatalf("unsigned bundle: %v", err)
	}
	if err := install(bundletest.Sign(t, unsigned, otherPriv)); !errors.Is(err, bundle.ErrUntrusted) {
		t.Fatalf("bundle by an untrusted key: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a refused install left %v", entries)
	}
	if err := install(bundletest.Sign(t, unsigned, priv)); err != nil {
		t.Fatal(err)
	}
	// Without requireSigned a plain package installs, and a bundle whose signature is broken
	// does not, whoever signed it.
	open := newRuntime(t, Config{SkillDirs: []string{t.TempDir()}})
	if _, err := open.Install(ctx, "greet", plain, InstallOptions{Who: testAdmin}); err != nil {
		t.Fatal(err)
	}
	broken := bundletest.Edit(bundletest.Entries(t, bundletest.Sign(t, unsigned, otherPriv)), bundle.ManifestPath, func(b []byte) []byte { return append(b, ' ') })
	pr := bundle.NewReader(bundle.Limits{})
	must(t, pr.AddTarGz(bytes.NewReader(bundletest.TarGz(t, broken...))))
	if _, err := open.Install(ctx, "word-count", pr.Files(), InstallOptions{Who: testAdmin}); !errors.Is(err, bundle.ErrInvalid) || !strings.Contains(err.Error(), "does not verify") {
		t.Fatalf("broken signature without requireSigned: %v", err)
	}
}
