package skillmd

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// maxKeys bounds the keys of one frontmatter mapping. A SKILL.md has a handful; at 256, the
// worst a 64 KiB frontmatter can make yaml.v3 do (a mapping aliased as often as its alias
// limit allows) takes about 20 ms, where 1000 keys take 170 ms.
const maxKeys = 256

// duplicate is a key written twice in one mapping, with file lines.
type duplicate struct {
	line, first int
	key         string
}

func (d duplicate) String() string {
	return fmt.Sprintf("mapping key %q already defined at line %d", d.key, d.first)
}

// checkTree checks the YAML tree of the frontmatter before it is decoded, for what yaml.v3 would
// make expensive: it compares every key of a mapping with every other, and reports every pair
// of equal keys, so 13,000 copies of "x: 1" (64 KiB) take it minutes and gigabytes. Here
// duplicates are found with a map, each reported once, and mappings are bounded to maxKeys,
// which bounds yaml.v3's own comparisons. Aliases are not followed: their anchors are walked
// where they are defined.
func checkTree(path string, root *yaml.Node) *Error {
	var dups []duplicate
	var walk func(n *yaml.Node) *Error
	walk = func(n *yaml.Node) *Error {
		switch n.Kind {
		case yaml.AliasNode:
			return nil
		case yaml.MappingNode:
			if len(n.Content)/2 > maxKeys {
				return &Error{Path: path, Line: n.Line + 1, Msg: fmt.Sprintf("a mapping of more than %d keys", maxKeys),
					Hint: "the frontmatter is metadata: keep data in the skill's files"}
			}
			first := make(map[string]int, len(n.Content)/2)
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				id := fmt.Sprint(k.Kind, ":", k.Value) // yaml.v3's notion of equal keys
				if at, dup := first[id]; dup {
					dups = append(dups, duplicate{line: k.Line + 1, first: at + 1, key: k.Value})
				} else {
					first[id] = k.Line
				}
			}
		}
		for _, c := range n.Content {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root); err != nil || len(dups) == 0 {
		return err
	}
	e := &Error{Path: path, Hint: "keep one of the two"}
	if len(dups) == 1 {
		e.Line, e.Msg = dups[0].line, "malformed YAML: "+dups[0].String()
		return e
	}
	var msgs []string
	for _, d := range dups[:min(len(dups), maxYAMLErrors)] {
		msgs = append(msgs, fmt.Sprintf("line %d: %s", d.line, d))
	}
	if len(dups) > maxYAMLErrors {
		msgs = append(msgs, fmt.Sprintf("and %d more", len(dups)-maxYAMLErrors))
	}
	e.Msg = "malformed YAML: " + strings.Join(msgs, "; ")
	return e
}
