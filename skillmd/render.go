package skillmd

import (
	"regexp"
	"strings"
)

// Placeholder is replaced by the arguments of a call in a skill's body. The match is
// case-sensitive: "$arguments" is left alone.
const Placeholder = "$ARGUMENTS"

// The base directory's placeholders: Claude Code's, and a neutral alias for skills written for
// any agent.
const (
	SkillDirPlaceholder       = "${SKILL_DIR}"
	ClaudeSkillDirPlaceholder = "${CLAUDE_SKILL_DIR}"
)

// DynamicContextNote is the line Render adds to a body that holds Claude Code's dynamic context
// (!`command`, or a ```! block), which Claude Code runs before the model reads the skill.
// Skillbox never runs it: a skill's text is not a program the host runs.
const DynamicContextNote = "Note: Skillbox does not run the !`command` lines of this skill (Claude Code would run them and insert their output); they are shown as written."

// Render returns the text a model receives when it invokes a skill with arguments: the line
// "Base directory for this skill: <baseDir>", a blank line, then body with its placeholders
// replaced, as Claude Code replaces them:
//
//   - $ARGUMENTS: the arguments, as given (nothing when arguments is empty);
//   - $ARGUMENTS[N] and $N (0-based; $N not followed by a letter, digit or '_'): the Nth word of
//     the arguments, split as a shell splits them (see [SplitArguments]). An index with no word
//     is left as written, so a body's "awk '{print $1}'" survives a call without arguments;
//   - ${CLAUDE_SKILL_DIR} and ${SKILL_DIR}: baseDir;
//   - a backslash before any of them ("\$0") writes it as it is, without the backslash.
//
// When no placeholder received the arguments ($ARGUMENTS, or an index that had a word) and
// arguments is not empty, "\n\nARGUMENTS: <arguments>" is appended instead. This is the
// behaviour of Claude Code and of the skills-use Python package (PyPI), so SKILL.md files written
// for them render the same here.
//
// A body holding Claude Code's dynamic context (!`command`) is never run: it is shown as
// written, and the line [DynamicContextNote] follows the base directory, so the model knows.
//
// # Notes
//
//   - The replacement is one pass, left to right: the arguments are inserted as they are, and a
//     placeholder inside them is not replaced again.
//   - For the same reason, a body such as "$$ARGUMENTSARGUMENTS" rendered with empty arguments
//     gives "$ARGUMENTS": the text around a placeholder can join into a new one. Nothing is
//     replaced twice.
//   - Render touches no file; the body comes from [Parse].
func Render(body, baseDir, arguments string) string {
	var b strings.Builder
	const head = "Base directory for this skill: "
	n := strings.Count(body, Placeholder)
	b.Grow(len(head) + len(baseDir) + len("\n\n") + len(body) + n*len(arguments) + len("\n\nARGUMENTS: ") + len(arguments))
	b.WriteString(head)
	b.WriteString(baseDir)
	b.WriteString("\n\n")
	if HasDynamicContext(body) {
		b.WriteString(DynamicContextNote)
		b.WriteString("\n\n")
	}
	r := renderer{out: &b, baseDir: baseDir, arguments: arguments}
	r.body(body)
	if !r.received && arguments != "" {
		b.WriteString("\n\nARGUMENTS: ")
		b.WriteString(arguments)
	}
	return b.String()
}

// renderer is one Render's pass over a body.
type renderer struct {
	out                *strings.Builder
	baseDir, arguments string
	words              []string // the arguments, split; nil until an index asks for them
	split              bool
	received           bool // a placeholder took the arguments, or one of their words
}

func (r *renderer) body(body string) {
	for {
		i := strings.IndexAny(body, `$\`)
		if i < 0 {
			r.out.WriteString(body)
			return
		}
		r.out.WriteString(body[:i])
		body = body[i:]
		if body[0] == '\\' {
			if p := parsePlaceholder(body[1:]); p.n > 0 {
				r.out.WriteString(body[1 : 1+p.n]) // escaped: as it is, without the backslash
				body = body[1+p.n:]
			} else {
				r.out.WriteByte('\\')
				body = body[1:]
			}
			continue
		}
		p := parsePlaceholder(body)
		if p.n == 0 {
			r.out.WriteByte('$')
			body = body[1:]
			continue
		}
		r.out.WriteString(r.value(p, body[:p.n]))
		body = body[p.n:]
	}
}

// placeholder is one placeholder of a body: its length in bytes (0: none), and what it stands
// for.
type placeholder struct {
	n     int
	kind  byte // 'a': $ARGUMENTS, 'i': a word of them, 'd': the base directory
	index int  // the word's; -1 when too large for any
}

// parsePlaceholder reads the placeholder at the start of s, if there is one.
func parsePlaceholder(s string) placeholder {
	switch {
	case strings.HasPrefix(s, ClaudeSkillDirPlaceholder):
		return placeholder{n: len(ClaudeSkillDirPlaceholder), kind: 'd'}
	case strings.HasPrefix(s, SkillDirPlaceholder):
		return placeholder{n: len(SkillDirPlaceholder), kind: 'd'}
	case strings.HasPrefix(s, Placeholder):
		rest := s[len(Placeholder):]
		if len(rest) > 0 && rest[0] == '[' {
			if d := digits(rest[1:]); d > 0 && len(rest) > 1+d && rest[1+d] == ']' {
				return placeholder{n: len(Placeholder) + d + 2, kind: 'i', index: atoi(rest[1 : 1+d])}
			}
		}
		return placeholder{n: len(Placeholder), kind: 'a'}
	case len(s) > 1 && s[0] == '$':
		d := digits(s[1:])
		if d == 0 || (len(s) > 1+d && isWordByte(s[1+d])) {
			return placeholder{}
		}
		return placeholder{n: 1 + d, kind: 'i', index: atoi(s[1 : 1+d])}
	}
	return placeholder{}
}

// value is what p, written as literal in the body, renders as. A word that is not there leaves
// the placeholder as written.
func (r *renderer) value(p placeholder, literal string) string {
	switch p.kind {
	case 'd':
		return r.baseDir
	case 'a':
		r.received = true
		return r.arguments
	}
	if !r.split {
		r.words, r.split = SplitArguments(r.arguments), true
	}
	if p.index < 0 || p.index >= len(r.words) {
		return literal
	}
	r.received = true
	return r.words[p.index]
}

// digits counts the ASCII digits at the start of s.
func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// atoi reads digits as an index; -1 past any number of words an argument string could hold.
func atoi(d string) int {
	if len(d) > 9 {
		return -1
	}
	i := 0
	for _, c := range d {
		i = i*10 + int(c-'0')
	}
	return i
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// dynamicContext is Claude Code's inline dynamic context, !`command`, or a line opening a ```!
// block.
var dynamicContext = regexp.MustCompile("!`[^`\n]+`|(?m)^[ \t]*```!")

// HasDynamicContext reports whether body holds Claude Code's dynamic context: !`command` inline,
// or a ```! block, which Claude Code runs in a shell and Skillbox never does.
func HasDynamicContext(body string) bool { return dynamicContext.MatchString(body) }
