package skillmd

import (
	"regexp"
	"strconv"
	"strings"
)

// The most common YAML slip in published SKILL.md files is an unquoted ": " in a plain value:
//
//	description: Use this when: the user asks for a summary
//
// YAML refuses it ("mapping values are not allowed in this context"), and Claude Code then drops
// the whole frontmatter. The second is Claude Code's own argument-hint written as its docs show
// it, "argument-hint: [issue] [branch]", which YAML reads as a list followed by junk.
//
// When the frontmatter does not parse, repair reads such values the way a lenient reader would:
// only top-level keys (at the start of a line) whose value is a plain scalar (not quoted, not a
// block scalar, a flow collection, an anchor, an alias or a tag) are touched; the value, with its
// continuation lines (indented with spaces, as YAML folds a plain scalar: lines joined by a space, a blank
// line kept as a line break) and without a trailing " #" comment, becomes one double-quoted
// string. The continuation lines are left empty, so every other line keeps its number. Each
// repaired key is reported, and nothing else is: if the repaired frontmatter does not parse
// either, the original error stands.

// topKey is a top-level "key: value" line: a simple key at the start of the line.
var topKey = regexp.MustCompile(`^([A-Za-z0-9_][A-Za-z0-9_.-]*):[ \t]+(\S.*?)[ \t\r]*$`)

// bracketGroups is an argument-hint written as several bracketed words: "[issue] [branch]".
var bracketGroups = regexp.MustCompile(`^\[[^\[\]\n]*\](?:[ \t]+\[[^\[\]\n]*\])+$`)

// repaired is one key that repair rewrote, with its line in the frontmatter (1-based), and
// whether it was bracketed words (else a ": ").
type repaired struct {
	key      string
	line     int
	brackets bool
}

// repair returns front with the plain values described above quoted, and the keys it quoted;
// nil when it quoted none.
func repair(front []byte) ([]byte, []repaired) {
	lines := strings.Split(string(front), "\n")
	var done []repaired
	for i := 0; i < len(lines); i++ {
		m := topKey.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		key, value := m[1], m[2]
		if value[0] == '[' {
			// A flow list is repaired only as an argument-hint of bracketed words, on one line.
			if v := cutComment(value); key == "argument-hint" && bracketGroups.MatchString(v) {
				lines[i] = key + ": " + strconv.Quote(v)
				done = append(done, repaired{key: key, line: i + 1, brackets: true})
			}
			continue
		}
		if !plainStart(value) {
			continue
		}
		parts := []string{cutComment(value)}
		// The continuation: indented lines, and blank lines between them.
		last := i
		for j := i + 1; j < len(lines); j++ {
			t := strings.TrimSpace(lines[j])
			if t == "" {
				continue
			}
			if !startsIndented(lines[j]) || strings.HasPrefix(t, "#") {
				break
			}
			for k := last + 1; k < j; k++ {
				parts = append(parts, "") // a blank line: a line break
			}
			parts = append(parts, cutComment(t))
			last = j
		}
		value = fold(parts)
		if !strings.Contains(value, ": ") && !strings.Contains(value, ":\t") && !strings.HasSuffix(value, ":") {
			continue
		}
		lines[i] = key + ": " + strconv.Quote(value)
		for k := i + 1; k <= last; k++ {
			lines[k] = ""
		}
		done = append(done, repaired{key: key, line: i + 1})
		i = last
	}
	if done == nil {
		return nil, nil
	}
	return []byte(strings.Join(lines, "\n")), done
}

// plainStart reports whether a value starts a plain scalar, and one worth repairing: the
// indicators that start anything else are left alone.
func plainStart(v string) bool {
	switch v[0] {
	case '"', '\'', '|', '>', '[', '{', '&', '*', '!', '%', '@', '`', '#':
		return false
	case '-', '?', ':':
		return len(v) > 1 && v[1] != ' ' && v[1] != '\t'
	}
	return true
}

// startsIndented reports whether line is indented with a space: YAML refuses tabs there.
func startsIndented(line string) bool {
	return line != "" && line[0] == ' '
}

// repairable reports whether err is YAML's error for the slips repair mends: ": " in a plain
// value ("mapping values are not allowed"), or text after a flow list ("did not find expected
// key"). Any other error is the author's to fix.
func repairable(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "mapping values are not allowed") || strings.Contains(msg, "did not find expected key")
}

// cutComment drops a YAML comment from a plain scalar's line: " #" and what follows.
func cutComment(s string) string {
	for i := 1; i < len(s); i++ {
		if s[i] == '#' && (s[i-1] == ' ' || s[i-1] == '\t') {
			return strings.TrimRight(s[:i], " \t\r")
		}
	}
	return strings.TrimRight(s, " \t\r")
}

// fold joins the lines of a plain scalar as YAML does: by a space, and a blank line ("") as a
// line break.
func fold(parts []string) string {
	var b strings.Builder
	for i, p := range parts {
		switch {
		case p == "":
			b.WriteByte('\n')
		case i > 0 && parts[i-1] != "":
			b.WriteByte(' ')
			b.WriteString(p)
		default:
			b.WriteString(p)
		}
	}
	return b.String()
}
