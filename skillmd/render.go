package skillmd

import "strings"

// Placeholder is replaced by the arguments of a call in a skill's body. The match is
// case-sensitive: "$arguments" is left alone.
const Placeholder = "$ARGUMENTS"

// Render returns the text a model receives when it invokes a skill with arguments: the line
// "Base directory for this skill: <baseDir>", a blank line, then body with every $ARGUMENTS
// replaced by arguments (by nothing when arguments is empty). A body without the placeholder gets
// "\n\nARGUMENTS: <arguments>" appended instead, unless arguments is empty. This is the
// skills-use and Claude Code behaviour, so SKILL.md files written for them render the same here.
//
// # Notes
//
//   - The replacement is one pass, left to right: the arguments are inserted as they are, and a
//     "$ARGUMENTS" inside them is not replaced again.
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
	switch {
	case n > 0:
		b.WriteString(strings.ReplaceAll(body, Placeholder, arguments))
	case arguments != "":
		b.WriteString(body)
		b.WriteString("\n\nARGUMENTS: ")
		b.WriteString(arguments)
	default:
		b.WriteString(body)
	}
	return b.String()
}
