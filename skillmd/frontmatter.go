package skillmd

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

var bom = []byte("\xef\xbb\xbf")

const startHint = `start the file with a line "---", then "name: ..." and "description: ...", then a line "---"`

// split cuts a SKILL.md into its frontmatter (the YAML between the first line, "---", and the
// next line that is "---") and its body. It accepts a UTF-8 byte order mark and CRLF line ends,
// and trailing spaces on the delimiter lines, because editors add all three.
//
// Published skills that Claude Code loads break the format in two ways this reader repairs,
// with a warning: blank lines before the first "---" (skipped; the frontmatter handed back
// starts with as many empty lines, so YAML's line numbers stay the file's), and no frontmatter
// at all (front is nil, found false, and the whole file is the body).
//
// complete is false when data is only the start of a longer file: a delimiter on its last,
// unterminated line then does not count, since the line may go on past the cut.
func split(path string, data []byte, complete bool) (front, body []byte, found bool, warn, err *Error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, false, nil, &Error{Path: path, Msg: `is empty: a SKILL.md needs frontmatter with "name" and "description"`, Hint: startHint}
	}
	skipped := 0
	rest := data
	for {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		if len(bytes.TrimSpace(line)) != 0 {
			break
		}
		rest, skipped = after, skipped+1
	}
	first, rest, _ := bytes.Cut(rest, []byte("\n"))
	if !isDelim(first) {
		return nil, data, false, &Error{Path: path, Line: 1, Msg: noFrontmatter, Hint: startHint}, nil
	}
	if skipped > 0 {
		warn = &Error{Path: path, Line: 1, Msg: fmt.Sprintf(`starts with %d blank %s before the frontmatter; they were skipped (%s)`, skipped, plural(skipped, "line", "lines"), RuleFrontmatter),
			Hint: `remove what comes before the first "---"`}
	}
	for off := 0; off < len(rest); {
		line, _, more := bytes.Cut(rest[off:], []byte("\n"))
		if isDelim(line) && (more || complete) {
			end := off + len(line)
			if more {
				end++
			}
			return append(bytes.Repeat([]byte("\n"), skipped), rest[:off]...), rest[end:], true, warn, nil
		}
		off += len(line) + 1
	}
	if !complete {
		return nil, nil, false, nil, &Error{Path: path, Line: 1, Msg: fmt.Sprintf("the frontmatter is not closed within the first %d KiB", MetaLimit>>10),
			Hint: `close it with a line "---"; keep long text in the body, after the frontmatter`}
	}
	return nil, nil, false, nil, &Error{Path: path, Line: 1, Msg: "the frontmatter is not closed", Hint: `add a line with only "---" after the last field`}
}

// noFrontmatter is the warning of a file without frontmatter, which is loaded as Claude Code
// loads it.
var noFrontmatter = "has no frontmatter, so the skill is named after its directory and described by the first paragraph of its text (" + RuleFrontmatter.String() + ")"

// isDelim reports whether line is "---", ignoring a CR and trailing blanks.
func isDelim(line []byte) bool {
	return string(bytes.TrimRight(line, " \t\r")) == "---"
}

// checkText refuses a file that is not text: a NUL byte, or bytes that are not UTF-8, in data
// (the part of the file that is read to list it: see parse). Neither YAML nor a model can use
// such a file.
func checkText(path string, data []byte) *Error {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return &Error{Path: path, Line: 1 + bytes.Count(data[:i], []byte("\n")), Msg: "is not text: it holds a NUL byte",
			Hint: "a SKILL.md is UTF-8 Markdown; keep binary files beside it, as resources"}
	}
	if !utf8.Valid(data) {
		i := 0
		for i < len(data) {
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		return &Error{Path: path, Line: 1 + bytes.Count(data[:i], []byte("\n")), Msg: "is not text: it is not valid UTF-8",
			Hint: "save it as UTF-8"}
	}
	return nil
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of data: the cut of a read
// bounded in bytes may fall inside a character.
func trimPartialRune(data []byte) []byte {
	for i := 1; i < utf8.UTFMax && i <= len(data); i++ {
		b := data[len(data)-i]
		if utf8.RuneStart(b) {
			if !utf8.FullRune(data[len(data)-i:]) {
				return data[:len(data)-i]
			}
			break
		}
	}
	return data
}

// trimBlankLines drops the blank lines at the start of a body: the line after the closing "---"
// is blank by convention, and a rendered skill should start with its text.
func trimBlankLines(body []byte) []byte {
	for len(body) > 0 {
		line, rest, found := bytes.Cut(body, []byte("\n"))
		if len(bytes.TrimSpace(line)) != 0 {
			break
		}
		if !found {
			return nil
		}
		body = rest
	}
	return body
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
