package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBundleCommands: keygen, pack, sign, verify, install and run a real skill, through the CLI,
// and the refusals a person meets: an existing key, a missing trusted signature, a policy that
// requires one.
func TestBundleCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key, other, file := filepath.Join(dir, "pub"), filepath.Join(dir, "other"), filepath.Join(dir, "wc.tgz")
	expect{code: exitOK, stdout: []string{"wrote " + key + ".key"}}.verify(t, cli(t, "", "keygen", key))
	expect{code: exitFailed, stderr: []string{"pub.key exists"}}.verify(t, cli(t, "", "keygen", key))
	expect{code: exitOK}.verify(t, cli(t, "", "keygen", other))
	expect{code: exitOK, stdout: []string{"packed word-count sha256:"}}.verify(t, cli(t, "", "pack", "../../skills/word-count", "-o", file))
	expect{code: exitOK, stdout: []string{"unsigned"}}.verify(t, cli(t, "", "verify", file))
	expect{code: exitFailed, stderr: []string{"word-count is unsigned"}}.verify(t, cli(t, "", "verify", file, "--pub", key+".pub"))
	expect{code: exitOK, stdout: []string{"signed " + file}}.verify(t, cli(t, "", "sign", file, "--key", other+".key"))
	expect{code: exitFailed, stderr: []string{"which is not trusted"}}.verify(t, cli(t, "", "verify", file, "--pub", key+".pub"))
	policy := filepath.Join(dir, "policy.yaml")
	writeFile(t, policy, "bundles: {requireSigned: true, trustedKeys: [./pub.pub]}\n")
	skills := filepath.Join(dir, "skills")
	expect{code: exitFailed, stderr: []string{"not trusted"}}.verify(t, cli(t, "", "install", file, "--skills", skills, "--policy", policy))
	expect{code: exitOK, stdout: []string{"signed " + file}}.verify(t, cli(t, "", "sign", file, "--key", key+".key"))
	expect{code: exitOK, stdout: []string{"signed by trusted key"}}.verify(t, cli(t, "", "verify", file, "--pub", key+".pub"))
	expect{code: exitOK, stdout: []string{"installed word-count sha256:"}}.verify(t, cli(t, "", "install", file, "--skills", skills, "--policy", policy))
	warm("word-count") // the installed copy is the bundled module, with its limits
	expect{code: exitOK, stdout: []string{`"words": 2`}}.verify(t, cli(t, "", "run", "word-count", "--skills", skills, "--policy", policy, "--args", `{"text":"a b"}`))
	out := filepath.Join(dir, "out")
	expect{code: exitOK}.verify(t, cli(t, "", "unpack", file, "-o", out))
	if _, err := os.Stat(filepath.Join(out, "execute.wasm")); err != nil {
		t.Fatal(err)
	}
	expect{code: exitFailed, stderr: []string{"not empty"}}.verify(t, cli(t, "", "unpack", file, "-o", out))
}
