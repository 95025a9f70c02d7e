package server

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/artifact"
	"github.com/skillbox-dev/skillbox/run"
)

// apiPrefix is the prefix this server is mounted at: the part of the matched route before /v1/.
func apiPrefix(c echo.Context) string {
	prefix, _, _ := strings.Cut(c.Path(), "/v1/")
	return prefix
}

// artifactURL is where this server serves run id's artifact name (see (*view).artifact): each
// segment of the name escaped, so a name with spaces or '#' is still one path.
func artifactURL(prefix, id, name string) string {
	segs := strings.Split(name, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return prefix + "/v1/runs/" + url.PathEscape(id) + "/artifacts/" + strings.Join(segs, "/")
}

// linkArtifacts is as, each with the URL that downloads it from this server: a copy, since as
// may be shared (the runtime's record of a recent run, a kept event).
func linkArtifacts(prefix, id string, as []artifact.Artifact) []artifact.Artifact {
	if len(as) == 0 {
		return as
	}
	out := slices.Clone(as)
	for i := range out {
		out[i].URL = artifactURL(prefix, id, out[i].Name)
	}
	return out
}

// linkResult is res as this server answers it: its artifacts linked (see linkArtifacts).
func linkResult(prefix string, res *run.Result) *run.Result {
	if res == nil || len(res.Artifacts) == 0 {
		return res
	}
	out := *res
	out.Artifacts = linkArtifacts(prefix, res.RunID, res.Artifacts)
	return &out
}

// linkEvent is e as this server streams it: a file event's artifact and a result's artifacts
// linked.
func linkEvent(prefix string, e run.Event) run.Event {
	if e.File != nil {
		f := *e.File
		f.URL = artifactURL(prefix, e.RunID, f.Name)
		e.File = &f
	}
	e.Result = linkResult(prefix, e.Result)
	return e
}

// linkRawEvent is an event another node encoded (data), linked like linkEvent when it is one
// that names artifacts; any other, or one that does not decode, is sent as it came.
func linkRawEvent(prefix, name string, data []byte) []byte {
	if name != "result" && name != "file" {
		return data
	}
	var e run.Event
	if json.Unmarshal(data, &e) != nil {
		return data
	}
	out, err := json.Marshal(linkEvent(prefix, e))
	if err != nil {
		return data
	}
	return out
}
