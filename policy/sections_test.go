package policy_test

import (
	"os"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/policy"
)

// The artifacts field parses strictly, and a policy cannot mount a directory of the host at
// /output (runtime TestOutputNeedsItsPermission: what a skill's grant of /output then is).
func TestArtifactsPolicy(t *testing.T) {
	_, err := policy.Parse("p.yaml", []byte("files:\n  - {path: /output, hostPath: /tmp/x, access: read-write}\nartifacts: {maxFiles: 0, colour: red}\n"), os.LookupEnv)
	for _, want := range []string{`files[0].path: "/output" is reserved`, "artifacts.maxFiles: must be between 1 and 4096", "artifacts.colour: unknown field"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("policy error %v, want %q", err, want)
		}
	}
	p, err := policy.Parse("p.yaml", []byte("artifacts: {enabled: false, maxTotalBytes: 1000}\n"), os.LookupEnv)
	if err != nil || !p.Artifacts.Disabled || p.Artifacts.MaxTotalBytes != 1000 {
		t.Errorf("policy %+v, %v", p, err)
	}
}

// The policy grants programs by skill id: a key that is not one is refused (runtime
// TestProgramGrants: what the programs are then granted).
func TestScriptsPolicyIsBySkillID(t *testing.T) {
	pol := []byte("scripts:\n  granted:\n    env: [OTHER]\n  Bad_Id:\n    env: [X]\n")
	if _, err := policy.Parse("policy.yaml", pol, nil); err == nil || !strings.Contains(err.Error(), `"Bad_Id" is not a skill id`) {
		t.Fatalf("policy scripts key: %v", err)
	}
}
