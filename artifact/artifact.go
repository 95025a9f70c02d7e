// Package artifact holds what a run leaves behind: the files of its output directory, their names,
// and the Store interface a database implements to keep them beyond the run. It is a leaf: a store
// or a face reads it without linking the runtime that makes artifacts.
package artifact

import (
	"context"
	"errors"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// OutputMount is the virtual path of a run's output directory. A manifest asks for it like any
// directory (`"files": [{"path": "/output", "access": "read-write"}]`) but the policy needs no
// mount for it: each run gets a fresh, empty, private directory there, and the files the run
// leaves in it become its artifacts (see docs/artifacts.md).
const OutputMount = "/output"

// Artifact is a file a run left in its output directory, as the run's result lists it and its
// "file" event announces it.
type Artifact struct {
	// Name is the file's path below /output, slash-separated ("report.pdf", "charts/a.png").
	Name string `json:"name"`
	Size int64  `json:"size"`
	// SHA256 is the hex sha256 of the file's bytes: their identity in a content-addressed
	// store, and the ETag of their download.
	SHA256 string `json:"sha256"`
	// MediaType is by the name's extension when it has a known one, else sniffed from the
	// first 512 bytes (http.DetectContentType).
	MediaType string `json:"media_type"`
	// URL is where a face serves the bytes, when it does: the HTTP face sets it, in its
	// answers, to GET /v1/runs/{id}/artifacts/{name} under its prefix. Stores do not keep it.
	URL string `json:"url,omitempty"`
}

// File is an artifact and a way to read its bytes, for a [Store] to keep.
type File struct {
	Artifact
	// Open reads the artifact's bytes. It is valid until PutArtifacts returns (the run's output
	// directory is removed then); each call reads from the start.
	Open func() (io.ReadCloser, error)
}

// Store keeps the artifacts of runs beyond the run: a store implements it (see the
// store package), as it implements history.Recorder, so the runtime links no database.
//
// PutArtifacts is called once per run that left files, on the run's goroutine, before the run's
// result is recorded and before its "file" events are sent: a client told of a file can fetch
// it. A store that refuses for want of room answers an error that is [ErrQuotaExceeded]: the run
// then fails with kind quota_exceeded, since the files it made are not kept. Any other error is
// logged and the run keeps its outcome; its artifacts are then not downloadable.
//
// OpenArtifact reads one artifact back for viewer, who sees a run's files as they see the run (a
// run list's Viewer: access.Principal.Viewer): "" any run's; any other viewer only a run of the
// whole tenant's or of viewer's own, and a run the store holds no record of is no run to them.
// Its error is [ErrNoRun] when the store knows no run of that id that viewer sees,
// [ErrNoArtifact] when the run left no file of that name.
type Store interface {
	PutArtifacts(ctx context.Context, runID string, files []File) error
	OpenArtifact(ctx context.Context, viewer, runID, name string) (io.ReadCloser, Artifact, error)
}

// Why an artifact cannot be read (errors.Is): the two 404s a download tells apart.
var (
	ErrNoRun      = errors.New("no such run")
	ErrNoArtifact = errors.New("no such artifact")
)

// MaxNameBytes is the longest artifact name: the longest path a guest can name
// (hostfuncs.MaxPathBytes, which a test of the runtime holds it equal to).
const MaxNameBytes = 4096

// ValidPath says whether rel can name an artifact everywhere it goes: a JSON string, a
// URL path, a database key and a Content-Disposition header.
func ValidPath(rel string) bool {
	if rel == "" || len(rel) > MaxNameBytes || !utf8.ValidString(rel) {
		return false
	}
	for _, r := range rel {
		if unicode.IsControl(r) || r == '\\' || r == '"' {
			return false
		}
	}
	return true
}

// ValidName says whether name could name an artifact: a clean, relative slash path of
// valid UTF-8 without control characters, backslashes or double quotes. A face checks a
// client's name with it before asking for the artifact.
func ValidName(name string) bool {
	if !ValidPath(name) || strings.HasPrefix(name, "/") {
		return false
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}
