package runtime

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/skillbox-dev/skillbox/internal/quickjs"
	"github.com/skillbox-dev/skillbox/internal/safefile"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
	"github.com/skillbox-dev/skillbox/spec"
)

// A check warns of each environment variable a script skill's code reads that its manifest does
// not ask for: such a read answers undefined (None), which code written for a runtime that hands
// skills its whole environment takes for a value and sends on ("Bearer undefined"). The reads are
// found by their shape in the text (ctx.env.NAME, ctx.env["NAME"], ctx.env("NAME"), whatever
// the context is called; process.env is a program's, not the SkillContext's): a name made at run
// time is not seen, and a warning never stops a skill.

// envRead matches a read of the SkillContext's env by a constant name: the object's name, then
// the name read as a property, an item or an argument.
var envRead = regexp.MustCompile(`\b([A-Za-z_$][\w$]*)\.env(?:\.([A-Za-z_$][\w$]*)|\[\s*["']([^"'\\\n]{1,256})["']\s*\]|\(\s*["']([^"'\\\n]{1,256})["']\s*\))`)

// notSkillContext are objects whose env is not the SkillContext's.
var notSkillContext = []string{"process", "os", "import"}

// scriptExts are the files whose text a check reads for env reads.
var scriptExts = []string{".py", ".js", ".mjs", ".cjs", ".ts", ".mts"}

// warnUnaskedEnv adds a warning to s, an executable script skill, for each name its code reads
// from ctx.env that its manifest asks for neither as a variable nor as a secret. It reads at most
// maxCheckedPython files, each within the policy's module limit.
func (rt *Runtime) warnUnaskedEnv(s *registry.Skill) {
	m := s.Manifest()
	if s.Kind() != spec.Executable || m == nil || s.Lang() == "" || s.Lang() == spec.LangWasm {
		return
	}
	asked := slices.Clone(m.Permissions.Env)
	for _, sec := range m.Permissions.Secrets {
		asked = append(asked, sec.Name)
	}
	max := rt.policy.Load().Modules.WithDefaults().MaxModuleBytes
	for _, rel := range codeFiles(s, scriptExts...) {
		path := filepath.Join(s.Dir(), filepath.FromSlash(rel))
		text, err := safefile.ReadFile(path, max)
		if err != nil {
			continue // the check of the code says why, where it matters
		}
		warned := map[string]bool{}
		for _, loc := range envRead.FindAllSubmatchIndex(text, -1) {
			if slices.Contains(notSkillContext, string(text[loc[2]:loc[3]])) {
				continue
			}
			name := ""
			for g := 2; g <= 4; g++ {
				if loc[2*g] >= 0 {
					name = string(text[loc[2*g]:loc[2*g+1]])
				}
			}
			if slices.Contains(asked, name) || slices.Contains(quickjs.ProbedEnvNames, name) || warned[name] {
				continue
			}
			warned[name] = true
			line := 1 + bytes.Count(text[:loc[0]], []byte{'\n'})
			s.AddWarning(&spec.ManifestError{Path: fmt.Sprintf("%s:%d", path, line),
				Msg:  fmt.Sprintf("reads the environment variable %s, which skill.json does not ask for, so it reads as undefined (None in Python)", name),
				Hint: fmt.Sprintf(`add "%s" to permissions.env in skill.json, or to permissions.secrets if it is a key, which the code then reads as a placeholder the host fills in`, name)})
		}
	}
}
