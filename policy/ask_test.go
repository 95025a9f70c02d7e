package policy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/spec"
)

// The ask section parses strictly, off by default; its grant side is the host half of a grant.
func TestAskPolicy(t *testing.T) {
	lookup := func(name string) (string, bool) { return map[string]string{"GH": "gh-token"}[name], name == "GH" }
	p, err := policy.Parse("/etc/skillbox/p.yaml", []byte(`ask:
  network: ["*.example.com", "127.0.0.1:8080"]
  env: {GITHUB_TOKEN: {fromHost: GH}, LANG: C, MISSING: {fromHost: NOPE}}
  files: [{path: /data, hostPath: "./data/{skill}", access: read-write}]
  timeoutMs: 30000
  maxGrantMinutes: 60
  scope: tenant
  answeredBy: caller
  maxPerRun: 2
  maxPending: 10
`), lookup)
	if err != nil {
		t.Fatal(err)
	}
	a := p.Ask
	if !a.Enabled() || len(a.Network) != 2 || a.Env["GITHUB_TOKEN"] != "gh-token" || a.Env["LANG"] != "C" || len(a.Env) != 2 ||
		a.Files[0].HostPath != "/etc/skillbox/data/{skill}" || a.Files[0].Access != spec.ReadWrite || a.Timeout != 30*time.Second ||
		a.MaxGrant != time.Hour || !a.Tenant || !a.CallerAnswers || a.MaxPerRun != 2 || a.MaxPending != 10 {
		t.Errorf("ask %+v", a)
	}
	h := p.Grant(&spec.Manifest{ID: "notes"}, "").Host().Askable
	if h == nil || len(h.Hosts) != 2 || h.Env["GITHUB_TOKEN"] != "gh-token" || h.Mounts[0].Dir != "/etc/skillbox/data/notes" || !h.Mounts[0].Writable {
		t.Errorf("askable %+v", h)
	}
	if c := p.Clone(); c.Ask.Env["LANG"] != "C" {
		t.Errorf("clone lost the ask section: %+v", c.Ask)
	} else if c.Ask.Env["LANG"] = "x"; p.Ask.Env["LANG"] != "C" {
		t.Errorf("a clone's ask section shares its env with the original")
	}

	p, err = policy.Parse("p.yaml", []byte("network: [a.example]\n"), lookup)
	if err != nil || p.Ask.Enabled() || p.Grant(&spec.Manifest{ID: "x"}, "").Host().Askable != nil {
		t.Errorf("no ask section: %+v, %v; want nothing askable", p.Ask, err)
	}
	if d := (policy.Ask{}).WithDefaults(); d.Timeout != policy.DefaultAskTimeout || d.MaxGrant != policy.DefaultAskMaxGrant ||
		d.MaxPerRun != policy.DefaultAskPerRun || d.MaxPending != policy.DefaultAskPending {
		t.Errorf("defaults %+v", d)
	}

	_, err = policy.Parse("p.yaml", []byte(`ask:
  network: ["https://x.example/"]
  files: [{path: /output, hostPath: /tmp}]
  timeoutMs: 99999999
  scope: everyone
  answeredBy: anyone
  colour: red
`), lookup)
	for _, want := range []string{`ask.network[0]: invalid host pattern`, `ask.files[0].path: "/output" is reserved`,
		"ask.timeoutMs: must be between 1 and 3600000", `ask.scope: "everyone" is not a scope`,
		`ask.answeredBy: "anyone" is not who answers`, "ask.colour: unknown field"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("policy error %v, want %q", err, want)
		}
	}
}
