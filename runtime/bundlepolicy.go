package runtime

import (
	"crypto/ed25519"
	"fmt"
	"github.com/skillbox-dev/skillbox/spec"
	"path/filepath"
	"strings"
)

// BundlePolicy is the operator's word on installing skills. The zero value installs a bundle
// whose contents match its manifest and whose signatures, if any, verify, and installs plain
// packages (folders, uploads) as before.
type BundlePolicy struct {
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
func bundles(c *spec.Checker, obj spec.Doc, base string) BundlePolicy {
	c.Known(obj, "bundles", "requireSigned", "trustedKeys")
	bp := BundlePolicy{RequireSigned: c.Bool(obj, "bundles", "requireSigned")}
	for i, k := range c.StrList(obj, "bundles", "trustedKeys") {
		field := fmt.Sprintf("bundles.trustedKeys[%d]", i)
		pub, err := ParsePublicKey([]byte(k))
		if err != nil && !strings.ContainsAny(k, "\n") {
			p := k
			if !filepath.IsAbs(p) {
				p = filepath.Join(base, p)
			}
			pub, err = LoadPublicKey(p)
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

// checkInstall is the one place that decides whether a package may be installed under the
// policy: a bundle must be intact and its signatures verify; under RequireSigned it must be a
// bundle signed by a trusted key. files is the package as uploaded; the bundle's own entries are
// taken out of what is returned, which is what Install writes.
func (bp BundlePolicy) checkInstall(id string, files map[string][]byte) (map[string][]byte, *Bundle, error) {
	b, isBundle, err := bundleFromFiles(files)
	if err != nil {
		return nil, nil, fmt.Errorf("install %q: %w", id, err)
	}
	if !isBundle {
		if bp.RequireSigned {
			return nil, nil, fmt.Errorf("install %q: %w: the policy (bundles.requireSigned) installs only bundles signed by a trusted key: pack the skill (skillbox pack), sign it (skillbox sign) and install the bundle", id, ErrBundleUntrusted)
		}
		return files, nil, nil
	}
	if b.manifest.Skill != id {
		return nil, nil, fmt.Errorf("install %q: %w", id, &BundleError{Entry: BundleManifestPath, Msg: fmt.Sprintf("skill: the bundle is of %q, not %q", b.manifest.Skill, id)})
	}
	if _, err := b.Verify(bp.TrustedKeys, bp.RequireSigned); err != nil {
		return nil, nil, fmt.Errorf("install %q: %w", id, err)
	}
	return b.files, b, nil
}
