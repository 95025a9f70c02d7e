package skillmd

// MaxNameLength and MaxDescriptionLength are the Agent Skills specification's bounds on the
// frontmatter's name (in bytes: a valid name is ASCII) and description (in characters).
const (
	MaxNameLength        = 64
	MaxDescriptionLength = 1024
)

// ValidName reports whether name follows the Agent Skills naming rule: 1 to 64 lowercase ASCII
// letters, digits and hyphens, neither starting nor ending with a hyphen, with no two hyphens in
// a row. Formats that address a skill by its name (the MCP Skills extension's skill:// URIs,
// the /.well-known/agent-skills index) require it; a Skillbox id is looser (it may end with a
// hyphen or repeat one), so not every id is a valid name.
func ValidName(name string) bool {
	if name == "" || len(name) > MaxNameLength || name[0] == '-' || name[len(name)-1] == '-' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && name[i-1] != '-':
		default:
			return false
		}
	}
	return true
}
