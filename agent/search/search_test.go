package search

import (
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/spec"
)

func ids(hits []Hit) []string {
	out := []string{}
	for _, h := range hits {
		out = append(out, h.ID)
	}
	return out
}

func TestSearch(t *testing.T) {
	broken := mustSkill(runtime.SkillSpec{ID: "broken-pdf", Kind: spec.Executable, Status: catalog.StatusError,
		Manifest: &spec.Manifest{ID: "broken-pdf", Name: "PDF", Description: "pdf pdf pdf"}})
	c := testCatalog{
		exe("pdf-tools", "PDF tools", "Extracts text from documents"),
		exe("doc-reader", "Document reader", "Reads documents, including PDF files"),
		exe("word-count", "Word count", "Counts the words, lines and characters of a text", "text", "statistics"),
		exe("cafe-menu", "Café menu", "Shows today's menu"),
		exe("twin-b", "Twin", "identical"),
		exe("twin-a", "Twin", "identical"),
		exe("tagged", "Something", "Nothing in common", "pdf"),
		broken,
	}
	tests := []struct {
		query string
		limit int
		want  []string
	}{
		{"pdf", 0, []string{"pdf-tools", "tagged", "doc-reader"}}, // name > tags > description
		{"PDF!", 0, []string{"pdf-tools", "tagged", "doc-reader"}},
		{"count words", 0, []string{"word-count"}},
		{"statistics", 0, []string{"word-count"}},
		{"cafe", 0, []string{"cafe-menu"}},
		{"CAFÉ", 0, []string{"cafe-menu"}},
		{"cafe\u0301", 0, []string{"cafe-menu"}},    // decomposed accent
		{"twin", 0, []string{"twin-a", "twin-b"}},   // equal scores: by id
		{"documents pdf", 1, []string{"pdf-tools"}}, // both words, one in the name
		{"documents files", 0, []string{"doc-reader", "pdf-tools"}},
		{"word-count", 0, []string{"word-count"}},
		{"zzz-qqq", 0, []string{}},
		{"", 0, []string{}},
		{"  ,;!  ", 0, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			hits := Search(c, tc.query, tc.limit)
			if got := ids(hits); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			for i, h := range hits {
				if h.Score <= 0 || math.IsNaN(h.Score) || (i > 0 && h.Score > hits[i-1].Score) {
					t.Errorf("scores out of order: %+v", hits)
				}
			}
		})
	}
	h := Search(c, "word", 1)[0]
	if h.Name != "Word count" || h.Description != "Counts the words, lines and characters of a text" || h.Kind != spec.Executable {
		t.Errorf("hit %+v", h)
	}
}

func TestSearchLimit(t *testing.T) {
	var c testCatalog
	for i := 0; i < 150; i++ {
		c = append(c, exe(fmt.Sprintf("s%03d", i), "same", "same"))
	}
	for _, tc := range []struct{ limit, want int }{{0, 10}, {-1, 10}, {5, 5}, {100, 100}, {1000, 100}} {
		if got := len(Search(c, "same", tc.limit)); got != tc.want {
			t.Errorf("limit %d: %d hits, want %d", tc.limit, got, tc.want)
		}
	}
	if got := ids(Search(c, "same", 3)); !reflect.DeepEqual(got, []string{"s000", "s001", "s002"}) {
		t.Errorf("got %q", got)
	}
}

// TestSearchRuntime searches a real runtime: instruction skills are found by their SKILL.md, with
// its tags; broken skills and SKILL.md files that do not parse are not.
func TestSearchRuntime(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "notes", map[string]string{"skill.json": `{"id":"notes","name":"Notes","description":"Keeps notes in the workspace"}`}, true)
	fixture(t, dir, "note-style", map[string]string{"SKILL.md": "---\nname: note-style\ndescription: How to write good notes\ntags: [writing, style]\n---\nBody\n"}, false)
	fixture(t, dir, "bad-notes", map[string]string{"SKILL.md": "---\nname: bad notes\n---\n"}, false)
	fixture(t, dir, "broken-notes", map[string]string{"skill.json": `{"id":"broken-notes","name":"notes"}`}, true)
	rt := newRuntime(t, dir, nil)

	hits := Search(rt, "notes", 0)
	if got := ids(hits); !reflect.DeepEqual(got, []string{"notes", "note-style"}) {
		t.Fatalf("got %q", got)
	}
	if h := hits[1]; h.Kind != spec.Instructions || h.Name != "note-style" || h.Description != "How to write good notes" {
		t.Errorf("hit %+v", h)
	}
	if got := ids(Search(rt, "writing", 0)); !reflect.DeepEqual(got, []string{"note-style"}) {
		t.Errorf("by tag: got %q", got)
	}
	// An Index answers the same as Search.
	ix := NewIndex(rt.Skills())
	if got := ix.Search("notes", 0); !reflect.DeepEqual(got, hits) {
		t.Errorf("index %+v, search %+v", got, hits)
	}
}

func TestTokenize(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Word-Count v2", []string{"word", "count", "v2"}},
		{"Ärger über Straße", []string{"arger", "uber", "strasse"}},
		{"ŁÓDŹ Œuvre naïve", []string{"lodz", "oeuvre", "naive"}},
		{"日本語 text", []string{"日本語", "text"}},
		{"snake_case.and/slash", []string{"snake", "case", "and", "slash"}},
		{"", []string{}},
	}
	for _, tc := range tests {
		got := []string{}
		tokenize(tc.in, nil, func(b []byte) { got = append(got, string(b)) })
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("tokenize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
