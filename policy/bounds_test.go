package policy_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/policy"
)

// aliasBombYAML is a "billion laughs" that yaml.v3's own alias limit lets through: it allows 99%
// of a document's values to come from aliases while it holds under 400,000, so a plain list of
// 5,000 values comes first, then anchors of 10, 100 and 1,000 values, then 300 aliases that stand
// for 333,000 more. It is the value of field, in a document that starts with head; the plain
// values and the anchors are within the bounds, only the aliases' expansion is not.
func aliasBombYAML(head, field string) string {
	var b strings.Builder
	b.WriteString(head)
	fmt.Fprintf(&b, "%s:\n  pad: [%s]\n  l0: &l0 [%s]\n", field, strings.TrimSuffix(strings.Repeat("0,", 5_000), ","), strings.TrimSuffix(strings.Repeat("x,", 10), ","))
	for i := 1; i <= 2; i++ {
		fmt.Fprintf(&b, "  l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d,", i-1), 10), ","))
	}
	fmt.Fprintf(&b, "  bomb: [%s]\n", strings.TrimSuffix(strings.Repeat("*l2,", 300), ","))
	return b.String()
}

func TestPolicyBombs(t *testing.T) {
	cases := []struct {
		name, file, data, want string
	}{
		{"deep JSON", "p.json", `{"network":[],"limits":{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `},"bad":1}`,
			"limits.x[0][0][0]...(25 more)...[0][0]: nests deeper than 32 levels"},
		{"deep YAML", "p.yaml", "network: []\nbad: 1\nenv: {A: " + strings.Repeat("{a: ", 100) + "1" + strings.Repeat("}", 100) + "}\n",
			"env.A.a.a.a...(25 more)...a.a: line 3: nests deeper than 32 levels"},
		{"alias bomb", "p.yaml", aliasBombYAML("network: []\nbad: 1\n", "env"), "env.bomb[3][3][8]: line 5: the document holds more than 10,000 values"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := policy.Parse(tc.file, []byte(tc.data), func(string) (string, bool) { return "", false })
			var pe *policy.Error
			if !errors.As(err, &pe) {
				t.Fatalf("accepted: %v", err)
			}
			all := strings.Join(pe.Problems, "\n")
			if !strings.Contains(all, tc.want) || !strings.Contains(all, "bad: unknown field") || len(pe.Problems) != 2 {
				t.Errorf("problems (want %q):\n%s", tc.want, all)
			}
		})
	}
}
