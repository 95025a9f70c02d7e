package skillmd

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/skillbox-dev/skillbox/internal/safefile"
)

// MetaLimit is the most [ReadMeta] reads of a file. Frontmatter is a few hundred bytes; the bound
// keeps a listing of many skills from reading their bodies, or a hostile file from being read
// whole.
const MetaLimit = 64 << 10

// Parse parses a whole SKILL.md. path names the file in errors only.
//
// It loads what Claude Code loads, repairing it, with a warning in the Doc's Warnings that cites
// the rule broken: a file without frontmatter (all of it is the body), blank lines before the
// frontmatter, an unquoted ": " in a top-level value (see repair), no name or an empty one (Name
// is "": the caller names the skill after its directory) and no description or an empty one
// (the body's first paragraph is used, cut at [MaxDescription] characters; it is looked for in
// the file's first [MetaLimit] bytes, as [ReadMeta] reads them, so that both agree). [Check]
// gives the format's other rules.
//
// # Errors
//
// A file that cannot be a skill gives an [*Error] (matching [ErrInvalid]) that says every
// problem at once: an empty file, a file that is not text (a NUL byte or bytes that are not
// UTF-8 in its first MetaLimit bytes), frontmatter that is not closed, malformed YAML that the
// repair does not mend (with its line in the file), frontmatter that is not a mapping, no
// description and no paragraph to stand for one, fields of the wrong type, and fields that nest
// deeper or hold more values (YAML aliases expanded) than internal/docbound allows.
func Parse(path string, data []byte) (*Doc, error) {
	return result(parse(path, data, true, false))
}

// ParseMeta is [Parse] without the body: it reads data only up to the end of the frontmatter, and
// the Doc's Body is empty. A listing of skills needs no more.
func ParseMeta(path string, data []byte) (*Doc, error) {
	return result(parse(path, data, true, true))
}

// ReadMeta reads the frontmatter of the SKILL.md at path, reading at most [MetaLimit] bytes.
//
// # Errors
//
// Those of [ParseMeta], and frontmatter not closed within MetaLimit; a path that is not a
// regular file (a FIFO, a device, a directory) is an [*Error] too, refused without blocking on
// it. A file that cannot be opened gives the error os returns (an *fs.PathError).
func ReadMeta(path string) (*Doc, error) {
	// A SKILL.md that is a FIFO would otherwise block the open until a writer comes.
	f, _, err := safefile.Open(path)
	if errors.Is(err, safefile.ErrNotRegular) {
		return nil, &Error{Path: path, Msg: "is " + err.Error(), Hint: "make SKILL.md a plain file"}
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MetaLimit+1))
	if err != nil {
		return nil, err
	}
	complete := len(data) <= MetaLimit
	if !complete {
		data = data[:MetaLimit]
	}
	return result(parse(path, data, complete, true))
}

// result keeps a nil *Error from becoming a non-nil error.
func result(d *Doc, err *Error) (*Doc, error) {
	if err != nil {
		return nil, err
	}
	return d, nil
}

func parse(path string, data []byte, complete, metaOnly bool) (*Doc, *Error) {
	data = bytes.TrimPrefix(data, bom)
	if !complete {
		data = trimPartialRune(data)
	}
	// What ReadMeta reads of a file (its first MetaLimit bytes) is all that decides whether it
	// loads, and what its description is: Parse and ReadMeta must agree.
	window := data[:min(len(data), MetaLimit)]
	if err := checkText(path, window); err != nil {
		return nil, err
	}
	front, body, found, warn, err := split(path, data, complete)
	if err != nil {
		return nil, err
	}
	if len(front) > MetaLimit {
		// ReadMeta could not read it; Parse refuses it too, so both agree on every file.
		return nil, &Error{Path: path, Line: 1, Msg: fmt.Sprintf("the frontmatter is larger than %d KiB", MetaLimit>>10),
			Hint: "keep long text in the body, after the frontmatter"}
	}
	start := len(data) - len(body)
	para := trimPartialRune(body[:max(0, min(len(body), len(window)-start))])
	d, err := decode(path, front, found, para)
	if err != nil {
		return nil, err
	}
	if warn != nil {
		d.Warnings = append([]*Error{warn}, d.Warnings...)
	}
	if !metaOnly {
		d.Body = string(trimBlankLines(body))
	}
	return d, nil
}
