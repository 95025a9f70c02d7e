package cpython

import (
	"strings"
	"testing"
)

// A program run as python -m names a module whose file is the Script: the driver finds the
// module's root by going up from the file, which must stay in the skill.
func TestProgramModule(t *testing.T) {
	argv, err := argvOf(&Program{Script: "scripts/pkg/tool.py", Module: "pkg.tool", Cwd: "/tmp", Argv: []string{"a"}})
	if err != nil || strings.Join(argv, " ") != "python3 module /skill/scripts/pkg/tool.py /tmp pkg.tool a" {
		t.Fatalf("%q %v", argv, err)
	}
	for module, want := range map[string]string{
		"scripts.pkg.tool.x": "is not the module of",
		"tool":               "", // a module at the file's own directory
		"pkg..tool":          "is not a module name",
		"pkg.1tool":          "is not a module name",
		"../pkg.tool":        "is not a module name",
		"other.tool":         "is not the module of",
	} {
		_, err := argvOf(&Program{Script: "scripts/pkg/tool.py", Module: module})
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("module %q: %v, want %q", module, err, want)
		}
	}
}
