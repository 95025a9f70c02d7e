package bundle

import (
	"crypto/ed25519"
	"fmt"
	"slices"
	"strings"
)

// CheckInstall is the one place that decides whether a package may be installed, given the policy's
// trusted keys and whether it requires a signature: a bundle must be intact and its signatures
// verify; under requireSigned it must be a bundle signed by a trusted key. files is the package as
// uploaded; the bundle's own entries are taken out of what is returned, which is what Install
// writes.
func CheckInstall(id string, files map[string][]byte, trusted []ed25519.PublicKey, requireSigned bool) (map[string][]byte, *Bundle, error) {
	b, isBundle, err := FromFiles(files)
	if err != nil {
		return nil, nil, fmt.Errorf("install %q: %w", id, err)
	}
	if !isBundle {
		if requireSigned {
			return nil, nil, fmt.Errorf("install %q: %w: the policy (bundles.requireSigned) installs only bundles signed by a trusted key: pack the skill (skillbox pack), sign it (skillbox sign) and install the bundle", id, ErrUntrusted)
		}
		return files, nil, nil
	}
	if b.manifest.Skill != id {
		return nil, nil, fmt.Errorf("install %q: %w", id, &Error{Entry: ManifestPath, Msg: fmt.Sprintf("skill: the bundle is of %q, not %q", b.manifest.Skill, id)})
	}
	if _, err := b.Verify(trusted, requireSigned); err != nil {
		return nil, nil, fmt.Errorf("install %q: %w", id, err)
	}
	return b.files, b, nil
}

// packageDirs are the directories a skill package may hold: resources for its instructions, a
// script skill's vendored packages, and the programs a SKILL.md names.
var packageDirs = []string{"resources", "lib", "scripts"}

// PackageDir returns the package directory the package path name is under ("lib"), or "".
func PackageDir(name string) string {
	top, _, ok := strings.Cut(name, "/")
	if ok && slices.Contains(packageDirs, top) {
		return top
	}
	return ""
}
