package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/skillbox-dev/skillbox/bundle"
	"github.com/skillbox-dev/skillbox/internal/safefile"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/version"
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
		m, err := bundle.Pack(ctx, pos[0], &buf)
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
		b, err := readBundle(pos[0], bundle.Limits{})
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
	summary: "install a bundle into the first --skills directory, after checking it against the policy, and record it as a version",
	usage:   "FILE",
	long: `Install a bundle as a skill folder in the first --skills directory. Its files must match its
manifest and its signatures verify; with bundles.requireSigned in the --policy file, it must be
signed by one of bundles.trustedKeys.

The bundle is recorded in the store (see --data-dir) as a version of the skill, by you (the OS
user), and installing a skill that is installed already replaces its folder: the versions
before it stay in the store, and the active one keeps serving until the new one is published.
A version that asks for more than the one before it (new hosts, secrets, env, files, higher
limits) is installed pending: it does not run until an admin approves it. install then prints
what it asks for beyond the version before it and exits with code 3 (not a failure).

With --no-store, nothing is recorded and installing a skill that is installed already is an
error.`,
	example: `  skillbox install word-count.skill.tgz
  skillbox approve word-count 3f2a9c1e   # when it was installed pending
  skillbox publish word-count 3f2a9c1e`,
	flags: func(fs *pflag.FlagSet, e *env) {
		storeFlags(fs, e, true)
	},
	run: func(ctx context.Context, e *env, pos []string) int {
		if len(pos) != 1 {
			return e.fail(exitUsage, "install takes one bundle file")
		}
		return e.withVersions(ctx, func(rt *runtime.Runtime, kept bool) int {
			b, err := readBundle(pos[0], rt.PackageLimits())
			if err != nil {
				return e.fail(exitFailed, "%v", err)
			}
			m := b.Manifest()
			// With a store, the folder it replaces is a version kept there, so nothing is lost.
			opts := runtime.InstallOptions{Face: run.FaceCLI, Who: operator(), Replace: kept}
			s, err := rt.Install(ctx, m.Skill, b.Package(), opts)
			if err != nil {
				return e.fail(exitFailed, "%s: %v", pos[0], err)
			}
			where := dirsOrDefault(e.skills)[0]
			if !kept {
				return e.report(fmt.Sprintf("installed %s %s into %s", s.ID(), s.Digest(), where),
					map[string]any{"skill": s.ID(), "digest": s.Digest()})
			}
			v, err := rt.SkillVersion(ctx, s.ID(), s.Digest())
			if err != nil {
				return e.fail(exitFailed, "installed %s into %s, but its version cannot be read: %v", s.ID(), where, err)
			}
			return e.installed(v, where)
		})
	},
}

// installed reports the version an install recorded: exitOK, or exitPending when it waits for
// an admin, with what it asks for beyond the version before it.
func (e *env) installed(v version.Version, where string) int {
	short := shortDigest(v.Digest)
	code := exitOK
	var b strings.Builder
	fmt.Fprintf(&b, "installed %s %s into %s", v.Skill, v.Digest, where)
	if v.Version != "" {
		fmt.Fprintf(&b, ", version %s", clean(v.Version))
	}
	fmt.Fprintf(&b, ": %s", v.Status)
	switch v.Status {
	case version.Pending:
		code = exitPending
		fmt.Fprintf(&b, ": it asks for more than the version before it, and does not run until an admin approves it:\n")
		for _, d := range v.Diff {
			fmt.Fprintf(&b, "  - %s\n", clean(d))
		}
		fmt.Fprintf(&b, "approve it with: skillbox approve %s %s (or reject it: skillbox reject %s %s)", v.Skill, short, v.Skill, short)
	case version.Draft:
		fmt.Fprintf(&b, "; publish it with: skillbox publish %s %s", v.Skill, short)
	}
	if e.json {
		if err := writeJSON(e.stdout, v); err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		return code
	}
	fmt.Fprintln(e.stdout, b.String())
	return code
}

var cmdKeygen = &command{
	summary: "make an ed25519 key pair for signing bundles: NAME.key (private, 0600) and NAME.pub",
	usage:   "NAME",
	run: func(ctx context.Context, e *env, pos []string) int {
		if len(pos) != 1 {
			return e.fail(exitUsage, "keygen takes one NAME: it writes NAME.key and NAME.pub")
		}
		pub, err := bundle.GenerateKey(pos[0])
		if err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		id := bundle.KeyID(pub)
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
		priv, err := bundle.LoadPrivateKey(e.key)
		if err != nil {
			return e.fail(exitFailed, "--key: %v", err)
		}
		b, err := readBundle(pos[0], bundle.Limits{})
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
		id := bundle.KeyID(priv.Public().(ed25519.PublicKey))
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
			pub, err := bundle.ParsePublicKey([]byte(p))
			if err != nil {
				if pub, err = bundle.LoadPublicKey(p); err != nil {
					return e.fail(exitUsage, "--pub %s: %v", p, err)
				}
			}
			trusted = append(trusted, pub)
		}
		b, err := readBundle(pos[0], bundle.Limits{})
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
func readBundle(path string, l bundle.Limits) (*bundle.Bundle, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	b, err := bundle.Read(f, l)
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
