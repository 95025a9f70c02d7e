package server

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/bundle"
	"github.com/skillbox-dev/skillbox/bundle/bundletest"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/runtime"
)

// TestUploadBundle: a bundle uploaded as application/gzip is checked by the runtime like one
// installed from the CLI: under bundles.requireSigned an unsigned bundle and a plain upload are
// 403 untrusted_bundle, a tampered one 422 invalid_bundle, a signed one installs and runs.
func TestUploadBundle(t *testing.T) {
	t.Parallel()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cfg := runtime.Config{Policy: &policy.Policy{Bundles: policy.Bundles{RequireSigned: true, TrustedKeys: []ed25519.PublicKey{pub}}}}
	env := newEnvRuntime(t, Options{}, cfg, t.TempDir())
	url := env.ts.URL + "/v1/skills"
	var unsigned, signed bytes.Buffer
	if _, err := bundle.Pack(context.Background(), filepath.Join("..", "skills", "word-count"), &unsigned); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Read(bytes.NewReader(unsigned.Bytes()), bundle.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Sign(priv, &signed); err != nil {
		t.Fatal(err)
	}
	gz := func(data []byte) reply {
		return send(t, "POST", url, bytes.NewReader(data), "Content-Type", "application/gzip")
	}
	if r := gz(unsigned.Bytes()); r.status != http.StatusForbidden || !strings.Contains(string(r.body), "untrusted_bundle") {
		t.Fatalf("unsigned bundle: %s", r)
	}
	if r := upload(t, "POST", url, greeterPkg(t, "1.0.0", "echo"), nil); r.status != http.StatusForbidden || !strings.Contains(string(r.body), "bundles.requireSigned") {
		t.Fatalf("plain upload: %s", r)
	}
	files := b.Package()
	files["SKILL.md"] = append(files["SKILL.md"], '!')
	var entries []bundletest.Entry
	for name, data := range files {
		entries = append(entries, bundletest.Entry{Name: name, Data: data})
	}
	if r := uploadTar(t, "POST", url, entries); r.status != http.StatusUnprocessableEntity || !strings.Contains(string(r.body), `\"SKILL.md\": changed`) {
		t.Fatalf("tampered bundle: %s", r)
	}
	if r := gz(signed.Bytes()); r.status != http.StatusCreated {
		t.Fatalf("signed bundle: %s", r)
	}
	res := runResult(t, post(t, url+"/word-count/runs", `{"args":{"text":"a b a"}}`))
	if !res.Success || !strings.Contains(string(res.Result), `"words":3`) {
		t.Fatalf("run %+v", res)
	}
}
