package registry

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skillbox-dev/skillbox/internal/safefile"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/skillmd"
	"github.com/skillbox-dev/skillbox/spec"
)

// A skill's programs are the files in its scripts/ directory (the Agent Skills format's
// scripts), and any other .py, .js or .ts file of it named by its path (core/build.py), run with
// a command line and standard input: `skillbox script`, the HTTP API's script
// runs and the agent toolset's run_skill_script. Any skill may have them, an instruction skill
// (a SKILL.md only) included. Their result is the program's exit code, stdout and stderr.
//
// What a program may do is its skill's to ask and the policy's to grant, as for execute:
//   - ScriptsFile, scripts/skillbox.json, declares the permissions and limits the programs ask
//     for ({"permissions": {...}, "limits": {...}}, the manifest's fields); it does not make the
//     skill executable;
//   - without it, an executable skill's programs ask for what its manifest asks for;
//   - the policy may grant a skill's programs more (Policy.Scripts, by skill id);
//   - without any of these, a program gets its skill's own directory, read-only, and nothing
//     else.

// shellExts are scripts that need a shell, which the sandbox does not have.
var shellExts = []string{".sh", ".bash", ".zsh", ".ksh", ".fish"}

// errProgramKind is matched by the error of a run of a program Skillbox cannot run
// (invalid_args).
var errProgramKind = errors.New("cannot run this kind of program")

// program is one program of a skill, resolved for a run.
type Program struct {
	Rel  string // "scripts/report.py", slash-separated
	Lang spec.Language
}

// resolveProgram finds the program name of s: a file of its scripts/ directory named alone
// ("report.py", or "report" when one program alone has that name), or any file of the skill
// named by its path ("scripts/report.py", "core/build.py"), or by its path in scripts/
// ("office/unpack.py") when the skill's top has no such file: a regular file reached without
// leaving the skill's directory, never a hidden one.
func (s *Skill) ResolveProgram(name string) (*Program, *run.Error) {
	rel := filepath.ToSlash(name)
	if !strings.Contains(rel, "/") {
		rel = spec.ScriptsDir + "/" + rel // a bare name is a file of scripts/
	}
	p, rerr := s.programAt(name, rel)
	if rerr != nil && errors.Is(rerr, run.ErrNoProgram) && rel == name && !strings.HasPrefix(rel, spec.ScriptsDir+"/") {
		// A path under scripts/ named from there ("office/unpack.py" for
		// scripts/office/unpack.py), as a bare name is: when the skill has no such file at its
		// top, the one under scripts/.
		if q, err := s.programAt(name, spec.ScriptsDir+"/"+rel); err == nil {
			return q, nil
		}
	}
	return p, rerr
}

// ProgramAt finds the program whose file is rel, a slash-separated path in s's directory
// ("scripts/report.py", or "tool.py" at its top: a bare name is not looked for in scripts/), as
// ResolveProgram does.
func (s *Skill) ProgramAt(rel string) (*Program, *run.Error) { return s.programAt(rel, rel) }

// programAt is ResolveProgram of the program name gave, at rel.
func (s *Skill) programAt(name, rel string) (*Program, *run.Error) {
	bad := func(err error, format string, args ...any) (*Program, *run.Error) {
		kind := run.KindInvalidArgs
		if errors.Is(err, run.ErrNoProgram) {
			kind = run.KindNotFound
		}
		return nil, run.Errorf(kind, s.id, err, format, args...)
	}
	clean := path.Clean(rel)
	if name == "" || clean != rel || strings.Contains(name, "\\") || strings.ContainsRune(name, 0) || path.IsAbs(clean) ||
		slices.ContainsFunc(strings.Split(clean, "/"), func(seg string) bool { return strings.HasPrefix(seg, ".") }) {
		return bad(run.ErrNoProgram, "%q is not a program of skill %q: name a file of its scripts/ directory (\"report.py\"), or a file by its path in the skill (\"core/build.py\")", name, s.id)
	}
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return bad(run.ErrNoProgram, "skill %q: its directory cannot be read", s.id)
	}
	defer root.Close()
	ext := strings.ToLower(path.Ext(clean))
	if ext == "" {
		// Named without its extension ("report"), as some toolsets name programs: the one
		// program that has that name, if only one has.
		var found []string
		for _, e := range spec.ProgramExtensions() {
			if st, err := root.Stat(filepath.FromSlash(clean + e)); err == nil && st.Mode().IsRegular() {
				found = append(found, clean+e)
			}
		}
		switch len(found) {
		case 0:
			return bad(run.ErrNoProgram, "skill %q has no program %s%s", s.id, clean, s.programList())
		case 1:
			clean, ext = found[0], strings.ToLower(path.Ext(found[0]))
		default:
			return bad(errProgramKind, "%s names several programs (%s): give the one to run with its extension", clean, strings.Join(found, ", "))
		}
	}
	if slices.Contains(shellExts, ext) {
		return bad(errProgramKind, "%s is a shell script, and the sandbox has no shell: Skillbox runs .py, .js and .ts programs (port it to Python or JavaScript, or run it outside Skillbox)", clean)
	}
	lang, ok := spec.LanguageOf(clean)
	if !ok {
		return bad(errProgramKind, "%s: Skillbox runs .py, .js and .ts programs, not %q files", clean, ext)
	}
	st, err := root.Stat(filepath.FromSlash(clean)) // follows symlinks, never out of the root
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return bad(run.ErrNoProgram, "skill %q has no program %s%s", s.id, clean, s.programList())
	case err != nil:
		return bad(run.ErrNoProgram, "%s: %v", clean, hideDir(err.Error(), s.dir, s.id))
	case !st.Mode().IsRegular():
		return bad(run.ErrNoProgram, "%s is not a regular file", clean)
	}
	return &Program{Rel: clean, Lang: lang}, nil
}

// maxListedPrograms bounds Programs (and so an error that lists them).
const maxListedPrograms = 100

// Programs backs runtime.Skill.Programs, which documents it.
func (s *Skill) Programs() []string {
	files, err := skillmd.ListResources(s.dir, skillmd.DefaultResourceCount)
	if err != nil {
		return nil
	}
	var out []string
	for _, f := range files {
		if _, ok := spec.ProgramLanguage(f); ok && len(out) < maxListedPrograms {
			out = append(out, f)
		}
	}
	return out
}

// programList names the programs s has, for an error about one it does not: " (it has
// scripts/a.py, scripts/b.js)", or what it lacks.
func (s *Skill) programList() string {
	if st, err := os.Stat(filepath.Join(s.dir, spec.ScriptsDir)); err != nil || !st.IsDir() {
		return " (it has no scripts/ directory)"
	}
	programs := s.Programs()
	if len(programs) == 0 {
		return " (its scripts/ directory has no program Skillbox can run)"
	}
	return " (it has " + strings.Join(programs, ", ") + ")"
}

// loadPrograms reads what s's programs ask for (see the package comment above) and grants it
// under p. A ScriptsFile that does not parse leaves the programs unable to run (their runs say
// why) and is a warning of the skill: its instructions, and its execute, are not its fault.
func (s *Skill) loadPrograms(p *policy.Policy) {
	req := &spec.ScriptsRequest{}
	if s.manifest != nil {
		req.Permissions, req.Limits = s.manifest.Permissions, s.manifest.Limits
	}
	file := filepath.Join(s.dir, filepath.FromSlash(spec.ScriptsFile))
	// Without a scripts/ directory there is no ScriptsFile: a scan reads nothing more for it.
	if data, err := s.readScriptsFile(file); err == nil {
		r, err := spec.ParseScriptsRequest(file, data)
		if err != nil {
			s.programsErr = err
			var se *spec.SkillError
			if errors.As(err, &se) {
				for _, p := range se.Problems {
					s.warn(p)
				}
			}
			return
		}
		req = r
	} else if !errors.Is(err, fs.ErrNotExist) {
		s.programsErr = &spec.SkillError{Problems: []*spec.ManifestError{{Path: file, Msg: err.Error()}}}
		s.warn(&spec.ManifestError{Path: file, Msg: err.Error()})
		return
	}
	if extra, ok := p.Scripts[s.id]; ok {
		req.Permissions = mergePermissions(req.Permissions, extra)
	}
	s.programGrant = p.Grant(&spec.Manifest{ID: s.id, Permissions: req.Permissions, Limits: req.Limits}, s.dir)
}

// mergePermissions is a's permissions and b's together.
func mergePermissions(a, b spec.Permissions) spec.Permissions {
	out := spec.Permissions{
		Network: append(slices.Clone(a.Network), b.Network...),
		Env:     append(slices.Clone(a.Env), b.Env...),
		Secrets: append(slices.Clone(a.Secrets), b.Secrets...),
		Files:   append(slices.Clone(a.Files), b.Files...),
	}
	out.Network, out.Env = CompactStrings(out.Network), CompactStrings(out.Env)
	return out
}

func CompactStrings(l []string) []string {
	slices.Sort(l)
	return slices.Compact(l)
}

// readScriptsFile reads the ScriptsFile at file, fs.ErrNotExist without a scripts/ directory.
func (s *Skill) readScriptsFile(file string) ([]byte, error) {
	if !s.scriptsDir {
		return nil, fs.ErrNotExist
	}
	return safefile.ReadFile(file, spec.MaxManifestBytes)
}

// ScriptsDir reports whether the load found a scripts/ directory: a program in one that appeared
// since runs only once the skill is loaded again, with the ScriptsFile it may hold.
func (s *Skill) ScriptsDir() bool { return s.scriptsDir }

// ProgramGrant is the skill's own, not a copy: runtime.Skill.ProgramGrant hands out copies.
func (s *Skill) ProgramGrant() *policy.Grant { return s.programGrant }

// ProgramsErr backs runtime.Skill.ProgramsErr, which documents it.
func (s *Skill) ProgramsErr() error { return s.programsErr }
