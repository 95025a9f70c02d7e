package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/skillbox-dev/skillbox/internal/safefile"
	"github.com/skillbox-dev/skillbox/runtime"
)

// The bundle commands: a skill as one signed file (see runtime/bundle.go and docs/bundles.md).
// They only translate: reading, checking and the policy's trust are the runtime's.

var cmdPack = &command{
	summary: "write a skill directory as a bundle: a deterministic .tar.gz with a manifest of its files' sha256",
	usage:   "DIR -o FILE",
	example: `  skillbox pack skills/word-count -o word-count.skill.tgz`,
	flags: func(fs *pflag.FlagSet, e *env) {
		fs.StringVarP(&e.output, "output", "o", "", "write the bundle to `FILE`")
	},
	run: func(ctx context.Context, e *env, pos []string) int {
		if len(pos) != 1 || e.output == "" {
			return e.fail(exitUsage, "pack takes one skill directory and -o FILE")
		}
		var buf bytes.Buffer
		m, err := runtime.PackBundle(ctx, pos[0], &buf)
		if err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		if err := safefile.WriteAtomic(e.output, buf.Bytes(), 0o644); err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		return e.report(fmt.Sprintf("packed %s %s (%d files) into %s", m.Skill, m.Digest, len(m.Files), e.output),
			map[string]any{"skill": m.Skill, "digest": m.Digest, "files": len(m.Files), "bundle": e.output})
	},
}

var cmdUnpack = &command{
	summary: "check a bundle and write its files into a new directory",
	usage:   "FILE -o DIR",
	flags: func(fs *pflag.FlagSet, e *env) {
		fs.StringVarP(&e.output, "output", "o", "", "write the files into `DIR` (new or empty)")
	},
	run: func(ctx context.Context, e *env, pos []string) int {
		if len(pos) != 1 || e.output == "" {
			return e.fail(exitUsage, "unpack takes one bundle and -o DIR")
		}
		b, err := readBundle(pos[0], runtime.PackageLimits{})
		if err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		if _, err := b.Verify(nil, false); err != nil {
			return e.fail(exitFailed, "%s: %v", pos[0], err)
		}
		if err := b.Unpack(e.output); err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		m := b.Manifest()
		return e.report(fmt.Sprintf("unpacked %s %s into %s", m.Skill, m.Digest, e.output),
			map[string]any{"skill": m.Skill, "digest": m.Digest, "dir": e.output})
	},
}

var cmdInstall = &command{
	summary: "install a bundle into the first --skills directory, after checking it against the policy (bundles)",
	usage:   "FILE",
	long: `Install a bundle as a skill folder in the first --skills directory. Its files must match its
manifest and its signatures verify; with bundles.requireSigned in the --policy file, it must be
signed by one of bundles.trustedKeys. An installed skill of the same id is an error.`,
	flags: func(fs *pflag.FlagSet, e *env) {
		storeFlags(fs, e, true)
	},
	run: func(ctx context.Context, e *env, pos []string) int {
		if len(pos) != 1 {
			return e.fail(exitUsage, "install takes one bundle file")
		}
		h, code := e.openStore(ctx, false)
		if code != exitOK {
			return code
		}
		defer h.Close()
		rt, err := e.runtime(ctx)
		if err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		defer rt.Close(context.Background())
		b, err := readBundle(pos[0], rt.PackageLimits())
		if err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		m := b.Manifest()
		s, err := rt.Install(ctx, m.Skill, b.Package(), runtime.InstallOptions{Face: runtime.FaceCLI})
		if err != nil {
			return e.fail(exitFailed, "%s: %v", pos[0], err)
		}
		return e.report(fmt.Sprintf("installed %s %s into %s", s.ID(), s.Digest(), dirsOrDefault(e.skills)[0]),
			map[string]any{"skill": s.ID(), "digest": s.Digest()})
	},
}

var cmdKeygen = &command{
	summary: "make an ed25519 key pair for signing bundles: NAME.key (private, 0600) and NAME.pub",
	usage:   "NAME",
	run: func(ctx context.Context, e *env, pos []string) int {
		if len(pos) != 1 {
			return e.fail(exitUsage, "keygen takes one NAME: it writes NAME.key and NAME.pub")
		}
		pub, err := runtime.GenerateKey(pos[0])
		if err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		id := runtime.KeyID(pub)
		return e.report(fmt.Sprintf("wrote %s.key (keep it private) and %s.pub; trust it with bundles: {trustedKeys: [%q]}", pos[0], pos[0], id),
			map[string]any{"key": pos[0] + ".key", "pub": pos[0] + ".pub", "publicKey": id})
	},
}

var cmdSign = &command{
	summary: "sign a bundle with an ed25519 key: the signature is added inside the bundle",
	usage:   "FILE --key NAME.key",
	flags: func(fs *pflag.FlagSet, e *env) {
		fs.StringVar(&e.key, "key", "", "the private key `FILE` (skillbox keygen)")
	},
	run: func(ctx context.Context, e *env, pos []string) int {
		if len(pos) != 1 || e.key == "" {
			return e.fail(exitUsage, "sign takes one bundle and --key NAME.key")
		}
		priv, err := runtime.LoadPrivateKey(e.key)
		if err != nil {
			return e.fail(exitFailed, "--key: %v", err)
		}
		b, err := readBundle(pos[0], runtime.PackageLimits{})
		if err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		if _, err := b.Verify(nil, false); err != nil {
			return e.fail(exitFailed, "%s: %v", pos[0], err)
		}
		var buf bytes.Buffer
		if err := b.Sign(priv, &buf); err != nil {
			return e.fail(exitFailed, "%s: %v", pos[0], err)
		}
		if err := safefile.WriteAtomic(pos[0], buf.Bytes(), 0o644); err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		id := runtime.KeyID(priv.Public().(ed25519.PublicKey))
		return e.report(fmt.Sprintf("signed %s with key %s", pos[0], id), map[string]any{"bundle": pos[0], "publicKey": id})
	},
}

var cmdVerify = &command{
	summary: "check a bundle: its files against its manifest, its signatures, and with --pub that a trusted key signed it",
	usage:   "FILE [--pub KEY.pub ...]",
	flags: func(fs *pflag.FlagSet, e *env) {
		fs.StringArrayVar(&e.pubs, "pub", nil, "require a signature by this public key `FILE` (or base64 key); repeat for more")
	},
	run: func(ctx context.Context, e *env, pos []string) int {
		if len(pos) != 1 {
			return e.fail(exitUsage, "verify takes one bundle file")
		}
		var trusted []ed25519.PublicKey
		for _, p := range e.pubs {
			pub, err := runtime.ParsePublicKey([]byte(p))
			if err != nil {
				if pub, err = runtime.LoadPublicKey(p); err != nil {
					return e.fail(exitUsage, "--pub %s: %v", p, err)
				}
			}
			trusted = append(trusted, pub)
		}
		b, err := readBundle(pos[0], runtime.PackageLimits{})
		if err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		v, err := b.Verify(trusted, len(trusted) > 0)
		if err != nil {
			return e.fail(exitFailed, "%s: %v", pos[0], err)
		}
		m := b.Manifest()
		msg := fmt.Sprintf("ok: %s %s, %d files match the manifest", m.Skill, m.Digest, len(m.Files))
		switch {
		case len(v.Trusted) > 0:
			msg += "; signed by trusted key " + strings.Join(v.Trusted, ", ")
		case len(v.Untrusted) > 0:
			msg += "; signed by key " + strings.Join(v.Untrusted, ", ") + " (not checked against a trusted key: give --pub)"
		default:
			msg += "; unsigned"
		}
		return e.report(msg, map[string]any{"skill": m.Skill, "digest": m.Digest, "manifestDigest": v.ManifestDigest,
			"trusted": v.Trusted, "untrusted": v.Untrusted})
	},
}

// readBundle opens and reads a bundle file within l.
func readBundle(path string, l runtime.PackageLimits) (*runtime.Bundle, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	b, err := runtime.ReadBundle(f, l)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// report prints msg, or with --json v, and returns exitOK.
func (e *env) report(msg string, v any) int {
	if e.json {
		if err := writeJSON(e.stdout, v); err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		return exitOK
	}
	fmt.Fprintln(e.stdout, clean(msg))
	return exitOK
}
