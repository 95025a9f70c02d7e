package spec_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

func TestParseManifestReportsEveryProblem(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		data   string
		expect []string // each must appear in one problem, in this order
	}{
		{
			name: "unknown fields with hints, bad id, missing description",
			file: "skills/x/skill.json",
			data: `{"id":"Bad_ID","name":"x","descripton":"typo","timeout":5}`,
			expect: []string{
				`skills/x/skill.json: descripton: unknown field (did you mean "description"?)`,
				`skills/x/skill.json: timeout: unknown field`,
				`skills/x/skill.json: description: is required`,
				`skills/x/skill.json: id: "Bad_ID" is not a valid skill id`,
			},
		},
		{
			name: "bad parameters and permissions",
			file: "skill.json",
			data: `{"id":"a","name":"a","description":"d",
				"parameters":{"n":{"type":"int","required":"yes"},"s":{"type":"string","default":3},"r":{"type":"string","required":true,"default":"x"}},
				"permissions":{"network":["http://x.com/path"],"env":["1BAD"],"files":[{"path":"relative","access":"write"}],
				  "secrets":[{"name":"K","header":"Authorization","format":"Bearer"}]},
				"limits":{"memoryMiB":99999,"timeoutMs":-1,"maxFetches":1.5}}`,
			expect: []string{
				`parameters.n.type: "int" is not a type (did you mean "integer"? the types are`,
				"parameters.n.required: must be a boolean",
				"parameters.r.default: a required parameter cannot have a default",
				"parameters.s.default: the default 3 does not match: got number, want string (make the default",
				"permissions.network[0]",
				`permissions.env[0]: "1BAD" is not a valid variable name`,
				"permissions.secrets[0].hosts: is required",
				"permissions.secrets[0].format: must contain {value}",
				`permissions.files[0].access: "write" is not an access mode`,
				`permissions.files[0].path: "relative" must be an absolute path`,
				"limits.timeoutMs: must be between 1 and",
				"limits.memoryMiB: must be between 1 and 4096, not 99999",
				"limits.maxFetches: must be a whole number",
			},
		},
		{name: "not JSON", file: "skill.json", data: `{"id":`, expect: []string{"skill.json:1:7: the file ends inside a value"}},
		{name: "empty", file: "skill.json", data: ``, expect: []string{"the file is empty"}},
		{name: "top level list", file: "skill.json", data: `[]`, expect: []string{"the top level must be an object, not a list"}},
		{name: "schema that is not an object schema", file: "skill.json", data: `{"id":"a","name":"a","description":"d","parameters":{"type":"string"}}`,
			expect: []string{`parameters.type: must be "object"`}},
		{name: "schema with a remote ref", file: "skill.json", data: `{"id":"a","name":"a","description":"d","parameters":{"type":"object","properties":{"x":{"$ref":"file:///etc/passwd"}}}}`,
			expect: []string{"schemas may not load external references"}},
		{name: "reserved mount", file: "skill.json", data: `{"id":"a","name":"a","description":"d","permissions":{"files":[{"path":"/skill/x"}]}}`,
			expect: []string{"reserved for the skill's own directory"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := spec.ParseManifest(tc.file, []byte(tc.data))
			var se *spec.SkillError
			if !errors.As(err, &se) || !errors.Is(err, spec.ErrInvalidSkill) {
				t.Fatalf("got %v, want a *SkillError", err)
			}
			var problems []string
			for _, p := range se.Problems {
				problems = append(problems, p.Error())
			}
			all := strings.Join(problems, "\n")
			for _, want := range tc.expect {
				if !strings.Contains(all, want) {
					t.Errorf("no problem contains %q; problems:\n%s", want, all)
				}
			}
			if len(problems) < len(tc.expect) {
				t.Errorf("%d problems, want at least %d", len(problems), len(tc.expect))
			}
			var me *spec.ManifestError
			if !errors.As(err, &me) || me.Path != tc.file {
				t.Errorf("errors.As ManifestError: %v", me)
			}
		})
	}
}

func TestParametersNormaliseToOneSchema(t *testing.T) {
	mapForm := `{"id":"a","name":"a","description":"d","parameters":{
		"prompt":{"type":"string","required":true,"description":"What to draw"},
		"size":{"type":"string","default":"1024x1024","enum":["512x512","1024x1024"]}}}`
	full := `{"id":"a","name":"a","description":"d","parameters":{"type":"object",
		"properties":{"prompt":{"type":"string","description":"What to draw"},
		"size":{"type":"string","default":"1024x1024","enum":["512x512","1024x1024"]}},
		"required":["prompt"],"additionalProperties":false}}`
	yml := "id: a\nname: a\ndescription: d\nparameters:\n  prompt: {type: string, required: true, description: What to draw}\n  size: {type: string, default: 1024x1024, enum: [512x512, 1024x1024]}\n"
	for name, src := range map[string][2]string{"map form": {"skill.json", mapForm}, "JSON Schema": {"skill.json", full}, "YAML": {"skill.yaml", yml}} {
		t.Run(name, func(t *testing.T) {
			m, err := spec.ParseManifest(src[0], []byte(src[1]))
			if err != nil {
				t.Fatal(err)
			}
			s, err := spec.CompileSchema(m.Parameters)
			if err != nil {
				t.Fatal(err)
			}
			tests := []struct {
				args, want, fail string
			}{
				{args: `{"prompt":"a cat"}`, want: `{"prompt":"a cat","size":"1024x1024"}`},
				{args: `{"prompt":"a cat","size":"512x512"}`, want: `{"prompt":"a cat","size":"512x512"}`},
				{args: `{}`, fail: `arguments: missing property 'prompt'`},
				{args: ``, fail: `missing property 'prompt'`},
				{args: `{"prompt":"x","size":"1x1"}`, fail: `argument "size": value must be one of`},
				{args: `{"prompt":"x","colour":"red"}`, fail: `additional properties 'colour' not allowed`},
				{args: `{"prompt":5}`, fail: `argument "prompt": got number, want string`},
				{args: `[1]`, fail: `arguments must be a JSON object, not a list`},
				{args: `{"prompt":`, fail: `arguments are not valid JSON`},
			}
			for _, tc := range tests {
				out, err := s.Prepare([]byte(tc.args))
				if tc.fail != "" {
					if !errors.Is(err, run.ErrInvalidArgs) || !strings.Contains(err.Error(), tc.fail) {
						t.Errorf("%s: got %v, want invalid_args containing %q", tc.args, err, tc.fail)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", tc.args, err)
					continue
				}
				var got, want any
				_ = json.Unmarshal(out, &got)
				_ = json.Unmarshal([]byte(tc.want), &want)
				if !jsonEqual(got, want) {
					t.Errorf("%s: got %s, want %s", tc.args, out, tc.want)
				}
			}
		})
	}
}

func TestManifestDefaults(t *testing.T) {
	m, err := spec.ParseManifest("skill.json", []byte(`{"id":"a","name":"a","description":"d"}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.Entrypoint != "execute" {
		t.Errorf("entrypoint %q", m.Entrypoint)
	}
	s, _ := spec.CompileSchema(m.Parameters)
	if _, err := s.Prepare([]byte(`{"x":1}`)); !errors.Is(err, run.ErrInvalidArgs) {
		t.Errorf("a skill without parameters must refuse arguments: %v", err)
	}
	g := (&policy.Policy{}).Grant(m, "")
	if g.Limits != spec.DefaultLimits {
		t.Errorf("limits %+v", g.Limits)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"id":"a","name":"a","description":"d","parameters":{"x":{"type":"string"}}}`), false)
	f.Add([]byte(`{"id":"a","name":"a","description":"d","parameters":{"type":"object","properties":{"x":{"$ref":"#/$defs/y"}},"$defs":{"y":{"type":"integer"}}}}`), false)
	f.Add([]byte("id: a\nname: a\ndescription: d\npermissions: {network: ['*.x.com'], files: [{path: /w}]}\n"), true)
	f.Add([]byte(deepManifest(40)), false)
	f.Add([]byte(deepManifestYAML(40)), true)
	f.Add([]byte("id: a\nname: a\ndescription: d\nresult:\n  "+strings.ReplaceAll(strings.TrimSpace(compactAliasBomb), "\n", "\n  ")+"\n"), true)
	f.Fuzz(func(t *testing.T, data []byte, yaml bool) {
		name := "skill.json"
		if yaml {
			name = "skill.yaml"
		}
		m, err := spec.ParseManifest(name, data)
		if err != nil {
			var se *spec.SkillError
			if !errors.As(err, &se) || len(se.Problems) == 0 {
				t.Fatalf("error without problems: %v", err)
			}
			return
		}
		// An accepted manifest always yields a compilable schema and a grant.
		if _, err := spec.CompileSchema(m.Parameters); err != nil {
			t.Fatalf("accepted manifest with a bad schema: %v", err)
		}
		_ = (&policy.Policy{}).Grant(m, "")
	})
}

// yaml.v3 compares every pair of keys in a mapping: a small file of repeated keys must be refused
// before it can hang a registry scan.
func TestYAMLKeyBombs(t *testing.T) {
	dup := "id: a\nname: a\ndescription: d\n" + strings.Repeat("x: 1\n", 300)
	_, err := spec.ParseManifest("skill.yaml", []byte(dup))
	if err == nil || !strings.Contains(err.Error(), `key "x" already defined at line 4`) {
		t.Fatalf("duplicate keys: %v", err)
	}
	bomb := "id: a\nname: a\ndescription: d\n" + strings.Repeat("x: 1\n", 13000)
	if _, err := spec.ParseManifest("skill.yaml", []byte(bomb)); err == nil || !strings.Contains(err.Error(), "more than 512 keys") {
		t.Fatalf("13,000 keys: %v", err)
	}
	var many strings.Builder
	many.WriteString("id: a\nname: a\ndescription: d\nparameters:\n")
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&many, "  p%d: {type: string}\n", i)
	}
	if _, err := spec.ParseManifest("skill.yaml", []byte(many.String())); err == nil || !strings.Contains(err.Error(), "more than 512 keys") {
		t.Fatalf("huge mapping: %v", err)
	}
	if _, err := policy.Parse("p.yaml", []byte(strings.Repeat("network: []\n", 50)), nil); err == nil || !strings.Contains(err.Error(), "already defined") {
		t.Fatalf("policy: %v", err)
	}
}
