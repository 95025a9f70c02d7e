package main

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// stats is the skill's result.
type stats struct {
	Words      int         `json:"words"`
	Lines      int         `json:"lines"`
	Characters int         `json:"characters"`
	Top        []wordCount `json:"top"`
}

type wordCount struct {
	Word  string `json:"word"`
	Count int    `json:"count"`
}

// count computes the statistics of text, listing at most top words.
func count(text string, top int) stats {
	freq := map[string]int{}
	n := 0
	for _, w := range words(text) {
		freq[w]++
		n++
	}
	list := make([]wordCount, 0, len(freq))
	for w, c := range freq {
		list = append(list, wordCount{w, c})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].Count != list[j].Count {
			return list[i].Count > list[j].Count
		}
		return list[i].Word < list[j].Word
	})
	if len(list) > top {
		list = list[:top]
	}
	return stats{Words: n, Lines: lines(text), Characters: utf8.RuneCountInString(text), Top: list}
}

// lines counts \n-separated lines. A final \n ends the last line rather than starting
// an empty one, as editors and wc count.
func lines(text string) int {
	if text == "" {
		return 0
	}
	return strings.Count(strings.TrimSuffix(text, "\n"), "\n") + 1
}

// words splits text into lower-case words: runs of letters, digits and apostrophes,
// with apostrophes at either end dropped. The typographic apostrophe (’) is read as '
// so that "don't" and "don’t" count as one word.
func words(text string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if w := strings.Trim(b.String(), "'"); w != "" {
			out = append(out, w)
		}
		b.Reset()
	}
	for _, r := range text {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		case r == '\'' || r == '\u2019':
			b.WriteByte('\'')
		default:
			flush()
		}
	}
	flush()
	return out
}
