package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/skillmd"
)

// The Agent Skills discovery index (/.well-known/agent-skills/index.json): the skills this
// server publishes, for agents that install skills from a site. It lists the same skills as the
// MCP Skills extension's skills/list, under the same rules (skillmd.Publisher.Publish): a
// SKILL.md whose frontmatter a strict YAML reader takes, a valid Agent Skills name equal to the
// skill's id, at most 512 files of at most 16 MiB in all. A skill with only its SKILL.md is
// served as that file ("type": "skill-md"); one with other files as a .tar.gz of its directory
// ("type": "archive"), which the same files always make the same bytes of. Each entry's digest
// is the sha256 of what its url serves; urls are relative to the index, so they hold wherever
// the API is mounted.

// agentSkillsSchema identifies the version of the index format.
const agentSkillsSchema = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"

type agentSkillsIndex struct {
	Schema string             `json:"$schema"`
	Skills []agentSkillsEntry `json:"skills"`
}

type agentSkillsEntry struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
	URL         string `json:"url"`
	Digest      string `json:"digest"`
}

// agentSkills holds what the index needs between requests: the digest of each skill's archive by
// the digest of its files, so an unchanged skill is archived once. The files' digests are the
// MCP face's ([mcpserver.Server.Publish]).
type agentSkills struct {
	mu       sync.Mutex
	archives map[string][2]string // by skill id: {files digest, archive digest}

	// building bounds the archives held in memory at once: each is up to 16 MiB.
	building chan struct{}
}

func newAgentSkills() *agentSkills {
	return &agentSkills{archives: map[string][2]string{}, building: make(chan struct{}, 2)}
}

// mountAgentSkills registers the index and its artifacts on add.
func (s *Server) mountAgentSkills(add func(method, path string, h echo.HandlerFunc)) {
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		add(m, "/.well-known/agent-skills", redirectTo("agent-skills/index.json"))
		add(m, "/.well-known/agent-skills/", redirectTo("index.json"))
		add(m, "/.well-known/agent-skills/index.json", s.each((*view).agentSkillsIndex))
		add(m, "/.well-known/agent-skills/:id/SKILL.md", s.each((*view).agentSkillMD))
		add(m, "/.well-known/agent-skills/:archive", s.each((*view).agentSkillArchive))
	}
}

// redirectTo redirects to location, relative to the request's URL, so it holds under any mount.
func redirectTo(location string) echo.HandlerFunc {
	return func(c echo.Context) error { return c.Redirect(http.StatusFound, location) }
}

func (s *view) agentSkillsIndex(c echo.Context) error {
	skills := slices.SortedFunc(slices.Values(s.rt.Skills()), func(a, b *runtime.Skill) int { return strings.Compare(a.ID(), b.ID()) })
	idx := agentSkillsIndex{Schema: agentSkillsSchema, Skills: []agentSkillsEntry{}}
	live := map[string]bool{}
	for _, sk := range skills {
		pkg, err := s.mcp.Publish(sk)
		if err != nil {
			continue
		}
		e := agentSkillsEntry{Name: pkg.Name, Description: pkg.Frontmatter["description"].(string)}
		if len(pkg.Files) == 1 {
			e.Type, e.URL, e.Digest = "skill-md", sk.ID()+"/"+skillmd.InstructionsName, pkg.Files[0].Digest
		} else {
			digest, err := s.agent.archiveDigest(sk, pkg)
			if err != nil {
				s.logger.Warn("agent-skills: the skill is left out of the index", "skill", sk.ID(), "err", err)
				continue
			}
			e.Type, e.URL, e.Digest = "archive", sk.ID()+".tar.gz", digest
			live[sk.ID()] = true
		}
		idx.Skills = append(idx.Skills, e)
	}
	s.agent.mu.Lock()
	for id := range s.agent.archives {
		if !live[id] {
			delete(s.agent.archives, id) // gone, or no longer an archive
		}
	}
	s.agent.mu.Unlock()
	c.Response().Header().Set("Cache-Control", "no-cache")
	return c.JSON(http.StatusOK, idx)
}

// published is the skill of the request's id and its Package, or a 404 saying why there is none.
func (s *view) published(id string) (*runtime.Skill, *skillmd.Package, error) {
	sk, err := s.rt.Skill(id)
	if err != nil {
		return nil, nil, noSkill(err, id)
	}
	pkg, err := s.mcp.Publish(sk)
	var pe *skillmd.PublishError
	switch {
	case errors.As(err, &pe):
		return nil, nil, httpError(http.StatusNotFound, "not_found", "skill %q is %v", id, pe)
	case errors.Is(err, skillmd.ErrNotFound):
		return nil, nil, httpError(http.StatusNotFound, "not_found", "skill %q has no SKILL.md", id)
	case err != nil:
		s.logger.Warn("agent-skills: cannot read a skill", "skill", id, "err", err)
		return nil, nil, httpError(http.StatusInternalServerError, "internal", "skill %q cannot be read", id)
	}
	return sk, pkg, nil
}

func (s *view) agentSkillMD(c echo.Context) error {
	sk, pkg, err := s.published(c.Param("id"))
	if err != nil {
		return err
	}
	data, err := skillmd.ReadResource(sk.Dir(), filepath.Base(sk.InstructionsPath()), skillmd.MaxPublishedBytes)
	if err != nil {
		return httpError(http.StatusNotFound, "not_found", "skill %q: %v", sk.ID(), err)
	}
	sum := sha256.Sum256(data)
	if digest := "sha256:" + hex.EncodeToString(sum[:]); digest == pkg.Files[0].Digest {
		c.Response().Header().Set("ETag", `"`+digest+`"`)
	}
	c.Response().Header().Set("Cache-Control", "no-cache")
	c.Response().Header().Set("X-Content-Type-Options", "nosniff")
	return c.Blob(http.StatusOK, "text/markdown; charset=utf-8", data)
}

func (s *view) agentSkillArchive(c echo.Context) error {
	id, ok := strings.CutSuffix(c.Param("archive"), ".tar.gz")
	if !ok {
		return httpError(http.StatusNotFound, "not_found", "no %q here: the index is index.json, and archives are <name>.tar.gz", c.Param("archive"))
	}
	sk, pkg, err := s.published(id)
	if err != nil {
		return err
	}
	data, digest, err := s.agent.archive(sk, pkg)
	if errors.Is(err, skillmd.ErrUnpublishable) {
		// A file changed between the listing and the archive: once more, from the files as they
		// are now.
		if sk, pkg, err = s.published(id); err != nil {
			return err
		}
		data, digest, err = s.agent.archive(sk, pkg)
	}
	if err != nil {
		s.logger.Warn("agent-skills: cannot archive a skill", "skill", id, "err", err)
		return httpError(http.StatusServiceUnavailable, "unavailable", "skill %q is changing: try again", id)
	}
	c.Response().Header().Set("ETag", `"`+digest+`"`)
	c.Response().Header().Set("Cache-Control", "no-cache")
	return c.Blob(http.StatusOK, "application/gzip", data)
}

// archiveDigest is the digest of pkg's archive: remembered by the digest of its files, made
// once otherwise.
func (a *agentSkills) archiveDigest(sk *runtime.Skill, pkg *skillmd.Package) (string, error) {
	a.mu.Lock()
	c, ok := a.archives[sk.ID()]
	a.mu.Unlock()
	if ok && c[0] == pkg.Digest {
		return c[1], nil
	}
	_, digest, err := a.archive(sk, pkg)
	return digest, err
}

// archive makes the .tar.gz of pkg, and remembers its digest.
func (a *agentSkills) archive(sk *runtime.Skill, pkg *skillmd.Package) ([]byte, string, error) {
	a.building <- struct{}{}
	defer func() { <-a.building }()
	var buf bytes.Buffer
	if err := skillmd.Archive(&buf, sk.Dir(), pkg); err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(buf.Bytes())
	digest := "sha256:" + hex.EncodeToString(sum[:])
	a.mu.Lock()
	a.archives[sk.ID()] = [2]string{pkg.Digest, digest}
	a.mu.Unlock()
	return buf.Bytes(), digest, nil
}
