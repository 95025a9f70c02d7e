package main

import (
	"context"
	"fmt"
	"github.com/spf13/pflag"
	"path/filepath"
	"strings"

	"github.com/skillbox-dev/skillbox/runtime"
)

var cmdNew = &command{
	summary: "create a skill that builds and runs as is: manifest, source, SKILL.md, example input",
	usage:   "<id> --lang go|tinygo|rust|assemblyscript|c|python|javascript|typescript [--sdk DIR]",
	flags: func(fs *pflag.FlagSet, e *env) {
		fs.StringVar(&e.lang, "lang", "go", "the source `LANGUAGE`: "+strings.Join(languageNames(), ", "))
		fs.StringVar(&e.sdk, "sdk", "", "the language's Skillbox SDK `DIR` (default: sdk/<lang> found above the skills directory)")
	},
	run: func(ctx context.Context, e *env, pos []string) int {
		if len(pos) != 1 {
			return e.fail(exitUsage, "new takes one skill id, e.g. skillbox new weather --lang rust")
		}
		id := pos[0]
		if !runtime.ValidID(id) {
			return e.fail(exitUsage, "%q is not a valid skill id: lower-case letters, digits and '-', starting with a letter or digit", id)
		}
		lang, ok := languages[e.lang]
		if !ok {
			return e.fail(exitUsage, "--lang %q: choose one of %s", e.lang, strings.Join(languageNames(), ", "))
		}
		skillsDir := dirsOrDefault(e.skills)[0]
		dir := filepath.Join(skillsDir, id)
		sdk := e.sdk
		if sdk == "" && lang.runtime == "" {
			found, err := findSDK(skillsDir, lang.sdk)
			if err != nil {
				return e.fail(exitFailed, "%v", err)
			}
			sdk = found
		}
		if err := scaffold(dir, id, lang, sdk); err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		if e.json {
			_ = writeJSON(e.stdout, map[string]string{"id": id, "dir": dir, "lang": lang.name})
			return exitOK
		}
		if lang.runtime != "" {
			fmt.Fprintf(e.stdout, "created %s (%s: runs as it is, no build)\n\nnext:\n  skillbox run %s --args @%s\n",
				dir, lang.name, id, filepath.Join(dir, "example.json"))
			return exitOK
		}
		fmt.Fprintf(e.stdout, "created %s (%s)\n\nnext:\n  skillbox build %s\n  skillbox run %s --args @%s\n",
			dir, lang.name, dir, id, filepath.Join(dir, "example.json"))
		return exitOK
	},
}
