package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/version"
)

// The version commands: list a skill's versions and move their statuses, as the local operator
// (see operator). The rules (which move, from which status, for which role) are the runtime's
// Transitions; these commands only translate.

var cmdVersions = &command{
	summary: "list a skill's versions, newest first; without an id, what waits for approval across the skills",
	usage:   "[<id>] [--status S] [--limit N] [--tenants FILE --tenant NAME] [--user NAME]",
	long: `List the versions of a skill kept in the store (see --data-dir): every content of the skill
that skillbox met (in a skills directory, installed, uploaded, written by an agent), newest first,
with its status (draft, pending, active, deprecated, yanked, rejected). The NOTE column is what
the last change said, or for a pending version what it asks for beyond the version before it.
The digests it prints, or any 8 or more of their first hex digits, name a version for approve,
reject, publish, deprecate and yank.

Without an id, list the review queue: the versions of every skill of the tenant in --status
(default pending: what waits for an admin's approval), newest first, users' own skills' too,
each naming its user (approve one with --user USER). With an id, --status keeps that skill's
versions in that status.

` + scopeHelp,
	example: `  skillbox versions hello
  skillbox versions
  skillbox versions --status active --tenants tenants.yaml --tenant acme
  skillbox versions hello --tenants tenants.yaml --tenant acme
  skillbox versions notes --tenants tenants.yaml --tenant acme --user alice@acme.example`,
	flags: func(fs *pflag.FlagSet, e *env) {
		fs.Func("status", "only the versions in status `S`: draft, pending, active, deprecated, yanked or rejected (without an id, default pending)", func(v string) error {
			if !version.Status(v).Valid() {
				return fmt.Errorf("%q is not a version status: use one of %v", v, version.Statuses)
			}
			e.queue.Status = version.Status(v)
			return nil
		})
		fs.IntVar(&e.queue.Limit, "limit", 0, fmt.Sprintf("without an id, at most `N` versions (1 to %d; default %d)", version.MaxQuery, version.DefaultQuery))
		scopeFlags(fs, e)
		storeFlags(fs, e, false)
	},
	completeFlags: scopeCompletions,
	complete:      completeScopedSkillIDs,
	run: func(ctx context.Context, e *env, pos []string) int {
		switch {
		case len(pos) > 1:
			return e.fail(exitUsage, "versions takes at most one skill id, e.g. skillbox versions hello (without one, it lists what waits for approval)")
		case len(pos) == 1 && e.queue.Limit != 0:
			return e.fail(exitUsage, "--limit bounds the review queue (versions without an id); a skill's versions are listed whole")
		case e.queue.Limit < 0 || e.queue.Limit > version.MaxQuery:
			return e.fail(exitUsage, "--limit %d: give 1 to %d versions", e.queue.Limit, version.MaxQuery)
		case len(pos) == 0:
			return e.withVersions(ctx, func(rt *runtime.Runtime, _ bool) int { return e.reviewQueue(ctx, rt) })
		}
		return e.withVersions(ctx, func(rt *runtime.Runtime, _ bool) int {
			versions := rt.Versions
			if e.json {
				versions = rt.VersionHistory // each version with its audit trail
			}
			list, err := versions(ctx, pos[0])
			if err != nil {
				return e.versionFailure(pos[0], err)
			}
			if e.queue.Status != "" {
				list = slices.DeleteFunc(list, func(v version.Version) bool { return v.Status != e.queue.Status })
			}
			if e.json {
				out := map[string]any{"skill": pos[0], "versions": list}
				if e.tenant != "" {
					out["tenant"] = e.tenant
				}
				if e.user != "" {
					out["user"] = e.user
				}
				return e.report("", out)
			}
			rows := make([][]string, 0, len(list))
			for _, v := range list {
				rows = append(rows, []string{clean(v.Version), shortDigest(v.Digest), string(v.Status), clean(v.Source),
					clean(v.CreatedBy), v.CreatedAt.Local().Format(time.DateTime), truncate(clean(versionNote(v)), 80)})
			}
			writeRows(e.stdout, []string{"VERSION", "DIGEST", "STATUS", "SOURCE", "BY", "WHEN", "NOTE"}, rows)
			return exitOK
		})
	},
}

// reviewQueue prints the versions of every skill of rt's tenant in e.queue.Status (pending by
// default), newest first, as the operator (an admin) sees them: users' own too, each naming its
// user.
func (e *env) reviewQueue(ctx context.Context, rt *runtime.Runtime) int {
	q := e.queue
	if q.Status == "" {
		q.Status = version.Pending
	}
	list, more, err := rt.FindVersions(ctx, operator(), q)
	if err != nil {
		return e.fail(exitFailed, "%v", err)
	}
	if e.json {
		if list == nil {
			list = []version.Version{}
		}
		out := map[string]any{"status": q.Status, "versions": list, "more": more}
		if e.tenant != "" {
			out["tenant"] = e.tenant
		}
		return e.report("", out)
	}
	if len(list) == 0 {
		fmt.Fprintf(e.stderr, "no %s versions in %s\n", q.Status, e.tenantName())
		return exitOK
	}
	rows := make([][]string, 0, len(list))
	for _, v := range list {
		rows = append(rows, []string{clean(v.Skill), clean(v.User), clean(v.Version), shortDigest(v.Digest), string(v.Status), clean(v.Source),
			clean(v.CreatedBy), v.CreatedAt.Local().Format(time.DateTime), truncate(clean(versionNote(v)), 80)})
	}
	writeRows(e.stdout, []string{"SKILL", "USER", "VERSION", "DIGEST", "STATUS", "SOURCE", "BY", "WHEN", "NOTE"}, rows)
	if more {
		fmt.Fprintf(e.stderr, "more %s versions than --limit %d: act on these, or raise --limit\n", q.Status, cmp.Or(q.Limit, version.DefaultQuery))
	}
	if q.Status == version.Pending {
		fmt.Fprintf(e.stderr, "approve one with: skillbox approve SKILL DIGEST%s (for a user's skill, add --user USER); or reject it\n", e.scopeArgs())
	}
	return exitOK
}

// versionNote is what a version's NOTE column says: what the last change said, or for a
// pending version what it asks for beyond the version before it.
func versionNote(v version.Version) string {
	if v.Status == version.Pending && v.Note == "" {
		return "asks for: " + strings.Join(v.Diff, "; ")
	}
	return v.Note
}

// versionActions are the moves of a version's status the CLI offers, each its own command, with
// its past tense for the report.
var versionActions = map[string]string{
	"approve":   "approved",
	"reject":    "rejected",
	"publish":   "published",
	"deprecate": "deprecated",
	"yank":      "yanked",
}

// actionSummaries say what each action does, for its help.
var actionSummaries = map[string]string{
	"approve":   "approve a pending version's new permissions: it becomes a draft, which may run and be published",
	"reject":    "reject a pending version's new permissions: it never runs",
	"publish":   "publish a version: it serves the skill, and the version that did is deprecated",
	"deprecate": "deprecate the active version: it runs only when pinned by digest, and the skill has no active version",
	"yank":      "withdraw a version for good: it never runs again, even pinned",
}

// versionCommand is the command that applies action to a version.
func versionCommand(action string) *command {
	t := version.Transitions[action]
	from := make([]string, len(t.From))
	for i, s := range t.From {
		from[i] = string(s)
	}
	return &command{
		summary: actionSummaries[action],
		usage:   "<id> <digest> [--note TEXT] [--tenants FILE --tenant NAME] [--user NAME]",
		long: fmt.Sprintf(`%s.
It moves a version from %s to %s.

<digest> is the version's digest as skillbox versions <id> prints it: whole, or at least its
first 8 hex digits. You act as the local operator (your OS
user, recorded with the change) with the admin role: whoever can open the store's database owns
it. A server offers the same move to API keys with the %s role.

%s`,
			upperFirst(actionSummaries[action]), strings.Join(from, " or "), t.To, t.Role, scopeHelp),
		example: fmt.Sprintf(`  skillbox versions hello
  skillbox %[1]s hello 3f2a9c1e --note 'reviewed the new host'
  skillbox %[1]s hello 3f2a9c1e --tenants tenants.yaml --tenant acme
  skillbox %[1]s notes 5be07d41 --tenants tenants.yaml --tenant acme --user alice@acme.example`, action),
		flags: func(fs *pflag.FlagSet, e *env) {
			fs.StringVar(&e.note, "note", "", "say why in `TEXT`, kept with the version (at most 4096 bytes)")
			scopeFlags(fs, e)
			storeFlags(fs, e, false)
		},
		completeFlags: scopeCompletions,
		complete:      completeScopedSkillIDs,
		run: func(ctx context.Context, e *env, pos []string) int {
			if len(pos) != 2 {
				return e.fail(exitUsage, "%s takes a skill id and a version's digest, e.g. skillbox %s hello 3f2a9c1e (skillbox versions hello lists them)", action, action)
			}
			return e.withVersions(ctx, func(rt *runtime.Runtime, _ bool) int {
				v, err := rt.ChangeVersion(ctx, operator(), pos[0], pos[1], action, e.note)
				if err != nil {
					return e.versionFailure(pos[0], err)
				}
				msg := fmt.Sprintf("%s %s %s: it is now %s", versionActions[action], v.Skill, shortDigest(v.Digest), v.Status)
				switch v.Status {
				case version.Draft:
					msg += fmt.Sprintf("; publish it with: skillbox publish %s %s%s", v.Skill, shortDigest(v.Digest), e.scopeArgs())
				case version.Active:
					msg += fmt.Sprintf(": it serves %s", v.Skill)
				}
				return e.report(msg, v)
			})
		},
	}
}

// withVersions opens the store and a runtime that keeps its versions there, in the scope the
// flags name (the default tenant, or --tenant of --tenants; with --user, the user's view), and
// calls fn; kept is false when --no-store opened none (the runtime then keeps no versions).
func (e *env) withVersions(ctx context.Context, fn func(rt *runtime.Runtime, kept bool) int) int {
	spec, code := e.tenantSpec()
	if code != exitOK {
		return code
	}
	h, code := e.openStore(ctx, false)
	if code != exitOK {
		return code
	}
	defer h.Close()
	rt, view, err := e.scopedRuntime(ctx, spec, h)
	if err != nil {
		return e.fail(exitFailed, "%v", err)
	}
	defer rt.Close(context.Background())
	return fn(view, h != nil)
}

// versionFailure reports err, of a version command on skill id, with the way to fix it.
func (e *env) versionFailure(id string, err error) int {
	scope := e.scopeArgs()
	if scope != "" {
		// Not lookupFailure's hint: skillbox list shows the default tenant's skills.
		var nf *runtime.NotFoundError
		if errors.As(err, &nf) {
			return e.fail(exitFailed, "%v, in %s%s", nf, e.tenantName(), e.userName())
		}
	} else if msg, ok := lookupFailure(err); ok {
		return e.fail(exitFailed, "%s", msg)
	}
	switch {
	case errors.Is(err, version.ErrNotFound):
		return e.fail(exitFailed, "%v; list the versions with: skillbox versions %s%s", err, id, scope)
	case errors.Is(err, version.ErrConflict):
		return e.fail(exitFailed, "%v (skillbox versions %s%s shows each version's status)", err, id, scope)
	}
	return e.fail(exitFailed, "%v", err)
}

// shortDigest is a digest's first 12 hex digits: what a person reads and types (the commands
// take any prefix of at least 8 that names one version).
func shortDigest(d string) string {
	h := strings.TrimPrefix(d, "sha256:")
	if len(h) > 12 {
		h = h[:12]
	}
	return h
}

// upperFirst is s with its first letter upper-case.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
