package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/spec"
	"github.com/skillbox-dev/skillbox/version"
)

// skillDetail is everything show prints about one skill.
type skillDetail struct {
	skillSummary
	Entrypoint   string            `json:"entrypoint,omitempty"`
	SHA256       string            `json:"sha256,omitempty"`
	Instructions string            `json:"instructions,omitempty"`
	Parameters   json.RawMessage   `json:"parameters,omitempty"`
	Requested    *spec.Permissions `json:"requested,omitempty"`
	RequestedLim *spec.Limits      `json:"requested_limits,omitempty"`
	Granted      *policy.Grant     `json:"granted,omitempty"`
	Problems     []string          `json:"problems,omitempty"`
	ArgumentHint string            `json:"argument_hint,omitempty"`
	// ModelInvocable is false for a skill whose SKILL.md sets disable-model-invocation: true.
	ModelInvocable bool `json:"model_invocable"`
	// AgentWritten is set for a skill an agent wrote (create_skill): its grant is held to the
	// policy's agentSkills ceiling.
	AgentWritten bool `json:"agent_written,omitempty"`
	// Programs are the skill's scripts/ programs Skillbox can run, ProgramGrant what they may do,
	// ProgramsErr why they cannot run.
	Programs     []string      `json:"programs,omitempty"`
	ProgramGrant *policy.Grant `json:"program_grant,omitempty"`
	ProgramsErr  string        `json:"programs_error,omitempty"`
	// Digest is the version this folder holds.
	Digest string `json:"digest,omitempty"`
	// Serving is the version a run serves now (the store's record of it), which may be another
	// than this folder's: the active one. ServingErr is why none would.
	Serving    *version.Version `json:"serving,omitempty"`
	ServingErr string           `json:"serving_error,omitempty"`
}

var cmdShow = &command{
	summary:  "show a skill: manifest, argument schema, requested vs granted permissions and limits",
	usage:    "<id>",
	complete: completeSkillIDs,
	flags: func(fs *pflag.FlagSet, e *env) {
		storeFlags(fs, e, false)
		fs.BoolVar(&e.noStore, "no-store", false, "open no store: show the folder's version alone, not which version serves")
	},
	run: func(ctx context.Context, e *env, pos []string) int {
		if len(pos) != 1 {
			return e.fail(exitUsage, "show takes one skill id")
		}
		// The store says which version serves: the same one run would (see Runtime.Serving).
		h, code := e.openStore(ctx, false)
		if code != exitOK {
			return code
		}
		defer h.Close()
		rt, err := e.runtime(ctx)
		if err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		defer rt.Close(context.Background())
		s, err := rt.Skill(pos[0])
		if err != nil {
			if msg, ok := lookupFailure(err); ok {
				return e.fail(exitFailed, "%s", msg)
			}
			return e.fail(exitFailed, "%v", err)
		}
		// The module's hash checks an unchecked skill first, so the status shown is the check's.
		hash := s.ModuleHash()
		d := skillDetail{skillSummary: summarize(s), SHA256: hash, Instructions: s.InstructionsPath(), Granted: s.Grant(),
			ArgumentHint: s.ArgumentHint(), ModelInvocable: s.ModelInvocable()}
		if m := s.Manifest(); m != nil {
			d.Entrypoint, d.Parameters, d.Requested, d.RequestedLim = m.Entrypoint, m.Parameters, &m.Permissions, &m.Limits
		}
		d.AgentWritten, d.ProgramGrant = s.AgentWritten(), s.ProgramGrant()
		if err := s.ProgramsErr(); err != nil {
			d.ProgramsErr = err.Error()
		}
		d.Programs = s.Programs()
		d.Digest = s.Digest()
		if h != nil && s.Kind() == spec.Executable {
			if v, err := rt.Serving(ctx, operator(), s.ID()); err != nil {
				d.ServingErr = err.Error()
			} else {
				d.Serving = &v
			}
		}
		if se, ok := s.Err().(*spec.SkillError); ok {
			for _, p := range se.Problems {
				d.Problems = append(d.Problems, p.Error())
			}
		}
		if e.json {
			if err := writeJSON(e.stdout, d); err != nil {
				return e.fail(exitFailed, "%v", err)
			}
			return exitOK
		}
		printDetail(e, d)
		return exitOK
	},
}

func printDetail(e *env, d skillDetail) {
	w := e.stdout
	fmt.Fprintf(w, "%s  (%s, %s)\n", clean(d.ID), d.Kind, d.Status)
	fmt.Fprintf(w, "  name:         %s\n", clean(d.Name))
	if d.Description != "" {
		fmt.Fprintf(w, "  description:  %s\n", clean(d.Description))
	}
	if d.Version != "" {
		fmt.Fprintf(w, "  version:      %s\n", clean(d.Version))
	}
	if len(d.Tags) > 0 {
		fmt.Fprintf(w, "  tags:         %s\n", clean(strings.Join(d.Tags, ", ")))
	}
	fmt.Fprintf(w, "  directory:    %s\n", clean(d.Dir))
	if d.Instructions != "" {
		fmt.Fprintf(w, "  instructions: %s\n", clean(d.Instructions))
	}
	switch {
	case d.SHA256 != "" && d.Language.Script():
		fmt.Fprintf(w, "  code:         %s (%s), sha256 %s of what runs\n", d.Language, d.Language.CodeFile(), d.SHA256)
	case d.SHA256 != "":
		fmt.Fprintf(w, "  module:       sha256 %s, entrypoint %s\n", d.SHA256, clean(d.Entrypoint))
	}
	switch {
	case d.Serving != nil:
		label := d.Serving.Version
		if label == "" {
			label = "(no version string)"
		}
		fmt.Fprintf(w, "  serves:       %s %s (%s)\n", clean(label), d.Serving.Digest, d.Serving.Status)
		if d.Serving.Digest != d.Digest {
			fmt.Fprintf(w, "                not this folder's content (%s): the %s version serves; skillbox versions %s\n", d.Digest, d.Serving.Status, clean(d.ID))
		}
	case d.ServingErr != "":
		fmt.Fprintf(w, "  serves:       nothing now: %s\n", clean(d.ServingErr))
	}
	if d.AgentWritten {
		fmt.Fprintf(w, "  written by:   an agent (create_skill): granted at most the policy's agentSkills ceiling\n")
	}
	if len(d.Programs) > 0 {
		fmt.Fprintf(w, "  programs:     %s (skillbox script %s <program> [args...])\n", clean(strings.Join(d.Programs, ", ")), clean(d.ID))
		switch {
		case d.ProgramsErr != "":
			fmt.Fprintf(w, "                cannot run: %s\n", clean(d.ProgramsErr))
		case d.ProgramGrant != nil:
			g := d.ProgramGrant
			var files []string
			for _, f := range g.Files {
				files = append(files, f.Path+" ("+string(f.Access)+")")
			}
			fmt.Fprintf(w, "                granted: network %s; env %s; secrets %s; files %s\n", clean(listOrNone(g.Network)),
				clean(listOrNone(g.Env)), clean(listOrNone(g.Secrets)), clean(listOrNone(files)))
		}
	}
	if d.ArgumentHint != "" {
		fmt.Fprintf(w, "  arguments:    %s\n", clean(d.ArgumentHint))
	}
	if !d.ModelInvocable {
		fmt.Fprintf(w, "  invocation:   by a user only (disable-model-invocation): not offered to models\n")
	}
	for _, p := range d.Problems {
		fmt.Fprintf(w, "  problem:      %s\n", clean(p))
	}
	for _, p := range d.Warnings {
		fmt.Fprintf(w, "  warning:      %s\n", clean(p))
	}
	if len(d.Parameters) > 0 {
		var pretty bytes.Buffer
		if json.Indent(&pretty, d.Parameters, "  ", "  ") != nil {
			pretty.Reset()
			pretty.Write(d.Parameters)
		}
		fmt.Fprintf(w, "\n  arguments (JSON Schema):\n  %s\n", cleanJSON(pretty.Bytes()))
	}
	if d.Requested == nil || d.Granted == nil {
		return
	}
	fmt.Fprintln(w, "\n  permissions      requested -> granted")
	row := func(name string, req, got []string) {
		fmt.Fprintf(w, "    %-14s %s -> %s\n", name, clean(listOrNone(req)), clean(listOrNone(got)))
	}
	row("network", d.Requested.Network, d.Granted.Network)
	row("env", d.Requested.Env, d.Granted.Env)
	var secrets, files, gotFiles []string
	for _, s := range d.Requested.Secrets {
		secrets = append(secrets, s.Name)
	}
	row("secrets", secrets, d.Granted.Secrets)
	for _, f := range d.Requested.Files {
		files = append(files, f.Path+" ("+string(f.Access)+")")
	}
	for _, f := range d.Granted.Files {
		gotFiles = append(gotFiles, f.Path+" ("+string(f.Access)+")")
	}
	row("files", files, gotFiles)
	fmt.Fprintln(w, "\n  limits           requested -> granted")
	lim := func(name string, req, got int64) {
		r := "default"
		if req != 0 {
			r = fmt.Sprint(req)
		}
		fmt.Fprintf(w, "    %-14s %s -> %d\n", name, r, got)
	}
	rl, gl := d.RequestedLim, d.Granted.Limits
	lim("timeoutMs", rl.TimeoutMs, gl.TimeoutMs)
	lim("memoryMiB", rl.MemoryMiB, gl.MemoryMiB)
	lim("maxOutputBytes", rl.MaxOutputBytes, gl.MaxOutputBytes)
	lim("maxLogBytes", rl.MaxLogBytes, gl.MaxLogBytes)
	lim("maxFetches", rl.MaxFetches, gl.MaxFetches)
	lim("maxFetchBytes", rl.MaxFetchBytes, gl.MaxFetchBytes)
	lim("maxFileBytes", rl.MaxFileBytes, gl.MaxFileBytes)
	lim("maxWriteBytes", rl.MaxWriteBytes, gl.MaxWriteBytes)
	if len(d.Granted.Refused) > 0 {
		fmt.Fprintln(w, "\n  not granted:")
		for _, r := range d.Granted.Refused {
			fmt.Fprintf(w, "    - %s\n", clean(r))
		}
	}
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}
