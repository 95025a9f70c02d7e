package runtime_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/bundle"
	"github.com/skillbox-dev/skillbox/internal/testcache"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
)

// A publisher packs a skill directory into a bundle and signs it; a runtime whose policy
// requires signed bundles installs it only when a key it trusts signed it.
func ExampleRuntime_Install_signedBundle() {
	ctx := context.Background()
	dir := exampleDir()
	defer os.RemoveAll(dir)

	// The publisher's side: a key pair (publisher.key, publisher.pub), and the skill packed.
	pub, err := bundle.GenerateKey(filepath.Join(dir, "publisher"))
	check(err)
	priv, err := bundle.LoadPrivateKey(filepath.Join(dir, "publisher.key"))
	check(err)
	writeSkill(dir, "hello", map[string]string{
		"skill.json":   `{"id": "hello", "name": "Hello", "description": "Says hi.", "version": "1.0.0"}`,
		"execute.wasm": wasmModule("hello"),
	})
	var packed bytes.Buffer
	manifest, err := bundle.Pack(ctx, filepath.Join(dir, "hello"), &packed) // the id is the directory's name
	check(err)
	unsigned, err := bundle.Read(bytes.NewReader(packed.Bytes()), bundle.Limits{}) // read and checked
	check(err)
	var signed bytes.Buffer
	check(unsigned.Sign(priv, &signed)) // the bundle with its signature embedded

	// The operator's side: a runtime that installs only bundles signed by a trusted key.
	sh, err := runtime.NewShared(ctx, runtime.SharedConfig{CacheDir: testcache.Dir()})
	check(err)
	defer sh.Close(ctx)
	rt, err := runtime.New(ctx, runtime.Config{
		SkillDirs:         []string{filepath.Join(dir, "skills")},
		Policy:            &policy.Policy{Bundles: policy.Bundles{RequireSigned: true, TrustedKeys: []ed25519.PublicKey{pub}}},
		Shared:            sh,
		NoBackgroundCheck: true,
	})
	check(err)
	defer rt.Close(ctx)

	ops := access.Local("ops") // the operator, who installs (an author at least)
	_, err = rt.Install(ctx, "hello", unsigned.Package(), runtime.InstallOptions{Who: ops})
	fmt.Println("unsigned, untrusted:", errors.Is(err, bundle.ErrUntrusted))
	fmt.Println(err)

	b, err := bundle.Read(&signed, bundle.Limits{}) // an upload, a file: read within the limits
	check(err)
	s, err := rt.Install(ctx, "hello", b.Package(), runtime.InstallOptions{Who: ops})
	check(err)
	fmt.Println("signed, installed:", s.ID(), s.Version(), s.Digest() == manifest.Digest)
	res, err := rt.Run(ctx, run.Request{Skill: "hello", Who: ops})
	check(err)
	fmt.Println(string(res.Result))
	// Output:
	// unsigned, untrusted: true
	// install "hello": bundle not signed by a trusted key: hello is unsigned; sign it with skillbox sign FILE --key NAME.key, by a key the installer trusts
	// signed, installed: hello 1.0.0 true
	// {"greeting":"hi"}
}
