package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/skillbox-dev/skillbox/spec"
)

var cmdNew = &command{
	summary: "create a skill that builds and runs as is: manifest, source, SKILL.md, example input",
	usage:   "<id> --lang go|tinygo|rust|assemblyscript|c|python|javascript|typescript [--sdk DIR]",
	flags: func(fs *pflag.FlagSet, e *env) {
		fs.StringVar(&e.lang, "lang", "go", "the source `LANGUAGE`: "+strings.Join(languageNames(), ", "))
		fs.StringVar(&e.sdk, "sdk", "", "point the skill at this SDK `DIR` instead of the copy it gets of the one built in (for SDK development)")
	},
	run: func(ctx context.Context, e *env, pos []string) int {
		if len(pos) != 1 {
			return e.fail(exitUsage, "new takes one skill id, e.g. skillbox new weather --lang rust")
		}
		id := pos[0]
		if !spec.ValidID(id) {
			return e.fail(exitUsage, "%q is not a valid skill id: lower-case letters, digits and '-', starting with a letter or digit", id)
		}
		lang, ok := languages[e.lang]
		if !ok {
			return e.fail(exitUsage, "--lang %q: choose one of %s", e.lang, strings.Join(languageNames(), ", "))
		}
		skillsDir := dirsOrDefault(e.skills)[0]
		dir := filepath.Join(skillsDir, id)
		if e.sdk != "" && lang.runtime != "" {
			return e.fail(exitUsage, "--sdk %s: %s skills need no SDK (--sdk is for go, tinygo, rust, assemblyscript and c)", e.sdk, lang.name)
		}
		if err := scaffold(dir, id, lang, e.sdk); err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		if e.json {
			_ = writeJSON(e.stdout, map[string]string{"id": id, "dir": dir, "lang": lang.name})
			return exitOK
		}
		nextSteps(e.stdout, skillsDir, dir, id, lang)
		return exitOK
	},
}

// nextSteps prints what to run after new: build (a compiled skill) and run, the way the user
// typed the skills directory, with --skills when it is not the default one, so that each line
// works as it is when pasted.
func nextSteps(w io.Writer, skillsDir, dir, id string, lang language) {
	skills := ""
	if skillsDir != dirsOrDefault(nil)[0] {
		skills = " --skills " + shellQuote(skillsDir)
	}
	// clean: the skills directory is the user's, and reaches a terminal.
	run := clean(fmt.Sprintf("skillbox run%s %s --args @%s", skills, id, shellQuote(filepath.Join(dir, "example.json"))))
	if lang.runtime != "" {
		fmt.Fprintf(w, "created %s (%s: runs as it is, no build)\n\nnext:\n  %s\n", clean(dir), lang.name, run)
		return
	}
	fmt.Fprintf(w, "created %s (%s)\n\nnext:\n  skillbox build %s\n  %s\n", clean(dir), lang.name, clean(shellQuote(dir)), run)
}

// shellQuote quotes s for a POSIX shell when it holds anything but plain path characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./@%+=:,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
