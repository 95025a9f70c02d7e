package runtime

// Summary is a skill's metadata: what a model needs to choose a skill, without its instructions,
// schema or module. The CLI's list and the HTTP API's list print it.
type Summary struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Version     string   `json:"version,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	Kind        Kind     `json:"kind"`
	Status      Status   `json:"status"`
	// Error is why a broken skill is broken (every problem), as the caller chose to render it.
	Error string `json:"error,omitempty"`
}

// Summary returns s's metadata. Error is s.err's text; callers that show problems elsewhere
// (or with other paths) replace it.
func (s *Skill) Summary() Summary {
	out := Summary{ID: s.id, Name: s.Name(), Description: s.Description(), Version: s.Version(), Kind: s.kind, Status: s.status}
	if s.manifest != nil {
		out.Tags = s.manifest.Tags
	}
	if s.err != nil {
		out.Error = s.err.Error()
	}
	return out
}
