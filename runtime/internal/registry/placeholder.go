package registry

import (
	"encoding/json"
	"sort"

	"github.com/skillbox-dev/skillbox/spec"
)

// warnPlaceholders warns of each description of m (path) that is still a placeholder.
func (s *Skill) warnPlaceholders(path string, m *spec.Manifest) {
	if spec.IsPlaceholder(m.Description) {
		s.warn(&spec.ManifestError{Path: path, Field: "description", Msg: "is the placeholder skillbox new wrote", Hint: spec.PlaceholderHint})
	}
	var schema struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if json.Unmarshal(m.Parameters, &schema) != nil {
		return
	}
	names := make([]string, 0, len(schema.Properties))
	for name, p := range schema.Properties {
		if spec.IsPlaceholder(p.Description) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		s.warn(&spec.ManifestError{Path: path, Field: "parameters." + name + ".description", Msg: "is the placeholder skillbox new wrote", Hint: spec.PlaceholderHint})
	}
}
