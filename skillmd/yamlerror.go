package skillmd

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var yamlLine = regexp.MustCompile(`\bline (\d+)\b`)

// maxYAMLErrors bounds the YAML errors an *Error repeats: a file with a thousand duplicate keys
// should not make a message of a thousand lines.
const maxYAMLErrors = 5

// yamlError turns a yaml.v3 error into an *Error whose line numbers are the file's, not the
// frontmatter's, with a hint for the usual mistakes.
func yamlError(path string, err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n")
	// The frontmatter starts on the file's line 2. yaml.v3 (v3.0.1) also numbers the lines of
	// its parser's errors ("did not find expected ...") from 0, its scanner's from 1.
	shift := 1
	if strings.Contains(msg, "did not find expected") {
		shift = 2
	}
	msg = yamlLine.ReplaceAllStringFunc(msg, func(m string) string {
		n, _ := strconv.Atoi(m[len("line "):])
		return "line " + strconv.Itoa(n+shift)
	})
	var lines []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	e := &Error{Path: path, Hint: "fix the YAML syntax there"}
	// One error that starts with its line: the line goes where an editor can jump to it.
	if len(lines) == 1 {
		var rest string
		if _, scanErr := fmt.Sscanf(lines[0], "line %d:", &e.Line); scanErr == nil {
			_, rest, _ = strings.Cut(lines[0], ": ")
			lines[0] = rest
		}
	}
	if len(lines) > maxYAMLErrors {
		lines = append(lines[:maxYAMLErrors], fmt.Sprintf("and %d more", len(lines)-maxYAMLErrors))
	}
	msg = strings.Join(lines, "; ")
	e.Msg = "malformed YAML: " + msg
	switch {
	case strings.Contains(msg, "mapping values are not allowed"):
		e.Hint = `a value that contains ": " must be quoted, as in description: "Does X: Y"`
	case strings.Contains(msg, "tab character"):
		e.Hint = "indent with spaces, not tabs"
	case strings.Contains(msg, "cannot start any token"):
		e.Hint = "quote a value that starts with @ or `, and indent with spaces, not tabs"
	case strings.Contains(msg, "already defined"):
		e.Hint = "keep one of the two"
	}
	return e
}
