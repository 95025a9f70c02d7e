package bundle_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillbox-dev/skillbox/bundle"
	"github.com/skillbox-dev/skillbox/internal/interleave"
)

// BenchmarkBundleVerify is what an installer pays to check a bundle before it installs it:
// bundle.Read (inflate, untar, every file's sha256 against the manifest, the tree digest) then
// Verify, unsigned ("verify") and signed by a trusted key that it must be ("verify+sig"). The
// floor is the sha256 of the files' bytes alone, the least any check of their contents costs,
// measured in the same rounds; the ratios say what the archive and the manifest add to it.
//
//	go test -run '^$' -bench 'BundleVerify' -benchtime 20x ./bundle/
//
// Two skills: skills/word-count as it ships (a Go module of a few MB), and one near the size
// bound of a package: word-count's files plus incompressible resources up to 150 of the
// default 160 MiB (a module's worth at most 16 MiB a file).
func BenchmarkBundleVerify(b *testing.B) {
	b.Run("word-count", func(b *testing.B) {
		benchVerify(b, "../skills/word-count")
	})
	b.Run("150MiB", func(b *testing.B) {
		dir := filepath.Join(b.TempDir(), "word-count")
		if err := os.CopyFS(dir, os.DirFS("../skills/word-count")); err != nil {
			b.Fatal(err)
		}
		rng := rand.NewChaCha8([32]byte{1})
		var total int64
		_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, _ error) error {
			if info, err := d.Info(); err == nil && info.Mode().IsRegular() {
				total += info.Size()
			}
			return nil
		})
		const target, per = 150 << 20, 15 << 20
		for i := 0; total < target; i++ {
			data := make([]byte, min(per, target-total))
			_, _ = rng.Read(data)
			p := filepath.Join(dir, "resources", "blob-"+string(rune('a'+i))+".bin")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				b.Fatal(err)
			}
			total += int64(len(data))
		}
		benchVerify(b, dir)
	})
}

// benchVerify packs the skill at dir, signs a copy, and times checking each against the floor.
func benchVerify(b *testing.B, dir string) {
	var unsigned bytes.Buffer
	m, err := bundle.Pack(context.Background(), dir, &unsigned)
	if err != nil {
		b.Fatal(err)
	}
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		b.Fatal(err)
	}
	bun, err := bundle.Read(bytes.NewReader(unsigned.Bytes()), bundle.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	var signed bytes.Buffer
	if err := bun.Sign(priv, &signed); err != nil {
		b.Fatal(err)
	}
	files := bun.Files()
	var size int64
	for _, f := range files {
		size += int64(len(f))
	}
	check := func(data []byte, trusted []ed25519.PublicKey) func() {
		return func() {
			bb, err := bundle.Read(bytes.NewReader(data), bundle.Limits{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := bb.Verify(trusted, len(trusted) > 0); err != nil {
				b.Fatal(err)
			}
		}
	}
	floor := func() {
		for _, f := range files {
			_ = sha256.Sum256(f)
		}
	}
	b.Logf("%s %s: %d files, %.1f MiB, bundle %.1f MiB", m.Skill, m.Digest[:19], len(files), float64(size)/(1<<20), float64(signed.Len())/(1<<20))
	p50 := interleave.Run(b,
		interleave.Contender{Name: "sha256", F: floor},
		interleave.Contender{Name: "verify", F: check(unsigned.Bytes(), nil)},
		interleave.Contender{Name: "verify+sig", F: check(signed.Bytes(), []ed25519.PublicKey{pub})},
	)
	// After Run: its ResetTimer drops the metrics reported before it. (ns/op is the three
	// contenders' sum; the p50s are each one's.)
	b.ReportMetric(float64(size)/p50["verify+sig"]*1e3, "verify+sig-MB/s")
	b.ReportMetric(float64(signed.Len())/(1<<20), "bundle-MiB")
	b.ReportMetric(p50["verify"]/p50["sha256"], "verify/sha256")
	b.ReportMetric(p50["verify+sig"]/p50["sha256"], "verify+sig/sha256")
}
