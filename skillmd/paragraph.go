package skillmd

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"
)

// firstParagraph returns the first paragraph of the Markdown text, on one line (each run of
// white space made one space), cut at max characters: what describes a skill whose frontmatter
// does not. A paragraph is a run of non-blank lines that are not a heading ("# ..."), a fenced
// code block, an HTML comment or a thematic break ("---"); when the text has none, the first
// heading's text stands in. "" when there is neither.
func firstParagraph(text []byte, max int) string {
	var heading string
	var para []string
	var fence string // the open fence's marker, "" outside one
	comment := false
	for len(text) > 0 {
		var line []byte
		line, text, _ = bytes.Cut(text, []byte("\n"))
		t := strings.TrimSpace(string(line))
		switch {
		case fence != "":
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				fence = ""
			}
			continue
		case comment:
			comment = !strings.Contains(t, "-->")
			continue
		}
		if len(para) > 0 && (t == "" || isBlockStart(t)) {
			break
		}
		switch {
		case t == "":
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			fence = t[:3]
		case strings.HasPrefix(t, "<!--"):
			comment = !strings.Contains(t[4:], "-->")
		case strings.HasPrefix(t, "#"):
			if heading == "" {
				heading = strings.TrimSpace(strings.TrimRight(strings.TrimLeft(t, "#"), "#"))
			}
		case isThematicBreak(t):
		default:
			para = append(para, t)
		}
	}
	out := strings.Join(para, " ")
	if out == "" {
		out = heading
	}
	return clip(oneSpace(out), max)
}

// isBlockStart reports whether a trimmed line ends a paragraph by starting another block.
func isBlockStart(t string) bool {
	return strings.HasPrefix(t, "#") || strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") || isThematicBreak(t)
}

// isThematicBreak reports whether a trimmed line is "---", "***" or "___" (three or more).
func isThematicBreak(t string) bool {
	if len(t) < 3 || !strings.ContainsRune("-*_", rune(t[0])) {
		return false
	}
	return strings.Trim(strings.ReplaceAll(t, " ", ""), t[:1]) == ""
}

// oneSpace makes every run of white space or control characters one space.
func oneSpace(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
}

// clip cuts s at max characters, ending it with "…" when it cut.
func clip(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max-1 {
			return strings.TrimRight(s[:i], " ") + "…"
		}
		n++
	}
	return s
}
