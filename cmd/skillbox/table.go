package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/skillbox-dev/skillbox/catalog"
)

// maxDescription is how much of a healthy skill's description list shows: one line of the table.
const maxDescription = 72

// minWrap is the narrowest column a broken skill's reason is wrapped to, however narrow the
// terminal.
const minWrap = 24

// writeSkillTable writes list's table: one row a skill, a healthy skill's description cut to a
// line, and a broken skill's reason in full, never cut: wrapped to width in its column when
// width > 0 (a terminal), else on its row's one line (a pipe: what scripts and grep read).
func writeSkillTable(w io.Writer, rows []skillSummary, width int) {
	cells := make([][5]string, 0, len(rows)+1)
	cells = append(cells, [5]string{"ID", "KIND", "STATUS", "VERSION", "DESCRIPTION"})
	for _, s := range rows {
		desc := truncate(clean(s.Description), maxDescription)
		if s.Status == catalog.StatusError {
			desc = clean(s.Error)
		}
		cells = append(cells, [5]string{clean(s.ID), string(s.Kind), string(s.Status), clean(s.Version), desc})
	}
	var widths [4]int
	for _, c := range cells {
		for i := range widths {
			widths[i] = max(widths[i], utf8.RuneCountInString(c[i]))
		}
	}
	indent := 0
	for _, n := range widths {
		indent += n + 2
	}
	for _, c := range cells {
		lines := []string{c[4]}
		if width > 0 && c[2] == string(catalog.StatusError) {
			lines = wrap(c[4], max(width-indent, minWrap))
		}
		for i, line := range lines {
			var b strings.Builder
			for j, n := range widths {
				cell := ""
				if i == 0 {
					cell = c[j]
				}
				b.WriteString(cell)
				b.WriteString(strings.Repeat(" ", n+2-utf8.RuneCountInString(cell)))
			}
			b.WriteString(line)
			fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
		}
	}
}

// wrap breaks s into lines of at most n runes, at spaces where it can and inside a word longer
// than a line where it must.
func wrap(s string, n int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		for utf8.RuneCountInString(word) > n {
			if line != "" {
				lines, line = append(lines, line), ""
			}
			r := []rune(word)
			lines, word = append(lines, string(r[:n])), string(r[n:])
		}
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= n:
			line += " " + word
		default:
			lines, line = append(lines, line), word
		}
	}
	if line != "" || len(lines) == 0 {
		lines = append(lines, line)
	}
	return lines
}

// terminalWidth is the width to wrap list's table to when w is a terminal ($COLUMNS, else 80),
// and 0 when it is not (a pipe or a file: nothing is wrapped).
func terminalWidth(w io.Writer) int {
	if !isTerminal(w) {
		return 0
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 80
}

// writeRows writes a table: header, then rows, each column as wide as its widest cell and two
// spaces apart, the last one unpadded. The caller cleans the cells (see clean).
func writeRows(w io.Writer, header []string, rows [][]string) {
	widths := make([]int, len(header))
	for _, r := range append([][]string{header}, rows...) {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range append([][]string{header}, rows...) {
		var b strings.Builder
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]+2-utf8.RuneCountInString(c)))
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}
