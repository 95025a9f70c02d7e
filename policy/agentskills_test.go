package policy_test

import (
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/policy"
)

func TestAgentSkillsPolicyFile(t *testing.T) {
	p, err := policy.Parse("policy.yaml", []byte("network: [api.example.com]\nagentSkills:\n  enabled: true\n  network: [api.example.com]\n  limits: {timeoutMs: 3000}\n"), nil)
	if err != nil || !p.AgentSkills.Enabled || p.AgentSkills.Network[0] != "api.example.com" || p.AgentSkills.Limits.TimeoutMs != 3000 {
		t.Fatalf("%+v %v", p, err)
	}
	_, err = policy.Parse("policy.yaml", []byte("agentSkills:\n  enabled: yes please\n  netwrok: []\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "agentSkills.enabled: must be a boolean") || !strings.Contains(err.Error(), "agentSkills.netwrok") {
		t.Fatalf("%v", err)
	}
}
