package skillmd

import "strings"

// SplitArguments splits a call's arguments into words as a shell does, for $ARGUMENTS[N] and
// $N ([Render]): white space separates words; '...' is one word, as written; "..." is one word
// in which \" and \\ stand for " and \; quoted parts and plain text that touch make one word
// (a"b c" is "ab c"); "" is an empty word. Other backslashes are kept, so a Windows path
// survives. An unclosed quote runs to the end: the arguments come from a model or a user, and a
// typo in them must not fail the call.
func SplitArguments(s string) []string {
	var out []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			inWord = true
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				end = len(s) - i - 1
			}
			w.WriteString(s[i+1 : i+1+end])
			i += end + 1
		case c == '"':
			inWord = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				w.WriteByte(s[i])
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			if inWord {
				out = append(out, w.String())
				w.Reset()
				inWord = false
			}
		default:
			inWord = true
			w.WriteByte(c)
		}
	}
	if inWord {
		out = append(out, w.String())
	}
	return out
}
