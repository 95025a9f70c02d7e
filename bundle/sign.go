package bundle

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"github.com/skillbox-dev/skillbox/internal/safefile"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
)

// Signatures are embedded in the bundle, one entry per key (.bundle/signatures/<key hex>.sig, the
// 64 bytes of an ed25519 signature), rather than detached beside it: a bundle is then one file to
// copy, upload over HTTP or install, and cannot lose its signature on the way. Signing rewrites
// the archive with the same manifest and files, so the signed message does not change, and
// signing twice with one key gives the same bytes (ed25519 is deterministic).
//
// The message signed is the manifest's digest with a context, so a signature over a bundle can
// never be taken for a signature over anything else:
//
//	skillbox-bundle/v1 manifest sha256:<hex of sha256(.bundle/manifest.json)>
//
// (no newline). Keys are files standard tools read: the private key PKCS#8 PEM, the public key
// PKIX PEM, as `openssl genpkey -algorithm ed25519` writes them.

// ErrUntrusted is a bundle refused by trust: unsigned, or signed by no trusted key, when a
// signature by a trusted key is required (the policy's bundles.requireSigned, or verify --pub).
var ErrUntrusted = errors.New("bundle not signed by a trusted key")

// signedMessage is what a signature of a bundle with this manifest digest signs.
func signedMessage(manifestDigest string) []byte {
	return []byte(Format + " manifest " + manifestDigest)
}

// GenerateKey writes a new ed25519 key pair: name.key (the private key, mode 0600) and name.pub.
// It never overwrites a file.
func GenerateKey(name string) (ed25519.PublicKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	privDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, err
	}
	for _, p := range []string{name + ".key", name + ".pub"} {
		if _, err := os.Lstat(p); err == nil {
			return nil, fmt.Errorf("keygen: %s exists: choose another name (a key is never overwritten)", p)
		}
	}
	if err := writeNew(name+".key", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: privDER}), 0o600); err != nil {
		return nil, err
	}
	if err := writeNew(name+".pub", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644); err != nil {
		os.Remove(name + ".key")
		return nil, err
	}
	return pub, nil
}

// writeNew creates path with data, failing if it exists.
func writeNew(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("keygen: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// maxKeyFileBytes bounds a key file.
const maxKeyFileBytes = 16 << 10

// LoadPrivateKey reads an ed25519 private key, PKCS#8 PEM.
func LoadPrivateKey(path string) (ed25519.PrivateKey, error) {
	data, err := safefile.ReadFile(path, maxKeyFileBytes)
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(data)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("%s: not a PEM private key (write one with skillbox keygen NAME)", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: a %T, not an ed25519 key (write one with skillbox keygen NAME)", path, k)
	}
	return priv, nil
}

// ParsePublicKey reads an ed25519 public key: PKIX PEM (a .pub file), or the base64 of its 32
// bytes (what keygen prints, and what a policy's trustedKeys may list).
func ParsePublicKey(data []byte) (ed25519.PublicKey, error) {
	if blk, _ := pem.Decode(data); blk != nil {
		if blk.Type != "PUBLIC KEY" {
			return nil, fmt.Errorf("a PEM %q, not a PUBLIC KEY", blk.Type)
		}
		k, err := x509.ParsePKIXPublicKey(blk.Bytes)
		if err != nil {
			return nil, err
		}
		pub, ok := k.(ed25519.PublicKey)
		if !ok {
			return nil, fmt.Errorf("a %T, not an ed25519 key", k)
		}
		return pub, nil
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, errors.New("neither a PEM public key nor the base64 of 32 bytes")
	}
	return ed25519.PublicKey(raw), nil
}

// LoadPublicKey reads an ed25519 public key file (see ParsePublicKey).
func LoadPublicKey(path string) (ed25519.PublicKey, error) {
	data, err := safefile.ReadFile(path, maxKeyFileBytes)
	if err != nil {
		return nil, err
	}
	pub, err := ParsePublicKey(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return pub, nil
}

// KeyID is how a key is named in a bundle and in messages: the base64 of its 32 bytes.
func KeyID(pub ed25519.PublicKey) string { return base64.StdEncoding.EncodeToString(pub) }

// parseKeyHex reads a signature entry's key name.
func parseKeyHex(s string) (ed25519.PublicKey, error) {
	raw, err := hex.DecodeString(s)
	if err != nil || len(raw) != ed25519.PublicKeySize || hex.EncodeToString(raw) != s {
		return nil, errors.New("not 64 lower-case hex digits")
	}
	return ed25519.PublicKey(raw), nil
}

// Sign adds (or replaces) priv's signature of the bundle and writes the signed bundle to w.
func (b *Bundle) Sign(priv ed25519.PrivateKey, w io.Writer) error {
	pub := priv.Public().(ed25519.PublicKey)
	sigs := make(map[string][]byte, len(b.sigs)+1)
	for k, v := range b.sigs {
		sigs[k] = v
	}
	sigs[hex.EncodeToString(pub)] = ed25519.Sign(priv, signedMessage(b.ManifestDigest()))
	if len(sigs) > maxBundleSignatures {
		return fmt.Errorf("sign: the bundle has %d signatures already, the most a bundle may carry", maxBundleSignatures)
	}
	signed := *b
	signed.sigs = sigs
	return signed.write(w)
}

// Verified is what [Bundle.Verify] found of the signatures: the keys (KeyID) of the good ones,
// those of them that are trusted, and the good ones by keys not trusted.
type Verified struct {
	Digest         string
	ManifestDigest string
	Trusted        []string
	Untrusted      []string
}

// Verify checks every signature of the bundle against the key it names: one that does not verify
// means the manifest or the signature changed after signing, and the bundle is refused, whoever
// signed it. Then, when requireTrusted, at least one signature must be by a key of trusted.
//
// # Errors
//
// A *Error (errors.Is ErrInvalid) naming the signature that fails; an error matching
// ErrUntrusted that says whether the bundle is unsigned or by which keys it is signed.
func (b *Bundle) Verify(trusted []ed25519.PublicKey, requireTrusted bool) (*Verified, error) {
	v := &Verified{Digest: b.manifest.Digest, ManifestDigest: b.ManifestDigest()}
	msg := signedMessage(v.ManifestDigest)
	for _, key := range slices.Sorted(maps.Keys(b.sigs)) {
		pub, _ := parseKeyHex(key) // checked when read
		name := SigDir + key + ".sig"
		if !ed25519.Verify(pub, msg, b.sigs[key]) {
			return nil, &Error{Entry: name, Msg: fmt.Sprintf("the signature by key %s does not verify: the manifest or the signature was changed after signing", KeyID(pub)),
				Hint: "get the bundle again from its publisher"}
		}
		if slices.ContainsFunc(trusted, func(t ed25519.PublicKey) bool { return t.Equal(pub) }) {
			v.Trusted = append(v.Trusted, KeyID(pub))
		} else {
			v.Untrusted = append(v.Untrusted, KeyID(pub))
		}
	}
	if requireTrusted && len(v.Trusted) == 0 {
		if len(v.Untrusted) == 0 {
			return nil, fmt.Errorf("%w: %s is unsigned; sign it with skillbox sign FILE --key NAME.key, by a key the installer trusts", ErrUntrusted, b.manifest.Skill)
		}
		return nil, fmt.Errorf("%w: %s is signed only by key %s, which is not trusted; trust it (bundles.trustedKeys in the policy, or verify --pub KEY.pub) if it is its publisher's",
			ErrUntrusted, b.manifest.Skill, strings.Join(v.Untrusted, ", key "))
	}
	return v, nil
}
