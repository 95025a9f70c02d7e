package search

import (
	"unicode"
	"unicode/utf8"
)

// foldTable maps lower-case Latin letters with diacritics to plain ASCII, so "café" finds
// "cafe" and the other way round. It covers Latin-1 and Latin Extended-A, the letters of the
// languages skill descriptions are usually written in; other letters are kept as they are.
var foldTable = func() map[rune]string {
	groups := map[string]string{
		"àáâãäåāăą": "a", "çćĉċč": "c", "ďđð": "d", "èéêëēĕėęě": "e", "ĝğġģ": "g", "ĥħ": "h",
		"ìíîïĩīĭįı": "i", "ĵ": "j", "ķ": "k", "ĺļľŀł": "l", "ñńņňŉ": "n", "òóôõöøōŏő": "o",
		"ŕŗř": "r", "śŝşšſ": "s", "ţťŧ": "t", "ùúûüũūŭůűų": "u", "ŵ": "w", "ýÿŷ": "y", "źżž": "z",
		"ß": "ss", "æ": "ae", "œ": "oe", "þ": "th", "ĳ": "ij",
	}
	out := map[rune]string{}
	for letters, ascii := range groups {
		for _, r := range letters {
			out[r] = ascii
		}
	}
	return out
}()

// tokenize calls emit with each word of s: a run of letters and digits, lower-cased and folded
// to ASCII where [foldTable] knows how. Everything else separates words, so "word-count" is
// "word" and "count". The slice passed to emit is reused: copy it to keep it.
func tokenize(s string, buf []byte, emit func([]byte)) []byte {
	buf = buf[:0]
	flush := func() {
		if len(buf) > 0 {
			emit(buf)
			buf = buf[:0]
		}
	}
	for _, r := range s {
		if r < utf8.RuneSelf {
			switch {
			case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
				buf = append(buf, byte(r))
			case 'A' <= r && r <= 'Z':
				buf = append(buf, byte(r+'a'-'A'))
			default:
				flush()
			}
			continue
		}
		r = unicode.ToLower(r)
		switch f, ok := foldTable[r]; {
		case ok:
			buf = append(buf, f...)
		case unicode.Is(unicode.Mn, r):
			// A combining accent of decomposed text ("e" + U+0301): dropped, as folding would.
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			buf = utf8.AppendRune(buf, r)
		default:
			flush()
		}
	}
	flush()
	return buf
}
