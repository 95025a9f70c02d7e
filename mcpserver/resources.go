package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/skillmd"
	"github.com/skillbox-dev/skillbox/spec"
)

const (
	uriScheme        = toolset.SkillURIScheme
	instructionsFile = "SKILL.md"
	markdown         = "text/markdown"
	promptArgument   = "arguments"
)

// skillURI is skill://<id>/<rel>, each segment of rel escaped.
func skillURI(id, rel string) string {
	segs := strings.Split(rel, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return uriScheme + id + "/" + strings.Join(segs, "/")
}

// parseURI splits skill://<id>/<rel> and unescapes rel. The path is checked by ReadResource, not
// here: "..", hidden files and the like are refused there, with a reason.
func parseURI(uri string) (id, rel string, err error) {
	rest, ok := strings.CutPrefix(uri, uriScheme)
	if !ok {
		return "", "", fmt.Errorf("not a %s URI", uriScheme)
	}
	id, rawRel, ok := strings.Cut(rest, "/")
	if !ok || !spec.ValidID(id) {
		return "", "", errors.New("the URI names no skill: use skill://<id>/<path>")
	}
	rel, err = url.PathUnescape(rawRel)
	if err != nil {
		return "", "", fmt.Errorf("the path is not validly escaped: %v", err)
	}
	return id, rel, nil
}

// Errors of resources/read: a JSON-RPC error, since the client asked for something it cannot have.
func invalidParams(uri, msg string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s: %s", uri, msg)}
}

// maxReadBytes bounds a file read with resources/read: the most a skill may publish in all under
// the Skills extension, so every file skills/list lists can be read.
const maxReadBytes = skillmd.MaxPublishedBytes

// readResource reads any file of a skill that skillmd.ReadResource allows, for the listed
// resources and the template alike. skill://<id>/SKILL.md is the skill's instructions whole,
// frontmatter included, whatever the file's case on disk: the bytes whose digest and size
// skills/list publishes, and what a client that loads the skill parses.
func (s *Server) readResource(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id, rel, err := parseURI(uri)
	if err != nil {
		return nil, invalidParams(uri, err.Error())
	}
	sk, err := s.rt.Skill(id)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	ctype := mimeType(rel)
	if strings.EqualFold(rel, instructionsFile) {
		if sk.InstructionsPath() == "" {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		rel, ctype = filepath.Base(sk.InstructionsPath()), markdown
	}
	data, err := skillmd.ReadResource(sk.Dir(), rel, maxReadBytes)
	if err != nil {
		var re *skillmd.ResourceError
		switch {
		case errors.Is(err, skillmd.ErrNotFound):
			return nil, mcp.ResourceNotFoundError(uri)
		case errors.As(err, &re):
			// The message says what is wrong with the path, never where the skill lives.
			return nil, invalidParams(uri, re.Msg)
		}
		s.logger.Warn("mcp: cannot read a skill's file", "skill", id, "path", rel, "err", err)
		return nil, invalidParams(uri, "cannot be read")
	}
	c := &mcp.ResourceContents{URI: uri, MIMEType: ctype}
	if utf8.Valid(data) {
		c.Text = string(data)
		if c.MIMEType == "" {
			c.MIMEType = "text/plain"
		}
	} else {
		c.Blob = data
		if c.MIMEType == "" {
			c.MIMEType = "application/octet-stream"
		}
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
}

// getPrompt returns the handler of the prompt of instruction skill id.
func (s *Server) getPrompt(id string) mcp.PromptHandler {
	return func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		sk, err := s.rt.Skill(id)
		if err != nil || sk.Kind() != spec.Instructions {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", id)}
		}
		doc, err := toolset.ReadInstructions(sk, 0)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("prompt %q: %v", id, err)}
		}
		text := skillmd.Render(doc.Body, toolset.BaseDir(sk, s.opts.Remote), req.Params.Arguments[promptArgument])
		return &mcp.GetPromptResult{
			Description: doc.Description,
			Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}},
		}, nil
	}
}

// mimeTypes are the types of files skills usually carry, so listings do not depend on the host's
// mime.types.
var mimeTypes = map[string]string{
	".md": markdown, ".markdown": markdown, ".txt": "text/plain", ".json": "application/json",
	".yaml": "application/yaml", ".yml": "application/yaml", ".csv": "text/csv", ".html": "text/html",
	".xml": "application/xml", ".py": "text/x-python", ".sh": "text/x-shellscript", ".js": "text/javascript",
	".ts": "text/x-typescript", ".go": "text/x-go", ".rs": "text/x-rust", ".pdf": "application/pdf",
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".svg": "image/svg+xml",
	".wasm": "application/wasm",
}

// mimeType guesses a file's type from its extension; "" when unknown.
func mimeType(rel string) string {
	ext := strings.ToLower(path.Ext(rel))
	if t, ok := mimeTypes[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		mt, _, err := mime.ParseMediaType(t)
		if err == nil {
			return mt
		}
	}
	return ""
}
