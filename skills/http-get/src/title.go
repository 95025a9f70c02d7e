package main

import (
	"regexp"
	"strings"
)

// titleRE finds the first <title> element, across lines and in any letter case. A
// regular expression rather than an HTML parser keeps the module small; titles hold no
// markup, so it is enough.
var titleRE = regexp.MustCompile(`(?is)<title\b[^>]*>(.*?)</title\s*>`)

// entities decodes the character references that appear in titles in practice. One
// pass, so "&amp;lt;" correctly becomes "&lt;".
var entities = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`, "&#39;", "'")

// title returns the trimmed, decoded text of body's <title>, or "" when it has none.
func title(body []byte) string {
	m := titleRE.FindSubmatch(body)
	if m == nil {
		return ""
	}
	return strings.TrimSpace(entities.Replace(string(m[1])))
}
