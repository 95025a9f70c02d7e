package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// starterPolicy is the policy file init writes: every field, granting nothing, each with a
// comment that says what it grants and an example.
const starterPolicy = "templates/policy.yaml"

var cmdInit = &command{
	summary: "set up a directory for skills: a skills/ directory and a commented starter policy that grants nothing",
	usage:   "[DIR]  (default: the current directory)",
	long: `Create DIR/skills/, where skillbox finds skills by default, and DIR/policy.yaml, the operator
policy: what skills may be granted. As written it grants nothing; its comments say what each field
grants, with an example. Files that exist are left as they are. DIR/.gitignore gets .skillbox/,
the project's own store (run history, skill versions), which belongs to the machine, not the
repository.`,
	example: `  skillbox init
  skillbox new weather --lang python
  skillbox run weather --policy policy.yaml --args '{"name":"Ada"}'`,
	run: func(ctx context.Context, e *env, pos []string) int {
		if len(pos) > 1 {
			return e.fail(exitUsage, "init takes at most one directory")
		}
		dir := "."
		if len(pos) == 1 {
			dir = pos[0]
		}
		skills := filepath.Join(dir, "skills")
		if len(e.skills) > 0 {
			skills = e.skills[0]
		}
		created := []string{}
		st, err := os.Stat(skills)
		switch {
		case err == nil && !st.IsDir():
			return e.fail(exitFailed, "%s exists and is not a directory", skills)
		case errors.Is(err, fs.ErrNotExist):
			// 0777: the umask decides, as for any directory the user makes.
			if err := os.MkdirAll(skills, 0o777); err != nil {
				return e.fail(exitFailed, "%v", err)
			}
			created = append(created, skills+string(filepath.Separator))
		case err != nil:
			return e.fail(exitFailed, "%v", err)
		}
		policy := filepath.Join(dir, "policy.yaml")
		body, err := templates.ReadFile(starterPolicy)
		if err != nil {
			return e.fail(exitFailed, "no starter policy in this build of skillbox: %v", err)
		}
		f, err := os.OpenFile(policy, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		switch {
		case errors.Is(err, fs.ErrExist):
			fmt.Fprintf(e.stderr, "skillbox: %s exists: left as it is\n", policy)
		case err != nil:
			return e.fail(exitFailed, "%v", err)
		default:
			_, werr := f.Write(body)
			if cerr := f.Close(); werr == nil {
				werr = cerr
			}
			if werr != nil {
				_ = os.Remove(policy)
				return e.fail(exitFailed, "writing %s: %v", policy, werr)
			}
			created = append(created, policy)
		}
		// The project's store (.skillbox/ beside its skills: run history, versions, spool) is
		// the machine's, never the repository's.
		ignore := filepath.Join(dir, ".gitignore")
		switch added, err := ignoreDataDir(ignore); {
		case err != nil:
			return e.fail(exitFailed, "%v", err)
		case added:
			created = append(created, ignore+" (.skillbox/)")
		}
		if e.json {
			_ = writeJSON(e.stdout, map[string]any{"skills": skills, "policy": policy, "created": created})
			return exitOK
		}
		for _, c := range created {
			fmt.Fprintf(e.stdout, "created %s\n", c)
		}
		skillsFlag := "" // ./skills is the default
		if filepath.Clean(skills) != "skills" {
			skillsFlag = " --skills " + skills
		}
		fmt.Fprintf(e.stdout, "\nnext:\n  skillbox new hello --lang python%s\n  skillbox run hello%s --policy %s --args '{\"name\":\"Ada\"}'\n",
			skillsFlag, skillsFlag, policy)
		return exitOK
	},
}

// ignoreDataDir adds .skillbox/ to the .gitignore at path (made if absent), unless a line there
// ignores it already, and says whether it did.
func ignoreDataDir(path string) (bool, error) {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		switch strings.TrimSpace(line) {
		case ".skillbox", ".skillbox/", "/.skillbox", "/.skillbox/":
			return false, nil
		}
	}
	add := "# skillbox: this project's run history and skill versions (its own store)\n.skillbox/\n"
	if len(data) > 0 && !strings.HasSuffix(string(data), "\n") {
		add = "\n" + add
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		return false, err
	}
	_, werr := f.WriteString(add)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr == nil, werr
}
