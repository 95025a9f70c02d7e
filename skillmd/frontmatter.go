package skillmd

import (
	"bytes"
	"fmt"
)

var bom = []byte("\xef\xbb\xbf")

const startHint = `start the file with a line "---", then "name: ..." and "description: ...", then a line "---"`

// split cuts a SKILL.md into its frontmatter (the YAML between the first line, "---", and the
// next line that is "---") and its body. It accepts a UTF-8 byte order mark and CRLF line ends,
// and trailing spaces on the delimiter lines, because editors add all three.
//
// complete is false when data is only the start of a longer file: a delimiter on its last,
// unterminated line then does not count, since the line may go on past the cut.
func split(path string, data []byte, complete bool) (front, body []byte, err *Error) {
	data = bytes.TrimPrefix(data, bom)
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, &Error{Path: path, Msg: `is empty: a SKILL.md needs frontmatter with "name" and "description"`, Hint: startHint}
	}
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	if !isDelim(first) {
		e := &Error{Path: path, Line: 1, Msg: `has no frontmatter: the first line must be "---"`, Hint: startHint}
		if isDelim(firstLine(bytes.TrimLeft(data, " \t\r\n"))) {
			e.Hint = `remove what comes before the first "---": the frontmatter must start on the very first line`
		}
		return nil, nil, e
	}
	for off := 0; off < len(rest); {
		line, _, found := bytes.Cut(rest[off:], []byte("\n"))
		if isDelim(line) && (found || complete) {
			end := off + len(line)
			if found {
				end++
			}
			return rest[:off], rest[end:], nil
		}
		off += len(line) + 1
	}
	if !complete {
		return nil, nil, &Error{Path: path, Line: 1, Msg: fmt.Sprintf("the frontmatter is not closed within the first %d KiB", MetaLimit>>10),
			Hint: `close it with a line "---"; keep long text in the body, after the frontmatter`}
	}
	return nil, nil, &Error{Path: path, Line: 1, Msg: "the frontmatter is not closed", Hint: `add a line with only "---" after the last field`}
}

// isDelim reports whether line is "---", ignoring a CR and trailing blanks.
func isDelim(line []byte) bool {
	return string(bytes.TrimRight(line, " \t\r")) == "---"
}

func firstLine(data []byte) []byte {
	line, _, _ := bytes.Cut(data, []byte("\n"))
	return line
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
