package policy_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/bundle"
	"github.com/skillbox-dev/skillbox/policy"
)

// TestBundlePolicy: the policy field parses strictly (runtime TestInstallFollowsTheBundlePolicy:
// Install refuses what it says to).
func TestBundlePolicy(t *testing.T) {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keyDir := t.TempDir()
	pem := filepath.Join(keyDir, "pub")
	if _, err := bundle.GenerateKey(pem); err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.GenerateKey(pem); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("keygen over an existing key: %v", err)
	}
	if st, err := os.Stat(pem + ".key"); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("private key mode: %v %v", st.Mode(), err)
	}
	for _, c := range []struct{ yaml, want string }{
		{"bundles: {requireSigned: true}", "bundles.trustedKeys: is empty"},
		{"bundles: {requireSigned: true, trustedKeys: [nope.pub]}", "bundles.trustedKeys[0]"},
		{"bundles: {requiresigned: true}", "bundles.requiresigned"},
		{"bundles: {requireSigned: true, trustedKeys: [./pub.pub, " + bundle.KeyID(pub) + "]}", ""},
	} {
		p, err := policy.Parse(filepath.Join(keyDir, "policy.yaml"), []byte(c.yaml), os.LookupEnv)
		switch {
		case c.want == "" && (err != nil || len(p.Bundles.TrustedKeys) != 2 || !p.Bundles.RequireSigned):
			t.Fatalf("%s: %v", c.yaml, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Fatalf("%s: got %v, want %q", c.yaml, err, c.want)
		}
	}
}
