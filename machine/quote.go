package machine

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// isControl reports whether r is a character a terminal may act on rather
// than show: C0 controls, DEL and C1 controls.
func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }

// HasControl reports whether s holds a control character or a byte that
// is not UTF-8.
func HasControl(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	return strings.ContainsFunc(s, isControl)
}

// EscapeControl returns s with every control character and every byte
// that is not UTF-8 written as a backslash escape (\n, \t, \r, \e, \xNN,
// \u0085), and backslashes doubled only when something was escaped, so
// text printed from a path, an id or a file never moves the cursor,
// rewrites the line or changes the terminal. Text without them is returned
// as it is.
func EscapeControl(s string) string {
	if !HasControl(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == 0x1b:
			b.WriteString(`\e`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case isControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// ShellWord quotes s as one word of a command line printed for a person to
// paste: QuoteArg's single quotes, or, when s holds control characters or
// bytes that are not UTF-8, bash's $'…' with every one of them escaped, so
// the printed line has none and pasting it passes exactly s, running
// nothing else.
func ShellWord(s string) string {
	if !HasControl(s) {
		return QuoteArg(s)
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}
