package bundle_test

import (
	"archive/tar"
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/bundle"
	"github.com/skillbox-dev/skillbox/bundle/bundletest"
)

// TestBundleRoundTrip packs the first-party skills, checks the packing is deterministic, signs,
// verifies and unpacks them (runtime TestSignedBundleInstallsAndRuns installs them under a policy
// that requires a trusted signature, and runs them from where they were installed).
func TestBundleRoundTrip(t *testing.T) {
	pub, priv := bundletest.NewKey(t)
	for _, id := range []string{"word-count", "csv-stats"} {
		t.Run(id, func(t *testing.T) {
			data := bundletest.Pack(t, filepath.Join("..", "skills", id))
			if again := bundletest.Pack(t, filepath.Join("..", "skills", id)); !bytes.Equal(data, again) {
				t.Fatal("packing the same tree twice gave different bytes")
			}
			signed := bundletest.Sign(t, data, priv)
			if again := bundletest.Sign(t, signed, priv); !bytes.Equal(signed, again) {
				t.Fatal("signing twice with one key gave different bytes")
			}
			b, err := bundle.Read(bytes.NewReader(signed), bundle.Limits{})
			must(t, err)
			v, err := b.Verify([]ed25519.PublicKey{pub}, true)
			if err != nil || len(v.Trusted) != 1 || v.Trusted[0] != bundle.KeyID(pub) {
				t.Fatalf("verify: %v %+v", err, v)
			}
			// The bundle's digest is the one the registry gives the skill's folder.
			folder, err := bundle.Walk(filepath.Join("..", "skills", id), nil, false)
			must(t, err)
			want := folder.Digest
			if b.Manifest().Digest != want {
				t.Fatalf("bundle digest %s, folder digest %s", b.Manifest().Digest, want)
			}
			out := filepath.Join(t.TempDir(), id)
			must(t, b.Unpack(out))
			if got, _ := bundle.Walk(out, nil, false); got.Digest != want {
				t.Fatalf("unpacked digest %s, want %s", got.Digest, want)
			}
		})
	}
}

// TestBundleTampered: every change after packing or signing is refused, naming what failed.
func TestBundleTampered(t *testing.T) {
	pub, priv := bundletest.NewKey(t)
	other, otherPriv := bundletest.NewKey(t)
	signed := bundletest.Entries(t, bundletest.Sign(t, bundletest.Pack(t, filepath.Join("..", "skills", "word-count")), priv))
	sigName := bundle.SigDir + hex.EncodeToString(pub) + ".sig"
	flip := func(b []byte) []byte { b[len(b)/2] ^= 1; return b }
	manifest := func(f func(m *bundle.Manifest)) func([]byte) []byte {
		return func(b []byte) []byte {
			var m bundle.Manifest
			must(t, json.Unmarshal(b, &m))
			f(&m)
			out, _ := json.Marshal(m)
			return out
		}
	}
	cases := []struct {
		name    string
		entries []bundletest.Entry
		is      error
		want    string
	}{
		{"file changed", bundletest.Edit(signed, "SKILL.md", flip), bundle.ErrInvalid, `"SKILL.md": changed`},
		{"file added", slices.Concat(signed, []bundletest.Entry{{Name: "resources/extra.md", Data: []byte("x")}}), bundle.ErrInvalid, `"resources/extra.md": not listed in the manifest (added)`},
		{"file removed", bundletest.Edit(signed, "SKILL.md", func([]byte) []byte { return nil }), bundle.ErrInvalid, `"SKILL.md": listed in the manifest but missing`},
		{"manifest digest changed", bundletest.Edit(signed, bundle.ManifestPath, manifest(func(m *bundle.Manifest) { m.Digest = "sha256:" + strings.Repeat("0", 64) })), bundle.ErrInvalid, "is not the tree digest"},
		{"manifest and file changed together", bundletest.Edit(bundletest.Edit(signed, "SKILL.md", func([]byte) []byte { return []byte("evil") }), bundle.ManifestPath, manifest(func(m *bundle.Manifest) {
			m.Files[0].Size, m.Files[0].SHA256 = 4, "8a3e2e6a5a8a4f4a2d0b3e6e5aa4ff6a3d0d53e8ae6cfa0b87f4b0f3d5d1a8a5"
		})), bundle.ErrInvalid, ""},
		{"signature changed", bundletest.Edit(signed, sigName, flip), bundle.ErrInvalid, sigName + `": the signature by key ` + bundle.KeyID(pub) + " does not verify"},
		{"manifest unknown field", bundletest.Edit(signed, bundle.ManifestPath, func(b []byte) []byte { return []byte(`{"format":"skillbox-bundle/v1","extra":1}`) }), bundle.ErrInvalid, `unknown field "extra"`},
		{"unknown bundle entry", slices.Concat(signed, []bundletest.Entry{{Name: ".bundle/hook.sh", Data: []byte("x")}}), bundle.ErrInvalid, `".bundle/hook.sh": unknown bundle entry`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := readAndVerify(bundletest.TarGz(t, c.entries...), []ed25519.PublicKey{pub})
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %v with %q", err, c.is, c.want)
			}
		})
	}
	// Signed by a key not trusted, and not signed at all.
	byOther := bundletest.Sign(t, bundletest.Pack(t, filepath.Join("..", "skills", "word-count")), otherPriv)
	if _, err := readAndVerify(byOther, []ed25519.PublicKey{pub}); !errors.Is(err, bundle.ErrUntrusted) || !strings.Contains(err.Error(), bundle.KeyID(other)+", which is not trusted") {
		t.Fatalf("untrusted key: %v", err)
	}
	if _, err := readAndVerify(bundletest.Pack(t, filepath.Join("..", "skills", "word-count")), []ed25519.PublicKey{pub}); !errors.Is(err, bundle.ErrUntrusted) || !strings.Contains(err.Error(), "unsigned") {
		t.Fatalf("unsigned: %v", err)
	}
	// The untampered bundle verifies (the cases above fail for their change, not the helper).
	if _, err := readAndVerify(bundletest.TarGz(t, signed...), []ed25519.PublicKey{pub}); err != nil {
		t.Fatal(err)
	}
}

func readAndVerify(data []byte, trusted []ed25519.PublicKey) (*bundle.Verified, error) {
	b, err := bundle.Read(bytes.NewReader(data), bundle.Limits{})
	if err != nil {
		return nil, err
	}
	return b.Verify(trusted, true)
}

// TestBundleBounds: a bundle is untrusted input; every bound is enforced while it is read and the
// refusal names the entry and the bound.
func TestBundleBounds(t *testing.T) {
	small := bundle.Limits{MaxFiles: 4, MaxFileBytes: 1 << 10, MaxBytes: 4 << 10}
	cases := []struct {
		name string
		data []byte
		l    bundle.Limits
		is   error
		want []string
	}{
		{"bomb", bundletest.TarGz(t, bundletest.Entry{Name: "resources/zeros", Data: make([]byte, 15<<20)}), bundle.Limits{}, bundle.ErrTooLarge, []string{`"resources/zeros"`, "maxRatio", "decompression bomb"}},
		{"too many entries", bundletest.TarGz(t, bundletest.Entry{Name: "a.md"}, bundletest.Entry{Name: "b.md"}, bundletest.Entry{Name: "c.md"}, bundletest.Entry{Name: "d.md"}, bundletest.Entry{Name: "e.md"}), small, bundle.ErrTooLarge, []string{`"e.md"`, "more than 4 entries", "maxFiles"}},
		{"huge entry", bundletest.TarGz(t, bundletest.Entry{Name: "resources/big", Data: make([]byte, 2<<10)}), small, bundle.ErrTooLarge, []string{`"resources/big"`, "1024", "maxFileBytes"}},
		{"too many bytes", bundletest.TarGz(t, bundletest.Entry{Name: "resources/1", Data: make([]byte, 1000)}, bundletest.Entry{Name: "resources/2", Data: make([]byte, 1000)}, bundletest.Entry{Name: "resources/3", Data: make([]byte, 1000)}), bundle.Limits{MaxFileBytes: 1 << 10, MaxBytes: 2500}, bundle.ErrTooLarge, []string{`"resources/3"`, "more than 2500 bytes", "maxBytes"}},
		{"path traversal", bundletest.TarGz(t, bundletest.Entry{Name: "../evil", Data: []byte("x")}), bundle.Limits{}, nil, []string{`../evil: not a clean relative path`}},
		{"absolute path", bundletest.TarGz(t, bundletest.Entry{Name: "/etc/cron.d/x", Data: []byte("x")}), bundle.Limits{}, nil, []string{`/etc/cron.d/x: not a clean relative path`}},
		{"symlink", bundletest.TarGz(t, bundletest.Entry{Name: "SKILL.md", Type: tar.TypeSymlink}), bundle.Limits{}, nil, []string{"SKILL.md: only regular files"}},
		{"device", bundletest.TarGz(t, bundletest.Entry{Name: "dev", Type: tar.TypeChar}), bundle.Limits{}, nil, []string{"dev: only regular files"}},
		{"duplicate", bundletest.TarGz(t, bundletest.Entry{Name: "SKILL.md", Data: []byte("a")}, bundletest.Entry{Name: "SKILL.md", Data: []byte("b")}), bundle.Limits{}, nil, []string{"SKILL.md: in the archive twice"}},
		{"not a bundle", bundletest.TarGz(t, bundletest.Entry{Name: "SKILL.md", Data: []byte("a")}), bundle.Limits{}, bundle.ErrInvalid, []string{bundle.ManifestPath, "missing"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := bundle.Read(bytes.NewReader(c.data), c.l)
			if err == nil || (c.is != nil && !errors.Is(err, c.is)) {
				t.Fatalf("got %v, want %v", err, c.is)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("%v: does not say %q", err, w)
				}
			}
		})
	}
}
