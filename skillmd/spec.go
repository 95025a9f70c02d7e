package skillmd

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Rule is one of the Agent Skills format's rules that a SKILL.md may break and still be loaded
// (Claude Code loads it). Warnings cite them word for word, as "Agent Skills rule: <rule>" (its
// String), so an author can look each up.
type Rule string

// String is the rule's citation: "Agent Skills rule: " and the rule.
func (r Rule) String() string { return "Agent Skills rule: " + string(r) }

// The rules.
const (
	RuleFrontmatter         Rule = `a SKILL.md starts with YAML frontmatter between two "---" lines`
	RuleNameRequired        Rule = "name is required"
	RuleName                Rule = "name must be 1-64 lowercase letters, digits and hyphens, not starting or ending with a hyphen, with no two hyphens in a row"
	RuleNameDirectory       Rule = "name must match the skill's directory name"
	RuleDescriptionRequired Rule = "description is required"
	RuleDescription         Rule = "description must be 1-1,024 characters"
	RuleCompatibility       Rule = "compatibility must be at most 500 characters"
	RuleFileName            Rule = "the file is named SKILL.md"
)

// The limits of those rules, in characters.
const (
	MaxName          = 64
	MaxDescription   = 1024
	MaxCompatibility = 500
)

var namePattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// ValidName reports whether name follows the Agent Skills format's rule for names ([RuleName]).
func ValidName(name string) bool { return len(name) <= MaxName && namePattern.MatchString(name) }

// Check returns the ways d breaks the Agent Skills format's rules on its fields' values (name,
// description and compatibility), one warning each, for the file at path; nil when it breaks
// none. It does not repeat what [Parse] repaired (a missing name is in d.Warnings already), and
// it does not know d's directory: the caller checks [RuleNameDirectory].
//
// Claude Code loads a skill that breaks them, and so does Skillbox; a validator reports them so
// that the skill works with every agent.
func Check(path string, d *Doc) []*Error {
	var out []*Error
	if d.Name != "" && !ValidName(d.Name) {
		out = append(out, &Error{Path: path, Field: "name", Msg: fmt.Sprintf("%q breaks the %s", d.Name, RuleName), Hint: nameHint(d.Name)})
	}
	if n := utf8.RuneCountInString(d.Description); n > MaxDescription {
		out = append(out, &Error{Path: path, Field: "description", Msg: fmt.Sprintf("is %d characters; it breaks the %s", n, RuleDescription),
			Hint: "say what the skill does and when to use it; move the details into the body"})
	}
	if n := utf8.RuneCountInString(d.Compatibility); n > MaxCompatibility {
		out = append(out, &Error{Path: path, Field: "compatibility", Msg: fmt.Sprintf("is %d characters; it breaks the %s", n, RuleCompatibility),
			Hint: "name the products and versions only"})
	}
	return out
}

// nameHint suggests a name that follows the rule, when one can be made from name.
func nameHint(name string) string {
	if s := Slug(name, MaxName); s != "" {
		return fmt.Sprintf("write it as %q", s)
	}
	return "use lowercase letters, digits and hyphens"
}

// Slug writes name by [RuleName]: lower-cased; every run of characters other than the ASCII
// letters and digits ('_', '.', spaces, accented letters, ...) one hyphen; no hyphen at either
// end; at most max bytes (cut, then trimmed of a hyphen it leaves at the end). "" when name has
// no ASCII letter or digit. "My_Skill.v2" is "my-skill-v2".
func Slug(name string, max int) string {
	var b strings.Builder
	dash := false
	for _, r := range name {
		switch {
		case r >= 'A' && r <= 'Z':
			r += 'a' - 'A'
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
		default:
			dash = true
			continue
		}
		if dash && b.Len() > 0 {
			b.WriteByte('-')
		}
		b.WriteRune(r)
		dash = false
	}
	s := b.String()
	if len(s) > max {
		s = strings.TrimRight(s[:max], "-")
	}
	return s
}
