package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	skill "github.com/skillbox-dev/skillbox/sdk/go"
)

// indexPath is the list of note names; see the package comment for why it exists.
const indexPath = dir + "/index.json"

func notePath(name string) string { return dir + "/" + name + ".md" }

// save writes or appends text to the note and records its name in the index. It returns
// the note's size. The note is written first: a note missing from the index is repaired
// by the next write, while an index entry without a note would be a lie.
func save(ctx *skill.Context, name, text string, appendText bool) (int, error) {
	content := text
	if appendText {
		old, err := ctx.ReadFile(notePath(name))
		if err != nil && !errors.Is(err, skill.ErrNotFound) {
			return 0, err
		}
		content = appendLine(string(old), text)
	}
	if err := ctx.WriteFile(notePath(name), []byte(content)); err != nil {
		return 0, err
	}
	names, err := readIndex(ctx)
	if err != nil {
		return 0, err
	}
	if merged, changed := addName(names, name); changed {
		b, _ := json.Marshal(merged)
		if err := ctx.WriteFile(indexPath, b); err != nil {
			return 0, err
		}
	}
	return len(content), nil
}

// appendLine adds text to old on a new line.
func appendLine(old, text string) string {
	if old == "" || strings.HasSuffix(old, "\n") {
		return old + text
	}
	return old + "\n" + text
}

// readIndex returns the sorted note names; no index yet means no notes.
func readIndex(ctx *skill.Context) ([]string, error) {
	b, err := ctx.ReadFile(indexPath)
	if errors.Is(err, skill.ErrNotFound) {
		return []string{}, nil
	}
	if err != nil {
		return nil, err
	}
	names := []string{}
	if err := json.Unmarshal(b, &names); err != nil {
		return nil, fmt.Errorf("%s is corrupt: %v", indexPath, err)
	}
	return names, nil
}

// addName inserts name into the sorted names, reporting whether it was new.
func addName(names []string, name string) ([]string, bool) {
	i := sort.SearchStrings(names, name)
	if i < len(names) && names[i] == name {
		return names, false
	}
	names = append(names, "")
	copy(names[i+1:], names[i:])
	names[i] = name
	return names, true
}
