package main

import (
	"bufio"
	"context"
	"fmt"

	"github.com/skillbox-dev/skillbox/runtime"
)

// skillSummary is a skill's metadata as list prints it: the runtime's summary and where it lives.
type skillSummary struct {
	runtime.Summary
	Dir string `json:"dir"`
}

func summarize(s *runtime.Skill) skillSummary {
	return skillSummary{Summary: s.Summary(), Dir: s.Dir()}
}

var cmdList = &command{
	summary: "list the skills, one line each",
	usage:   "",
	run: func(ctx context.Context, e *env, pos []string) int {
		if len(pos) != 0 {
			return e.fail(exitUsage, "list takes no arguments")
		}
		rt, err := e.runtime(ctx)
		if err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		defer rt.Close(context.Background())
		skills := rt.Skills()
		if e.json {
			out := make([]skillSummary, len(skills))
			for i, s := range skills {
				out[i] = summarize(s)
			}
			if err := writeJSON(e.stdout, out); err != nil {
				return e.fail(exitFailed, "%v", err)
			}
			return exitOK
		}
		if len(skills) == 0 {
			fmt.Fprintf(e.stderr, "no skills in %v\n", dirsOrDefault(e.skills))
			return exitOK
		}
		// Buffered: ten thousand skills, a write each otherwise.
		buf := bufio.NewWriter(e.stdout)
		defer buf.Flush()
		rows := make([]skillSummary, len(skills))
		warned := 0
		for i, s := range skills {
			rows[i] = summarize(s)
			if len(rows[i].Warnings) > 0 {
				warned++
			}
		}
		writeSkillTable(buf, rows, terminalWidth(e.stdout))
		buf.Flush()
		if warned > 0 {
			// On stderr: the table stays what scripts read.
			fmt.Fprintf(e.stderr, "%d %s with warnings against the Agent Skills format: skillbox show <id>, or skillbox validate, says what\n",
				warned, plural(warned, "skill loads", "skills load"))
		}
		return exitOK
	},
}

func dirsOrDefault(d []string) []string {
	if len(d) == 0 {
		return []string{"skills"}
	}
	return d
}
