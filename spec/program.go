package spec

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// programLangs maps a program's extension to what runs it.
var programLangs = map[string]Language{
	".py": LangPython, ".js": LangJavaScript, ".mjs": LangJavaScript, ".cjs": LangJavaScript,
	".ts": LangTypeScript, ".mts": LangTypeScript,
}

// ProgramExtensions are the extensions of the programs Skillbox runs, sorted: what a program
// named without one may have.
func ProgramExtensions() []string {
	out := make([]string, 0, len(programLangs))
	for ext := range programLangs {
		out = append(out, ext)
	}
	slices.Sort(out)
	return out
}

// LanguageOf reports what runs a program at the skill-relative path name by its extension alone,
// wherever it is in the skill: a program named by its path (core/build.py) runs wherever it lives.
func LanguageOf(name string) (Language, bool) {
	l, ok := programLangs[strings.ToLower(path.Ext(name))]
	return l, ok
}

// ProgramLanguage reports what runs the program at the skill-relative path name
// ("scripts/report.py"), and false when name is not a program Skillbox can run (not under
// scripts/, a shell script, another language).
func ProgramLanguage(name string) (Language, bool) {
	if !strings.HasPrefix(name, ScriptsDir+"/") {
		return "", false
	}
	l, ok := programLangs[strings.ToLower(path.Ext(name))]
	return l, ok
}

// ScriptsRequest is what a skill's programs ask for, from its ScriptsFile.
type ScriptsRequest struct {
	Permissions Permissions `json:"permissions"`
	Limits      Limits      `json:"limits"`
}

// ParseScriptsRequest decodes and checks a ScriptsFile. The error is a *SkillError holding every
// problem, each naming path and the field.
func ParseScriptsRequest(path string, data []byte) (*ScriptsRequest, error) {
	c := &Checker{Path: path}
	d, bounds, err := ParseDoc(data, false)
	if err != nil {
		if c.Syntax(err) {
			return nil, &SkillError{Problems: c.Problems}
		}
		return nil, &SkillError{Problems: []*ManifestError{{Path: path, Msg: fmt.Sprintf("cannot parse: %v", err), Hint: `write {"permissions": {...}, "limits": {...}}, as in skill.json`}}}
	}
	c.AddBounds(bounds)
	c.Known(d, "", "permissions", "limits")
	r := &ScriptsRequest{Permissions: c.Permissions(c.Object(d, "", "permissions")), Limits: c.Limits(c.Object(d, "", "limits"), "limits")}
	if len(c.Problems) > 0 {
		return nil, &SkillError{Problems: c.Problems}
	}
	return r, nil
}
