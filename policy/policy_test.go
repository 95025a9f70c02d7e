package policy_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/spec"
)

func TestParsePolicy(t *testing.T) {
	env := map[string]string{"HOST_TZ": "Europe/Oslo", "KEY": "s3cret"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	p, err := policy.Parse("/etc/skillbox/policy.yaml", []byte(`
network: ["api.example.com", "*.wikipedia.org"]
allowNetworks: ["127.0.0.1", "10.0.0.0/8"]
env:
  LANG: en_US.UTF-8
  TZ: {fromHost: HOST_TZ}
  MISSING: {fromHost: NOT_SET}
secrets:
  API_KEY: {fromHost: KEY, hosts: [api.example.com]}
files:
  - path: /workspace
    hostPath: ./ws/{skill}
    access: read-write
  - {path: /data, hostPath: /srv/data}
limits: {timeoutMs: 5000, memoryMiB: 32}
`), lookup)
	if err != nil {
		t.Fatal(err)
	}
	if p.Env["LANG"] != "en_US.UTF-8" || p.Env["TZ"] != "Europe/Oslo" {
		t.Errorf("env %v", p.Env)
	}
	if _, ok := p.Env["MISSING"]; ok {
		t.Errorf("an unset fromHost variable must not be granted empty")
	}
	if p.Secrets["API_KEY"].Value != "s3cret" || p.Secrets["API_KEY"].Hosts[0] != "api.example.com" {
		t.Errorf("secrets")
	}
	if p.Files[0].HostPath != "/etc/skillbox/ws/{skill}" || p.Files[1].Access != spec.ReadOnly {
		t.Errorf("files %+v", p.Files)
	}
	if len(p.AllowNetworks) != 2 || p.AllowNetworks[0].String() != "127.0.0.1/32" {
		t.Errorf("allowNetworks %v", p.AllowNetworks)
	}
	if c := p.Ceilings(); c.TimeoutMs != 5000 || c.MemoryMiB != 32 || c.MaxFetches != spec.DefaultLimits.MaxFetches {
		t.Errorf("ceilings %+v", c)
	}
}

func TestParsePolicyReportsEveryProblem(t *testing.T) {
	_, err := policy.Parse("p.yaml", []byte(`
netwrok: []
network: ["http://bad/"]
allowNetworks: ["not-a-cidr"]
env: {"1X": a, Y: 3}
secrets: {NOHOSTS: {value: x}, BOTH: {value: x, fromHost: Y, hosts: [a.com]}}
files: [{path: rel, hostPath: x, access: rw}]
limits: {memoryMiB: 0}
`), func(string) (string, bool) { return "", false })
	pe, ok := err.(*policy.Error)
	if !ok {
		t.Fatalf("got %v", err)
	}
	all := strings.Join(pe.Problems, "\n")
	for _, want := range []string{`netwrok: unknown field (did you mean "network"?)`, "network[0]", "allowNetworks[0]",
		`env.1X: "1X" is not a valid name`, "env.Y: must be a string or an object", `files[0].access: "rw" is not an access mode`,
		`files[0].path: "rel" must be an absolute path`, "secrets.NOHOSTS.hosts: is required", "secrets.BOTH: has both value and fromHost", "limits.memoryMiB: must be between 1 and 4096, not 0"} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %q in:\n%s", want, all)
		}
	}
	if !strings.HasPrefix(err.Error(), "policy p.yaml: ") {
		t.Errorf("error %q does not name the file", err)
	}
}

func TestGrantIsTheIntersection(t *testing.T) {
	m, err := spec.ParseManifest("skill.json", []byte(`{"id":"img","name":"i","description":"d",
		"permissions":{
		  "network":["api.openai.com","evil.com","cdn.example.com:8443"],
		  "env":["LANG","HOME"],
		  "secrets":[{"name":"OPENAI_API_KEY","hosts":["api.openai.com","evil.com"],"header":"Authorization","format":"Bearer {value}"},
		             {"name":"OTHER","hosts":["api.openai.com"],"header":"X-Other"}],
		  "files":[{"path":"/workspace/images","access":"read-write"},{"path":"/data/x","access":"read-write"},{"path":"/etc","access":"read-only"}]},
		"limits":{"memoryMiB":512}}`))
	if err != nil {
		t.Fatal(err)
	}
	p := &policy.Policy{
		Network: []string{"*.openai.com", "*.example.com"},
		Env:     map[string]string{"LANG": "C"},
		Secrets: map[string]policy.Secret{"OPENAI_API_KEY": {Value: "sk-1", Hosts: []string{"api.openai.com"}}},
		Files: []policy.Mount{{Path: "/workspace", HostPath: "/srv/ws/{skill}", Access: spec.ReadWrite},
			{Path: "/data", HostPath: "/srv/data", Access: spec.ReadOnly}},
	}
	g := p.Grant(m, "/skills/img")
	if strings.Join(g.Network, ",") != "api.openai.com,cdn.example.com:8443" {
		t.Errorf("network %v", g.Network)
	}
	if strings.Join(g.Env, ",") != "LANG" || g.Host().Env["LANG"] != "C" {
		t.Errorf("env %v", g.Env)
	}
	if strings.Join(g.Secrets, ",") != "OPENAI_API_KEY" || g.Host().Secrets[0].Value != "Bearer sk-1" || len(g.Host().Secrets[0].Hosts) != 1 {
		t.Errorf("secrets %v %+v", g.Secrets, g.Host().Secrets)
	}
	wantFiles := []policy.GrantedMount{{Path: "/workspace/images", Access: spec.ReadWrite}, {Path: "/data/x", Access: spec.ReadOnly}, {Path: policy.SkillMount, Access: spec.ReadOnly}}
	if len(g.Files) != 3 || g.Files[0] != wantFiles[0] || g.Files[1] != wantFiles[1] || g.Files[2] != wantFiles[2] {
		t.Errorf("files %+v", g.Files)
	}
	if g.Host().Mounts[0].Dir != "/srv/ws/img/images" || !g.Host().Mounts[0].Writable || g.Host().Mounts[1].Writable {
		t.Errorf("mounts %+v", g.Host().Mounts)
	}
	if g.Limits.MemoryMiB != spec.DefaultLimits.MemoryMiB {
		t.Errorf("memory %d", g.Limits.MemoryMiB)
	}
	refused := strings.Join(g.Refused, "\n")
	for _, want := range []string{"network evil.com", "env HOME", "secret OPENAI_API_KEY for evil.com", "secret OTHER: the policy has no such secret",
		"files /data/x: read-write asked, the policy allows read-only", "files /etc: no policy mount contains it", "limits.memoryMiB: 512 asked, the policy caps it at 64"} {
		if !strings.Contains(refused, want) {
			t.Errorf("refused lacks %q:\n%s", want, refused)
		}
	}
	// The default policy grants nothing at all but the skill's own directory.
	d := (&policy.Policy{}).Grant(m, "/skills/img")
	if len(d.Network)+len(d.Env)+len(d.Secrets) != 0 || len(d.Files) != 1 || d.Files[0].Path != policy.SkillMount {
		t.Errorf("default grant %+v", d)
	}
}

func FuzzParsePolicy(f *testing.F) {
	f.Add([]byte("network: [a.com]\nallowNetworks: [127.0.0.1/32]\nenv: {A: b, C: {fromHost: D}}\nfiles: [{path: /w, hostPath: x}]\nlimits: {timeoutMs: 5}\n"))
	f.Add([]byte(`{"secrets":{"K":{"fromHost":"K"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := policy.Parse("p.yaml", data, func(string) (string, bool) { return "v", true })
		if err != nil {
			if pe, ok := err.(*policy.Error); !ok || len(pe.Problems) == 0 {
				t.Fatalf("error without problems: %v", err)
			}
			return
		}
		// Whatever it accepted, the ceilings are never zero (zero would mean "nothing", and a
		// policy that parses must not silently forbid every run).
		c := p.Ceilings()
		for _, f := range c.Fields() {
			if *f.Value <= 0 {
				t.Fatalf("ceiling %s is %d", f.Name, *f.Value)
			}
		}
	})
}

// A manifest cannot send a policy's secret to a host the policy did not name for it, even one the
// policy's network list allows.
func TestSecretsGoOnlyToTheirPolicyHosts(t *testing.T) {
	m, err := spec.ParseManifest("skill.json", []byte(`{"id":"x","name":"x","description":"d","permissions":{
		"network":["api.openai.com","attacker.github.io"],
		"secrets":[{"name":"KEY","hosts":["api.openai.com","attacker.github.io"],"header":"X-Steal"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	p := &policy.Policy{Network: []string{"*"}, Secrets: map[string]policy.Secret{"KEY": {Value: "v", Hosts: []string{"*.openai.com"}}}}
	g := p.Grant(m, "")
	if len(g.Host().Secrets) != 1 || g.Host().Secrets[0].Hosts.String() != "api.openai.com" {
		t.Fatalf("secret hosts %+v", g.Host().Secrets)
	}
	if !strings.Contains(strings.Join(g.Refused, "\n"), "secret KEY for attacker.github.io: the policy sends this secret only to *.openai.com") {
		t.Fatalf("refused %q", g.Refused)
	}
}

// A read-only policy mount nested in a read-write one stays read-only for a skill granted the outer.
func TestNestedPolicyMountKeepsItsAccess(t *testing.T) {
	m, err := spec.ParseManifest("skill.json", []byte(`{"id":"x","name":"x","description":"d","permissions":{
		"files":[{"path":"/workspace","access":"read-write"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	p := &policy.Policy{Files: []policy.Mount{{Path: "/workspace", HostPath: "/srv/ws", Access: spec.ReadWrite},
		{Path: "/workspace/reference", HostPath: "/srv/ref", Access: spec.ReadOnly}}}
	g := p.Grant(m, "")
	if len(g.Host().Mounts) != 2 || g.Host().Mounts[1].Path != "/workspace/reference" || g.Host().Mounts[1].Writable || g.Host().Mounts[1].Dir != "/srv/ref" {
		t.Fatalf("mounts %+v", g.Host().Mounts)
	}
}

// Run history keeps arguments only when the policy says so, and the field is checked.
func TestPolicyRunsRecordArguments(t *testing.T) {
	p, err := policy.Parse("policy.yaml", []byte("runs: {recordArguments: true}\n"), nil)
	if err != nil || !p.Runs.RecordArguments {
		t.Fatalf("runs.recordArguments: %+v, %v", p, err)
	}
	if p, err := policy.Parse("policy.yaml", []byte("network: []\n"), nil); err != nil || p.Runs.RecordArguments {
		t.Fatalf("default: %+v, %v", p, err)
	}
	_, err = policy.Parse("policy.yaml", []byte("runs: {recordArgs: true}\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "recordArgs") {
		t.Fatalf("unknown field: %v", err)
	}
}

// What a stored record keeps of a result and its logs: both, within 64 KiB, by default; the
// policy turns either off and moves the bound, up to 16 MiB.
func TestPolicyRunsRecordResults(t *testing.T) {
	p, err := policy.Parse("policy.yaml", []byte("runs: {omitResults: true, omitLogs: true, maxRecordBytes: 1024}\n"), nil)
	if err != nil || !p.Runs.OmitResults || !p.Runs.OmitLogs || p.Runs.RecordBytes() != 1024 {
		t.Fatalf("runs: %+v, %v", p.Runs, err)
	}
	if (policy.Runs{}).RecordBytes() != policy.DefaultMaxRecordBytes || policy.DefaultMaxRecordBytes != 64<<10 {
		t.Errorf("the default is %d", (policy.Runs{}).RecordBytes())
	}
	for _, bad := range []string{"0", "16777217", "big"} {
		if _, err := policy.Parse("policy.yaml", []byte("runs: {maxRecordBytes: "+bad+"}\n"), nil); err == nil || !strings.Contains(err.Error(), "maxRecordBytes") {
			t.Errorf("maxRecordBytes %s: %v", bad, err)
		}
	}
}

// One bound on a run's arguments, for every face: the policy's runs.maxArgsBytes (4 MiB by
// default, at most 64 MiB), which Config.MaxArgsBytes (skillbox --max-args-bytes) replaces; the
// runtime's refusal is runtime TestRunRefusesArgsPastMaxArgsBytes.
func TestMaxArgsBytes(t *testing.T) {
	p, err := policy.Parse("policy.yaml", []byte("runs: {maxArgsBytes: 1024}\n"), nil)
	if err != nil || p.Runs.ArgsBytes() != 1024 {
		t.Fatalf("runs.maxArgsBytes: %+v, %v", p.Runs, err)
	}
	if (policy.Runs{}).ArgsBytes() != policy.DefaultMaxArgsBytes {
		t.Errorf("the default is %d, want %d", (policy.Runs{}).ArgsBytes(), policy.DefaultMaxArgsBytes)
	}
	for _, bad := range []string{"0", "-1", "67108865", "lots"} {
		if _, err := policy.Parse("policy.yaml", []byte("runs: {maxArgsBytes: "+bad+"}\n"), nil); err == nil || !strings.Contains(err.Error(), "runs.maxArgsBytes") {
			t.Errorf("maxArgsBytes %s: %v, want an error naming runs.maxArgsBytes", bad, err)
		}
	}
}

// Problems of a map's entries come in the same order every time (sorted keys), not in Go's map
// order: the same file gives the same message.
func TestPolicyProblemsInOrder(t *testing.T) {
	_, err := policy.Parse("p.yaml", []byte("scripts: {b: {limits: 1}, a: {limits: 1}, c: {limits: 1}, d: {limits: 1}}\n"), func(string) (string, bool) { return "", false })
	msg := fmt.Sprint(err)
	a, b, c, d := strings.Index(msg, "scripts.a."), strings.Index(msg, "scripts.b."), strings.Index(msg, "scripts.c."), strings.Index(msg, "scripts.d.")
	if a < 0 || !(a < b && b < c && c < d) {
		t.Fatalf("problems out of order: %s", msg)
	}
}
