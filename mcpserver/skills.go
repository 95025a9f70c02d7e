package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/skillmd"
	"github.com/skillbox-dev/skillbox/spec"
)

// SkillsExtension is the identifier of the MCP Skills extension, which the server declares in its
// capabilities (capabilities.extensions) with no settings: it answers skills/list and skills/get,
// and serves every file those list through resources/read. It does not declare directoryRead,
// and does not answer resources/directory/read.
//
// A skill is in skills/list, and skills/get answers for it, when it has a SKILL.md whose
// frontmatter a strict YAML reader takes, with a valid Agent Skills name equal to its id, and
// at most 512 files of at most 16 MiB in all ([skillmd.Publisher.Publish]). Its entry's uri is
// skill://<id>/SKILL.md, its frontmatter is the file's whole frontmatter, and its resources are
// the SKILL.md and every file resources/list offers for it, each with its sha256 digest and size
// as resources/read serves it.
//
// The official Go SDK answers methods it does not know with "method not found" before any
// middleware runs, so the extension's requests are answered where the transports hand over raw
// JSON-RPC messages: the connections of [Server.Transport] (which [Server.RunStdio] uses) and
// [Server.Handler]'s HTTP handler. A transport connected to [Server.MCP] without Transport gets
// the declaration but not the methods.
const SkillsExtension = "io.modelcontextprotocol/skills"

// The extension's methods.
const (
	methodSkillsList = "skills/list"
	methodSkillsGet  = "skills/get"
)

// isSkillsMethod reports whether method is answered by the extension.
func isSkillsMethod(method string) bool {
	return method == methodSkillsList || method == methodSkillsGet
}

// skillsPageSize is how many skills one page of skills/list holds at most: each entry lists up to
// 512 files, and the first listing of a skill hashes them.
const skillsPageSize = 50

// maxSkillURIBytes bounds params.uri of skills/get, and so what an error quotes of it.
const maxSkillURIBytes = 8 << 10

// skillResource, skillEntry and the results are the extension's wire shapes, field for field.
type skillResource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

type skillEntry struct {
	URI         string          `json:"uri"`
	Frontmatter map[string]any  `json:"frontmatter"`
	Resources   []skillResource `json:"resources"`
}

// cacheable are the caching hints every result of the extension carries (required from protocol
// 2026-07-28 on, and harmless before): immediately stale, as the skills change on any reload
// and no notification says so, and the same for every client of the server.
type cacheable struct {
	ResultType string         `json:"resultType"`
	TTLMs      int            `json:"ttlMs"`
	CacheScope string         `json:"cacheScope"`
	Meta       map[string]any `json:"_meta,omitempty"`
}

var complete = cacheable{ResultType: "complete", TTLMs: 0, CacheScope: "public"}

type listSkillsResult struct {
	Skills     []skillEntry `json:"skills"`
	NextCursor string       `json:"nextCursor,omitempty"`
	cacheable
}

type getSkillResult struct {
	Skill skillEntry `json:"skill"`
	cacheable
}

// maxSkillsAnswers bounds the extension's requests the server answers at once, over every
// transport: the first listing of a page of skills reads and hashes up to 16 MiB per skill.
const maxSkillsAnswers = 4

// answerSkills answers one request of the extension (isSkillsMethod(req.Method)), waiting for
// one of maxSkillsAnswers slots while ctx lasts.
func (s *Server) answerSkills(ctx context.Context, req *jsonrpc.Request) *jsonrpc.Response {
	select {
	case s.skillsSlots <- struct{}{}:
		defer func() { <-s.skillsSlots }()
	case <-ctx.Done():
		return &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the request ended before it was answered: " + ctx.Err().Error()}}
	}
	var result any
	var err *jsonrpc.Error
	c := complete
	if newProtocol(req.Params) {
		// From 2026-07-28 on, a server names itself in every result, as the SDK's results do.
		c.Meta = map[string]any{mcp.MetaKeyServerInfo: &mcp.Implementation{Name: s.opts.Name, Title: "Skillbox", Version: s.opts.Version}}
	}
	switch req.Method {
	case methodSkillsList:
		result, err = s.listSkills(req.Params, c)
	default:
		result, err = s.getSkill(req.Params, c)
	}
	if err != nil {
		return &jsonrpc.Response{ID: req.ID, Error: err}
	}
	data, merr := json.Marshal(result)
	if merr != nil { // frontmatter values are JSON values by construction
		s.logger.Error("mcp: encoding a skills result", "method", req.Method, "err", merr)
		return &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the result could not be encoded"}}
	}
	return &jsonrpc.Response{ID: req.ID, Result: data}
}

// newProtocol reports whether a request's params say, in _meta, that it is of protocol
// 2026-07-28 or later, which carries its version in every request.
func newProtocol(params json.RawMessage) bool {
	var p struct {
		Meta struct {
			Version string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	}
	return json.Unmarshal(params, &p) == nil && statelessProtocol(p.Meta.Version)
}

func invalidSkillsParams(format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// decodeParams decodes params, which may be absent or null, into v; unknown members are ignored,
// as later revisions may add some.
func decodeParams(params json.RawMessage, v any) *jsonrpc.Error {
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	if err := json.Unmarshal(params, v); err != nil {
		return invalidSkillsParams("params: %s", truncate(err.Error(), maxReasonBytes))
	}
	return nil
}

// listSkills answers skills/list: the published skills in order of id, a page at a time. The
// cursor is the last id of the previous page, so a skill added or removed between two pages
// neither shifts nor repeats the others.
func (s *Server) listSkills(params json.RawMessage, c cacheable) (any, *jsonrpc.Error) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	after := ""
	if p.Cursor != nil {
		raw, err := base64.RawURLEncoding.DecodeString(*p.Cursor)
		if err != nil || !spec.ValidID(string(raw)) {
			return nil, invalidSkillsParams("params.cursor %q is not a cursor this server gave: pass back a nextCursor unchanged, or none for the first page", truncate(*p.Cursor, maxReasonBytes))
		}
		after = string(raw)
	}
	skills := slices.SortedFunc(slices.Values(s.rt.Skills()), func(a, b *runtime.Skill) int { return strings.Compare(a.ID(), b.ID()) })
	res := listSkillsResult{Skills: []skillEntry{}, cacheable: c}
	for i, sk := range skills {
		if sk.ID() <= after {
			continue
		}
		if len(res.Skills) == skillsPageSize {
			res.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(skills[i-1].ID()))
			break
		}
		e, err := s.skillEntry(sk)
		if err != nil {
			continue // logged
		}
		res.Skills = append(res.Skills, e)
	}
	return res, nil
}

// getSkill answers skills/get: the entry of the skill whose SKILL.md is params.uri.
func (s *Server) getSkill(params json.RawMessage, c cacheable) (any, *jsonrpc.Error) {
	var p struct {
		URI *string `json:"uri"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	switch {
	case p.URI == nil || *p.URI == "":
		return nil, invalidSkillsParams(`params.uri is required: the URI of a skill's SKILL.md, such as "skill://<name>/SKILL.md"`)
	case len(*p.URI) > maxSkillURIBytes:
		return nil, invalidSkillsParams("params.uri is longer than %d bytes", maxSkillURIBytes)
	}
	uri := *p.URI
	quoted := truncate(uri, maxReasonBytes)
	id, rel, err := parseURI(uri)
	switch {
	case err != nil:
		return nil, invalidSkillsParams("No skill is served at %s: %v", quoted, err)
	case rel != skillmd.InstructionsName:
		return nil, invalidSkillsParams("%s is not the URI of a skill's SKILL.md: use skill://<name>/SKILL.md", quoted)
	}
	sk, rerr := s.rt.Skill(id)
	if rerr != nil {
		return nil, invalidSkillsParams("No skill is served at %s", quoted)
	}
	e, perr := s.skillEntry(sk)
	if perr != nil {
		if errors.Is(perr, skillmd.ErrUnpublishable) || errors.Is(perr, skillmd.ErrNotFound) {
			return nil, invalidSkillsParams("No skill is served at %s: %v", quoted, perr)
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s cannot be read", quoted)}
	}
	return getSkillResult{Skill: e, cacheable: c}, nil
}

// Publish reads sk as the Skills extension publishes it ([skillmd.Publisher.Publish]: its
// frontmatter as a strict reader takes it, every file with its digest and size), or says why it
// is not published. The /.well-known/agent-skills index of the HTTP face publishes through it
// too, so both list the same skills under the same rules, from one cache of digests.
func (s *Server) Publish(sk *runtime.Skill) (*skillmd.Package, error) {
	if sk.InstructionsPath() == "" {
		return nil, &skillmd.ResourceError{Path: skillmd.InstructionsName, Kind: skillmd.ErrNotFound, Msg: "the skill has no SKILL.md"}
	}
	return s.publisher.Publish(sk.Dir(), filepath.Base(sk.InstructionsPath()), sk.ID())
}

// skillEntry is sk's entry, or why it has none (logged once per skill and reason).
func (s *Server) skillEntry(sk *runtime.Skill) (skillEntry, error) {
	pkg, err := s.Publish(sk)
	if err != nil {
		s.unpublished.report(s, sk.ID(), err)
		return skillEntry{}, err
	}
	e := skillEntry{URI: skillURI(sk.ID(), skillmd.InstructionsName), Frontmatter: pkg.Frontmatter, Resources: make([]skillResource, 0, len(pkg.Files))}
	for _, f := range pkg.Files {
		e.Resources = append(e.Resources, skillResource{URI: skillURI(sk.ID(), f.Path), Digest: f.Digest, Size: f.Size})
	}
	return e, nil
}

// unpublished remembers which skills were reported as not published, and why, so that a client
// listing every few seconds does not fill the log.
type unpublished struct {
	mu   sync.Mutex
	seen map[string]bool
}

// maxUnpublishedReports bounds the memory of unpublished: past it, reports start over.
const maxUnpublishedReports = 4096

func (u *unpublished) report(s *Server, id string, err error) {
	key := id + "\x00" + err.Error()
	u.mu.Lock()
	if u.seen == nil || len(u.seen) >= maxUnpublishedReports {
		u.seen = map[string]bool{}
	}
	first := !u.seen[key]
	u.seen[key] = true
	u.mu.Unlock()
	if first {
		s.logger.Warn("mcp: the skill is left out of skills/list", "skill", id, "err", err)
	}
}
