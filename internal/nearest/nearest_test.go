package nearest

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"args", "args", 0}, {"arg", "args", 1}, {"wrod", "word", 1}, // a swap is one typo
		{"jsn", "json", 1}, {"nope", "notes", 2}, {"policy", "skills", 5},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestName(t *testing.T) {
	allowed := []string{"timeoutMs", "memoryMiB", "maxOutputBytes"}
	for k, want := range map[string]string{"timeoutms": "timeoutMs", "timoutMs": "timeoutMs", "memoryMB": "memoryMiB", "colour": ""} {
		if got := Name(k, allowed); got != want {
			t.Errorf("Name(%q) = %q, want %q", k, got, want)
		}
	}
}
