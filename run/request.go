// Package run holds the words a run is asked for and answered in: the Request, its Events, the
// Result, and the closed set of error kinds (Error, ErrorKind and one sentinel per kind). It is a
// leaf, so a store that records results and a face that translates them need not link the
// runtime that makes them.
package run

import (
	"encoding/json"
	"strings"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/artifact"
)

// Face names how a run was asked for. Faces only translate requests and results; the runtime
// records the face of each run, so metrics and history can tell them apart.
type Face string

const (
	FaceLibrary Face = "library" // a Go program calling Runtime.Run (the default)
	FaceCLI     Face = "cli"     // skillbox run
	FaceHTTP    Face = "http"    // the HTTP API
	FaceMCP     Face = "mcp"     // an MCP client
	FaceAgent   Face = "agent"   // the agent helpers (tool calls, RUN_MODULE blocks)
)

// Request is one run to make. Only Skill is required; the zero values of the rest are safe.
type Request struct {
	// Skill is the id of the skill to run.
	Skill string
	// Args is the arguments, a JSON object; empty or null mean {}.
	Args json.RawMessage
	// Script, when set, runs the skill's program of that name — a file in its scripts/
	// directory, "report.py" or "scripts/report.py" — with Argv as its command line and Stdin as
	// its standard input, instead of the skill's execute; Args is not used. Any skill may have
	// programs, an instruction skill too. The result is a ProgramOutput (exit code, stdout,
	// stderr); a program that exits non-zero is a run that succeeded with that exit code.
	Script string
	// Argv and Stdin are a program's command line and standard input. A run of a skill's
	// execute takes its input as Args only, and refuses them (invalid_args).
	Argv  []string
	Stdin []byte
	// Digest, when set, pins the version to run: a version digest ("sha256:<hex>", or at least
	// its first 8 hex digits) of the skill, as Runtime.Versions lists them. Only with a
	// version.Store (Config.Versions); without one, a pin is refused unless it names the current
	// version.
	Digest string
	// Face and Who say who asked: the face, and the principal (its key, user, tenant and role)
	// the face authenticated. The run's record, metrics and span name Who.Caller().
	Face Face
	Who  access.Principal
	// TraceParent is a W3C traceparent the run's span continues when ctx carries no span
	// context of its own. A caller with an OpenTelemetry context passes it in ctx instead, as
	// the HTTP and MCP faces do (docs/observability.md); the run's log line names the trace.
	TraceParent string
	// NoWait refuses the run at once, busy with ErrNoRoomNow, when the runtime cannot admit it
	// now, instead of waiting in its admission queue: a node of a cluster hands such a run to
	// another node.
	NoWait bool
	// Yield, with NoWait, refuses the run so even when the runtime has room now: runs that came
	// before it wait elsewhere (a cluster's queue), and go first. A node of a cluster sets it
	// while its queue holds runs, so a new run joins their line rather than take a slot ahead
	// of them.
	Yield bool
	// ID, when set, is the run's id instead of a new one: "run_" and 24 lowercase hex digits. A
	// node of a cluster sets it for a run another node accepted and named; a library leaves it
	// empty.
	ID string
	// OnEvent, when set, receives the run's events, on the run's goroutine, as they happen: it
	// must not block for long, it delays the guest. A request refused before it is admitted (no
	// such skill, invalid arguments, busy, closed) has no events: Run's error says why.
	OnEvent func(Event) `json:"-"`
	// Asker, when set, says a person may be asked for what the run's calls are refused and the
	// policy's ask section lets a person grant, and puts it to them (AnswerThroughAPI for a face
	// whose people answer through the runtime's API). Nil asks nobody: every refusal is final.
	Asker Asker `json:"-"`
}

// ValidID reports whether id is a run id as the runtime makes them: "run_" and 24 lowercase hex
// digits.
func ValidID(id string) bool {
	h, ok := strings.CutPrefix(id, "run_")
	if !ok || len(h) != 24 {
		return false
	}
	for _, c := range h {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Event is something that happened during an admitted run, in order: "status" with Status
// "started" once the run is admitted, "status" with Status "running" once the module is
// instantiated, "log" events (Log is set) as the skill logs, a "file" event (File is set) for
// each artifact once the run is over and its files are kept, and last "result" (Result is set).
// A wait for a person is "status" "waiting", "permission_request", "permission_answer", then
// "status" "running" again.
type Event struct {
	Type   string             `json:"type"`
	RunID  string             `json:"run_id"`
	Status string             `json:"status,omitempty"`
	Log    *LogEntry          `json:"log,omitempty"`
	File   *artifact.Artifact `json:"file,omitempty"`
	Result *Result            `json:"result,omitempty"`
	// Permission is set on a "permission_request" event: the run waits for a person's answer
	// (its status "waiting" until then). Answered is set on the "permission_answer" event that
	// ends the wait.
	Permission *PermissionRequest `json:"permission_request,omitempty"`
	Answered   *Asked             `json:"permission_answer,omitempty"`
}
