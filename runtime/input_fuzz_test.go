package runtime

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"testing"

	"github.com/skillbox-dev/skillbox/bundle"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

// FuzzPrepareArgs: a caller's arguments, whatever they are, come out as a JSON object that passes
// the schema, or are refused as invalid_args — never a panic or another kind.
func FuzzPrepareArgs(f *testing.F) {
	schema, err := spec.CompileSchema(json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","maxLength":50},` +
		`"n":{"type":"integer","default":3},"tags":{"type":"array","items":{"type":"string"}}},"required":["text"],"additionalProperties":false}`))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{`{"text":"a"}`, `{"text":"a","n":"x"}`, `[]`, ``, `null`, `{"text":"a","extra":1}`,
		`{"text":` + string(bytes.Repeat([]byte("["), 100)), `{"text":"\ud800"}`, `{"text":"a"} {}`, `{"text":"a","n":1e400}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		out, err := schema.Prepare(args)
		if err != nil {
			var re *run.Error
			if !errors.As(err, &re) || re.Kind != run.KindInvalidArgs {
				t.Fatalf("Prepare(%q): %v, want invalid_args", args, err)
			}
			return
		}
		var obj map[string]any
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.UseNumber() // 1e400 is valid JSON, if no float64
		if dec.Decode(&obj) != nil {
			t.Fatalf("Prepare(%q) = %q, not a JSON object", args, out)
		}
		if _, err := schema.Prepare(out); err != nil {
			t.Fatalf("Prepare of its own output %q: %v", out, err)
		}
	})
}

// FuzzPackageReader: any upload, as a .tar.gz or as one part, is read within the package limits
// or refused with an error — never a panic, never more than the limits.
func FuzzPackageReader(f *testing.F) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(bytes.Repeat([]byte{0}, 2048))
	_ = zw.Close()
	f.Add(gz.Bytes(), "skill.json", []byte(`{"id":"x"}`))
	f.Add([]byte("\x1f\x8b\x08\x00garbage"), "resources/a.md", []byte("# a"))
	f.Add([]byte{}, "../escape", []byte("x"))
	l := bundle.Limits{MaxFiles: 8, MaxBytes: 1 << 16, MaxModuleBytes: 1 << 15, MaxFileBytes: 1 << 14, MaxRatio: 20}
	f.Fuzz(func(t *testing.T, tgz []byte, name string, part []byte) {
		p := bundle.NewReader(l)
		_ = p.AddTarGz(bytes.NewReader(tgz))
		q := bundle.NewReader(l)
		_ = q.Add(name, bytes.NewReader(part))
		for _, files := range []map[string][]byte{p.Files(), q.Files()} {
			if len(files) > l.MaxFiles {
				t.Fatalf("%d files read, more than %d", len(files), l.MaxFiles)
			}
			var total int64
			for _, data := range files {
				total += int64(len(data))
			}
			if total > l.MaxBytes {
				t.Fatalf("%d bytes read, more than %d", total, l.MaxBytes)
			}
		}
	})
}
