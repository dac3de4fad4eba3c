package machine

import "strings"

// IgnorePattern is the gitignore line (for info/exclude) that matches
// exactly the directory rel, a slash-separated path below the checkout's
// top: anchored by a leading '/', a directory by the trailing '/', and
// each character git's matcher reads as syntax ('\', '*', '?', '[')
// escaped with a backslash, so a root named "build*" or "[x]" excludes
// that directory and no other. The line neither begins with '!' or '#'
// nor ends in a space or carriage return, which git would read as syntax.
// ok is false when rel holds a newline: git reads one pattern a line, and
// no escape names one.
func IgnorePattern(rel string) (line string, ok bool) {
	if strings.ContainsAny(rel, "\n") {
		return "", false
	}
	var b strings.Builder
	b.WriteByte('/')
	for i := 0; i < len(rel); i++ {
		if strings.IndexByte(`\*?[`, rel[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(rel[i])
	}
	b.WriteByte('/')
	return b.String(), true
}
