// Package search ranks a catalog's skills against a query (BM25 over id, name, description and
// tags, accents folded). list_skills uses it to answer a query, and a face keeps an [Index] to
// answer searches without re-indexing. It reads skills through package catalog and links no
// engine.
package search

import (
	"math"
	"sort"

	"github.com/skillbox-dev/skillbox/agent/internal/skilltags"
	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/spec"
)

// Hit is a skill that matches a search.
type Hit struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Kind        spec.Kind `json:"kind"`
	Score       float64   `json:"score"`
}

// Search limits.
const (
	DefaultLimit = 10
	MaxLimit     = 100
)

// BM25 parameters: the usual ones.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// Field boosts: a word of a skill's name or tags says more about what it is for than a word of
// its description. The id is usually the name again, in another spelling.
const (
	boostName        = 3
	boostTags        = 2
	boostID          = 2
	boostDescription = 1
)

// Index is a search index over a set of skills. It is immutable, so safe for concurrent use;
// build a new one when the skills change (after a reload).
type Index struct {
	hits     []Hit     // one per document, Score unset
	norm     []float64 // BM25's length normalisation of each document
	terms    map[string]int
	postings [][]posting // by term number
}

type posting struct {
	doc int
	tf  float64 // boosted term frequency
}

// NewIndex indexes the active skills among skills, executable and instruction skills alike: an
// executable skill by its manifest, an instruction skill by its SKILL.md's frontmatter (read
// here, at most 64 KiB of each; one that does not parse is left out, as a model could not load
// it either).
func NewIndex[S catalog.Skill](skills []S) *Index {
	ix := &Index{terms: map[string]int{}}
	var (
		lengths []float64
		buf     []byte
		doc     []posting // this document's terms: posting.doc is the term number here
		at      []int     // by term number: its place in doc, when last[term] is this document
		last    []int     // by term number: the last document it was seen in, plus one
		length  float64
	)
	add := func(text string, boost float64) {
		buf = tokenize(text, buf, func(tok []byte) {
			term, ok := ix.terms[string(tok)] // no allocation for a term already known
			if !ok {
				term = len(ix.postings)
				ix.terms[string(tok)] = term
				ix.postings = append(ix.postings, nil)
				at, last = append(at, 0), append(last, 0)
			}
			if last[term] != len(ix.hits)+1 {
				last[term], at[term] = len(ix.hits)+1, len(doc)
				doc = append(doc, posting{doc: term})
			}
			doc[at[term]].tf += boost
			length += boost
		})
	}
	for _, s := range skills {
		h, tags, ok := describe(s)
		if !ok {
			continue
		}
		doc, length = doc[:0], 0
		add(h.Name, boostName)
		for _, tag := range tags {
			add(tag, boostTags)
		}
		add(h.ID, boostID)
		add(h.Description, boostDescription)
		for _, p := range doc {
			ix.postings[p.doc] = append(ix.postings[p.doc], posting{doc: len(ix.hits), tf: p.tf})
		}
		ix.hits = append(ix.hits, h)
		lengths = append(lengths, length)
	}
	avg := 0.0
	for _, l := range lengths {
		avg += l
	}
	if len(lengths) > 0 {
		avg /= float64(len(lengths))
	}
	ix.norm = make([]float64, len(lengths))
	for i, l := range lengths {
		ix.norm[i] = bm25K1 * (1 - bm25B + bm25B*l/max(avg, 1))
	}
	return ix
}

// describe returns what a search shows of s and the tags to index, or false when s is not
// searchable.
func describe(s catalog.Skill) (Hit, []string, bool) {
	if !catalog.Present(s) || !s.Status().Usable() {
		return Hit{}, nil, false
	}
	h := Hit{ID: s.ID(), Kind: s.Kind()}
	if s.Manifest() != nil {
		h.Name, h.Description = s.Name(), s.Description()
		return h, s.Tags(), true
	}
	// The registry read the SKILL.md frontmatter at discovery; no need to read the file again.
	d := s.Instructions()
	if d == nil {
		return Hit{}, nil, false
	}
	h.Name, h.Description = d.Name, d.Description
	return h, skilltags.List(d.Extra["tags"]), true
}

// Search returns the skills that best match query, best first, ranked by BM25 (k1 1.2, b 0.75)
// over their id, name, description and tags, with the name and tags weighing more. Words are
// compared lower-cased and with accents folded ("Café" finds "cafe"); a skill matching none of
// the query's words is not a hit. Equal scores are ordered by id.
//
// limit <= 0 means [DefaultLimit]; it is capped at [MaxLimit]. A query without words
// finds nothing.
func (ix *Index) Search(query string, limit int) []Hit {
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	seen := map[string]bool{}
	var terms []string
	tokenize(query, nil, func(tok []byte) {
		if t := string(tok); !seen[t] {
			seen[t] = true
			terms = append(terms, t)
		}
	})
	if len(terms) == 0 || len(ix.hits) == 0 {
		return nil
	}
	n := float64(len(ix.hits))
	scores := make([]float64, len(ix.hits))
	var matched []int
	for _, t := range terms {
		term, ok := ix.terms[t]
		if !ok {
			continue
		}
		list := ix.postings[term]
		df := float64(len(list))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range list {
			if scores[p.doc] == 0 {
				matched = append(matched, p.doc)
			}
			scores[p.doc] += idf * p.tf * (bm25K1 + 1) / (p.tf + ix.norm[p.doc])
		}
	}
	sort.Slice(matched, func(i, j int) bool {
		a, b := matched[i], matched[j]
		if scores[a] != scores[b] {
			return scores[a] > scores[b]
		}
		return ix.hits[a].ID < ix.hits[b].ID
	})
	if len(matched) > limit {
		matched = matched[:limit]
	}
	out := make([]Hit, len(matched))
	for i, d := range matched {
		out[i] = ix.hits[d]
		out[i].Score = scores[d]
	}
	return out
}

// Search is NewIndex(c.Skills()).Search(query, limit): one search, indexing the catalog as it is
// now. A server answering many searches keeps an [Index] and rebuilds it on reload instead; for
// instruction skills, indexing reads files.
func Search[S catalog.Skill](c catalog.Catalog[S], query string, limit int) []Hit {
	return NewIndex(c.Skills()).Search(query, limit)
}
