package bundle_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/bundle"
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

// TestBundleRoundTrip packs the first-party skills, checks the packing is deterministic, signs,
// verifies and unpacks them (runtime TestSignedBundleInstallsAndRuns installs them under a policy
// that requires a trusted signature, and runs them from where they were installed).
func TestBundleRoundTrip(t *testing.T) {
	pub, priv := newKey(t)
	for _, id := range []string{"word-count", "csv-stats"} {
		t.Run(id, func(t *testing.T) {
			data := packSkill(t, id)
			if again := packSkill(t, id); !bytes.Equal(data, again) {
				t.Fatal("packing the same tree twice gave different bytes")
			}
			signed := signBundle(t, data, priv)
			if again := signBundle(t, signed, priv); !bytes.Equal(signed, again) {
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

// TestBundleTampered: every change after packing or signing is refused, naming what failed.
func TestBundleTampered(t *testing.T) {
	pub, priv := newKey(t)
	other, otherPriv := newKey(t)
	signed := unpackEntries(t, signBundle(t, packSkill(t, "word-count"), priv))
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
		entries []entry
		is      error
		want    string
	}{
		{"file changed", edit(signed, "SKILL.md", flip), bundle.ErrInvalid, `"SKILL.md": changed`},
		{"file added", slices.Concat(signed, []entry{{name: "resources/extra.md", data: []byte("x")}}), bundle.ErrInvalid, `"resources/extra.md": not listed in the manifest (added)`},
		{"file removed", edit(signed, "SKILL.md", func([]byte) []byte { return nil }), bundle.ErrInvalid, `"SKILL.md": listed in the manifest but missing`},
		{"manifest digest changed", edit(signed, bundle.ManifestPath, manifest(func(m *bundle.Manifest) { m.Digest = "sha256:" + strings.Repeat("0", 64) })), bundle.ErrInvalid, "is not the tree digest"},
		{"manifest and file changed together", edit(edit(signed, "SKILL.md", func([]byte) []byte { return []byte("evil") }), bundle.ManifestPath, manifest(func(m *bundle.Manifest) {
			m.Files[0].Size, m.Files[0].SHA256 = 4, "8a3e2e6a5a8a4f4a2d0b3e6e5aa4ff6a3d0d53e8ae6cfa0b87f4b0f3d5d1a8a5"
		})), bundle.ErrInvalid, ""},
		{"signature changed", edit(signed, sigName, flip), bundle.ErrInvalid, sigName + `": the signature by key ` + bundle.KeyID(pub) + " does not verify"},
		{"manifest unknown field", edit(signed, bundle.ManifestPath, func(b []byte) []byte { return []byte(`{"format":"skillbox-bundle/v1","extra":1}`) }), bundle.ErrInvalid, `unknown field "extra"`},
		{"unknown bundle entry", slices.Concat(signed, []entry{{name: ".bundle/hook.sh", data: []byte("x")}}), bundle.ErrInvalid, `".bundle/hook.sh": unknown bundle entry`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := readAndVerify(tarGz(t, c.entries...), []ed25519.PublicKey{pub})
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %v with %q", err, c.is, c.want)
			}
		})
	}
	// Signed by a key not trusted, and not signed at all.
	byOther := signBundle(t, packSkill(t, "word-count"), otherPriv)
	if _, err := readAndVerify(byOther, []ed25519.PublicKey{pub}); !errors.Is(err, bundle.ErrUntrusted) || !strings.Contains(err.Error(), bundle.KeyID(other)+", which is not trusted") {
		t.Fatalf("untrusted key: %v", err)
	}
	if _, err := readAndVerify(packSkill(t, "word-count"), []ed25519.PublicKey{pub}); !errors.Is(err, bundle.ErrUntrusted) || !strings.Contains(err.Error(), "unsigned") {
		t.Fatalf("unsigned: %v", err)
	}
	// The untampered bundle verifies (the cases above fail for their change, not the helper).
	if _, err := readAndVerify(tarGz(t, signed...), []ed25519.PublicKey{pub}); err != nil {
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
		{"bomb", tarGz(t, entry{name: "resources/zeros", data: make([]byte, 15<<20)}), bundle.Limits{}, bundle.ErrTooLarge, []string{`"resources/zeros"`, "maxRatio", "decompression bomb"}},
		{"too many entries", tarGz(t, entry{name: "a.md"}, entry{name: "b.md"}, entry{name: "c.md"}, entry{name: "d.md"}, entry{name: "e.md"}), small, bundle.ErrTooLarge, []string{`"e.md"`, "more than 4 entries", "maxFiles"}},
		{"huge entry", tarGz(t, entry{name: "resources/big", data: make([]byte, 2<<10)}), small, bundle.ErrTooLarge, []string{`"resources/big"`, "1024", "maxFileBytes"}},
		{"too many bytes", tarGz(t, entry{name: "resources/1", data: make([]byte, 1000)}, entry{name: "resources/2", data: make([]byte, 1000)}, entry{name: "resources/3", data: make([]byte, 1000)}), bundle.Limits{MaxFileBytes: 1 << 10, MaxBytes: 2500}, bundle.ErrTooLarge, []string{`"resources/3"`, "more than 2500 bytes", "maxBytes"}},
		{"path traversal", tarGz(t, entry{name: "../evil", data: []byte("x")}), bundle.Limits{}, nil, []string{`../evil: not a clean relative path`}},
		{"absolute path", tarGz(t, entry{name: "/etc/cron.d/x", data: []byte("x")}), bundle.Limits{}, nil, []string{`/etc/cron.d/x: not a clean relative path`}},
		{"symlink", tarGz(t, entry{name: "SKILL.md", typ: tar.TypeSymlink}), bundle.Limits{}, nil, []string{"SKILL.md: only regular files"}},
		{"device", tarGz(t, entry{name: "dev", typ: tar.TypeChar}), bundle.Limits{}, nil, []string{"dev: only regular files"}},
		{"duplicate", tarGz(t, entry{name: "SKILL.md", data: []byte("a")}, entry{name: "SKILL.md", data: []byte("b")}), bundle.Limits{}, nil, []string{"SKILL.md: in the archive twice"}},
		{"not a bundle", tarGz(t, entry{name: "SKILL.md", data: []byte("a")}), bundle.Limits{}, bundle.ErrInvalid, []string{bundle.ManifestPath, "missing"}},
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
