// Package skilltags reads a skill's tags the one way every listing of skills shows them: the
// manifest's for an executable skill, the SKILL.md frontmatter's optional "tags" for an
// instruction skill. The search index and the toolset's list_skills both read them, so a tag a
// model is shown is a tag a search finds.
package skilltags

import "github.com/skillbox-dev/skillbox/catalog"

// Of returns the tags of s: its manifest's, else its SKILL.md's, else none.
func Of(s catalog.Skill) []string {
	switch {
	case s.Manifest() != nil:
		return s.Tags()
	case s.Instructions() != nil:
		return List(s.Instructions().Extra["tags"])
	}
	return nil
}

// List reads a SKILL.md's optional "tags": a list of words, or one string of them. Entries that
// are not strings are dropped.
func List(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
