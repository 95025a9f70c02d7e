// Package bundletest makes skill packages and bundles for tests: archives as a hostile or careless
// packer could send them, signing keys, and signed bundles of the repository's own skills. The
// bundle package's tests and the runtime's (which install what it reads) share it.
package bundletest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"testing"

	"github.com/skillbox-dev/skillbox/bundle"
)

// Entry is one tar entry of a hand-made archive; Type 0 is a regular file. Link is a link's
// target ("" for a symlink: /etc/passwd).
type Entry struct {
	Name string
	Data []byte
	Type byte
	Link string
}

// TarGz builds an archive of entries as given: what a hostile or careless packer could send.
func TarGz(t testing.TB, entries ...Entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e.Name, Mode: 0o644, Size: int64(len(e.Data)), Typeflag: e.Type}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		switch h.Linkname = e.Link; h.Typeflag {
		case tar.TypeSymlink:
			if h.Linkname == "" {
				h.Linkname = "/etc/passwd"
			}
			h.Size = 0
		case tar.TypeDir:
			h.Mode, h.Size = 0o755, 0
		case tar.TypeChar, tar.TypeLink:
			h.Size = 0
		}
		must(t, tw.WriteHeader(h))
		if _, err := tw.Write(e.Data); err != nil {
			t.Fatal(err)
		}
	}
	must(t, tw.Close())
	must(t, gz.Close())
	return buf.Bytes()
}

// Entries reads an archive's (a bundle's) raw entries, in order.
func Entries(t testing.TB, data []byte) []Entry {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(data))
	must(t, err)
	tr := tar.NewReader(gz)
	var out []Entry
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		var b bytes.Buffer
		_, _ = b.ReadFrom(tr)
		out = append(out, Entry{Name: h.Name, Data: b.Bytes()})
	}
	return out
}

// Edit returns entries with f applied to the one named name (removed when f returns nil).
func Edit(entries []Entry, name string, f func([]byte) []byte) []Entry {
	var out []Entry
	for _, e := range entries {
		if e.Name == name {
			if e.Data = f(bytes.Clone(e.Data)); e.Data == nil {
				continue
			}
		}
		out = append(out, e)
	}
	return out
}

// Pack packs the skill directory dir and returns the bundle's bytes.
func Pack(t testing.TB, dir string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := bundle.Pack(context.Background(), dir, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// NewKey is a fresh signing key.
func NewKey(t testing.TB) (ed25519.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	must(t, err)
	return pub, priv
}

// Sign returns the bundle data signed by priv as well.
func Sign(t testing.TB, data []byte, priv ed25519.PrivateKey) []byte {
	t.Helper()
	b, err := bundle.Read(bytes.NewReader(data), bundle.Limits{})
	must(t, err)
	var out bytes.Buffer
	must(t, b.Sign(priv, &out))
	return out.Bytes()
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
