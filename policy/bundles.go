package policy

import (
	"crypto/ed25519"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/skillbox-dev/skillbox/bundle"
	"github.com/skillbox-dev/skillbox/spec"
)

// Bundles is the operator's word on installing skills. The zero value installs a bundle
// whose contents match its manifest and whose signatures, if any, verify, and installs plain
// packages (folders, uploads) as before.
type Bundles struct {
	// RequireSigned refuses every install that is not a bundle signed by a key of TrustedKeys:
	// an unsigned bundle, a bundle signed by other keys, and a plain package (an upload of files,
	// a skill an agent writes) alike, on every face. Skills already in the skill directories
	// are not installs and keep loading.
	RequireSigned bool
	// TrustedKeys are the publishers' ed25519 public keys.
	TrustedKeys []ed25519.PublicKey
}

// bundles reads the policy's bundles field: requireSigned, and trustedKeys as the base64 of a
// key's 32 bytes or the path of a .pub file (relative to the policy's directory).
func bundles(c *spec.Checker, obj spec.Doc, base string) Bundles {
	c.Known(obj, "bundles", "requireSigned", "trustedKeys")
	bp := Bundles{RequireSigned: c.Bool(obj, "bundles", "requireSigned")}
	for i, k := range c.StrList(obj, "bundles", "trustedKeys") {
		field := fmt.Sprintf("bundles.trustedKeys[%d]", i)
		pub, err := bundle.ParsePublicKey([]byte(k))
		if err != nil && !strings.ContainsAny(k, "\n") {
			p := k
			if !filepath.IsAbs(p) {
				p = filepath.Join(base, p)
			}
			pub, err = bundle.LoadPublicKey(p)
		}
		if err != nil {
			c.Add(field, "list the base64 key skillbox keygen prints, or the path of its NAME.pub", "%v", err)
			continue
		}
		bp.TrustedKeys = append(bp.TrustedKeys, pub)
	}
	if bp.RequireSigned && len(bp.TrustedKeys) == 0 {
		c.Add("bundles.trustedKeys", "list the public key of each publisher whose bundles may be installed", "is empty, so requireSigned would refuse every install")
	}
	return bp
}
